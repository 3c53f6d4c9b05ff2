#include "jobs/spec.h"

#include <cmath>
#include <set>

#include "common/strings.h"
#include "common/time_util.h"
#include "reserve/json_fields.h"
#include "reserve/reservation.h"

namespace rota::jobs {
namespace {

using api::Json;
using reserve::JsonFields;

constexpr struct {
  Framework f;
  const char* name;
} kFrameworks[] = {{Framework::kGeneric, "generic"},
                   {Framework::kTensorflow, "tensorflow"},
                   {Framework::kPytorch, "pytorch"},
                   {Framework::kMpi, "mpi"},
                   {Framework::kJax, "jax"}};

bool IsNameChar(char c, bool first) {
  const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  return first ? alnum : alnum || c == '.' || c == '_' || c == '-';
}

Status Bad(const std::string& field, const std::string& why) {
  return Status::InvalidArgument(field + ": " + why);
}

bool ValidEnvName(const std::string& k) {
  if (k.empty() || k.size() > 256 || (k[0] >= '0' && k[0] <= '9')) return false;
  for (char c : k) {
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  }
  return true;
}

Status CheckArgv(const std::string& field, const std::vector<std::string>& argv) {
  if (argv.size() > kMaxArgs) return Bad(field, "more than " + std::to_string(kMaxArgs) + " arguments");
  size_t total = 0;
  for (size_t i = 0; i < argv.size(); ++i) {
    total += argv[i].size();
    if (argv[i].find('\0') != std::string::npos) {
      return Bad(field + "[" + std::to_string(i) + "]", "contains a NUL byte");
    }
  }
  if (total > kMaxArgBytes) return Bad(field, "longer than " + std::to_string(kMaxArgBytes) + " bytes");
  return Status::Ok();
}

Status ReadStringMap(const Json& j, const char* key, const std::string& field, size_t max_items,
                     std::map<std::string, std::string>* out) {
  if (!j.contains(key) || j[key].is_null()) return Status::Ok();
  const Json& m = j[key];
  if (!m.is_object()) return Bad(field, "must be an object of strings");
  if (m.size() > max_items) return Bad(field, "more than " + std::to_string(max_items) + " entries");
  for (const auto& [k, v] : m.items()) {
    if (!v.is_string()) return Bad(field + "." + k, "must be a string");
    (*out)[k] = v.get<std::string>();
  }
  return Status::Ok();
}

Result<TaskGroup> GroupFromJson(const Json& j, const std::string& path) {
  JsonFields f(j, path);
  RETURN_IF_ERROR(f.Only({"role", "replicas", "gpus_per_task", "cpus_per_task", "memory",
                          "node_labels", "nodes", "gpu_model", "command", "malleable"}));
  TaskGroup g;
  RETURN_IF_ERROR(f.Str("role", &g.role, false, 32));
  int64_t v = g.replicas;
  RETURN_IF_ERROR(f.Int("replicas", &v, 1, kMaxReplicas));
  g.replicas = static_cast<uint32_t>(v);
  v = 0;
  RETURN_IF_ERROR(f.Int("gpus_per_task", &v, 0, kMaxGpusPerTask));
  g.gpus_per_task = static_cast<uint32_t>(v);
  v = 0;
  RETURN_IF_ERROR(f.Int("cpus_per_task", &v, 0, 4096));
  g.cpus_per_task = static_cast<uint32_t>(v);
  if (f.Has("memory")) {
    const Json& m = j["memory"];
    if (m.is_number_unsigned()) {
      g.memory_bytes_per_task = m.get<uint64_t>();
    } else if (m.is_string()) {
      auto b = ParseBytes(m.get<std::string>());
      if (!b.ok()) return Bad(f.Name("memory"), b.status().message());
      g.memory_bytes_per_task = *b;
    } else {
      return Bad(f.Name("memory"), "must be a size like \"16GiB\" or a number of bytes");
    }
  }
  RETURN_IF_ERROR(ReadStringMap(j, "node_labels", f.Name("node_labels"), 64, &g.node_labels));
  RETURN_IF_ERROR(f.StrArray("nodes", &g.nodes, 4096, 63));
  RETURN_IF_ERROR(f.Str("gpu_model", &g.gpu_model, false, 64));
  RETURN_IF_ERROR(f.StrArray("command", &g.command, kMaxArgs, kMaxArgBytes));
  if (f.Has("malleable")) {
    const Json& m = j["malleable"];
    const std::string field = f.Name("malleable");
    if (!m.is_object()) return Bad(field, "must be an object {min_cpus, max_cpus}");
    JsonFields mf(m, field);
    RETURN_IF_ERROR(mf.Only({"min_cpus", "max_cpus"}));
    if (!mf.Has("min_cpus") || !mf.Has("max_cpus")) return Bad(field, "give min_cpus and max_cpus");
    Malleable out;
    RETURN_IF_ERROR(mf.Number("min_cpus", &out.min_cpus, 0, kMaxMalleableCpus));
    RETURN_IF_ERROR(mf.Number("max_cpus", &out.max_cpus, 0, kMaxMalleableCpus));
    g.malleable = out;
  }
  return g;
}

}  // namespace

uint32_t TaskGroup::PlacementMilliCpus() const {
  if (!malleable) return cpus_per_task * 1000;
  return static_cast<uint32_t>(std::ceil(malleable->min_cpus * 1000 - 1e-6));
}

const char* FrameworkName(Framework f) {
  for (const auto& e : kFrameworks) {
    if (e.f == f) return e.name;
  }
  return "generic";
}

Result<Framework> ParseFramework(const std::string& text) {
  for (const auto& e : kFrameworks) {
    if (text == e.name) return e.f;
  }
  return Status::InvalidArgument("unknown framework '" + text +
                                 "': use generic, tensorflow, pytorch, mpi or jax");
}

Status ValidateRole(Framework f, const std::string& role) {
  std::vector<std::string> allowed;
  switch (f) {
    case Framework::kTensorflow: allowed = {"chief", "master", "worker", "ps", "evaluator"}; break;
    case Framework::kPytorch: allowed = {"master", "worker"}; break;
    case Framework::kMpi: allowed = {"launcher", "worker"}; break;
    case Framework::kJax: allowed = {"worker"}; break;
    case Framework::kGeneric: {
      bool ok = !role.empty() && role.size() <= 32 && role[0] >= 'a' && role[0] <= 'z';
      for (char c : role) {
        ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-');
      }
      if (!ok) return Status::InvalidArgument("role '" + role + "' must match [a-z][a-z0-9_-]{0,31}");
      return Status::Ok();
    }
  }
  for (const auto& a : allowed) {
    if (role == a) return Status::Ok();
  }
  return Status::InvalidArgument("role '" + role + "' is not a " + FrameworkName(f) +
                                 " role (use " + Join(allowed, ", ") + ")");
}

const char* RestartKindName(RestartKind k) {
  switch (k) {
    case RestartKind::kNever: return "never";
    case RestartKind::kOnFailure: return "on-failure";
    case RestartKind::kExitCode: return "exit-code";
  }
  return "never";
}

std::optional<int64_t> RestartPolicy::DelayBefore(uint32_t restart, int exit_code) const {
  if (kind == RestartKind::kNever || restart == 0 || restart > max_restarts) return std::nullopt;
  if (kind == RestartKind::kExitCode && exit_code >= 1 && exit_code <= 127) return std::nullopt;
  int64_t delay = backoff_initial_ms;
  for (uint32_t i = 1; i < restart && delay < backoff_max_ms; ++i) delay *= 2;
  return std::min(delay, backoff_max_ms);
}

uint32_t JobSpec::TaskCount() const {
  uint32_t n = 0;
  for (const auto& g : groups) n += g.replicas;
  return n;
}

uint32_t JobSpec::GpuCount() const {
  uint32_t n = 0;
  for (const auto& g : groups) n += g.replicas * g.gpus_per_task;
  return n;
}

Status Validate(const JobSpec& s) {
  if (s.name.empty() || s.name.size() > 64 || !IsNameChar(s.name[0], true)) {
    return Bad("job.name", "'" + s.name + "' must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}");
  }
  for (char c : s.name) {
    if (!IsNameChar(c, false)) return Bad("job.name", "'" + s.name + "' has a character outside [A-Za-z0-9._-]");
  }
  RETURN_IF_ERROR(CheckArgv("job.command", s.command));
  if (s.shell && s.command.size() != 1) {
    return Bad("job.command", "with shell, give exactly one string for /bin/sh -c");
  }
  if (s.env.size() > kMaxEnvVars) return Bad("job.env", "more than " + std::to_string(kMaxEnvVars) + " variables");
  for (const auto& [k, v] : s.env) {
    if (!ValidEnvName(k)) return Bad("job.env", "'" + k + "' is not a valid variable name");
    if (v.find('\0') != std::string::npos || v.size() > kMaxArgBytes) {
      return Bad("job.env." + k, "contains a NUL byte or is too long");
    }
  }
  if (!s.workdir.empty() && (s.workdir[0] != '/' || s.workdir.size() > 4096 ||
                             s.workdir.find('\0') != std::string::npos)) {
    return Bad("job.workdir", "'" + s.workdir + "' must be an absolute path");
  }
  if (auto sig = s.env.find(kResizeSignalVar); sig != s.env.end()) {
    const std::string& v = sig->second;
    if (v != "USR1" && v != "USR2" && v != "HUP" && v != "WINCH" && v != "URG" && v != "NONE") {
      return Bad(std::string("job.env.") + kResizeSignalVar, "'" + v.substr(0, 32) + "' is not USR1, USR2, HUP, WINCH, URG or NONE");
    }
  }
  if (s.groups.empty()) return Bad("job.groups", "give at least one task group");
  if (s.groups.size() > kMaxGroups) return Bad("job.groups", "more than " + std::to_string(kMaxGroups) + " groups");
  std::set<std::string> roles;
  uint32_t tasks = 0, chiefs = 0;
  bool any_command = !s.command.empty();
  for (size_t i = 0; i < s.groups.size(); ++i) {
    const TaskGroup& g = s.groups[i];
    const std::string field = "job.groups[" + std::to_string(i) + "]";
    Status role = ValidateRole(s.framework, g.role);
    if (!role.ok()) return Bad(field + ".role", role.message());
    if (!roles.insert(g.role).second) return Bad(field + ".role", "'" + g.role + "' appears twice");
    if (g.replicas < 1 || g.replicas > kMaxReplicas) {
      return Bad(field + ".replicas", "must be 1.." + std::to_string(kMaxReplicas) + ", not " +
                                          std::to_string(g.replicas));
    }
    if (g.gpus_per_task > kMaxGpusPerTask) {
      return Bad(field + ".gpus_per_task", "must be 0.." + std::to_string(kMaxGpusPerTask));
    }
    RETURN_IF_ERROR(CheckArgv(field + ".command", g.command));
    if (g.malleable) {
      const Malleable& m = *g.malleable;
      const std::string mfield = field + ".malleable";
      auto steps = [](double x) { return std::fabs(x * 1000 - std::round(x * 1000)) < 1e-6; };
      if (!std::isfinite(m.min_cpus) || !(m.min_cpus > 0) || m.min_cpus > kMaxMalleableCpus || !steps(m.min_cpus)) {
        return Bad(mfield + ".min_cpus", "must be a number of cores in (0, 4096] (steps of 0.001)");
      }
      if (!std::isfinite(m.max_cpus) || m.max_cpus < m.min_cpus || m.max_cpus > kMaxMalleableCpus || !steps(m.max_cpus)) {
        return Bad(mfield + ".max_cpus", "must be a number of cores from min_cpus to 4096 (steps of 0.001)");
      }
      if (g.cpus_per_task != 0 && (g.cpus_per_task < m.min_cpus || g.cpus_per_task > m.max_cpus)) {
        return Bad(field + ".cpus_per_task", "a malleable group's request must be within min_cpus..max_cpus");
      }
    }
    if (s.shell && !g.command.empty() && g.command.size() != 1) {
      return Bad(field + ".command", "with shell, give exactly one string for /bin/sh -c");
    }
    any_command = any_command || !g.command.empty();
    if (g.role == "chief" || g.role == "master") chiefs += g.replicas;
    tasks += g.replicas;
  }
  if (tasks > kMaxReplicas) return Bad("job.groups", "more than " + std::to_string(kMaxReplicas) + " tasks in all");
  if (!any_command) return Bad("job.command", "give the command to run");
  for (size_t i = 0; i < s.groups.size(); ++i) {
    if (s.command.empty() && s.groups[i].command.empty() &&
        !(s.framework == Framework::kMpi && s.groups[i].role == "worker")) {
      return Bad("job.groups[" + std::to_string(i) + "].command",
                 "no command for role '" + s.groups[i].role + "' and none for the job");
    }
  }
  if (s.framework == Framework::kTensorflow && chiefs > 1) {
    return Bad("job.groups", "tensorflow allows one chief or master in all, not " + std::to_string(chiefs));
  }
  if (s.framework == Framework::kPytorch && chiefs > 1) {
    return Bad("job.groups", "pytorch allows one master, not " + std::to_string(chiefs));
  }
  if (s.framework == Framework::kMpi) {
    const TaskGroup* launcher = nullptr;
    for (const auto& g : s.groups) {
      if (g.role == "launcher") launcher = &g;
    }
    if (launcher == nullptr || launcher->replicas != 1) {
      return Bad("job.groups", "mpi needs exactly one launcher replica");
    }
    if (launcher->gpus_per_task != 0) return Bad("job.groups", "the mpi launcher holds no GPUs");
    if (roles.count("worker") == 0) return Bad("job.groups", "mpi needs a worker group");
  }
  if (s.process_per_node && s.framework != Framework::kPytorch) {
    return Bad("job.process_per_node", "only for pytorch");
  }
  if (s.restart.max_restarts > kMaxRestarts) {
    return Bad("job.restart.max_restarts", "must be 0.." + std::to_string(kMaxRestarts));
  }
  if (s.restart.backoff_initial_ms < 0 || s.restart.backoff_max_ms < s.restart.backoff_initial_ms ||
      s.restart.backoff_max_ms > 24LL * 3600 * 1000) {
    return Bad("job.restart", "backoff must be 0..max_backoff, max_backoff at most 24h");
  }
  if (s.stop_after_disconnect_ms != 0 &&
      (s.stop_after_disconnect_ms < 1000 || s.stop_after_disconnect_ms > kMaxStopAfterDisconnectMs)) {
    return Bad("job.stop_after_disconnect", "must be 0 (never) or 1s up to 7d");
  }
  RETURN_IF_ERROR(ValidateSecretRefs(s.secrets));
  if (s.time_limit_ms < 0 || s.time_limit_ms > kMaxTimeLimitMs) {
    return Bad("job.time_limit", "must be 0 (none) up to 366d");
  }
  if (!s.queue.empty() && !ValidQueueName(s.queue)) {
    return Bad("job.queue", "'" + s.queue + "': use [a-z][a-z0-9_-]{0,31}");
  }
  if (s.priority && (*s.priority < kMinPriority || *s.priority > kMaxPriority)) {
    return Bad("job.priority", "must be " + std::to_string(kMinPriority) + ".." + std::to_string(kMaxPriority));
  }
  return Status::Ok();
}

const std::string& JobSpec::QueueName() const {
  static const std::string kDefault = "default";
  return queue.empty() ? kDefault : queue;
}

bool ValidQueueName(const std::string& name) {
  if (name.empty() || name.size() > 32 || name[0] < 'a' || name[0] > 'z') return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  }
  return true;
}

