#include "notify/mime.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace rota::notify {
namespace {

bool IsAtext(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  static constexpr std::string_view kSpecials = "!#$%&'*+-/=?^_`{|}~";
  return kSpecials.find(c) != std::string_view::npos;
}

bool IsLdh(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

bool IsPrintableAscii(std::string_view text) {
  for (char c : text) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

bool HasControl(std::string_view text) {
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return true;
  }
  return false;
}

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string Base64(std::string_view in) {
  static constexpr char kTable[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8) |
                 static_cast<uint8_t>(in[i + 2]);
    out += kTable[(v >> 18) & 63];
    out += kTable[(v >> 12) & 63];
    out += kTable[(v >> 6) & 63];
    out += kTable[v & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = static_cast<uint8_t>(in[i]) << 16;
    out += kTable[(v >> 18) & 63];
    out += kTable[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8);
    out += kTable[(v >> 18) & 63];
    out += kTable[(v >> 12) & 63];
    out += kTable[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

// Length of the UTF-8 sequence starting with `lead` (1 for anything unexpected).
size_t Utf8SeqLen(unsigned char lead) {
  if (lead >= 0xf0) return 4;
  if (lead >= 0xe0) return 3;
  if (lead >= 0xc0) return 2;
  return 1;
}

// A display name as a header phrase: bare atoms, a quoted string, or encoded words.
std::string EncodeDisplayName(std::string_view name) {
  if (!IsPrintableAscii(name) || name.find("=?") != std::string_view::npos) {
    return EncodeHeaderText(name);
  }
  bool plain = true;
  for (char c : name) {
    if (!IsAtext(c) && c != ' ') plain = false;
  }
  if (plain) return std::string(name);
  std::string out = "\"";
  for (char c : name) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

std::string FormatMailbox(const Mailbox& m) {
  if (m.display_name.empty()) return m.address;
  return EncodeDisplayName(m.display_name) + " <" + m.address + ">";
}

// "To: a, b, ..." folded before an address that would pass 78 characters.
std::string FoldedAddressHeader(const std::string& name, const std::vector<std::string>& addrs) {
  std::string out = name + ": ";
  size_t line_len = out.size();
  for (size_t i = 0; i < addrs.size(); ++i) {
    if (i > 0) {
      // ", addr" plus the "," a later fold may append must fit in 78.
      if (line_len + 3 + addrs[i].size() > 78) {
        out += ",\r\n ";
        line_len = 1;
      } else {
        out += ", ";
        line_len += 2;
      }
    }
    out += addrs[i];
    line_len += addrs[i].size();
  }
  out += "\r\n";
  return out;
}

std::string DomainOf(const std::string& address) {
  size_t at = address.rfind('@');
  return at == std::string::npos ? "localhost" : address.substr(at + 1);
}

}  // namespace

bool IsValidAddress(std::string_view address) {
  if (address.empty() || address.size() > 254) return false;
  size_t at = address.rfind('@');
  if (at == std::string_view::npos || at == 0 || at > 64) return false;
  std::string_view local = address.substr(0, at);
  std::string_view domain = address.substr(at + 1);
  if (local.front() == '.' || local.back() == '.') return false;
  char prev = 0;
  for (char c : local) {
    if (c == '.' ? prev == '.' : !IsAtext(c)) return false;
    prev = c;
  }
  if (domain.empty() || domain.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = domain.find('.', start);
    std::string_view label =
        domain.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (char c : label) {
      if (!IsLdh(c)) return false;
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return true;
}

Result<Mailbox> ParseMailbox(std::string_view text, const std::string& field) {
  if (HasControl(text)) {
    return Status::InvalidArgument(field + " must not contain control characters (CR, LF, ...)");
  }
  std::string_view t = TrimSpaces(text);
  Mailbox m;
  if (!t.empty() && t.back() == '>') {
    size_t lt = t.rfind('<');
    if (lt == std::string_view::npos) {
      return Status::InvalidArgument(field + " '" + std::string(text) + "' has '>' without '<'");
    }
    std::string_view name = TrimSpaces(t.substr(0, lt));
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"') {
      name = name.substr(1, name.size() - 2);
    }
    if (name.find_first_of("\"\\<>") != std::string_view::npos) {
      return Status::InvalidArgument(field + " '" + std::string(text) +
                                     "': display name must not contain quotes, '\\', '<' or '>'");
    }
    if (!IsValidUtf8(name)) {
      return Status::InvalidArgument(field + ": display name is not valid UTF-8");
    }
    m.display_name = std::string(name);
    m.address = std::string(t.substr(lt + 1, t.size() - lt - 2));
  } else {
    m.address = std::string(t);
  }
  if (!IsValidAddress(m.address)) {
    return Status::InvalidArgument(field + " '" + std::string(text) +
                                   "' is not a valid email address (want local@domain)");
  }
  return m;
}

bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > text.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    i += len;
  }
  return true;
}

std::string EncodeHeaderText(std::string_view text) {
  if (IsPrintableAscii(text) && text.find("=?") == std::string_view::npos) {
    return std::string(text);
  }
  // 39 bytes -> 52 base64 characters -> a 64-character encoded word, so even the first
  // line ("Subject: " + word) stays under 78 characters.
  constexpr size_t kMaxChunk = 39;
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = i;
    while (end < text.size()) {
      size_t len = Utf8SeqLen(static_cast<unsigned char>(text[end]));
      if (end + len - i > kMaxChunk) break;
      end += len;
    }
    if (end == i) end = std::min(text.size(), i + Utf8SeqLen(static_cast<unsigned char>(text[i])));
    if (!out.empty()) out += "\r\n ";
    out += "=?UTF-8?B?" + Base64(text.substr(i, end - i)) + "?=";
    i = end;
  }
  return out;
}

std::string EncodeQuotedPrintable(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  size_t start = 0;
  bool first_line = true;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    std::string_view line =
        text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!first_line) out += "\r\n";
    first_line = false;
    size_t line_len = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(line[i]);
      bool last = i + 1 == line.size();
      std::string token;
      bool literal = (c >= 33 && c <= 126 && c != '=') || ((c == ' ' || c == '\t') && !last);
      if (literal && !(c == '.' && line_len == 0)) {
        token.assign(1, static_cast<char>(c));
      } else {
        token = {'=', kHex[c >> 4], kHex[c & 15]};
      }
      if (line_len + token.size() > 75) {
        out += "=\r\n";
        line_len = 0;
        if (token == ".") token = "=2E";  // '.' now starts a line
      }
      out += token;
      line_len += token.size();
    }
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return out;
}

std::string FormatRfc5322Date(int64_t unix_ms) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  time_t secs = static_cast<time_t>(unix_ms >= 0 ? unix_ms / 1000 : (unix_ms - 999) / 1000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s, %02d %s %04d %02d:%02d:%02d +0000", kDays[tm.tm_wday],
                tm.tm_mday, kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                tm.tm_sec);
  return buf;
}

