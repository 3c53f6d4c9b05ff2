// Certificate tools (OpenSSL): pins, fingerprints and the server's generated private CA.

#include "net/tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <array>
#include <memory>

#include "common/file_util.h"
#include <cctype>

namespace rota::net {
namespace {

constexpr int64_t kDay = 24 * 3600;
constexpr int64_t kCaLifetime = 3650 * kDay;
constexpr int64_t kServerLifetime = 825 * kDay;  // what browsers accept for a leaf
constexpr int64_t kRenewBefore = 30 * kDay;

struct BioFree { void operator()(BIO* b) const { BIO_free(b); } };
struct X509Free { void operator()(X509* x) const { X509_free(x); } };
struct KeyFree { void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); } };
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyFree>;

std::string OpenSslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  std::array<char, 256> buf{};
  ERR_error_string_n(code, buf.data(), buf.size());
  return buf.data();
}

bool FileExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

Result<X509Ptr> ReadCert(const std::string& path) {
  ASSIGN_OR_RETURN(std::string pem, ReadFile(path, 1 << 20));
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return Status::InvalidArgument(path + " holds no PEM certificate: " + OpenSslError());
  return cert;
}

Result<KeyPtr> ReadKey(const std::string& path) {
  ASSIGN_OR_RETURN(std::string pem, ReadFile(path, 1 << 20));
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return Status::InvalidArgument(path + " holds no PEM private key: " + OpenSslError());
  return key;
}

std::string ToPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string ToPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

Result<KeyPtr> NewKey() {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return Status::Internal("cannot generate a P-256 key: " + OpenSslError());
  return key;
}

Status AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) {
    return Status::InvalidArgument("bad certificate extension \"" + value + "\": " + OpenSslError());
  }
  int ok = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  if (ok != 1) return Status::Internal("cannot add extension: " + OpenSslError());
  return Status::Ok();
}

bool IsIpLiteral(const std::string& name) {
  ASN1_OCTET_STRING* ip = a2i_IPADDRESS(name.c_str());
  if (ip == nullptr) return false;
  ASN1_OCTET_STRING_free(ip);
  return true;
}

// A certificate for `subject_key`, signed by `issuer_key` (and named after `issuer`, or
// self-signed when null).
Result<X509Ptr> Issue(EVP_PKEY* subject_key, const std::string& common_name, X509* issuer,
                      EVP_PKEY* issuer_key, bool is_ca, const std::vector<std::string>& names,
                      int64_t now_unix, int64_t lifetime) {
  X509Ptr cert(X509_new());
  X509_set_version(cert.get(), 2);
  std::array<unsigned char, 16> serial{};
  if (RAND_bytes(serial.data(), serial.size()) != 1) {
    return Status::Internal("no randomness for a serial number: " + OpenSslError());
  }
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial.data(), serial.size(), nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  time_t now = static_cast<time_t>(now_unix);
  X509_time_adj_ex(X509_getm_notBefore(cert.get()), 0, -3600, &now);  // clocks differ a little
  X509_time_adj_ex(X509_getm_notAfter(cert.get()), static_cast<int>(lifetime / kDay), 0, &now);
  X509_set_pubkey(cert.get(), subject_key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>("rota"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name);
  X509* signer = issuer ? issuer : cert.get();
  if (is_ca) {
    RETURN_IF_ERROR(AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE,pathlen:0"));
    RETURN_IF_ERROR(AddExtension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign"));
    RETURN_IF_ERROR(AddExtension(cert.get(), signer, NID_subject_key_identifier, "hash"));
  } else {
    RETURN_IF_ERROR(AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE"));
    RETURN_IF_ERROR(AddExtension(cert.get(), signer, NID_key_usage, "critical,digitalSignature"));
    RETURN_IF_ERROR(AddExtension(cert.get(), signer, NID_ext_key_usage, "serverAuth"));
    RETURN_IF_ERROR(AddExtension(cert.get(), signer, NID_authority_key_identifier, "keyid"));
    std::string san;
    for (const std::string& n : names) {
      if (!san.empty()) san += ",";
      san += (IsIpLiteral(n) ? "IP:" : "DNS:") + n;
    }
    if (!san.empty()) RETURN_IF_ERROR(AddExtension(cert.get(), signer, NID_subject_alt_name, san));
  }
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) == 0) {
    return Status::Internal("cannot sign certificate: " + OpenSslError());
  }
  return cert;
}

// Whether `cert` names every one of `names` and is valid for 30 more days.
bool StillGood(X509* cert, const std::vector<std::string>& names, int64_t now_unix) {
  time_t later = static_cast<time_t>(now_unix + kRenewBefore);
  if (X509_cmp_time(X509_get0_notAfter(cert), &later) <= 0) return false;
  for (const std::string& n : names) {
    int ok = IsIpLiteral(n) ? X509_check_ip_asc(cert, n.c_str(), 0)
                            : X509_check_host(cert, n.c_str(), n.size(), 0, nullptr);
    if (ok != 1) return false;
  }
  return true;
}

}  // namespace

Status ValidatePin(std::string_view pin) {
  constexpr std::string_view kPrefix = "sha256//";
  auto bad = [&] {
    return Status::InvalidArgument("pin \"" + std::string(pin.substr(0, 80)) +
                                   "\" is not sha256//<44 base64 characters> (see `rota server` "
                                   "start-up output or `rota tls pin CERT`)");
  };
  if (pin.substr(0, kPrefix.size()) != kPrefix) return bad();
  std::string_view b64 = pin.substr(kPrefix.size());
  if (b64.size() != 44 || b64.back() != '=') return bad();
  for (char c : b64.substr(0, 43)) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/')) return bad();
  }
  return Status::Ok();
}

