// A real (self-signed, EC) CA certificate for tests that need PEM OpenSSL accepts. No key: it
// is only ever loaded as a trust anchor. Header-only constant.
#pragma once

namespace nodehook {

inline const char* kTestCaPem =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBjjCCATOgAwIBAgIUYB/ZzlgTXD6KP52dlGxgUNDwQpQwCgYIKoZIzj0EAwIw\n"
    "GzEZMBcGA1UEAwwQbm9kZWhvb2stdGVzdC1jYTAgFw0yNjExMjkxNjQ2MzNaGA8y\n"
    "MTI2MTEwNTE2NDYzM1owGzEZMBcGA1UEAwwQbm9kZWhvb2stdGVzdC1jYTBZMBMG\n"
    "ByqGSM49AgEGCCqGSM49AwEHA0IABCi9HBXl9PabuZH3DLn+soaKluGsEywKotrN\n"
    "2n0bJD+ykSV924G4xxLAww4xizceasUNtAgj1BObHLWlwLK6As6jUzBRMB0GA1Ud\n"
    "DgQWBBQRZQMfFlGRcGvPI8TbFvZMD4rhdDAfBgNVHSMEGDAWgBQRZQMfFlGRcGvP\n"
    "I8TbFvZMD4rhdDAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0kAMEYCIQCC\n"
    "QVvun9rewqkZAcExuIhvLNf+zfc8BHwdtOCdpdS0vwIhAM3Kji9ZVupaETw4zuzl\n"
    "54Pa9DlJy9ebdraIzvwMvHh3\n"
    "-----END CERTIFICATE-----\n";

}  // namespace nodehook
