#include "server/store/store_url.h"

#include <libpq-fe.h>

#include <cstring>
#include <map>
#include <string_view>
#include <vector>

#include "common/strings.h"

namespace rota::store {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::string HideUrlIn(std::string text, const std::string& url) {
  if (url.empty()) return text;
  const std::string shown = RedactStoreUrl(url);
  for (size_t pos = 0; (pos = text.find(url, pos)) != std::string::npos; pos += shown.size()) {
    text.replace(pos, url.size(), shown);
  }
  return text;
}

std::string RedactStoreUrl(const std::string& url) {
  std::string out = url;
  // scheme://user:password@host...: the password runs from the first ':' after
  // "://" up to the last '@' before the path.
  const size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    const size_t auth = scheme + 3;
    size_t end = out.find_first_of("/?", auth);
    if (end == std::string::npos) end = out.size();
    const size_t at = out.rfind('@', end == 0 ? 0 : end - 1);
    if (at != std::string::npos && at >= auth) {
      const size_t colon = out.find(':', auth);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // password=... in the query string or a key=value connection string.
  for (size_t pos = 0; (pos = out.find("password=", pos)) != std::string::npos;) {
    const bool starts_word = pos == 0 || out[pos - 1] == '?' || out[pos - 1] == '&' ||
                             out[pos - 1] == ' ';
    pos += std::strlen("password=");
    if (!starts_word) continue;
    const size_t end = out.find_first_of("& ", pos);
    out.replace(pos, (end == std::string::npos ? out.size() : end) - pos, "***");
  }
  return out;
}

Result<StoreUrl> ParseStoreUrl(const std::string& url) {
  StoreUrl u;
  if (StartsWith(url, "sqlite:")) {
    std::string path = url.substr(std::strlen("sqlite:"));
    if (StartsWith(path, "//")) path = path.substr(2);  // sqlite:///var/lib/rota/rota.db
    if (path.empty() || path.back() == '/') {
      return Status::InvalidArgument("store URL " + url +
                                     ": name the database file, e.g. sqlite:/var/lib/rota/rota.db");
    }
    u.dialect = Dialect::kSqlite;
    u.sqlite_path = path;
    u.display = "sqlite:" + path;
    return u;
  }
  const std::string shown = RedactStoreUrl(url);
  if (!StartsWith(url, "postgresql://") && !StartsWith(url, "postgres://")) {
    return Status::InvalidArgument("store URL '" + shown +
                                   "': use sqlite:PATH or postgresql://[user@]host[:port]/database");
  }
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
  if (opts == nullptr) {
    std::string why = err ? err : "cannot parse";
    PQfreemem(err);
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    // libpq quotes the URI it could not parse, password included.
    return Status::InvalidArgument("store URL " + shown + ": " + HideUrlIn(why, url));
  }
  std::map<std::string, std::string> v;
  for (PQconninfoOption* o = opts; o->keyword; ++o) {
    if (o->val && *o->val) v[o->keyword] = o->val;
  }
  PQconninfoFree(opts);
  // Rebuilt without the password: postgresql://user@host1:port1,host2/dbname.
  std::vector<std::string> hosts = v.count("host") ? SplitList(v["host"]) : std::vector<std::string>{};
  if (hosts.empty() && v.count("hostaddr")) hosts = SplitList(v["hostaddr"]);
  const std::vector<std::string> ports =
      v.count("port") ? SplitList(v["port"]) : std::vector<std::string>{};
  std::vector<std::string> where;
  for (size_t i = 0; i < hosts.size(); ++i) {
    const std::string& port = ports.size() == 1 ? ports[0] : (i < ports.size() ? ports[i] : "");
    where.push_back(hosts[i] + (port.empty() ? "" : ":" + port));
  }
  if (hosts.empty() && !ports.empty()) where.push_back(":" + ports[0]);
  u.dialect = Dialect::kPostgres;
  u.pg_url = url;
  u.hosts = Join(where, ",");
  u.display = "postgresql://" + (v.count("user") ? v["user"] + "@" : "") + u.hosts + "/" +
              (v.count("dbname") ? v["dbname"] : "");
  return u;
}

}  // namespace rota::store
