#include "common/strings.h"

#include <algorithm>
#include <cctype>

namespace rota {

std::vector<std::string> Split(std::string_view text, char sep, bool skip_empty) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t end = text.find(sep, start);
    std::string_view part = text.substr(start, end == std::string_view::npos ? text.npos : end - start);
    if (!(skip_empty && part.empty())) out.emplace_back(part);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

std::string FirstLine(std::string_view text, size_t max_bytes) {
  return std::string(text.substr(0, std::min(text.find('\n'), max_bytes)));
}

std::string_view Trim(std::string_view text) {
  const char* ws = " \t\r\n";
  size_t b = text.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = text.find_last_not_of(ws);
  return text.substr(b, e - b + 1);
}

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::string ToLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool ContainsIgnoringCase(std::string_view text, std::string_view needle) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  auto it = std::search(text.begin(), text.end(), needle.begin(), needle.end(),
                        [&](char a, char b) { return lower(a) == lower(b); });
  return it != text.end() || needle.empty();
}

size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = at(i);
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size() || at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
  }
  return n;
}

bool IsValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

Status CheckText(const std::string& field, const std::string& text, size_t max_chars,
                 bool allow_newlines) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    const size_t len = Utf8SequenceLength(text, i);
    if (len == 0) {
      return Status::InvalidArgument(field + ": not valid UTF-8 (byte " + std::to_string(i) + ")");
    }
    bool newline = c == '\n' || c == '\t';
    if ((c < 0x20 && !(allow_newlines && (newline || c == '\r'))) || c == 0x7F) {
      return Status::InvalidArgument(field + ": control characters are not allowed");
    }
    i += len;
    ++chars;
  }
  if (chars > max_chars) {
    return Status::InvalidArgument(field + ": " + std::to_string(chars) + " characters; at most " +
                                   std::to_string(max_chars) + " allowed");
  }
  return Status::Ok();
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

bool HexDecode(std::string_view hex, std::string* out) {
  auto digit = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) return false;
  out->clear();
  out->reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = digit(hex[i]), lo = digit(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

}  // namespace rota
