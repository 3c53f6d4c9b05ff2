#pragma once
// YAML files (job specs, policies) as JSON values for the API.

#include <yaml-cpp/yaml.h>

#include "api/codec.h"
#include "common/status.h"

namespace rota::cli {

// How plain (unquoted) scalars that look like numbers convert: integers only
// (other number-like text stays a string), or every JSON number.
enum class YamlNumbers { kIntegers, kAll };

// A YAML document as JSON: maps, sequences, null; plain "true"/"false" as
// booleans and numbers as `numbers` says; quoted scalars stay strings. Aliases
// are expanded, so a small file can stand for a huge value ("billion laughs"):
// InvalidArgument past 100,000 values or api::kMaxJsonDepth levels.
Result<api::Json> YamlToJson(const YAML::Node& root, YamlNumbers numbers);

}  // namespace rota::cli
