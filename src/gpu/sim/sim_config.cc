#include "gpu/sim/sim_config.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

namespace rota::gpu::sim {
namespace {

using Json = nlohmann::json;

constexpr const char* kFieldNames[kFieldCount] = {
    "memory", "utilization", "temperature", "power",     "power_limit", "enforced_power_limit",
    "energy", "clocks",      "fan",         "processes", "pci",         "set_power_limit"};

bool ValidNodeName(const std::string& s) {
  if (s.empty() || s.size() > 63 || !std::isalnum(static_cast<unsigned char>(s[0]))) {
    return false;
  }
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

// Reads optional unsigned integer `key` of `obj` into *out, checking lo..hi.
bool GetUint(const Json& obj, const char* key, uint64_t lo, uint64_t hi, const std::string& where,
             uint64_t* out, std::string* error) {
  auto it = obj.find(key);
  if (it == obj.end()) return true;
  // nlohmann stores non-negative integers as unsigned.
  if (!it->is_number_unsigned() || it->get<uint64_t>() < lo || it->get<uint64_t>() > hi) {
    *error = where + "." + key + ": must be an integer in " + std::to_string(lo) + ".." +
             std::to_string(hi);
    return false;
  }
  *out = it->get<uint64_t>();
  return true;
}

bool ParseGpu(const Json& j, const std::string& where, GpuConfig* g, std::string* error) {
  if (!j.is_object()) {
    *error = where + ": must be an object";
    return false;
  }
  static const std::set<std::string> kKeys = {
      "model",        "memory_mib",       "power_limit_w",
      "idle_power_w", "max_sm_clock_mhz", "max_mem_clock_mhz", "min_power_limit_w"};
  for (const auto& [key, value] : j.items()) {
    if (!kKeys.count(key)) {
      *error = where + "." + key + ": unknown key";
      return false;
    }
  }
  if (auto it = j.find("model"); it != j.end()) {
    if (!it->is_string() || it->get<std::string>().empty() || it->get<std::string>().size() > 95) {
      *error = where + ".model: must be a string of 1..95 characters";
      return false;
    }
    g->model = it->get<std::string>();
  }
  uint64_t v = g->memory_mib;
  if (!GetUint(j, "memory_mib", 1, 1 << 24, where, &v, error)) return false;
  g->memory_mib = v;
  v = g->power_limit_w;
  if (!GetUint(j, "power_limit_w", 1, 10000, where, &v, error)) return false;
  g->power_limit_w = static_cast<uint32_t>(v);
  v = std::min(g->idle_power_w, g->power_limit_w);
  if (!GetUint(j, "idle_power_w", 0, g->power_limit_w, where, &v, error)) return false;
  g->idle_power_w = static_cast<uint32_t>(v);
  v = std::max<uint32_t>(1, g->power_limit_w / 4);
  if (!GetUint(j, "min_power_limit_w", 1, g->power_limit_w, where, &v, error)) return false;
  g->min_power_limit_w = static_cast<uint32_t>(v);
  v = g->max_sm_clock_mhz;
  if (!GetUint(j, "max_sm_clock_mhz", 1, 100000, where, &v, error)) return false;
  g->max_sm_clock_mhz = static_cast<uint32_t>(v);
  v = g->max_mem_clock_mhz;
  if (!GetUint(j, "max_mem_clock_mhz", 1, 100000, where, &v, error)) return false;
  g->max_mem_clock_mhz = static_cast<uint32_t>(v);
  return true;
}

bool AllDigits(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool ParseIndex(const std::string& s, size_t count, unsigned* out) {
  if (s.empty() || s.size() > 9 || !AllDigits(s)) return false;
  unsigned v = static_cast<unsigned>(std::stoul(s));
  if (v >= count) return false;
  *out = v;
  return true;
}

bool ParseFaults(const Json& j, Config* c, std::string* error) {
  if (!j.is_object()) {
    *error = "faults: must be an object";
    return false;
  }
  for (const auto& [key, value] : j.items()) {
    const std::string where = "faults[\"" + key + "\"]";
    if (!value.is_string()) {
      *error = where + ": must be a string";
      return false;
    }
    const std::string kind = value.get<std::string>();
    size_t colon = key.find(':');
    unsigned index = 0;
    if (!ParseIndex(key.substr(0, colon), c->gpus.size(), &index)) {
      *error = where + ": key must be \"<gpu index>\" or \"<gpu index>:<field>\" with an index < " +
               std::to_string(c->gpus.size());
      return false;
    }
    GpuConfig& g = c->gpus[index];
    if (colon == std::string::npos) {
      if (kind != "gpu_lost") {
        *error = where + ": a whole-GPU fault must be \"gpu_lost\"";
        return false;
      }
      g.lost = true;
      continue;
    }
    const std::string field = key.substr(colon + 1);
    size_t f = 0;
    while (f < kFieldCount && field != kFieldNames[f]) ++f;
    if (f == kFieldCount) {
      std::string names;
      for (const char* n : kFieldNames) names += std::string(names.empty() ? "" : ", ") + n;
      *error = where + ": unknown field \"" + field + "\" (fields: " + names + ")";
      return false;
    }
    if (kind == "not_supported") {
      g.faults[f] = FieldFault::kNotSupported;
    } else if (kind == "error") {
      g.faults[f] = FieldFault::kError;
    } else if (kind == "no_permission" && static_cast<Field>(f) == Field::kSetPowerLimit) {
      g.faults[f] = FieldFault::kNoPermission;
    } else {
      *error = where + ": a field fault must be \"not_supported\" or \"error\" (set_power_limit: also "
               "\"no_permission\")";
      return false;
    }
  }
  return true;
}

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

const char* FieldName(Field f) { return kFieldNames[static_cast<size_t>(f)]; }

std::string MakeUuid(const std::string& node, unsigned index) {
  uint64_t a = SplitMix(Fnv1a("rota-sim-gpu/" + node + "/" + std::to_string(index)));
  uint64_t b = SplitMix(a ^ 0x5851f42d4c957f2dull);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "GPU-%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xffff),
                static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffull));
  return buf;
}

std::string MakeBusId(unsigned index) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "00000000:%02X:00.0", (index + 1) & 0xff);
  return buf;
}

