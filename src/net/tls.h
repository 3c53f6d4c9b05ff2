#pragma once
// TLS settings shared by the server, the agent and the CLI, and the certificate tools behind
// `rota server`'s generated private CA. OpenSSL underneath; this header is Boost- and
// OpenSSL-free.
//
// How a client trusts a server (TlsClientConfig), in order:
//   pin      "sha256//<base64>": the SHA-256 of the server certificate's public key
//            (SubjectPublicKeyInfo), as curl's --pinnedpubkey takes it. Nothing else is
//            checked: neither CA nor name. The generated server key is kept across
//            certificate renewals, so the pin stays valid.
//   ca_file  PEM file of the CA certificates to trust, with host name verification (the
//            generated CA is <data_dir>/tls/ca.pem).
//   neither  the system's CAs, with host name verification.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

struct x509_st;  // OpenSSL's X509

namespace rota::net {

struct TlsServerConfig {
  std::string cert_file;  // PEM: the server certificate, then any intermediates
  std::string key_file;   // PEM: its private key
  bool enabled() const { return !cert_file.empty(); }
};

struct TlsClientConfig {
  std::string ca_file;
  std::string pin;
};

// Checks a pin's form ("sha256//" then 44 base64 characters). Errors name the value.
Status ValidatePin(std::string_view pin);

// The pin of a certificate's public key. `cert` must not be null.
std::string PublicKeyPin(x509_st* cert);
// ... of the first certificate in a PEM file.
Result<std::string> PublicKeyPinOfFile(const std::string& cert_file);
// "SHA256:AB:CD:..." of the first certificate in a PEM file (what `openssl x509 -fingerprint
// -sha256` prints), for people comparing by eye.
Result<std::string> CertificateFingerprintOfFile(const std::string& cert_file);

// The files of the server's own private CA and certificate, in `dir`:
//   ca.pem, ca.key          the CA (10 years; its key never leaves `dir`)
//   server.pem, server.key  the server certificate (825 days), signed by the CA; server.pem
//                           holds the certificate then the CA certificate
struct GeneratedTls {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  std::string pin;          // of the server key
  std::string fingerprint;  // of the CA certificate
  bool issued = false;      // a server certificate was (re)issued by this call
};

// Creates `dir` (0700) and the CA and server key and certificate when missing. The server
// certificate names `names` (DNS names or IP literals) as subject alternative names; it is
// reissued, with the same key, when it lacks one of them or expires within 30 days of
// `now_unix`. Keys are written 0600. Errors name the file.
Result<GeneratedTls> EnsureGeneratedTls(const std::string& dir,
                                        const std::vector<std::string>& names, int64_t now_unix);

}  // namespace rota::net