std::string BuildMimeMessage(const MimeInput& in) {
  std::string msg;
  msg += "Date: " + FormatRfc5322Date(in.date_ms) + "\r\n";
  msg += "From: " + FormatMailbox(in.from) + "\r\n";
  msg += FoldedAddressHeader("To", in.to);
  msg += "Subject: " + EncodeHeaderText(in.subject) + "\r\n";
  msg += "Message-ID: <" + in.unique + "." + std::to_string(in.date_ms) + "@" +
         DomainOf(in.from.address) + ">\r\n";
  msg += "MIME-Version: 1.0\r\n";
  msg += "Auto-Submitted: auto-generated\r\n";
  const std::string kQp = "Content-Transfer-Encoding: quoted-printable\r\n";
  const std::string kText = "Content-Type: text/plain; charset=UTF-8\r\n";
  const std::string kHtml = "Content-Type: text/html; charset=UTF-8\r\n";
  if (in.text.empty() || in.html.empty()) {
    bool html = in.text.empty();
    msg += (html ? kHtml : kText) + kQp + "\r\n";
    msg += EncodeQuotedPrintable(html ? in.html : in.text) + "\r\n";
    return msg;
  }
  // A quoted-printable body never contains "=_" ('=' is always "=3D" or a soft break),
  // so this boundary cannot occur inside a part.
  const std::string boundary = "=_rota_" + in.unique;
  msg += "Content-Type: multipart/alternative; boundary=\"" + boundary + "\"\r\n\r\n";
  msg += "This is a multi-part message in MIME format.\r\n";
  msg += "\r\n--" + boundary + "\r\n" + kText + kQp + "\r\n" + EncodeQuotedPrintable(in.text);
  msg += "\r\n--" + boundary + "\r\n" + kHtml + kQp + "\r\n" + EncodeQuotedPrintable(in.html);
  msg += "\r\n--" + boundary + "--\r\n";
  return msg;
}

}  // namespace rota::notify
