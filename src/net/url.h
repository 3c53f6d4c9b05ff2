#pragma once
// URL helpers: percent-encoding, query strings, splitting ws:// and http:// URLs. No Boost.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace rota::net {

// Decodes %XX escapes; with `plus_is_space` also '+' -> ' ' (form/query encoding).
// Returns nullopt on a bad escape ("%", "%4", "%zz"), an encoded NUL ("%00") or a
// result that is not well-formed UTF-8 ("%FF").
std::optional<std::string> PercentDecode(std::string_view text, bool plus_is_space);

// Encodes every byte outside RFC 3986 "unreserved" (A-Z a-z 0-9 - . _ ~) as %XX.
std::string PercentEncode(std::string_view text);

// Parses "a=1&b=x%20y&flag" into {a:1, b:"x y", flag:""}. Empty pieces ("a=1&&b=2") are
// skipped; a repeated key keeps the last value. Bad escapes -> InvalidArgument naming the key.
Result<std::map<std::string, std::string>> ParseQuery(std::string_view query);

struct Url {
  std::string scheme;  // "ws", "wss", "http", "https" (lower case)
  std::string host;    // "127.0.0.1", "node-a", "::1" (no brackets)
  uint16_t port = 0;   // explicit, or the scheme default (80 / 443)
  std::string target;  // path and query, at least "/"
};

// Parses "ws://host:port/path?q". No user-info or fragments. Errors name the URL.
Result<Url> ParseUrl(const std::string& url);

// Whether `host` (a name or an IP literal, brackets allowed) is this machine's loopback:
// "localhost", 127.0.0.0/8, ::1. Traffic to it never crosses a network.
bool IsLoopbackHost(std::string_view host);

}  // namespace rota::net
