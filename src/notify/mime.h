#pragma once
// Building RFC 5322 / MIME messages: address checks, RFC 2047 header words,
// quoted-printable bodies, and the whole multipart/alternative message. Pure functions,
// no I/O; thread-safe.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace rota::notify {

// A mailbox as written in From: "Rota <rota@example.com>" or "rota@example.com".
struct Mailbox {
  std::string display_name;  // may be empty; UTF-8
  std::string address;       // local@domain
};

// True for a plain ASCII addr-spec "local@domain": local part of atext characters and
// dots (no leading/trailing/double dot), domain of LDH labels; at most 254 bytes. Quoted
// local parts, IP literals and non-ASCII (SMTPUTF8) addresses are not accepted.
bool IsValidAddress(std::string_view address);

// Parses "Name <addr>" or "addr". InvalidArgument naming `field` when malformed, when
// the address is invalid, or when the text holds CR, LF or other control characters.
Result<Mailbox> ParseMailbox(std::string_view text, const std::string& field);

// True when `text` is well-formed UTF-8 (no overlongs, surrogates or values > U+10FFFF).
bool IsValidUtf8(std::string_view text);

// A header value for unstructured text (Subject, display names): returned as-is when it
// is printable ASCII, else as RFC 2047 "=?UTF-8?B?...?=" words of at most 75 characters,
// folded with CRLF SP, never splitting a UTF-8 sequence. REQUIRES: valid UTF-8, no CR/LF.
std::string EncodeHeaderText(std::string_view text);

// Quoted-printable (RFC 2045) of UTF-8 text. Line breaks (LF or CRLF) become CRLF; lines
// are at most 76 characters (soft breaks "=" CRLF); a leading '.' is encoded so no line
// can end the SMTP DATA phase.
std::string EncodeQuotedPrintable(std::string_view text);

// RFC 5322 date-time in UTC: "Tue, 14 Nov 2023 22:13:20 +0000".
std::string FormatRfc5322Date(int64_t unix_ms);

struct MimeInput {
  Mailbox from;
  std::vector<std::string> to;  // addresses (already validated)
  std::string subject;          // UTF-8, no CR/LF
  std::string text;             // text/plain part (may be empty when html is set)
  std::string html;             // text/html part (may be empty when text is set)
  int64_t date_ms = 0;
  std::string unique;  // random token for Message-ID and boundary ([0-9a-f]+)
};

// The whole message (headers + body, CRLF line ends). With both parts it is
// multipart/alternative (text first, as RFC 2046 asks); with one, a single part. Adds
// MIME-Version, Date, Message-ID (<unique.date@from-domain>) and Auto-Submitted:
// auto-generated (RFC 3834, so auto-responders stay quiet).
std::string BuildMimeMessage(const MimeInput& in);

}  // namespace rota::notify
