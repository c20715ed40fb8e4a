// TestCa: a certificate authority made in memory for one test (EC P-256, valid from an hour ago
// for a day), installed nowhere, that issues server and client certificates. Lets TLS tests
// prove which CA the client trusts. Immutable after construction; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace nodehook {

struct CertAndKey {
  std::string cert_pem;
  std::string key_pem;
};

class TestCa {
 public:
  explicit TestCa(const std::string& common_name);
  ~TestCa();
  TestCa(const TestCa&) = delete;
  TestCa& operator=(const TestCa&) = delete;

  const std::string& cert_pem() const { return self_.cert_pem; }
  // serverAuth certificate with these subjectAltNames, e.g. {"DNS:localhost", "IP:127.0.0.1"}.
  CertAndKey IssueServer(const std::vector<std::string>& alt_names) const;
  // clientAuth certificate for `common_name`.
  CertAndKey IssueClient(const std::string& common_name) const;

 private:
  struct Keys;
  std::unique_ptr<Keys> keys_;
  CertAndKey self_;
};

}  // namespace nodehook
