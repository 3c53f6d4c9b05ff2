#pragma once
// How `rota server` serves: plain HTTP or HTTPS/WSS, with the operator's certificate or one
// from its generated private CA (ServerConfig's tls keys; docs/operations.md, "TLS").

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "net/tls.h"
#include "server/config.h"

namespace rota::server {

struct ServerTls {
  bool enabled = false;
  net::TlsServerConfig files;              // what the listener reads (enabled only)
  std::optional<net::GeneratedTls> generated;  // when rota made them
  std::string pin;                         // of the served key (enabled only)
  // Plain HTTP on an address other machines reach (tls: off): said loudly at start.
  bool plain_on_network = false;
  // The CA this server trusts when it calls another server (a follower forwarding to the
  // leader): tls_ca_file, else the generated CA when it made its certificate, else "" (the
  // system's CAs).
  std::string peer_ca_file;
};

// Decides from `config` and, for a generated certificate, creates or renews it in
// <data_dir>/tls (net::EnsureGeneratedTls) for the names the server is reached by.
// Errors: a cert without a key (or the reverse), tls off with files, unreadable files
// (tls_ca_file included).
Result<ServerTls> SetUpServerTls(const ServerConfig& config, int64_t now_unix);

// The names a generated certificate carries for `config` (host name, localhost, loopback
// addresses, a specific listen address, public_url's host, tls_names), without repeats.
std::vector<std::string> CertificateNames(const ServerConfig& config);

}  // namespace rota::server
