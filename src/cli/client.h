#pragma once
// ApiClient: the CLI's view of a rota server. Finds the server from, in order:
// --server, ROTA_SERVER, the CLI config file (~/.config/rota/cli.yaml, keys
// `server` and `token`), then http://127.0.0.1:8080. ROTA_TOKEN likewise. How an https://
// server is trusted (net/tls.h): --server-pin / ROTA_SERVER_PIN / `server_pin`, else
// --ca-file / ROTA_CA_FILE / `ca_file`, else the system's CAs.

#include <atomic>
#include <string>

#include "api/codec.h"
#include "common/status.h"
#include "net/tls.h"

namespace rota::cli {

struct ClientOptions {
  std::string server;  // from --server; "" to look further
  std::string token;   // from --token; "" to look further
  std::string ca_file;     // from --ca-file; "" to look further
  std::string server_pin;  // from --server-pin; "" to look further
  int timeout_ms = 10000;
  bool anonymous = false;  // send no token at all (rota login)
};

// Path of the CLI config file ($XDG_CONFIG_HOME or ~/.config)/rota/cli.yaml;
// "" when neither variable is set.
std::string CliConfigPath();
// Writes `server`, `token` and how the server is trusted to the CLI config file (mode 0600,
// directory created 0700). An empty token removes it.
Status SaveCliConfig(const std::string& server, const std::string& token,
                     const net::TlsClientConfig& tls);

class ApiClient {
 public:
  // Resolves the server URL, token and trust as described above, and makes the trust the
  // process's (net::SetClientTls). Errors: a bad URL or pin, an unreadable CA file.
  static Result<ApiClient> Create(const ClientOptions& options);

  // The server answering now: the first of ROTA_SERVER's list (URL1,URL2,...: servers
  // sharing one store), or the one a call last reached after the others failed.
  std::string base_url() const { return servers_[current_.load() % servers_.size()]; }
  // The whole list, as given (what `rota login` saves).
  const std::string& server_list() const { return server_list_; }
  const std::string& token() const { return token_; }
  const net::TlsClientConfig& tls() const { return tls_; }

  // With several servers, a call that cannot reach one, or that it answers 503, goes to
  // the next in turn (each at most once per call).
  // GET base_url + path; a non-2xx answer becomes a Status with the server's
  // message (404 -> NotFound, 400 -> InvalidArgument, ...). Unreachable server ->
  // Unavailable naming the URL and how to point the CLI elsewhere.
  Result<api::Json> Get(const std::string& path) const;
  // Any method with an optional JSON body (sent with Content-Type
  // application/json when not empty). Errors as for Get; a 204 answer or an
  // empty body gives a null Json.
  Result<api::Json> Call(const std::string& method, const std::string& path,
                         const std::string& body = "") const;
  Result<api::Json> Post(const std::string& path, const api::Json& body) const {
    return Call("POST", path, body.dump());
  }
  Result<api::Json> Delete(const std::string& path) const { return Call("DELETE", path); }

  // Headers to send (Authorization when a token is set).
  std::vector<std::string> Headers() const;

 private:
  ApiClient(std::string server_list, std::vector<std::string> servers, std::string token,
            net::TlsClientConfig tls, int timeout_ms)
      : server_list_(std::move(server_list)),
        servers_(std::move(servers)),
        token_(std::move(token)),
        tls_(std::move(tls)),
        timeout_ms_(timeout_ms) {}

 public:
  ApiClient(const ApiClient& o)
      : server_list_(o.server_list_), servers_(o.servers_), current_(o.current_.load()), token_(o.token_),
        tls_(o.tls_), timeout_ms_(o.timeout_ms_) {}
  ApiClient(ApiClient&& o) noexcept
      : server_list_(std::move(o.server_list_)), servers_(std::move(o.servers_)), current_(o.current_.load()),
        token_(std::move(o.token_)), tls_(std::move(o.tls_)), timeout_ms_(o.timeout_ms_) {}

 private:
  std::string server_list_;
  std::vector<std::string> servers_;  // never empty
  mutable std::atomic<size_t> current_{0};
  std::string token_;
  net::TlsClientConfig tls_;
  int timeout_ms_;
};

}  // namespace rota::cli
