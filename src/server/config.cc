#include "server/config.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "common/file_util.h"
#include "common/log.h"
#include "common/time_util.h"
#include "server/store/store_url.h"

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
      {"store", "ROTA_STORE"},
      {"join_token", "ROTA_JOIN_TOKEN"},
      {"tls", "ROTA_TLS"},
      {"tls_cert_file", "ROTA_TLS_CERT_FILE"},
      {"tls_key_file", "ROTA_TLS_KEY_FILE"},
      {"tls_names", "ROTA_TLS_NAMES"},
      {"tls_ca_file", "ROTA_TLS_CA_FILE"},
      {"raw_retention", "ROTA_RAW_RETENTION"},
      {"aggregate_retention", "ROTA_AGGREGATE_RETENTION"},
      {"retention_interval", "ROTA_RETENTION_INTERVAL"},
      {"missed_heartbeats", "ROTA_MISSED_HEARTBEATS"},
      {"http_threads", "ROTA_HTTP_THREADS"},
      {"max_connections", "ROTA_MAX_CONNECTIONS"},
      {"reserved_agent_connections", "ROTA_RESERVED_AGENT_CONNECTIONS"},
      {"max_connections_per_address", "ROTA_MAX_CONNECTIONS_PER_ADDRESS"},
      {"max_body_bytes", "ROTA_MAX_BODY_BYTES"},
      {"max_agent_message_bytes", "ROTA_MAX_AGENT_MESSAGE_BYTES"},
      {"log_level", "ROTA_LOG_LEVEL"},
      {"job_ports", "ROTA_JOB_PORTS"},
      {"job_stop_grace", "ROTA_JOB_STOP_GRACE"},
      {"backfill", "ROTA_BACKFILL"},
      {"preemption", "ROTA_PREEMPTION"},
      {"defragment", "ROTA_DEFRAGMENT"},
      {"preempt_after", "ROTA_PREEMPT_AFTER"},
      {"fairshare_half_life", "ROTA_FAIRSHARE_HALF_LIFE"},
      {"reservation_idle", "ROTA_RESERVATION_IDLE"},
      {"malleable_policy", "ROTA_MALLEABLE_POLICY"},
      {"quota_period", "ROTA_QUOTA_PERIOD"},
      {"accounting_flush", "ROTA_ACCOUNTING_FLUSH"},
      {"area_labels", "ROTA_AREA_LABELS"},
      {"price_per_kwh", "ROTA_PRICE_PER_KWH"},
      {"price_per_gpu_hour", "ROTA_PRICE_PER_GPU_HOUR"},
      {"co2_g_per_kwh", "ROTA_CO2_G_PER_KWH"},
      {"currency", "ROTA_CURRENCY"},
      {"anonymous_read", "ROTA_ANONYMOUS_READ"},
      {"session_ttl", "ROTA_SESSION_TTL"},
      {"api_token_max_ttl", "ROTA_API_TOKEN_MAX_TTL"},
      {"password_hash_cost", "ROTA_PASSWORD_HASH_COST"},
      {"password_hash_threads", "ROTA_PASSWORD_HASH_THREADS"},
      {"password_hash_queue", "ROTA_PASSWORD_HASH_QUEUE"},
      {"admin_password", "ROTA_ADMIN_PASSWORD"},
      {"public_url", "ROTA_PUBLIC_URL"},
      {"leader_lease_ttl", "ROTA_LEADER_LEASE_TTL"},
      {"smtp_url", "ROTA_SMTP_URL"},
      {"smtp_tls", "ROTA_SMTP_TLS"},
      {"smtp_username", "ROTA_SMTP_USERNAME"},
      {"smtp_password", "ROTA_SMTP_PASSWORD"},
      {"smtp_from", "ROTA_SMTP_FROM"},
      {"smtp_ca_file", "ROTA_SMTP_CA_FILE"},
      {"smtp_insecure_skip_verify", "ROTA_SMTP_INSECURE_SKIP_VERIFY"},
      {"smtp_rate_limit_per_hour", "ROTA_SMTP_RATE_LIMIT_PER_HOUR"},
      {"enforcement_mode", "ROTA_ENFORCEMENT_MODE"},
      {"enforcement_dry_run", "ROTA_ENFORCEMENT_DRY_RUN"},
      {"grace_email", "ROTA_GRACE_EMAIL"},
      {"grace_term", "ROTA_GRACE_TERM"},
      {"grace_kill", "ROTA_GRACE_KILL"},
      {"exempt_users", "ROTA_EXEMPT_USERS"},
      {"exempt_commands", "ROTA_EXEMPT_COMMANDS"},
      {"enforcement_min_uid", "ROTA_ENFORCEMENT_MIN_UID"},
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

