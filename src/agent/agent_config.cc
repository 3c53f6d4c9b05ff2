#include "agent/agent_config.h"

#include <yaml-cpp/yaml.h>

#include <map>

#include "common/file_util.h"

namespace rota::agent {
namespace {

// The string-valued settings, by key.
const std::vector<std::pair<std::string, std::string AgentFlags::*>>& StringKeys() {
  static const std::vector<std::pair<std::string, std::string AgentFlags::*>> keys = {
      {"server", &AgentFlags::server},
      {"token", &AgentFlags::token},
      {"token_file", &AgentFlags::token_file},
      {"ca_file", &AgentFlags::ca_file},
      {"server_pin", &AgentFlags::server_pin},
      {"name", &AgentFlags::name},
      {"state_dir", &AgentFlags::state_dir},
      {"interval", &AgentFlags::interval},
      {"buffer", &AgentFlags::buffer},
      {"server_timeout", &AgentFlags::server_timeout},
      {"nvml_library", &AgentFlags::nvml_library},
      {"powercap_root", &AgentFlags::powercap_root},
      {"log_level", &AgentFlags::log_level},
  };
  return keys;
}

}  // namespace

const std::vector<std::string>& AgentConfigKeys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const auto& [key, member] : StringKeys()) out.push_back(key);
    out.push_back("labels");
    out.push_back("enforcement_min_uid");
    return out;
  }();
  return keys;
}

Status LoadAgentConfigText(AgentFlags* flags, const std::string& text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument("config file " + path + " is not valid YAML: " + e.what());
  }
  if (root.IsNull()) return Status::Ok();
  if (!root.IsMap()) return Status::InvalidArgument("config file " + path + " must be a map of settings");
  AgentFlags out = *flags;
  for (const auto& kv : root) {
    std::string key;
    try {
      key = kv.first.as<std::string>();
      const std::string where = "setting '" + key + "' in " + path;
      if (key == "labels") {
        if (kv.second.IsNull()) continue;
        if (!kv.second.IsMap()) return Status::InvalidArgument(where + " must be a map of KEY: VALUE");
        out.labels.clear();
        for (const auto& label : kv.second) {
          if (!label.second.IsScalar()) return Status::InvalidArgument(where + ": each label needs one value");
          out.labels.push_back(label.first.as<std::string>() + "=" + label.second.as<std::string>());
        }
        continue;
      }
      if (!kv.second.IsScalar() && !kv.second.IsNull()) {
        return Status::InvalidArgument(where + " must be a single value");
      }
      const std::string value = kv.second.IsNull() ? "" : kv.second.as<std::string>();
      if (key == "enforcement_min_uid") {
        size_t used = 0;
        long long uid = -1;
        try {
          uid = std::stoll(value, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != value.size() || value.empty() || uid < 0 || uid > 4'294'967'294LL) {
          return Status::InvalidArgument(where + " must be a uid (0..4294967294)");
        }
        out.enforcement_min_uid = uid;
        continue;
      }
      bool known = false;
      for (const auto& [name, member] : StringKeys()) {
        if (name == key) {
          out.*member = value;
          known = true;
        }
      }
      if (!known) return Status::InvalidArgument("unknown setting '" + key + "' in " + path);
    } catch (const YAML::Exception& e) {
      return Status::InvalidArgument("config file " + path + ": " + e.what());
    }
  }
  *flags = std::move(out);
  return Status::Ok();
}

Status LoadAgentConfigFile(AgentFlags* flags, const std::string& path) {
  auto text = ReadFile(path, 1 << 20);
  if (!text.ok()) return text.status().WithContext("config file " + path);
  return LoadAgentConfigText(flags, *text, path);
}

AgentFlags MergeAgentFlags(const AgentFlags& file, const AgentFlags& flags, const std::set<std::string>& given) {
  AgentFlags out = file;
  for (const auto& [key, member] : StringKeys()) {
    if (given.count(key)) out.*member = flags.*member;
  }
  if (given.count("labels")) out.labels = flags.labels;
  if (given.count("enforcement_min_uid")) out.enforcement_min_uid = flags.enforcement_min_uid;
  out.config_file = flags.config_file;
  return out;
}

std::string AgentConfigToYaml(const AgentFlags& flags) {
  const AgentFlags defaults;
  YAML::Emitter out;
  out << YAML::BeginMap;
  for (const auto& [key, member] : StringKeys()) {
    if (flags.*member != defaults.*member) out << YAML::Key << key << YAML::Value << flags.*member;
  }
  if (!flags.labels.empty()) {
    out << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
    for (const auto& label : flags.labels) {
      size_t eq = label.find('=');
      out << YAML::Key << label.substr(0, eq) << YAML::Value
          << (eq == std::string::npos ? "" : label.substr(eq + 1));
    }
    out << YAML::EndMap;
  }
  if (flags.enforcement_min_uid != defaults.enforcement_min_uid) {
    out << YAML::Key << "enforcement_min_uid" << YAML::Value << flags.enforcement_min_uid;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::vector<std::string> ChangedAgentKeys(const AgentFlags& a, const AgentFlags& b) {
  std::vector<std::string> out;
  for (const auto& [key, member] : StringKeys()) {
    if (a.*member != b.*member) out.push_back(key);
  }
  if (a.labels != b.labels) out.push_back("labels");
  if (a.enforcement_min_uid != b.enforcement_min_uid) out.push_back("enforcement_min_uid");
  return out;
}

}  // namespace rota::agent
