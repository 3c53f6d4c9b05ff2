#include "net/url.h"

#include <cctype>

#include "common/strings.h"

namespace rota::net {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      int hi = HexValue(text[i + 1]);
      int lo = HexValue(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      char decoded = static_cast<char>(hi * 16 + lo);
      if (decoded == '\0') return std::nullopt;
      out += decoded;
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += c;
    }
  }
  if (!IsValidUtf8(out)) return std::nullopt;
  return out;
}

std::string PercentEncode(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

Result<std::map<std::string, std::string>> ParseQuery(std::string_view query) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start <= query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    std::string_view piece = query.substr(start, end - start);
    start = end + 1;
    if (piece.empty()) continue;
    size_t eq = piece.find('=');
    std::string_view raw_key = piece.substr(0, eq);
    std::string_view raw_value = eq == std::string_view::npos ? "" : piece.substr(eq + 1);
    std::optional<std::string> key = PercentDecode(raw_key, true);
    if (!key) {
      return Status::InvalidArgument("query parameter \"" + std::string(raw_key) +
                                     "\": bad percent-encoding or not UTF-8 in the name");
    }
    std::optional<std::string> value = PercentDecode(raw_value, true);
    if (!value) {
      return Status::InvalidArgument("query parameter \"" + *key +
                                     "\": bad percent-encoding or not UTF-8 in the value");
    }
    out[*key] = std::move(*value);
  }
  return out;
}

Result<Url> ParseUrl(const std::string& url) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("bad URL \"" + url + "\": " + why);
  };
  Url out;
  size_t sep = url.find("://");
  if (sep == std::string::npos) return bad("missing scheme (expected ws:// or http://)");
  for (char c : url.substr(0, sep)) out.scheme += static_cast<char>(std::tolower(c));
  uint16_t default_port = 0;
  if (out.scheme == "ws" || out.scheme == "http") {
    default_port = 80;
  } else if (out.scheme == "wss" || out.scheme == "https") {
    default_port = 443;
  } else {
    return bad("unsupported scheme \"" + out.scheme + "\"");
  }
  std::string rest = url.substr(sep + 3);
  size_t slash = rest.find_first_of("/?#");
  std::string authority = rest.substr(0, slash);
  out.target = slash == std::string::npos ? "/" : rest.substr(slash);
  if (!out.target.empty() && out.target[0] == '?') out.target = "/" + out.target;
  if (out.target.find('#') != std::string::npos) return bad("fragments are not supported");
  if (authority.find('@') != std::string::npos) return bad("user-info is not supported");
  std::string port_text;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return bad("unterminated IPv6 address");
    out.host = authority.substr(1, close - 1);
    std::string after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return bad("junk after IPv6 address");
      port_text = after.substr(1);
      if (port_text.empty()) return bad("empty port");
    }
  } else {
    size_t colon = authority.rfind(':');
    out.host = authority.substr(0, colon);
    if (colon != std::string::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) return bad("empty port");
    }
  }
  if (out.host.empty()) return bad("missing host");
  out.port = default_port;
  if (!port_text.empty()) {
    if (port_text.size() > 5) return bad("port out of range");
    unsigned long value = 0;
    for (char c : port_text) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return bad("port is not a number");
      value = value * 10 + static_cast<unsigned long>(c - '0');
    }
    if (value == 0 || value > 65535) return bad("port out of range");
    out.port = static_cast<uint16_t>(value);
  }
  return out;
}

bool IsLoopbackHost(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1") return true;
  if (host.substr(0, 4) != "127.") return false;
  int dots = 0;
  for (char c : host.substr(4)) {
    if (c == '.') ++dots;
    else if (c < '0' || c > '9') return false;
  }
  return dots == 2;
}

}  // namespace rota::net
