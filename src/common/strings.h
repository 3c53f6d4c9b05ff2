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
// `text` with ASCII letters in lower case (other bytes as they are).
std::string ToLower(std::string_view text);
// True when `needle` occurs in `text`, ASCII letters compared without case
// ("a100" in "NVIDIA A100-SXM4-80GB"). An empty needle occurs everywhere.
bool ContainsIgnoringCase(std::string_view text, std::string_view needle);
// OK when `text` is valid UTF-8 of at most `max_chars` code points without
// control characters (newlines, tabs and CR allowed when `allow_newlines`);
// else InvalidArgument naming `field`.
Status CheckText(const std::string& field, const std::string& text, size_t max_chars,
                 bool allow_newlines);
}  // namespace rota
