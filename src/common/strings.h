#pragma once
// Small string helpers.

#include <string>
#include <string_view>
#include <vector>

namespace rota {

std::vector<std::string> Split(std::string_view text, char sep, bool skip_empty = false);
std::string Join(const std::vector<std::string>& parts, std::string_view sep);
std::string_view Trim(std::string_view text);
bool StartsWith(std::string_view text, std::string_view prefix);
}  // namespace rota
