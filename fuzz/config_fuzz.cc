// The YAML readers: the server's config file (server/config.h, LoadConfigText) and the
// CLI's job and policy files (cli/yaml_json.h, as `rota jobs submit -f` and
// `rota reserve policy create -f` read them). Each is called as its caller calls it
// (catching what the caller catches), so an exception that escapes is a crash here as it
// would be there. Beyond "never crashes":
//  - `rota server --print-config` of any config the server accepts is YAML that reads back;
//  - a file the CLI converts is a JSON value it can send (dump does not throw: strings are
//    well-formed UTF-8) and the server can parse (ParseStrictJson) to the same value.

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "api/codec.h"
#include "cli/yaml_json.h"
#include "jobs/spec.h"
#include "server/config.h"

namespace {

using rota::api::Json;

[[noreturn]] void Fail(const char* what, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "config_fuzz: %s\n  first:  %s\n  second: %s\n", what, a.c_str(), b.c_str());
  std::abort();
}

void ServerConfig(const std::string& text) {
  rota::server::ServerConfig config;
  if (!rota::server::LoadConfigText(&config, text, "fuzz.yaml").ok()) return;
  const std::string printed = rota::server::ConfigToYaml(config, /*show_secrets=*/true);
  try {
    YAML::Node back = YAML::Load(printed);
    if (!back.IsMap()) Fail("--print-config is not a YAML map", printed, "");
  } catch (const YAML::Exception& e) {
    Fail("--print-config is not YAML", printed, e.what());
  }
}

// What the CLI sends: the converted file, dumped (ApiClient::Post), as the server reads it.
void Sent(const Json& j) {
  const std::string body = j.dump();
  auto parsed = rota::api::ParseStrictJson(body);
  if (!parsed.ok()) Fail("the server refuses what the CLI sends", body, parsed.status().ToString());
  if (*parsed != j) Fail("the server reads what the CLI sends differently", body, parsed->dump());
}

void JobFile(const std::string& text) {
  // cli/jobs_cmd.cc LoadSpecFile: JSON first, then YAML; any std::exception is its error.
  Json j;
  if (auto json = rota::api::ParseJson(text); json.ok()) {
    j = *json;
  } else {
    try {
      auto converted = rota::cli::YamlToJson(YAML::Load(text), rota::cli::YamlNumbers::kIntegers);
      if (!converted.ok()) return;
      j = std::move(*converted);
    } catch (const std::exception&) {
      return;
    }
  }
  Sent(j);
  (void)rota::jobs::JobSpecFromJson(j);
}

void PolicyFile(const std::string& text) {
  // cli/reserve_cmd.cc ReadPolicyFile: YAML (JSON is YAML), YAML::Exception is its error.
  Json j;
  try {
    auto converted = rota::cli::YamlToJson(YAML::Load(text), rota::cli::YamlNumbers::kAll);
    if (!converted.ok()) return;
    j = std::move(*converted);
  } catch (const YAML::Exception&) {
    return;
  }
  Sent(j);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ServerConfig(text);
  JobFile(text);
  PolicyFile(text);
  return 0;
}