std::string PublicKeyPin(x509_st* cert) {
  unsigned char* der = nullptr;
  int n = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(cert), &der);
  if (n <= 0) return "";
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int len = 0;
  EVP_Digest(der, static_cast<size_t>(n), digest.data(), &len, EVP_sha256(), nullptr);
  OPENSSL_free(der);
  std::array<unsigned char, 64> b64{};
  int m = EVP_EncodeBlock(b64.data(), digest.data(), static_cast<int>(len));
  return "sha256//" + std::string(reinterpret_cast<const char*>(b64.data()), static_cast<size_t>(m));
}

Result<std::string> PublicKeyPinOfFile(const std::string& cert_file) {
  ASSIGN_OR_RETURN(X509Ptr cert, ReadCert(cert_file));
  return PublicKeyPin(cert.get());
}

Result<std::string> CertificateFingerprintOfFile(const std::string& cert_file) {
  ASSIGN_OR_RETURN(X509Ptr cert, ReadCert(cert_file));
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int len = 0;
  X509_digest(cert.get(), EVP_sha256(), digest.data(), &len);
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "SHA256:";
  for (unsigned int i = 0; i < len; ++i) {
    if (i > 0) out += ':';
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

Result<GeneratedTls> EnsureGeneratedTls(const std::string& dir,
                                        const std::vector<std::string>& names, int64_t now_unix) {
  RETURN_IF_ERROR(MakeDirs(dir, 0700));
  if (::chmod(dir.c_str(), 0700) != 0) {
    return Status::PermissionDenied("cannot make " + dir + " mode 0700");
  }
  GeneratedTls out;
  out.ca_file = dir + "/ca.pem";
  out.cert_file = dir + "/server.pem";
  out.key_file = dir + "/server.key";
  const std::string ca_key_file = dir + "/ca.key";

  X509Ptr ca;
  KeyPtr ca_key;
  if (FileExists(out.ca_file) && FileExists(ca_key_file)) {
    ASSIGN_OR_RETURN(ca, ReadCert(out.ca_file));
    ASSIGN_OR_RETURN(ca_key, ReadKey(ca_key_file));
  } else {
    ASSIGN_OR_RETURN(ca_key, NewKey());
    ASSIGN_OR_RETURN(ca, Issue(ca_key.get(), "rota private CA", nullptr, ca_key.get(), true, {},
                               now_unix, kCaLifetime));
    RETURN_IF_ERROR(WriteFileAtomic(ca_key_file, ToPem(ca_key.get()), 0600));
    RETURN_IF_ERROR(WriteFileAtomic(out.ca_file, ToPem(ca.get()), 0644));
  }

  KeyPtr key;
  if (FileExists(out.key_file)) {
    ASSIGN_OR_RETURN(key, ReadKey(out.key_file));
  } else {
    ASSIGN_OR_RETURN(key, NewKey());
    RETURN_IF_ERROR(WriteFileAtomic(out.key_file, ToPem(key.get()), 0600));
  }
  bool good = false;
  if (FileExists(out.cert_file)) {
    Result<X509Ptr> cert = ReadCert(out.cert_file);
    good = cert.ok() && X509_check_private_key(cert->get(), key.get()) == 1 &&
           X509_check_issued(ca.get(), cert->get()) == X509_V_OK &&
           StillGood(cert->get(), names, now_unix);
    ERR_clear_error();
  }
  if (!good) {
    const std::string cn = names.empty() ? "rota server" : names.front();
    ASSIGN_OR_RETURN(X509Ptr cert, Issue(key.get(), cn, ca.get(), ca_key.get(), false, names,
                                         now_unix, kServerLifetime));
    RETURN_IF_ERROR(WriteFileAtomic(out.cert_file, ToPem(cert.get()) + ToPem(ca.get()), 0644));
    out.issued = true;
  }
  ASSIGN_OR_RETURN(out.pin, PublicKeyPinOfFile(out.cert_file));
  ASSIGN_OR_RETURN(out.fingerprint, CertificateFingerprintOfFile(out.ca_file));
  return out;
}

}  // namespace rota::net
