#include "cli/yaml_json.h"

#include <cstdio>
#include <string>

#include "common/strings.h"

namespace rota::cli {
namespace {

constexpr size_t kMaxValues = 100'000;

// JSON strings are UTF-8 (dump() throws on anything else): a key or value that is not, say
// a file saved as Latin-1, is refused naming its line, with the bad bytes as \xNN.
Status CheckUtf8(const YAML::Node& n, const std::string& s) {
  if (IsValidUtf8(s)) return Status::Ok();
  std::string shown;
  for (size_t i = 0; i < s.size() && shown.size() < 60;) {
    size_t len = Utf8SequenceLength(s, i);
    if (len == 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(s[i]));
      shown += hex;
      ++i;
    } else {
      shown.append(s, i, len);
      i += len;
    }
  }
  const std::string where = n.Mark().is_null() ? "" : "line " + std::to_string(n.Mark().line + 1) + ": ";
  return Status::InvalidArgument(where + "'" + shown + "' is not UTF-8 (save the file as UTF-8)");
}

Result<api::Json> Convert(const YAML::Node& n, YamlNumbers numbers, size_t depth, size_t& values) {
  using api::Json;
  if (++values > kMaxValues) {
    return Status::InvalidArgument("more than " + std::to_string(kMaxValues) + " values (aliases expanded)");
  }
  if (depth > api::kMaxJsonDepth) {
    return Status::InvalidArgument("nested deeper than " + std::to_string(api::kMaxJsonDepth) + " levels");
  }
  if (n.IsMap()) {
    Json j = Json::object();
    for (const auto& kv : n) {
      const std::string key = kv.first.as<std::string>();
      RETURN_IF_ERROR(CheckUtf8(kv.first, key));
      ASSIGN_OR_RETURN(j[key], Convert(kv.second, numbers, depth + 1, values));
    }
    return j;
  }
  if (n.IsSequence()) {
    Json j = Json::array();
    for (const auto& e : n) {
      ASSIGN_OR_RETURN(Json v, Convert(e, numbers, depth + 1, values));
      j.push_back(std::move(v));
    }
    return j;
  }
  if (!n.IsScalar()) return Json(nullptr);
  const std::string s = n.Scalar();
  RETURN_IF_ERROR(CheckUtf8(n, s));
  if (n.Tag() != "!") {  // plain: booleans and numbers as such
    if (s == "true" || s == "false") return Json(s == "true");
    if (numbers == YamlNumbers::kIntegers) {
      if (!s.empty() && s.find_first_not_of("0123456789") == std::string::npos && s.size() < 18) {
        return Json(std::stoll(s));
      }
    } else if (auto parsed = Json::parse(s, nullptr, false); !parsed.is_discarded() && parsed.is_number()) {
      return parsed;
    }
  }
  return Json(s);
}

}  // namespace

Result<api::Json> YamlToJson(const YAML::Node& root, YamlNumbers numbers) {
  size_t values = 0;
  return Convert(root, numbers, 0, values);
}

}  // namespace rota::cli
