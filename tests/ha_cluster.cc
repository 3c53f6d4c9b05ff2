#include "tests/ha_cluster.h"

#include "common/file_util.h"

namespace rota::testing {

std::string RoleOf(const std::string& url) {
  auto r = net::HttpCall("GET", url + "/healthz", "", {}, 1000);
  if (!r.ok() || r->status != 200) return "";
  auto j = api::ParseJson(r->body);
  return j.ok() ? j->value("role", "") : "";
}

bool Leads(const std::string& url) {
  if (RoleOf(url) != "leader") return false;
  auto r = net::HttpCall("GET", url + "/readyz", "", {}, 1000);
  return r.ok() && r->status == 200 && r->body.find("connected_agents") != std::string::npos;
}

Result<net::ClientResponse> CallAny(const std::vector<std::string>& urls, const std::string& token,
                                    const std::string& method, const std::string& path, const std::string& body,
                                    size_t* start) {
  Result<net::ClientResponse> last = Status::Unavailable("no server");
  for (size_t i = 0; i < urls.size(); ++i) {
    const std::string& url = urls[(*start + i) % urls.size()];
    last = net::HttpCall(method, url + path, body,
                         {"Content-Type: application/json", "Authorization: Bearer " + token}, 5000);
    if (last.ok() && last->status != 503) {
      *start = (*start + i) % urls.size();
      return last;
    }
  }
  *start = (*start + 1) % urls.size();
  return last;
}

std::unique_ptr<ServerProcess> ClusterServer(const std::string& base, const std::string& name,
                                             const std::string& store_url,
                                             const std::map<std::string, std::string>& env) {
  const std::string data = base + "/" + name;
  if (!MakeDirs(data, 0700).ok() ||
      !WriteFileAtomic(data + "/auth-key", std::string(kClusterAuthKey) + "\n", 0600).ok()) {
    return nullptr;
  }
  auto s = std::make_unique<ServerProcess>(data);
  s->SetEnv("ROTA_STORE", store_url);
  s->SetEnv("ROTA_JOB_PORTS", "31600-31699");
  for (const auto& [k, v] : env) s->SetEnv(k, v);
  return s;
}

}  // namespace rota::testing