bool ParseConfig(const std::string& text, Config* out, std::string* error) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    *error = std::string("not valid JSON: ") + e.what();
    return false;
  }
  if (!j.is_object()) {
    *error = "top level: must be a JSON object";
    return false;
  }
  for (const auto& [key, value] : j.items()) {
    if (key != "node" && key != "default_node" && key != "tasks_under" && key != "gpus" && key != "faults") {
      *error = key + ": unknown key (expected node, default_node, tasks_under, gpus, faults)";
      return false;
    }
  }
  Config c;
  auto node = j.find("node");
  if (node == j.end() || !node->is_string() || !ValidNodeName(node->get<std::string>())) {
    *error = "node: required; 1..63 characters of [A-Za-z0-9._-] starting with a letter or digit";
    return false;
  }
  c.node = node->get<std::string>();
  if (auto it = j.find("default_node"); it != j.end()) {
    if (!it->is_boolean()) {
      *error = "default_node: must be true or false";
      return false;
    }
    c.default_node = it->get<bool>();
  }
  if (auto it = j.find("tasks_under"); it != j.end()) {
    if (!it->is_string() || it->get<std::string>().empty() || it->get<std::string>()[0] != '/') {
      *error = "tasks_under: must be an absolute directory path";
      return false;
    }
    c.tasks_under = it->get<std::string>();
    while (c.tasks_under.size() > 1 && c.tasks_under.back() == '/') c.tasks_under.pop_back();
  }
  auto gpus = j.find("gpus");
  if (gpus == j.end() || !gpus->is_array() || gpus->size() > kMaxSimGpus) {
    *error = "gpus: required; an array of at most " + std::to_string(kMaxSimGpus) + " objects";
    return false;
  }
  for (size_t i = 0; i < gpus->size(); ++i) {
    GpuConfig g;
    if (!ParseGpu((*gpus)[i], "gpus[" + std::to_string(i) + "]", &g, error)) return false;
    g.uuid = MakeUuid(c.node, static_cast<unsigned>(i));
    g.bus_id = MakeBusId(static_cast<unsigned>(i));
    c.gpus.push_back(std::move(g));
  }
  if (auto it = j.find("faults"); it != j.end() && !ParseFaults(*it, &c, error)) return false;
  *out = std::move(c);
  return true;
}

void ResolveVisibleDevices(const std::string& value, const Config& config,
                           std::vector<unsigned>* out) {
  out->clear();
  size_t pos = 0;
  while (pos <= value.size()) {
    size_t comma = value.find(',', pos);
    if (comma == std::string::npos) comma = value.size();
    size_t b = pos, e = comma;
    while (b < e && std::isspace(static_cast<unsigned char>(value[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(value[e - 1]))) --e;
    std::string token = value.substr(b, e - b);
    pos = comma + 1;
    unsigned index = 0;
    bool found = false;
    if (!token.empty() && AllDigits(token)) {
      found = ParseIndex(token, config.gpus.size(), &index);
    } else if (token.size() > 4 && token.compare(0, 4, "GPU-") == 0) {
      int matches = 0;
      for (size_t i = 0; i < config.gpus.size(); ++i) {
        const std::string& u = config.gpus[i].uuid;
        if (u.size() >= token.size() &&
            std::equal(token.begin(), token.end(), u.begin(), [](char x, char y) {
              return std::tolower(static_cast<unsigned char>(x)) ==
                     std::tolower(static_cast<unsigned char>(y));
            })) {
          ++matches;
          index = static_cast<unsigned>(i);
        }
      }
      found = matches == 1;
    }
    if (!found) return;  // like CUDA: an invalid entry hides itself and everything after it
    if (std::find(out->begin(), out->end(), index) == out->end()) out->push_back(index);
  }
}

}  // namespace rota::gpu::sim
