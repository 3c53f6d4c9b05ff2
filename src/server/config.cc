#include "server/config.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <sstream>
#include <vector>

#include "common/file_util.h"
#include "common/log.h"
#include "common/time_util.h"

extern char** environ;

namespace rota::server {
namespace {

struct KeyDef {
  const char* key;
  const char* env;
};

const std::vector<KeyDef>& Keys() {
  static const std::vector<KeyDef> keys = {
      {"listen", "ROTA_LISTEN"},
      {"data_dir", "ROTA_DATA_DIR"},
      {"join_token", "ROTA_JOIN_TOKEN"},
      {"raw_retention", "ROTA_RAW_RETENTION"},
      {"aggregate_retention", "ROTA_AGGREGATE_RETENTION"},
      {"retention_interval", "ROTA_RETENTION_INTERVAL"},
      {"missed_heartbeats", "ROTA_MISSED_HEARTBEATS"},
      {"http_threads", "ROTA_HTTP_THREADS"},
      {"max_body_bytes", "ROTA_MAX_BODY_BYTES"},
      {"max_agent_message_bytes", "ROTA_MAX_AGENT_MESSAGE_BYTES"},
      {"log_level", "ROTA_LOG_LEVEL"},
  };
  return keys;
}

Result<int64_t> ParseInt(const std::string& value, int64_t min, int64_t max) {
  if (value.empty()) return Status::InvalidArgument("empty value");
  int64_t v = 0;
  for (char c : value) {
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      return Status::InvalidArgument("'" + value + "' is not a whole number");
    }
    if (v > (max - (c - '0')) / 10) return Status::InvalidArgument("'" + value + "' is too large");
    v = v * 10 + (c - '0');
  }
  if (v < min || v > max) {
    return Status::InvalidArgument("'" + value + "' must be in [" + std::to_string(min) + ", " +
                                   std::to_string(max) + "]");
  }
  return v;
}

std::string FormatDuration(int64_t ms) {
  if (ms % 86'400'000 == 0) return std::to_string(ms / 86'400'000) + "d";
  if (ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace

const std::vector<std::string>& ConfigKeys() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& k : Keys()) out.push_back(k.key);
    return out;
  }();
  return names;
}

Status ApplySetting(ServerConfig* c, const std::string& key, const std::string& value,
                    const std::string& source) {
  auto err = [&](const Status& st) { return st.WithContext(key + " (" + source + ")"); };
  if (key == "listen") {
    size_t colon = value.rfind(':');
    if (colon == std::string::npos) {
      return err(Status::InvalidArgument("'" + value + "' must be ADDRESS:PORT, e.g. 0.0.0.0:8080"));
    }
    auto port = ParseInt(value.substr(colon + 1), 0, 65535);
    if (!port.ok()) return err(port.status());
    std::string addr = value.substr(0, colon);
    if (addr.size() >= 2 && addr.front() == '[' && addr.back() == ']') addr = addr.substr(1, addr.size() - 2);
    if (addr.empty()) return err(Status::InvalidArgument("address is empty"));
    c->listen_address = addr;
    c->listen_port = static_cast<uint16_t>(*port);
  } else if (key == "data_dir") {
    if (value.empty()) return err(Status::InvalidArgument("must not be empty"));
    c->data_dir = value;
  } else if (key == "join_token") {
    if (!value.empty() && value.size() < 16) {
      return err(Status::InvalidArgument("must be at least 16 characters (or empty to generate one)"));
    }
    c->join_token = value;
  } else if (key == "raw_retention" || key == "aggregate_retention" || key == "retention_interval") {
    auto ms = ParseDurationMs(value);
    if (!ms.ok()) return err(ms.status());
    if (*ms < 60'000) return err(Status::InvalidArgument("must be at least 1m"));
    if (key == "raw_retention") c->raw_retention_ms = *ms;
    else if (key == "aggregate_retention") c->aggregate_retention_ms = *ms;
    else c->retention_interval_ms = *ms;
  } else if (key == "missed_heartbeats") {
    auto v = ParseInt(value, 1, 100);
    if (!v.ok()) return err(v.status());
    c->missed_heartbeats = static_cast<int>(*v);
  } else if (key == "http_threads") {
    auto v = ParseInt(value, 1, 64);
    if (!v.ok()) return err(v.status());
    c->http_threads = static_cast<int>(*v);
  } else if (key == "max_body_bytes" || key == "max_agent_message_bytes") {
    auto v = ParseInt(value, 1024, 1LL << 30);
    if (!v.ok()) return err(v.status());
    (key == "max_body_bytes" ? c->max_body_bytes : c->max_agent_message_bytes) = static_cast<uint64_t>(*v);
  } else if (key == "log_level") {
    log::Level level;
    if (!log::ParseLevel(value, &level)) {
      return err(Status::InvalidArgument("'" + value + "' must be debug, info, warning or error"));
    }
    c->log_level = value;
  } else {
    return Status::InvalidArgument("unknown setting '" + key + "' (" + source + ")");
  }
  return Status::Ok();
}

Status LoadConfigFile(ServerConfig* config, const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument("config file " + path + " is not valid YAML: " + e.what());
  }
  if (root.IsNull()) return Status::Ok();
  if (!root.IsMap()) return Status::InvalidArgument("config file " + path + " must be a map of settings");
  for (const auto& kv : root) {
    std::string key;
    try {
      key = kv.first.as<std::string>();
      if (!kv.second.IsScalar()) {
        return Status::InvalidArgument("setting '" + key + "' in " + path + " must be a single value");
      }
      RETURN_IF_ERROR(ApplySetting(config, key, kv.second.as<std::string>(), "file " + path));
    } catch (const YAML::Exception& e) {
      return Status::InvalidArgument("config file " + path + ": " + e.what());
    }
  }
  return Status::Ok();
}

Status ApplyEnv(ServerConfig* config, const std::map<std::string, std::string>& env) {
  for (const auto& k : Keys()) {
    auto it = env.find(k.env);
    if (it == env.end()) continue;
    RETURN_IF_ERROR(ApplySetting(config, k.key, it->second, std::string("env ") + k.env));
  }
  return Status::Ok();
}

std::map<std::string, std::string> ProcessEnv() {
  std::map<std::string, std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

std::string ConfigToYaml(const ServerConfig& c, bool show_secrets) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  std::string host = c.listen_address.find(':') != std::string::npos ? "[" + c.listen_address + "]"
                                                                      : c.listen_address;
  out << YAML::Key << "listen" << YAML::Value << host + ":" + std::to_string(c.listen_port);
  out << YAML::Key << "data_dir" << YAML::Value << c.data_dir;
  out << YAML::Key << "join_token" << YAML::Value
      << (c.join_token.empty() ? "" : (show_secrets ? c.join_token : "<set>"));
  out << YAML::Key << "raw_retention" << YAML::Value << FormatDuration(c.raw_retention_ms);
  out << YAML::Key << "aggregate_retention" << YAML::Value << FormatDuration(c.aggregate_retention_ms);
  out << YAML::Key << "retention_interval" << YAML::Value << FormatDuration(c.retention_interval_ms);
  out << YAML::Key << "missed_heartbeats" << YAML::Value << c.missed_heartbeats;
  out << YAML::Key << "http_threads" << YAML::Value << c.http_threads;
  out << YAML::Key << "max_body_bytes" << YAML::Value << c.max_body_bytes;
  out << YAML::Key << "max_agent_message_bytes" << YAML::Value << c.max_agent_message_bytes;
  out << YAML::Key << "log_level" << YAML::Value << c.log_level;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace rota::server
