#include "server/request_params.h"

#include "common/time_util.h"

namespace rota::server {

Result<int64_t> ParsePositiveId(const std::string& what, const std::string& text) {
  bool ok = !text.empty() && text.size() <= 18;
  for (char c : text) ok = ok && c >= '0' && c <= '9';
  if (!ok || std::stoll(text) <= 0) {
    return Status::InvalidArgument(what + " id '" + text.substr(0, 40) +
                                   "' must be a positive integer of at most 18 digits");
  }
  return std::stoll(text);
}

Result<int64_t> TimeParam(const net::HttpRequest& req, const char* key, int64_t fallback) {
  auto it = req.query.find(key);
  if (it == req.query.end()) return fallback;
  auto t = ParseRfc3339(it->second);
  if (!t.ok()) return t.status().WithContext(key);
  return *t;
}

Status OnlyQueryParams(const net::HttpRequest& req, std::initializer_list<const char*> allowed) {
  for (const auto& [key, value] : req.query) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || key == a;
    if (!ok) return Status::InvalidArgument("unknown query parameter '" + key.substr(0, 64) + "'");
  }
  return Status::Ok();
}

Result<uint64_t> UintParam(const net::HttpRequest& req, const char* key, uint64_t def,
                           uint64_t max) {
  const std::string v = req.Query(key);
  if (v.empty()) return def;
  bool ok = v.size() <= 19;
  for (char c : v) ok = ok && c >= '0' && c <= '9';
  if (!ok || std::stoull(v) > max) {
    return Status::InvalidArgument(std::string(key) + ": '" + v + "' must be a number up to " +
                                   std::to_string(max));
  }
  return std::stoull(v);
}

}  // namespace rota::server