// A decimal number in [0, max].
Result<double> ParseAmount(const std::string& value, double max) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || errno != 0 || !std::isfinite(v) ||
      !std::isdigit(static_cast<unsigned char>(value[0]))) {
    return Status::InvalidArgument("'" + value + "' is not a number");
  }
  if (v < 0 || v > max) return Status::InvalidArgument("'" + value + "' must be between 0 and " + std::to_string(static_cast<int64_t>(max)));
  return v;
}

Result<bool> ParseBool(const std::string& value) {
  if (value == "true" || value == "yes" || value == "on" || value == "1") return true;
  if (value == "false" || value == "no" || value == "off" || value == "0") return false;
  return Status::InvalidArgument("'" + value + "' must be true or false");
}

// "a, b,c" -> {"a", "b", "c"}; empty items dropped.
std::vector<std::string> SplitList(const std::string& value) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(value);
  while (std::getline(in, item, ',')) {
    size_t b = item.find_first_not_of(" \t");
    size_t e = item.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

std::string JoinList(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
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
  } else if (key == "tls") {
    if (value != "auto" && value != "on" && value != "off") {
      return err(Status::InvalidArgument("'" + value + "' must be auto, on or off"));
    }
    c->tls = value;
  } else if (key == "tls_cert_file") {
    c->tls_cert_file = value;
  } else if (key == "tls_key_file") {
    c->tls_key_file = value;
  } else if (key == "tls_ca_file") {
    c->tls_ca_file = value;
  } else if (key == "tls_names") {
    c->tls_names = SplitList(value);
    for (const std::string& n : c->tls_names) {
      if (n.find_first_of(" /,*@") != std::string::npos) {
        return err(Status::InvalidArgument("'" + n + "' is not a host name or IP address"));
      }
    }
  } else if (key == "data_dir") {
    if (value.empty()) return err(Status::InvalidArgument("must not be empty"));
    c->data_dir = value;
  } else if (key == "store") {
    if (!value.empty()) {
      if (auto url = store::ParseStoreUrl(value); !url.ok()) return err(url.status());
    }
    c->store = value;
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
  } else if (key == "job_ports") {
    const size_t dash = value.find('-');
    auto first = ParseInt(value.substr(0, dash), 1024, 65535);
    auto last = dash == std::string::npos ? first : ParseInt(value.substr(dash + 1), 1024, 65535);
    if (!first.ok() || !last.ok() || *last < *first) {
      return err(Status::InvalidArgument("'" + value + "' must be a port range FIRST-LAST within 1024-65535"));
    }
    c->job_port_first = static_cast<uint16_t>(*first);
    c->job_port_last = static_cast<uint16_t>(*last);
  } else if (key == "job_stop_grace") {
    auto ms = ParseDurationMs(value);
    if (!ms.ok()) return err(ms.status());
    if (*ms < 100 || *ms > 3'600'000) return err(Status::InvalidArgument("must be between 100ms and 1h"));
    c->job_stop_grace_ms = *ms;
  } else if (key == "backfill") {
    if (value != "easy" && value != "conservative" && value != "none" && value != "skip") {
      return err(Status::InvalidArgument("'" + value + "' must be easy, conservative, none or skip"));
    }
    c->backfill = value;
  } else if (key == "preemption" || key == "defragment") {
    auto v = ParseBool(value);
    if (!v.ok()) return err(v.status());
    (key == "preemption" ? c->preemption : c->defragment) = *v;
  } else if (key == "preempt_after" || key == "fairshare_half_life" || key == "reservation_idle") {
    auto ms = ParseDurationMs(value);
    if (!ms.ok()) return err(ms.status());
    if (*ms < 0 || *ms > 366LL * 86'400'000) return err(Status::InvalidArgument("must be between 0 and 366d"));
    // 0: usage never decays (as before this range); below a minute is a typo.
    if (key == "fairshare_half_life" && *ms > 0 && *ms < 60'000) {
      return err(Status::InvalidArgument("must be 0 (usage never decays) or between 1m and 366d"));
    }
    (key == "preempt_after"         ? c->preempt_after_ms
     : key == "fairshare_half_life" ? c->fairshare_half_life_ms
                                    : c->reservation_idle_ms) = *ms;
  } else if (key == "malleable_policy") {
    if (value != "equal" && value != "by-request" && value != "by-priority") {
      return err(Status::InvalidArgument("'" + value + "' must be equal, by-request or by-priority"));
    }
    c->malleable_policy = value;
  } else if (key == "quota_period") {
    auto ms = ParseDurationMs(value);
    if (!ms.ok()) return err(ms.status());
    if (*ms < 3'600'000 || *ms > 366LL * 86'400'000) return err(Status::InvalidArgument("must be between 1h and 366d"));
    c->quota_period_ms = *ms;
  } else if (key == "leader_lease_ttl") {
    auto ms = ParseDurationMs(value);
    if (!ms.ok()) return err(ms.status());
    if (*ms < 1000 || *ms > 60'000) return err(Status::InvalidArgument("must be between 1s and 60s"));
    c->leader_lease_ttl_ms = *ms;
  } else if (key == "accounting_flush") {
    auto ms = ParseDurationMs(value);
    if (!ms.ok()) return err(ms.status());
    if (*ms < 1000 || *ms > 3'600'000) return err(Status::InvalidArgument("must be between 1s and 1h"));
    c->accounting_flush_ms = *ms;
  } else if (key == "area_labels") {
    c->area_labels = SplitList(value);
    if (c->area_labels.size() > 8) return err(Status::InvalidArgument("at most 8 labels"));
    for (const auto& l : c->area_labels) {
      if (l.size() > 63 || l.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/") !=
                               std::string::npos) {
        return err(Status::InvalidArgument("'" + l + "' is not a node label name"));
      }
    }
  } else if (key == "price_per_kwh" || key == "price_per_gpu_hour" || key == "co2_g_per_kwh") {
    auto v = ParseAmount(value, 1e6);
    if (!v.ok()) return err(v.status());
    (key == "price_per_kwh" ? c->prices.price_per_kwh
     : key == "price_per_gpu_hour" ? c->prices.price_per_gpu_hour : c->prices.co2_g_per_kwh) = *v;
  } else if (key == "currency") {
    if (value.empty() || value.size() > 8 ||
        value.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") != std::string::npos) {
      return err(Status::InvalidArgument("'" + value + "' must be a currency code such as EUR or USD"));
    }
    c->prices.currency = value;
  } else if (key == "http_threads") {
    auto v = ParseInt(value, 1, 64);
    if (!v.ok()) return err(v.status());
    c->http_threads = static_cast<int>(*v);
  } else if (key == "max_connections") {
    auto v = ParseInt(value, 16, 1'000'000);
    if (!v.ok()) return err(v.status());
    c->max_connections = static_cast<int>(*v);
  } else if (key == "reserved_agent_connections") {
    auto v = ParseInt(value, -1, 1'000'000);
    if (!v.ok()) return err(v.status());
    c->reserved_agent_connections = static_cast<int>(*v);
  } else if (key == "max_connections_per_address") {
    auto v = ParseInt(value, 0, 1'000'000);
    if (!v.ok()) return err(v.status());
    c->max_connections_per_address = static_cast<int>(*v);
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
  } else if (key == "anonymous_read" || key == "enforcement_dry_run" ||
             key == "smtp_insecure_skip_verify") {
    auto v = ParseBool(value);
    if (!v.ok()) return err(v.status());
    (key == "anonymous_read"        ? c->anonymous_read
     : key == "enforcement_dry_run" ? c->enforcement_dry_run
                                    : c->smtp_insecure_skip_verify) = *v;
  } else if (key == "session_ttl") {
    auto ms = ParseDurationMs(value);
    if (!ms.ok()) return err(ms.status());
    // Down to 1s so that tests can watch a session expire.
    if (*ms < 1000 || *ms > 366LL * 86'400'000) {
      return err(Status::InvalidArgument("must be between 1s and 366d"));
    }
    c->session_ttl_ms = *ms;
  } else if (key == "api_token_max_ttl") {
    auto ms = ParseDurationMs(value);
    if (!ms.ok()) return err(ms.status());
    if (*ms < 60'000 || *ms > 3660LL * 86'400'000) {
      return err(Status::InvalidArgument("must be between 1m and 3660d"));
    }
    c->api_token_max_ttl_ms = *ms;
  } else if (key == "password_hash_threads") {
    auto v = ParseInt(value, 1, 64);
    if (!v.ok()) return err(v.status());
    c->password_hash_threads = static_cast<int>(*v);
  } else if (key == "password_hash_queue") {
    auto v = ParseInt(value, 1, 100'000);
    if (!v.ok()) return err(v.status());
    c->password_hash_queue = static_cast<int>(*v);
  } else if (key == "password_hash_cost") {
    if (value != "interactive" && value != "moderate" && value != "min") {
      return err(Status::InvalidArgument("'" + value + "' must be interactive, moderate or min"));
    }
    c->password_hash_cost = value;
  } else if (key == "admin_password") {
    if (!value.empty() && (value.size() < 8 || value.size() > 1024)) {
      return err(Status::InvalidArgument("must be 8 to 1024 characters"));
    }
    c->admin_password = value;
  } else if (key == "public_url") {
    if (!value.empty() && value.rfind("http://", 0) != 0 && value.rfind("https://", 0) != 0) {
      return err(Status::InvalidArgument("'" + value + "' must start with http:// or https://"));
    }
    c->public_url = value;
  } else if (key == "smtp_url") {
    if (!value.empty() && value.rfind("smtp://", 0) != 0 && value.rfind("smtps://", 0) != 0) {
      return err(Status::InvalidArgument("'" + value + "' must start with smtp:// or smtps://"));
    }
    c->smtp_url = value;
  } else if (key == "smtp_tls") {
    if (value != "off" && value != "starttls" && value != "auto") {
      return err(Status::InvalidArgument("'" + value + "' must be off, starttls or auto"));
    }
    c->smtp_tls = value;
  } else if (key == "smtp_username") {
    c->smtp_username = value;
  } else if (key == "smtp_password") {
    c->smtp_password = value;
  } else if (key == "smtp_from") {
    if (value.find('@') == std::string::npos || value.find_first_of("\r\n") != std::string::npos) {
      return err(Status::InvalidArgument("'" + value + "' is not an email address"));
    }
    c->smtp_from = value;
  } else if (key == "smtp_ca_file") {
    c->smtp_ca_file = value;
  } else if (key == "smtp_rate_limit_per_hour") {
    auto v = ParseInt(value, 1, 100000);
    if (!v.ok()) return err(v.status());
    c->smtp_rate_limit_per_hour = static_cast<int>(*v);
  } else if (key == "enforcement_mode") {
    if (value != "off" && value != "reserved" && value != "strict") {
      return err(Status::InvalidArgument("'" + value + "' must be off, reserved or strict"));
    }
    c->enforcement_mode = value;
  } else if (key == "grace_email" || key == "grace_term" || key == "grace_kill") {
    auto ms = ParseDurationMs(value);
    if (!ms.ok()) return err(ms.status());
    if (*ms < 0 || *ms > 7LL * 86'400'000) return err(Status::InvalidArgument("must be 0 to 7d"));
    (key == "grace_email" ? c->grace_email_ms
     : key == "grace_term" ? c->grace_term_ms
                           : c->grace_kill_ms) = *ms;
  } else if (key == "exempt_users" || key == "exempt_commands") {
    (key == "exempt_users" ? c->exempt_users : c->exempt_commands) = SplitList(value);
  } else if (key == "enforcement_min_uid") {
    auto v = ParseInt(value, 0, 4'294'967'294);
    if (!v.ok()) return err(v.status());
    c->enforcement_min_uid = static_cast<uint32_t>(*v);
  } else {
    return Status::InvalidArgument("unknown setting '" + key + "' (" + source + ")");
  }
  return Status::Ok();
}

Status LoadConfigFile(ServerConfig* config, const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return LoadConfigText(config, text, path);
}

Status LoadConfigText(ServerConfig* config, const std::string& text, const std::string& path) {
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
  out << YAML::Key << "store" << YAML::Value
      << (show_secrets ? c.store : store::RedactStoreUrl(c.store));
  out << YAML::Key << "join_token" << YAML::Value
      << (c.join_token.empty() ? "" : (show_secrets ? c.join_token : "<set>"));
  out << YAML::Key << "tls" << YAML::Value << c.tls;
  out << YAML::Key << "tls_cert_file" << YAML::Value << c.tls_cert_file;
  out << YAML::Key << "tls_key_file" << YAML::Value << c.tls_key_file;
  {
    std::string names;
    for (const auto& n : c.tls_names) names += (names.empty() ? "" : ",") + n;
    out << YAML::Key << "tls_names" << YAML::Value << names;
  }
  out << YAML::Key << "tls_ca_file" << YAML::Value << c.tls_ca_file;
  out << YAML::Key << "raw_retention" << YAML::Value << FormatExactDuration(c.raw_retention_ms);
  out << YAML::Key << "aggregate_retention" << YAML::Value << FormatExactDuration(c.aggregate_retention_ms);
  out << YAML::Key << "retention_interval" << YAML::Value << FormatExactDuration(c.retention_interval_ms);
  out << YAML::Key << "missed_heartbeats" << YAML::Value << c.missed_heartbeats;
  out << YAML::Key << "http_threads" << YAML::Value << c.http_threads;
  out << YAML::Key << "max_connections" << YAML::Value << c.max_connections;
  out << YAML::Key << "reserved_agent_connections" << YAML::Value << c.reserved_agent_connections;
  out << YAML::Key << "max_connections_per_address" << YAML::Value << c.max_connections_per_address;
  out << YAML::Key << "max_body_bytes" << YAML::Value << c.max_body_bytes;
  out << YAML::Key << "max_agent_message_bytes" << YAML::Value << c.max_agent_message_bytes;
  out << YAML::Key << "log_level" << YAML::Value << c.log_level;
  out << YAML::Key << "job_ports" << YAML::Value
      << std::to_string(c.job_port_first) + "-" + std::to_string(c.job_port_last);
  out << YAML::Key << "job_stop_grace" << YAML::Value << FormatExactDuration(c.job_stop_grace_ms);
  out << YAML::Key << "backfill" << YAML::Value << c.backfill;
  out << YAML::Key << "preemption" << YAML::Value << c.preemption;
  out << YAML::Key << "defragment" << YAML::Value << c.defragment;
  out << YAML::Key << "preempt_after" << YAML::Value << FormatExactDuration(c.preempt_after_ms);
  out << YAML::Key << "fairshare_half_life" << YAML::Value << FormatExactDuration(c.fairshare_half_life_ms);
  out << YAML::Key << "reservation_idle" << YAML::Value << FormatExactDuration(c.reservation_idle_ms);
  out << YAML::Key << "malleable_policy" << YAML::Value << c.malleable_policy;
  out << YAML::Key << "quota_period" << YAML::Value << FormatExactDuration(c.quota_period_ms);
  out << YAML::Key << "accounting_flush" << YAML::Value << FormatExactDuration(c.accounting_flush_ms);
  {
    std::string labels;
    for (const auto& l : c.area_labels) labels += (labels.empty() ? "" : ",") + l;
    out << YAML::Key << "area_labels" << YAML::Value << labels;
  }
  out << YAML::Key << "price_per_kwh" << YAML::Value << c.prices.price_per_kwh;
  out << YAML::Key << "price_per_gpu_hour" << YAML::Value << c.prices.price_per_gpu_hour;
  out << YAML::Key << "co2_g_per_kwh" << YAML::Value << c.prices.co2_g_per_kwh;
  out << YAML::Key << "currency" << YAML::Value << c.prices.currency;
  auto secret = [&](const std::string& v) { return v.empty() ? "" : (show_secrets ? v : "<set>"); };
  out << YAML::Key << "anonymous_read" << YAML::Value << c.anonymous_read;
  out << YAML::Key << "session_ttl" << YAML::Value << FormatExactDuration(c.session_ttl_ms);
  out << YAML::Key << "api_token_max_ttl" << YAML::Value << FormatExactDuration(c.api_token_max_ttl_ms);
  out << YAML::Key << "password_hash_cost" << YAML::Value << c.password_hash_cost;
  out << YAML::Key << "password_hash_threads" << YAML::Value << c.password_hash_threads;
  out << YAML::Key << "password_hash_queue" << YAML::Value << c.password_hash_queue;
  out << YAML::Key << "admin_password" << YAML::Value << secret(c.admin_password);
  out << YAML::Key << "public_url" << YAML::Value << c.public_url;
  out << YAML::Key << "leader_lease_ttl" << YAML::Value << FormatExactDuration(c.leader_lease_ttl_ms);
  out << YAML::Key << "smtp_url" << YAML::Value << c.smtp_url;
  out << YAML::Key << "smtp_tls" << YAML::Value << c.smtp_tls;
  out << YAML::Key << "smtp_username" << YAML::Value << c.smtp_username;
  out << YAML::Key << "smtp_password" << YAML::Value << secret(c.smtp_password);
  out << YAML::Key << "smtp_from" << YAML::Value << c.smtp_from;
  out << YAML::Key << "smtp_ca_file" << YAML::Value << c.smtp_ca_file;
  out << YAML::Key << "smtp_insecure_skip_verify" << YAML::Value << c.smtp_insecure_skip_verify;
  out << YAML::Key << "smtp_rate_limit_per_hour" << YAML::Value << c.smtp_rate_limit_per_hour;
  out << YAML::Key << "enforcement_mode" << YAML::Value << c.enforcement_mode;
  out << YAML::Key << "enforcement_dry_run" << YAML::Value << c.enforcement_dry_run;
  out << YAML::Key << "grace_email" << YAML::Value << FormatExactDuration(c.grace_email_ms);
  out << YAML::Key << "grace_term" << YAML::Value << FormatExactDuration(c.grace_term_ms);
  out << YAML::Key << "grace_kill" << YAML::Value << FormatExactDuration(c.grace_kill_ms);
  out << YAML::Key << "exempt_users" << YAML::Value << JoinList(c.exempt_users);
  out << YAML::Key << "exempt_commands" << YAML::Value << JoinList(c.exempt_commands);
  out << YAML::Key << "enforcement_min_uid" << YAML::Value << c.enforcement_min_uid;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::vector<std::string> ChangedConfigKeys(const ServerConfig& a, const ServerConfig& b) {
  // Compared through their YAML (secrets included), so every key is covered.
  YAML::Node ya = YAML::Load(ConfigToYaml(a, true));
  YAML::Node yb = YAML::Load(ConfigToYaml(b, true));
  std::vector<std::string> out;
  for (const std::string& key : ConfigKeys()) {
    YAML::Emitter ea, eb;
    ea << ya[key];
    eb << yb[key];
    if (std::string(ea.c_str()) != std::string(eb.c_str())) out.push_back(key);
  }
  return out;
}

}  // namespace rota::server
