#include "server/tls_setup.h"

#include <unistd.h>

#include <algorithm>
#include <array>

#include "net/url.h"

namespace rota::server {
namespace {

bool IsWildcard(const std::string& address) {
  return address.empty() || address == "0.0.0.0" || address == "::";
}

void AddName(std::vector<std::string>* names, std::string name) {
  if (name.size() >= 2 && name.front() == '[' && name.back() == ']') {
    name = name.substr(1, name.size() - 2);
  }
  if (name.empty() || IsWildcard(name)) return;
  if (std::find(names->begin(), names->end(), name) == names->end()) names->push_back(name);
}

}  // namespace

std::vector<std::string> CertificateNames(const ServerConfig& config) {
  std::vector<std::string> names;
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) == 0) AddName(&names, host.data());
  AddName(&names, config.listen_address);
  if (!config.public_url.empty()) {
    if (Result<net::Url> url = net::ParseUrl(config.public_url); url.ok()) {
      AddName(&names, url->host);
    }
  }
  for (const std::string& n : config.tls_names) AddName(&names, n);
  for (const char* n : {"localhost", "127.0.0.1", "::1"}) AddName(&names, n);
  return names;
}

Result<ServerTls> SetUpServerTls(const ServerConfig& config, int64_t now_unix) {
  const bool has_cert = !config.tls_cert_file.empty();
  if (has_cert != !config.tls_key_file.empty()) {
    return Status::InvalidArgument("tls_cert_file and tls_key_file go together: set both or neither");
  }
  ServerTls out;
  if (!config.tls_ca_file.empty()) {
    if (::access(config.tls_ca_file.c_str(), R_OK) != 0) {
      return Status::InvalidArgument("tls_ca_file " + config.tls_ca_file + " is not readable");
    }
    out.peer_ca_file = config.tls_ca_file;
  }
  const bool loopback = net::IsLoopbackHost(config.listen_address);
  if (config.tls == "off") {
    if (has_cert) {
      return Status::InvalidArgument("tls is off but tls_cert_file is set: remove one of them");
    }
    out.plain_on_network = !loopback;
    return out;
  }
  out.enabled = config.tls == "on" || has_cert || !loopback;
  if (!out.enabled) return out;
  if (has_cert) {
    out.files = {config.tls_cert_file, config.tls_key_file};
  } else {
    ASSIGN_OR_RETURN(net::GeneratedTls generated,
                     net::EnsureGeneratedTls(config.data_dir + "/tls", CertificateNames(config),
                                             now_unix));
    out.files = {generated.cert_file, generated.key_file};
    out.generated = std::move(generated);
  }
  ASSIGN_OR_RETURN(out.pin, net::PublicKeyPinOfFile(out.files.cert_file));
  if (out.peer_ca_file.empty() && out.generated) out.peer_ca_file = out.generated->ca_file;
  return out;
}

}  // namespace rota::server
