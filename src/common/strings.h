#pragma once
// Small string helpers.

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace rota {

std::vector<std::string> Split(std::string_view text, char sep, bool skip_empty = false);
std::string Join(const std::vector<std::string>& parts, std::string_view sep);
std::string_view Trim(std::string_view text);
bool StartsWith(std::string_view text, std::string_view prefix);
// The first line of `text` (a tool's error output, for messages), cut at max_bytes.
std::string FirstLine(std::string_view text, size_t max_bytes);
// `text` with ASCII letters in lower case (other bytes as they are).
std::string ToLower(std::string_view text);
// True when `needle` occurs in `text`, ASCII letters compared without case
// ("a100" in "NVIDIA A100-SXM4-80GB"). An empty needle occurs everywhere.
bool ContainsIgnoringCase(std::string_view text, std::string_view needle);
// The length (1..4) of the well-formed UTF-8 sequence at text[i], or 0 when the
// byte there starts none (RFC 3629: no overlong forms, no surrogates, at most
// U+10FFFF). REQUIRES: i < text.size().
size_t Utf8SequenceLength(std::string_view text, size_t i);
// True when all of `text` is well-formed UTF-8 (as above).
bool IsValidUtf8(std::string_view text);
// OK when `text` is valid UTF-8 of at most `max_chars` code points without
// control characters (newlines, tabs and CR allowed when `allow_newlines`);
// else InvalidArgument naming `field`.
Status CheckText(const std::string& field, const std::string& text, size_t max_chars,
                 bool allow_newlines);
// Lower-case hex of the bytes of `bytes`.
std::string HexEncode(std::string_view bytes);
// The bytes of `hex` (even length, digits 0-9a-f or A-F); nullopt-like false otherwise.
bool HexDecode(std::string_view hex, std::string* out);
}  // namespace rota