Result<uint64_t> ParseBytes(const std::string& text) {
  const std::string t(Trim(text));
  size_t i = 0;
  while (i < t.size() && ((t[i] >= '0' && t[i] <= '9') || t[i] == '.')) ++i;
  if (i == 0) return Status::InvalidArgument("malformed size '" + text + "': use e.g. 16GiB or 512MiB");
  double v = 0;
  try {
    v = std::stod(t.substr(0, i));
  } catch (...) {
    return Status::InvalidArgument("malformed size '" + text + "'");
  }
  const std::string unit = t.substr(i);
  static const std::map<std::string, double> kUnits = {
      {"", 1},          {"B", 1},          {"K", 1e3},        {"KB", 1e3},
      {"M", 1e6},       {"MB", 1e6},       {"G", 1e9},        {"GB", 1e9},
      {"T", 1e12},      {"TB", 1e12},      {"KiB", 1024.0},   {"MiB", 1048576.0},
      {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
  auto u = kUnits.find(unit);
  if (u == kUnits.end()) return Status::InvalidArgument("unknown size unit '" + unit + "' in '" + text + "'");
  const double bytes = v * u->second;
  if (!std::isfinite(bytes) || bytes > 1e18) return Status::InvalidArgument("size '" + text + "' is too large");
  return static_cast<uint64_t>(bytes);
}

Result<JobSpec> JobSpecFromJson(const Json& j) {
  JsonFields f(j, "job");
  RETURN_IF_ERROR(f.Only({"name", "command", "shell", "env", "workdir", "framework", "groups",
                          "restart", "time_limit", "process_per_node", "queue", "priority",
                          "preemptible", "spread", "stop_after_disconnect", "secrets"}));
  JobSpec s;
  RETURN_IF_ERROR(f.Str("name", &s.name, true, 64));
  RETURN_IF_ERROR(f.StrArray("command", &s.command, kMaxArgs, kMaxArgBytes));
  RETURN_IF_ERROR(f.Bool("shell", &s.shell));
  RETURN_IF_ERROR(ReadStringMap(j, "env", "job.env", kMaxEnvVars, &s.env));
  RETURN_IF_ERROR(f.Str("workdir", &s.workdir, false, 4096));
  std::string framework = "generic";
  RETURN_IF_ERROR(f.Str("framework", &framework, false, 32));
  auto fw = ParseFramework(framework);
  if (!fw.ok()) return Bad("job.framework", fw.status().message());
  s.framework = *fw;
  if (!f.Has("groups") || !j["groups"].is_array()) return Bad("job.groups", "must be a list of task groups");
  if (j["groups"].size() > kMaxGroups) return Bad("job.groups", "more than " + std::to_string(kMaxGroups) + " groups");
  for (size_t i = 0; i < j["groups"].size(); ++i) {
    ASSIGN_OR_RETURN(TaskGroup g, GroupFromJson(j["groups"][i], "job.groups[" + std::to_string(i) + "]"));
    s.groups.push_back(std::move(g));
  }
  if (f.Has("restart")) {
    const Json& r = j["restart"];
    JsonFields rf(r, "job.restart");
    RETURN_IF_ERROR(rf.Only({"policy", "max_restarts", "backoff", "max_backoff"}));
    std::string kind = "never";
    RETURN_IF_ERROR(rf.Str("policy", &kind, true, 16));
    if (kind == "never") s.restart.kind = RestartKind::kNever;
    else if (kind == "on-failure") s.restart.kind = RestartKind::kOnFailure;
    else if (kind == "exit-code") s.restart.kind = RestartKind::kExitCode;
    else return Bad("job.restart.policy", "'" + kind + "': use never, on-failure or exit-code");
    int64_t max = s.restart.max_restarts;
    RETURN_IF_ERROR(rf.Int("max_restarts", &max, 0, kMaxRestarts));
    s.restart.max_restarts = static_cast<uint32_t>(max);
    RETURN_IF_ERROR(rf.Duration("backoff", &s.restart.backoff_initial_ms));
    RETURN_IF_ERROR(rf.Duration("max_backoff", &s.restart.backoff_max_ms));
  }
  // "0" (or "0s"): no time limit of its own (its queue's default may apply), and
  // never stop after a disconnect, as the messages say.
  for (auto [key, out] : {std::pair{"time_limit", &s.time_limit_ms},
                          std::pair{"stop_after_disconnect", &s.stop_after_disconnect_ms}}) {
    const auto it = j.find(key);
    if (it != j.end() && it->is_string() && (*it == "0" || *it == "0s")) {
      *out = 0;
      continue;
    }
    RETURN_IF_ERROR(f.Duration(key, out));
  }
  RETURN_IF_ERROR(f.Bool("process_per_node", &s.process_per_node));
  RETURN_IF_ERROR(f.Str("queue", &s.queue, false, 32));
  if (f.Has("priority")) {
    int64_t priority = 0;
    RETURN_IF_ERROR(f.Int("priority", &priority, kMinPriority, kMaxPriority));
    s.priority = static_cast<int>(priority);
  }
  if (f.Has("preemptible")) {
    bool p = false;
    RETURN_IF_ERROR(f.Bool("preemptible", &p));
    s.preemptible = p;
  }
  RETURN_IF_ERROR(f.Bool("spread", &s.spread));
  if (f.Has("secrets")) {
    std::vector<std::string> refs;
    RETURN_IF_ERROR(f.StrArray("secrets", &refs, kMaxJobSecrets, 4200));
    for (const auto& text : refs) {
      ASSIGN_OR_RETURN(SecretRef r, ParseSecretRef(text));
      s.secrets.push_back(std::move(r));
    }
  }
  RETURN_IF_ERROR(Validate(s));
  return s;
}

Json ToJson(const JobSpec& s) {
  Json groups = Json::array();
  for (const auto& g : s.groups) {
    Json jg{{"role", g.role},
            {"replicas", g.replicas},
            {"gpus_per_task", g.gpus_per_task},
            {"cpus_per_task", g.cpus_per_task},
            {"memory", g.memory_bytes_per_task},
            {"node_labels", g.node_labels},
            {"nodes", g.nodes}};
    if (!g.gpu_model.empty()) jg["gpu_model"] = g.gpu_model;
    if (!g.command.empty()) jg["command"] = g.command;
    if (g.malleable) jg["malleable"] = Json{{"min_cpus", g.malleable->min_cpus}, {"max_cpus", g.malleable->max_cpus}};
    groups.push_back(std::move(jg));
  }
  Json j{{"name", s.name},
         {"command", s.command},
         {"shell", s.shell},
         {"env", s.env},
         {"workdir", s.workdir},
         {"framework", FrameworkName(s.framework)},
         {"groups", std::move(groups)},
         {"restart",
          {{"policy", RestartKindName(s.restart.kind)},
           {"max_restarts", s.restart.max_restarts},
           {"backoff", FormatExactDuration(s.restart.backoff_initial_ms)},
           {"max_backoff", FormatExactDuration(s.restart.backoff_max_ms)}}},
         {"process_per_node", s.process_per_node}};
  if (s.time_limit_ms > 0) j["time_limit"] = FormatExactDuration(s.time_limit_ms);
  if (!s.queue.empty()) j["queue"] = s.queue;
  if (s.priority) j["priority"] = *s.priority;
  if (s.preemptible) j["preemptible"] = *s.preemptible;
  if (s.spread) j["spread"] = true;
  if (s.stop_after_disconnect_ms > 0) j["stop_after_disconnect"] = FormatExactDuration(s.stop_after_disconnect_ms);
  if (!s.secrets.empty()) {
    Json refs = Json::array();
    for (const auto& r : s.secrets) refs.push_back(r.ToString());
    j["secrets"] = std::move(refs);
  }
  return j;
}

}  // namespace rota::jobs
