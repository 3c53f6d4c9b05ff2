#include "cli/client.h"

#include <yaml-cpp/yaml.h>

#include <unistd.h>

#include <cstdlib>

#include "common/file_util.h"
#include "common/strings.h"
#include "net/http_client.h"
#include "net/http_types.h"

namespace rota::cli {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

// Reads `key` from the CLI config file, "" if absent.
Result<std::string> ConfigValue(const std::string& key) {
  const std::string path = CliConfigPath();
  if (path.empty()) return std::string();
  auto text = ReadFile(path);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) return std::string();
    return text.status();
  }
  try {
    YAML::Node root = YAML::Load(*text);
    if (root.IsMap() && root[key] && root[key].IsScalar()) return root[key].as<std::string>();
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument("CLI config " + path + " is not valid YAML: " + e.what());
  }
  return std::string();
}

}  // namespace

std::string CliConfigPath() {
  std::string dir = Env("XDG_CONFIG_HOME");
  if (dir.empty()) {
    std::string home = Env("HOME");
    if (home.empty()) return "";
    dir = home + "/.config";
  }
  return dir + "/rota/cli.yaml";
}

Status SaveCliConfig(const std::string& server, const std::string& token,
                     const net::TlsClientConfig& tls) {
  const std::string path = CliConfigPath();
  if (path.empty()) return Status::InvalidArgument("neither XDG_CONFIG_HOME nor HOME is set");
  RETURN_IF_ERROR(MakeDirs(path.substr(0, path.rfind('/')), 0700));
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "server" << YAML::Value << server;
  if (!token.empty()) out << YAML::Key << "token" << YAML::Value << token;
  if (!tls.ca_file.empty()) out << YAML::Key << "ca_file" << YAML::Value << tls.ca_file;
  if (!tls.pin.empty()) out << YAML::Key << "server_pin" << YAML::Value << tls.pin;
  out << YAML::EndMap;
  return WriteFileAtomic(path, std::string(out.c_str()) + "\n", 0600);
}

Result<ApiClient> ApiClient::Create(const ClientOptions& options) {
  std::string server = options.server;
  if (server.empty()) server = Env("ROTA_SERVER");
  if (server.empty()) {
    ASSIGN_OR_RETURN(server, ConfigValue("server"));
  }
  if (server.empty()) server = "http://127.0.0.1:8080";
  std::vector<std::string> servers;
  for (const auto& part : Split(server, ',')) {
    std::string one(Trim(part));
    if (one.empty()) continue;
    while (!one.empty() && one.back() == '/') one.pop_back();
    if (one.rfind("http://", 0) != 0 && one.rfind("https://", 0) != 0) {
      return Status::InvalidArgument("server URL '" + one + "' must start with http:// or https://");
    }
    servers.push_back(std::move(one));
  }
  if (servers.empty()) return Status::InvalidArgument("server URL '" + server + "' names no server");
  std::string token = options.anonymous ? "" : options.token;
  if (token.empty() && !options.anonymous) token = Env("ROTA_TOKEN");
  if (token.empty() && !options.anonymous) {
    ASSIGN_OR_RETURN(token, ConfigValue("token"));
  }
  // Trust: the first source that names either a pin or a CA file wins as a whole.
  net::TlsClientConfig tls{options.ca_file, options.server_pin};
  if (tls.ca_file.empty() && tls.pin.empty()) tls = {Env("ROTA_CA_FILE"), Env("ROTA_SERVER_PIN")};
  if (tls.ca_file.empty() && tls.pin.empty()) {
    ASSIGN_OR_RETURN(tls.ca_file, ConfigValue("ca_file"));
    ASSIGN_OR_RETURN(tls.pin, ConfigValue("server_pin"));
  }
  if (!tls.pin.empty()) RETURN_IF_ERROR(net::ValidatePin(tls.pin));
  if (!tls.ca_file.empty() && ::access(tls.ca_file.c_str(), R_OK) != 0) {
    return Status::InvalidArgument("CA file " + tls.ca_file + " is not readable");
  }
  net::SetClientTls(tls);
  return ApiClient(server, std::move(servers), token, tls, options.timeout_ms);
}

std::vector<std::string> ApiClient::Headers() const {
  std::vector<std::string> h = {"Accept: application/json"};
  if (!token_.empty()) h.push_back("Authorization: Bearer " + token_);
  return h;
}

Result<api::Json> ApiClient::Get(const std::string& path) const { return Call("GET", path); }

Result<api::Json> ApiClient::Call(const std::string& method, const std::string& path,
                                  const std::string& request_body) const {
  std::vector<std::string> headers = Headers();
  if (!request_body.empty()) headers.push_back("Content-Type: application/json");
  const size_t first = current_.load();
  Result<net::ClientResponse> resp = Status::Unavailable("no server");
  std::string tried;
  for (size_t i = 0; i < servers_.size(); ++i) {
    const std::string& url = servers_[(first + i) % servers_.size()];
    resp = net::HttpCall(method, url + path, request_body, headers, timeout_ms_);
    const bool last = i + 1 == servers_.size();
    if (resp.ok() && (resp->status != 503 || last)) {
      current_ = (first + i) % servers_.size();
      break;
    }
    tried += (tried.empty() ? "" : ", ") + url;
    if (last && !resp.ok()) {
      return Status::Unavailable("cannot reach the rota server at " + tried + " (" +
                                 resp.status().message() +
                                 "); set --server or ROTA_SERVER to the server's URL");
    }
  }
  auto body = api::ParseJson(resp->body);
  if (resp->status < 200 || resp->status >= 300) {
    std::string message = "HTTP " + std::to_string(resp->status);
    if (body.ok() && body->contains("error") && (*body)["error"].contains("message")) {
      message = (*body)["error"]["message"].get<std::string>();
    }
    return Status::FromCode(net::StatusCodeForHttp(resp->status), message);
  }
  if (resp->status == 204 || resp->body.empty()) return api::Json();
  if (!body.ok()) return body.status().WithContext("server answered " + path + " with");
  return body;
}

}  // namespace rota::cli
