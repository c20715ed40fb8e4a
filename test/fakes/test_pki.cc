#include "test/fakes/test_pki.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>

namespace nodehook {
namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "TestCa: %s failed\n", what);
    std::abort();
  }
}

EVP_PKEY* NewKey() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  Check(key != nullptr, "EVP_EC_gen");
  return key;
}

std::string ToPem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long size = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(size));
  BIO_free(bio);
  return pem;
}

std::string ToPem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long size = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(size));
  BIO_free(bio);
  return pem;
}

void AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  Check(ext != nullptr, "X509V3_EXT_conf_nid");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `key` named `common_name`, signed by issuer_key (self-signed when issuer is null).
X509* MakeCert(EVP_PKEY* key, const std::string& common_name, X509* issuer, EVP_PKEY* issuer_key,
               const std::vector<std::pair<int, std::string>>& extensions) {
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name.c_str()),
                             -1, -1, 0);
  X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name);
  for (const auto& [nid, value] : extensions) AddExtension(cert, issuer ? issuer : cert, nid, value);
  Check(X509_sign(cert, issuer_key ? issuer_key : key, EVP_sha256()) > 0, "X509_sign");
  return cert;
}

}  // namespace

struct TestCa::Keys {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  ~Keys() {
    X509_free(cert);
    EVP_PKEY_free(key);
  }
};

TestCa::TestCa(const std::string& common_name) : keys_(std::make_unique<Keys>()) {
  keys_->key = NewKey();
  keys_->cert = MakeCert(keys_->key, common_name, nullptr, nullptr,
                         {{NID_basic_constraints, "critical,CA:TRUE"},
                          {NID_key_usage, "critical,keyCertSign,cRLSign"},
                          {NID_subject_key_identifier, "hash"}});
  self_.cert_pem = ToPem(keys_->cert);
  self_.key_pem = ToPem(keys_->key);
}

TestCa::~TestCa() = default;

CertAndKey TestCa::IssueServer(const std::vector<std::string>& alt_names) const {
  std::string sans;
  for (const std::string& n : alt_names) sans += (sans.empty() ? "" : ",") + n;
  EVP_PKEY* key = NewKey();
  X509* cert = MakeCert(key, "test server", keys_->cert, keys_->key,
                        {{NID_basic_constraints, "critical,CA:FALSE"},
                         {NID_key_usage, "critical,digitalSignature"},
                         {NID_ext_key_usage, "serverAuth"},
                         {NID_subject_alt_name, sans},
                         {NID_authority_key_identifier, "keyid"}});
  CertAndKey out{ToPem(cert), ToPem(key)};
  X509_free(cert);
  EVP_PKEY_free(key);
  return out;
}

CertAndKey TestCa::IssueClient(const std::string& common_name) const {
  EVP_PKEY* key = NewKey();
  X509* cert = MakeCert(key, common_name, keys_->cert, keys_->key,
                        {{NID_basic_constraints, "critical,CA:FALSE"},
                         {NID_key_usage, "critical,digitalSignature"},
                         {NID_ext_key_usage, "clientAuth"},
                         {NID_authority_key_identifier, "keyid"}});
  CertAndKey out{ToPem(cert), ToPem(key)};
  X509_free(cert);
  EVP_PKEY_free(key);
  return out;
}

}  // namespace nodehook
