#include "net/router.h"

#include <set>

#include "common/strings.h"
#include "net/url.h"

namespace rota::net {
namespace {

bool IsParamNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

Result<PathPattern> PathPattern::Parse(const std::string& pattern) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("route pattern \"" + pattern + "\": " + why);
  };
  if (pattern.empty() || pattern[0] != '/') return bad("must start with '/'");
  if (pattern.find_first_of("?#") != std::string::npos) return bad("must not contain '?' or '#'");
  PathPattern out;
  out.text_ = pattern;
  std::set<std::string> names;
  for (const std::string& part : Split(std::string_view(pattern).substr(1), '/')) {
    Segment seg;
    if (!part.empty() && part.front() == '{') {
      if (part.back() != '}') return bad("segment \"" + part + "\" is missing '}'");
      seg.is_param = true;
      seg.text = part.substr(1, part.size() - 2);
      if (seg.text.empty()) return bad("empty parameter name");
      for (char c : seg.text) {
        if (!IsParamNameChar(c)) return bad("bad parameter name \"" + seg.text + "\"");
      }
      if (!names.insert(seg.text).second) return bad("parameter \"" + seg.text + "\" repeated");
    } else {
      if (part.find_first_of("{}") != std::string::npos) {
        return bad("segment \"" + part + "\" mixes braces and text");
      }
      seg.text = part;
    }
    out.segments_.push_back(std::move(seg));
  }
  return out;
}

namespace {

// "/a/b/" -> {"a", "b", ""}; nullopt when it does not start with '/'.
std::optional<std::vector<std::string_view>> SplitPath(std::string_view path) {
  if (path.empty() || path[0] != '/') return std::nullopt;
  std::vector<std::string_view> parts;
  size_t start = 1;
  for (;;) {
    const size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      parts.push_back(path.substr(start));
      return parts;
    }
    parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
}

}  // namespace

PathPattern::MatchResult PathPattern::Match(const std::string& path,
                                            std::map<std::string, std::string>* params,
                                            std::string* error) const {
  auto parts = SplitPath(path);
  if (!parts) return MatchResult::kNoMatch;
  return MatchParts(*parts, params, error);
}

PathPattern::MatchResult PathPattern::MatchParts(const std::vector<std::string_view>& parts,
                                                 std::map<std::string, std::string>* params,
                                                 std::string* error) const {
  if (parts.size() != segments_.size()) return MatchResult::kNoMatch;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Segment& seg = segments_[i];
    if (seg.is_param) {
      if (parts[i].empty()) return MatchResult::kNoMatch;
    } else if (parts[i] != seg.text) {
      return MatchResult::kNoMatch;
    }
  }
  // The shape matches: decode parameters.
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!segments_[i].is_param) continue;
    std::optional<std::string> decoded = PercentDecode(parts[i], /*plus_is_space=*/false);
    if (!decoded) {
      if (error != nullptr) {
        *error = "path segment \"" + std::string(parts[i]) + "\" (" + segments_[i].text +
                 "): bad percent-encoding or not UTF-8";
      }
      return MatchResult::kBadEscape;
    }
    out[segments_[i].text] = std::move(*decoded);
  }
  if (params != nullptr) *params = std::move(out);
  return MatchResult::kMatch;
}

bool PathPattern::SameShape(const PathPattern& other) const {
  if (segments_.size() != other.segments_.size()) return false;
  for (size_t i = 0; i < segments_.size(); ++i) {
    const Segment& a = segments_[i];
    const Segment& b = other.segments_[i];
    if (a.is_param != b.is_param) return false;
    if (!a.is_param && a.text != b.text) return false;
  }
  return true;
}

bool PathPattern::MoreSpecificThan(const PathPattern& other) const {
  size_t n = std::min(segments_.size(), other.segments_.size());
  for (size_t i = 0; i < n; ++i) {
    if (segments_[i].is_param != other.segments_[i].is_param) return !segments_[i].is_param;
  }
  return false;
}

Status Router::Add(const std::string& method, const std::string& pattern, Handler handler) {
  if (!handler) return Status::InvalidArgument("route " + method + " " + pattern + ": no handler");
  return AddAsync(method, pattern,
                  [handler = std::move(handler)](const HttpRequest& req, Responder respond) {
                    respond(handler(req));
                  });
}

Status Router::AddAsync(const std::string& method, const std::string& pattern,
                        AsyncHandler handler) {
  if (method.empty()) return Status::InvalidArgument("route " + pattern + ": empty method");
  if (!handler) return Status::InvalidArgument("route " + method + " " + pattern + ": no handler");
  ASSIGN_OR_RETURN(PathPattern parsed, PathPattern::Parse(pattern));
  for (const Route& r : routes_) {
    if (r.method == method && r.pattern.SameShape(parsed)) {
      return Status::AlreadyExists("route " + method + " " + pattern + " conflicts with " +
                                   r.method + " " + r.pattern.text());
    }
  }
  routes_.push_back(Route{method, std::move(parsed), std::move(handler)});
  return Status::Ok();
}

Router::Lookup Router::Find(const std::string& method, const std::string& path) const {
  Lookup out;
  const Route* best = nullptr;
  std::set<std::string> allowed;
  const auto parts = SplitPath(path);
  if (!parts) return out;
  for (const Route& r : routes_) {
    std::map<std::string, std::string> params;
    std::string error;
    switch (r.pattern.MatchParts(*parts, &params, &error)) {
      case PathPattern::MatchResult::kNoMatch:
        continue;
      case PathPattern::MatchResult::kBadEscape:
        out.kind = Lookup::Kind::kBadPath;
        out.error = error;
        return out;
      case PathPattern::MatchResult::kMatch:
        break;
    }
    allowed.insert(r.method);
    if (r.method != method) continue;
    if (best == nullptr || r.pattern.MoreSpecificThan(best->pattern)) {
      best = &r;
      out.params = std::move(params);
    }
  }
  if (best != nullptr) {
    out.kind = Lookup::Kind::kFound;
    out.handler = &best->handler;
  } else if (!allowed.empty()) {
    out.kind = Lookup::Kind::kMethodNotAllowed;
    out.allow = Join(std::vector<std::string>(allowed.begin(), allowed.end()), ", ");
  }
  return out;
}

void Router::Dispatch(HttpRequest* request, const Responder& respond) const {
  Lookup found = Find(request->method, request->path);
  if (fallback_ && (found.kind == Lookup::Kind::kNotFound ||
                    found.kind == Lookup::Kind::kMethodNotAllowed)) {
    return fallback_(*request, respond);
  }
  switch (found.kind) {
    case Lookup::Kind::kFound:
      request->path_params = std::move(found.params);
      return (*found.handler)(*request, respond);
    case Lookup::Kind::kNotFound:
      return respond(HttpResponse::Error(404, "no route for " + request->path));
    case Lookup::Kind::kMethodNotAllowed: {
      HttpResponse r = HttpResponse::Error(
          405, "method " + request->method + " not allowed on " + request->path);
      r.headers.emplace_back("Allow", found.allow);
      return respond(std::move(r));
    }
    case Lookup::Kind::kBadPath:
      return respond(HttpResponse::Error(400, found.error));
  }
  respond(HttpResponse::Error(500, "router: unreachable"));
}

}  // namespace rota::net
