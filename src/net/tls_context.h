#pragma once
// OpenSSL contexts for the server's listener and for clients (Asio's ssl::context), and the
// client-side checks of a server (name or pin, see net/tls.h). Internal to the net component's
// Beast translation units: includes Boost and OpenSSL.
//
// Versions: TLS 1.2 and 1.3 only; the default OpenSSL ciphers of Debian (SECLEVEL 2).

// clang-format off
#include <utility>  // must precede Boost.Asio with GCC 12 + C++20 (see PLATFORM.md)
// clang-format on

#include <memory>
#include <string>

#include "common/status.h"
#include "net/tls.h"
#include "net/transport.h"

namespace rota::net::internal {

// A server context with the certificate chain and key of `config`. Errors (unreadable file,
// not PEM, key not matching the certificate) name the file.
Result<std::shared_ptr<boost::asio::ssl::context>> MakeServerTlsContext(
    const TlsServerConfig& config);

// A client context trusting what `config` says (pin: any chain; ca_file: those CAs; else the
// system's). Errors name the CA file.
Result<std::shared_ptr<boost::asio::ssl::context>> MakeClientTlsContext(
    const TlsClientConfig& config);

// Before the client handshake: the server name (SNI) and the verification of `host` (its name
// against the certificate, or the pin).
Status PrepareClientTls(Transport::tls_stream& stream, const std::string& host,
                        const TlsClientConfig& config);

// After the client handshake: with a pin, that the server's certificate has it. Errors are
// Unavailable, naming `url`.
Status CheckServerPin(Transport::tls_stream& stream, const TlsClientConfig& config,
                      const std::string& url);

}  // namespace rota::net::internal
