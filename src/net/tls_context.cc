// OpenSSL contexts for the listener and clients (see tls_context.h).

#include "net/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/verify_context.hpp>
#include <sys/stat.h>

namespace rota::net::internal {
namespace {

namespace ssl = boost::asio::ssl;

constexpr long kContextOptions = static_cast<long>(
    ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
    ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);

bool Readable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

Result<std::shared_ptr<ssl::context>> MakeServerTlsContext(const TlsServerConfig& config) {
  for (const std::string* f : {&config.cert_file, &config.key_file}) {
    if (!Readable(*f)) return Status::InvalidArgument("TLS file " + *f + " is not readable");
  }
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  boost::system::error_code ec;
  ctx->set_options(kContextOptions, ec);
  ctx->use_certificate_chain_file(config.cert_file, ec);
  if (ec) {
    return Status::InvalidArgument("cannot use certificate " + config.cert_file + ": " +
                                   ec.message());
  }
  ctx->use_private_key_file(config.key_file, ssl::context::pem, ec);
  if (ec) {
    return Status::InvalidArgument("cannot use private key " + config.key_file + ": " +
                                   ec.message());
  }
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument("private key " + config.key_file +
                                   " does not match certificate " + config.cert_file);
  }
  return ctx;
}

Result<std::shared_ptr<ssl::context>> MakeClientTlsContext(const TlsClientConfig& config) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  boost::system::error_code ec;
  ctx->set_options(kContextOptions, ec);
  if (!config.pin.empty()) {
    RETURN_IF_ERROR(ValidatePin(config.pin));
  } else if (!config.ca_file.empty()) {
    if (!Readable(config.ca_file)) {
      return Status::InvalidArgument("CA file " + config.ca_file + " is not readable");
    }
    ctx->load_verify_file(config.ca_file, ec);
    if (ec) {
      return Status::InvalidArgument("cannot load CA file " + config.ca_file + ": " +
                                     ec.message());
    }
  } else {
    ctx->set_default_verify_paths(ec);
    if (ec) return Status::Internal("cannot load the system's CAs: " + ec.message());
  }
  ctx->set_verify_mode(ssl::verify_peer);
  return ctx;
}

Status PrepareClientTls(Transport::tls_stream& stream, const std::string& host,
                        const TlsClientConfig& config) {
  if (SSL_set_tlsext_host_name(stream.native_handle(), host.c_str()) != 1) {
    ERR_clear_error();  // an IP literal: no SNI, fine
  }
  boost::system::error_code ec;
  if (!config.pin.empty()) {
    // The pin alone decides, in CheckServerPin right after the handshake and before any
    // byte of the caller's is sent: chain and name errors are ignored here.
    stream.set_verify_callback([](bool, ssl::verify_context&) { return true; }, ec);
  } else {
    stream.set_verify_callback(ssl::host_name_verification(host), ec);
  }
  if (ec) return Status::Internal("cannot set TLS verification: " + ec.message());
  return Status::Ok();
}

Status CheckServerPin(Transport::tls_stream& stream, const TlsClientConfig& config,
                      const std::string& url) {
  if (config.pin.empty()) return Status::Ok();
  X509* cert = SSL_get1_peer_certificate(stream.native_handle());
  if (cert == nullptr) return Status::Unavailable(url + " presented no certificate");
  std::string got = PublicKeyPin(cert);
  X509_free(cert);
  if (got != config.pin) {
    return Status::Unavailable(url + " presented a certificate whose key " + got +
                               " is not the pinned " + config.pin);
  }
  return Status::Ok();
}

}  // namespace rota::net::internal
