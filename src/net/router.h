#pragma once
// Path patterns and the HTTP router. No Boost; used by HttpServer and testable alone.
//
// A pattern is "/" followed by '/'-separated segments. A segment is either a literal
// ("nodes") or a parameter ("{name}", name of [A-Za-z0-9_]) that matches one non-empty path
// segment; the captured text is percent-decoded. Matching is exact: no prefixes, no regex,
// "/a" and "/a/" differ. When several patterns match, the one with a literal at the first
// position where they differ wins ("/nodes/summary" beats "/nodes/{name}").

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "net/http_types.h"

namespace rota::net {

class PathPattern {
 public:
  // Errors: not starting with '/', '{' or '}' inside a literal, empty or bad parameter name,
  // a parameter name used twice, '?' or '#' in the pattern.
  static Result<PathPattern> Parse(const std::string& pattern);

  enum class MatchResult { kNoMatch, kMatch, kBadEscape };
  // Matches `path` (raw, not decoded). On kMatch fills `params`; on kBadEscape sets `error`.
  MatchResult Match(const std::string& path, std::map<std::string, std::string>* params,
                    std::string* error) const;
  // The same for a path already split at '/' (without the leading '/'), so a
  // router splits each request's path once, not once per route.
  MatchResult MatchParts(const std::vector<std::string_view>& parts,
                         std::map<std::string, std::string>* params, std::string* error) const;

  const std::string& text() const { return text_; }
  // True when both patterns match exactly the same paths (same literals, params anywhere else).
  bool SameShape(const PathPattern& other) const;
  // True when this pattern should win over `other` when both match one path.
  bool MoreSpecificThan(const PathPattern& other) const;

 private:
  struct Segment {
    bool is_param = false;
    std::string text;  // literal text or parameter name
  };
  std::string text_;
  std::vector<Segment> segments_;
};

// Maps (method, path) to a Handler. Add() before use; Dispatch() is const and thread-safe.
class Router {
 public:
  // Errors: bad pattern, empty method, or a route with the same method and shape exists.
  Status Add(const std::string& method, const std::string& pattern, Handler handler);
  // The same for a handler that answers through a Responder (see http_types.h).
  Status AddAsync(const std::string& method, const std::string& pattern, AsyncHandler handler);

  // Answers the requests no route matches (instead of 404 / 405), e.g. a server that
  // forwards them elsewhere. Before use.
  void SetFallback(AsyncHandler handler) { fallback_ = std::move(handler); }

  struct Lookup {
    enum class Kind { kFound, kNotFound, kMethodNotAllowed, kBadPath } kind = Kind::kNotFound;
    const AsyncHandler* handler = nullptr;      // kFound
    std::map<std::string, std::string> params;  // kFound
    std::string allow;                          // kMethodNotAllowed: "GET, POST" (sorted, unique)
    std::string error;                          // kBadPath
  };
  Lookup Find(const std::string& method, const std::string& path) const;

  // Finds the route, fills request->path_params and runs the handler, which answers
  // through `respond` (now or later). Misses are answered 404 / 405 (with Allow) / 400 at
  // once. Does not catch handler exceptions.
  void Dispatch(HttpRequest* request, const Responder& respond) const;

 private:
  struct Route {
    std::string method;
    PathPattern pattern;
    AsyncHandler handler;
  };
  std::vector<Route> routes_;
  AsyncHandler fallback_;
};

}  // namespace rota::net
