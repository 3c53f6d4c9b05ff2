#include "cli/yaml_json.h"

#include <string>

namespace rota::cli {
namespace {

constexpr size_t kMaxValues = 100'000;

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
      ASSIGN_OR_RETURN(j[kv.first.as<std::string>()], Convert(kv.second, numbers, depth + 1, values));
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
