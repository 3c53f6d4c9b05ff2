#include "ssh/remote_scripts.h"

#include <cctype>
#include <cstdlib>
#include <cstdio>
#include <sstream>

#include "common/strings.h"

namespace rota::ssh {
namespace {

std::string TasksDir(const std::string& cluster) {
  return "\"$HOME/.rota/\"" + ShellQuote(cluster) + "/tasks";
}

std::string TaskDir(const std::string& cluster, const std::string& id) {
  return TasksDir(cluster) + "/" + ShellQuote(id);
}

bool HasNul(const std::string& s) { return s.find('\0') != std::string::npos; }

std::vector<std::string> SplitKeepEmpty(const std::string& s, char sep) {
  return Split(s, sep, /*skip_empty=*/false);
}

std::optional<uint64_t> ParseU64(const std::string& s) {
  std::string t(Trim(s));
  if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos || t.size() > 19) {
    return std::nullopt;
  }
  return std::strtoull(t.c_str(), nullptr, 10);
}

std::optional<double> ParseDouble(const std::string& s) {
  std::string t(Trim(s));
  if (t.empty() || t[0] == '[') return std::nullopt;  // [N/A], [Not Supported]
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || *end != '\0' || v < 0 || v > 1e12) return std::nullopt;
  return v;
}

std::optional<uint32_t> ParseU32(const std::string& s) {
  auto v = ParseDouble(s);
  if (!v || *v > 4e9) return std::nullopt;
  return static_cast<uint32_t>(*v + 0.5);
}

// One nvidia-smi CSV row (see ProbeScript for the columns).
bool ParseGpuRow(const std::string& row, Probe& p) {
  std::vector<std::string> f = SplitKeepEmpty(row, ',');
  if (f.size() != 11) return false;
  auto index = ParseU32(f[0]);
  if (!index) return false;
  api::GpuInfo info;
  info.index = *index;
  info.uuid = std::string(Trim(f[1]));
  info.name = std::string(Trim(f[2]));
  info.pci_bus_id = std::string(Trim(f[3]));
  api::GpuSample s;
  s.index = *index;
  s.uuid = info.uuid;
  if (auto v = ParseDouble(f[4])) info.memory_total_bytes = s.memory_total_bytes = uint64_t(*v) << 20;
  if (auto v = ParseDouble(f[5])) s.memory_used_bytes = uint64_t(*v) << 20;
  s.util_gpu_pct = ParseU32(f[6]);
  s.util_memory_pct = ParseU32(f[7]);
  s.temperature_c = ParseU32(f[8]);
  if (auto v = ParseDouble(f[9])) s.power_mw = static_cast<uint32_t>(*v * 1000);
  if (auto v = ParseDouble(f[10])) info.power_limit_mw = s.power_limit_mw = static_cast<uint32_t>(*v * 1000);
  p.gpu_infos.push_back(std::move(info));
  p.gpus.push_back(std::move(s));
  return true;
}

}  // namespace

Status CheckClusterId(const std::string& cluster) {
  bool ok = !cluster.empty() && cluster.size() <= 64;
  for (unsigned char c : cluster) ok = ok && (std::isalnum(c) || c == '_' || c == '-');
  if (!ok) return Status::InvalidArgument("invalid cluster id '" + cluster + "'");
  return Status::Ok();
}

std::string ShellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += "'";
  return out;
}

Result<std::string> RemoteShell(const std::string& login_user, const std::string& task_user) {
  if (task_user.empty()) return Status::InvalidArgument("no Unix user to run the task as");
  if (task_user == "root") return Status::PermissionDenied("refusing to run a job task as root");
  if (login_user == task_user) return std::string("exec /bin/sh -s");
  if (login_user != "root") {
    return Status::PermissionDenied("this node is reached as '" + login_user +
                                    "' and can run tasks only for that Unix user, not for '" +
                                    task_user + "' (declare it as ssh://root@... to run tasks "
                                    "as each job's owner)");
  }
  const std::string u = ShellQuote(task_user);
  return "u=" + u +
         "; h=$(getent passwd \"$u\" | cut -d: -f6); "
         "if [ -z \"$h\" ]; then echo \"error: Unix user '$u' " + std::string(api::kNoUnixUserError) +
         "\"; exit 0; fi; "
         "i=$(id -u \"$u\"); "
         "if [ \"$i\" = 0 ]; then echo 'error: refusing to run a job task as root'; exit 0; fi; "
         "exec setpriv --reuid=\"$i\" --regid=\"$(id -g \"$u\")\" --init-groups "
         "env HOME=\"$h\" USER=\"$u\" LOGNAME=\"$u\" SHELL=/bin/sh /bin/sh -s";
}

// "1F90" for 8080, as /proc/net/tcp writes ports.
std::string PortHex(uint16_t port) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04X", static_cast<unsigned>(port));
  return buf;
}

Result<std::string> LaunchScript(const std::string& cluster, const api::TaskSpec& task) {
  RETURN_IF_ERROR(CheckClusterId(cluster));
  RETURN_IF_ERROR(api::Validate(task));
  for (const auto& a : task.argv) {
    if (HasNul(a)) return Status::InvalidArgument("task " + task.id + ": argv holds a NUL byte");
  }
  for (const auto& [k, v] : task.env) {
    if (HasNul(k) || HasNul(v) || k.find('=') != std::string::npos) {
      return Status::InvalidArgument("task " + task.id + ": invalid environment variable");
    }
  }
  for (const auto& [name, content] : task.files) {
    if (HasNul(content)) return Status::InvalidArgument("task " + task.id + ": file holds a NUL byte");
  }
  if (HasNul(task.workdir)) return Status::InvalidArgument("task " + task.id + ": invalid workdir");
  if (!task.argv.empty() && task.argv[0].find('=') != std::string::npos) {
    return Status::InvalidArgument("task " + task.id + ": a command name may not contain '='");
  }

  std::ostringstream s;
  s << "set -u\n"
    << "base=" << TasksDir(cluster) << "\n"
    << "d=" << TaskDir(cluster, task.id) << "\n"
    << "(umask 077; mkdir -p \"$base\") || { echo \"error: cannot create $base\"; exit 0; }\n"
    << "for x in \"$base\"/*/exit; do\n"
    << "  if [ -f \"$x\" ] && [ -n \"$(find \"$x\" -mtime +7 2>/dev/null)\" ]; then rm -rf \"${x%/exit}\"; fi\n"
    << "done\n"
    << "if ! (umask 077; mkdir \"$d\") 2>/dev/null; then\n"
    << "  if [ -s \"$d/pid\" ]; then echo \"started $(cat \"$d/pid\")\"; exit 0; fi\n"
    << "  echo \"error: task directory $d already exists\"; exit 0\n"
    << "fi\n";
  // Ports the task will listen on must not have a listener already (IPv4 or IPv6,
  // from /proc/net/tcp*: state 0A is LISTEN). Without awk or /proc nothing is refused.
  for (uint16_t port : task.ports) {
    s << "if cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v h=" << PortHex(port)
      << " '$4 == \"0A\" { n = split($2, a, \":\"); if (a[n] == h) f = 1 } END { exit !f }'; then\n"
      << "  rm -rf \"$d\"; echo 'error: " << api::PortInUseError(port) << "'; exit 0\n"
      << "fi\n";
  }
  // The environment, exactly: the spec's variables, then the account's own.
  std::map<std::string, std::string> env = task.env;
  std::string env_words;
  for (const auto& [name, file] : task.file_env) env[name] = "";  // set below, needs $d
  for (const auto& [k, v] : env) {
    if (task.file_env.count(k) != 0) {
      env_words += " \"" + k + "=$d/\"" + ShellQuote(task.file_env.at(k));
    } else {
      env_words += " " + ShellQuote(k + "=" + v);
    }
  }
  for (const char* k : {"HOME", "USER", "LOGNAME", "SHELL"}) {
    if (env.count(k) == 0) env_words += std::string(" \"") + k + "=${" + k + ":-}\"";
  }
  if (env.count("PATH") == 0) env_words += " PATH=/usr/local/bin:/usr/bin:/bin";
  for (const auto& [name, content] : task.files) {
    s << "printf '%s' " << ShellQuote(content) << " > \"$d/\"" << ShellQuote(name) << "\n";
  }
  if (task.workdir.empty()) {
    s << "cd \"$HOME\" 2>/dev/null || cd /\n";
  } else {
    s << "cd " << ShellQuote(task.workdir)
      << " 2>/dev/null || { printf 'error: cannot change to directory %s (missing, or no permission)\\n' "
      << ShellQuote(task.workdir) << "; rm -rf \"$d\"; exit 0; }\n";
  }
  std::string argv_words;
  for (const auto& a : task.argv) argv_words += " " + ShellQuote(a);
  // The supervisor: own session, records its pid, the task's pid, then its exit status.
  s << "setsid /bin/sh -c '"
    << "d=$1; shift; echo $$ > \"$d/wpid\"; "
    << "\"$@\" </dev/null >\"$d/stdout.log\" 2>\"$d/stderr.log\" & c=$!; "
    << "echo $c > \"$d/pid.tmp\"; mv \"$d/pid.tmp\" \"$d/pid\"; "
    << "wait $c; echo $? > \"$d/exit.tmp\"; mv \"$d/exit.tmp\" \"$d/exit\"' "
    << "rota-task \"$d\" setsid env -i" << env_words << argv_words
    << " </dev/null >/dev/null 2>&1 &\n"
    << "n=0\n"
    << "while [ ! -s \"$d/pid\" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done\n"
    << "if [ -s \"$d/pid\" ]; then echo \"started $(cat \"$d/pid\")\"; "
    << "else echo 'error: the task did not start within 10 s'; fi\n";
  return s.str();
}

std::string PollScript(const std::string& cluster, const std::vector<std::string>& ids) {
  std::ostringstream s;
  s << "base=" << TasksDir(cluster) << "\n";
  s << "for id in";
  for (const auto& id : ids) s << " " << ShellQuote(id);
  s << "; do\n"
    << "  d=\"$base/$id\"\n"
    << "  if [ -f \"$d/exit\" ]; then\n"
    << "    c=$(cat \"$d/exit\"); e=''\n"
    << "    if [ \"$c\" = 126 ] || [ \"$c\" = 127 ]; then "
       "e=$(tail -n 1 \"$d/stderr.log\" 2>/dev/null | tr '\\t\\r\\n' '   ' | cut -c1-300); fi\n"
    << "    printf '%s\\texited\\t%s\\t%s\\t%s\\n' \"$id\" \"$c\" \"$(cat \"$d/pid\" 2>/dev/null)\" \"$e\"\n"
    << "  elif [ -f \"$d/pid\" ]; then\n"
    << "    p=$(cat \"$d/pid\"); w=$(cat \"$d/wpid\" 2>/dev/null || true)\n"
    << "    if kill -0 \"$p\" 2>/dev/null || { [ -n \"$w\" ] && kill -0 \"$w\" 2>/dev/null; }; then\n"
    << "      printf '%s\\trunning\\t\\t%s\\t\\n' \"$id\" \"$p\"\n"
    << "    else\n"
    << "      printf '%s\\tlost\\t\\t%s\\tthe task ended without recording its exit status\\n' \"$id\" \"$p\"\n"
    << "    fi\n"
    << "  else\n"
    << "    printf '%s\\tmissing\\t\\t\\t\\n' \"$id\"\n"
    << "  fi\n"
    << "done\n";
  return s.str();
}

std::map<std::string, api::TaskReport> ParsePoll(const std::string& output) {
  std::map<std::string, api::TaskReport> out;
  for (const auto& line : SplitKeepEmpty(output, '\n')) {
    std::vector<std::string> f = SplitKeepEmpty(line, '\t');
    if (f.size() != 5 || !api::ValidateTaskId(f[0]).ok()) continue;
    api::TaskReport r;
    r.id = f[0];
    if (auto pid = ParseU64(f[3]); pid && *pid < (1u << 31)) r.pid = static_cast<int64_t>(*pid);
    if (f[1] == "running") {
      r.state = "running";
    } else if (f[1] == "exited") {
      auto code = ParseU64(f[2]);
      if (!code || *code > 255) continue;
      r.state = "exited";
      if (*code > 128 && *code <= 128 + 64) {
        r.signal = static_cast<int>(*code - 128);
      } else {
        r.exit_code = static_cast<int>(*code);
      }
      if (!f[4].empty()) r.error = "cannot run the command: " + f[4];
    } else if (f[1] == "lost" || f[1] == "missing") {
      r.state = "lost";
      r.error = f[1] == "lost" ? f[4] : "the task is not known on the node";
    } else {
      continue;
    }
    out[r.id] = std::move(r);
  }
  return out;
}

Result<std::string> SignalScript(const std::string& cluster, const std::string& id,
                                 const std::string& signal) {
  RETURN_IF_ERROR(CheckClusterId(cluster));
  RETURN_IF_ERROR(api::ValidateTaskId(id));
  if (signal != "TERM" && signal != "KILL") {
    return Status::InvalidArgument("unknown signal '" + signal + "' (TERM or KILL)");
  }
  return "d=" + TaskDir(cluster, id) +
         "\nif [ -f \"$d/exit\" ]; then echo ok; exit 0; fi\n"
         "p=$(cat \"$d/pid\" 2>/dev/null) || { echo 'error: no such task on this node'; exit 0; }\n"
         "kill -" + signal + " \"-$p\" 2>/dev/null || kill -" + signal +
         " \"$p\" 2>/dev/null\necho ok\n";
}

Result<std::string> LogsScript(const std::string& cluster, const api::TaskLogsMsg& request) {
  RETURN_IF_ERROR(CheckClusterId(cluster));
  RETURN_IF_ERROR(api::ValidateTaskId(request.id));
  if (request.stream != "stdout" && request.stream != "stderr") {
    return Status::InvalidArgument("unknown log stream '" + request.stream + "'");
  }
  if (request.max_bytes == 0 || request.max_bytes > api::kMaxLogChunk) {
    return Status::InvalidArgument("max_bytes must be 1.." + std::to_string(api::kMaxLogChunk));
  }
  return "f=" + TaskDir(cluster, request.id) + "/" + request.stream +
         ".log\nif [ ! -f \"$f\" ]; then echo 'error: no " + request.stream +
         " log for this task on the node'; exit 0; fi\n"
         "echo \"size $(wc -c < \"$f\")\"\n"
         "tail -c +" + std::to_string(request.offset + 1) + " \"$f\" | head -c " +
         std::to_string(request.max_bytes) + "\n";
}

api::TaskLogMsg ParseLogs(uint64_t req, uint64_t offset, const std::string& output) {
  api::TaskLogMsg m;
  m.req = req;
  m.offset = offset;
  size_t nl = output.find('\n');
  std::string first = output.substr(0, nl);
  if (first.compare(0, 7, "error: ") == 0) {
    m.error = first.substr(7);
    return m;
  }
  auto size = first.compare(0, 5, "size ") == 0 ? ParseU64(first.substr(5)) : std::nullopt;
  if (!size || nl == std::string::npos) {
    m.error = "unexpected answer from the node";
    return m;
  }
  m.size = *size;
  m.data = output.substr(nl + 1);
  return m;
}

std::string ProbeScript() {
  return "echo \"hostname $(cat /proc/sys/kernel/hostname)\"\n"
         "echo \"cpus $(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)\"\n"
         "grep -E '^(MemTotal|MemAvailable):' /proc/meminfo\n"
         "echo \"load $(cut -d' ' -f1-3 /proc/loadavg)\"\n"
         "head -n 1 /proc/stat\n"
         "if command -v nvidia-smi >/dev/null 2>&1; then "
         "nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,memory.total,memory.used,"
         "utilization.gpu,utilization.memory,temperature.gpu,power.draw,power.limit "
         "--format=csv,noheader,nounits 2>/dev/null | sed 's/^/gpu /'; fi\n";
}

Result<Probe> ParseProbe(const std::string& output) {
  Probe p;
  bool have_cpus = false;
  for (const auto& line : SplitKeepEmpty(output, '\n')) {
    std::istringstream in(line);
    std::string key;
    in >> key;
    if (key == "hostname") {
      std::getline(in >> std::ws, p.hostname);
    } else if (key == "cpus") {
      uint64_t n = 0;
      if (in >> n && n > 0 && n <= api::kMaxCores) {
        p.cpus = static_cast<uint32_t>(n);
        have_cpus = true;
      }
    } else if (key == "MemTotal:" || key == "MemAvailable:") {
      uint64_t kb = 0;
      if (in >> kb) (key == "MemTotal:" ? p.mem_total_bytes : p.mem_available_bytes) = kb * 1024;
    } else if (key == "load") {
      in >> p.load1 >> p.load5 >> p.load15;
    } else if (key == "cpu") {
      uint64_t v = 0, total = 0, idle = 0;
      for (int i = 0; in >> v; ++i) {
        total += v;
        if (i == 3 || i == 4) idle += v;  // idle, iowait
      }
      p.cpu_total = total;
      p.cpu_busy = total - idle;
    } else if (key == "gpu") {
      std::string row;
      std::getline(in >> std::ws, row);
      if (p.gpus.size() < api::kMaxGpusPerNode) (void)ParseGpuRow(row, p);
    }
  }
  if (p.hostname.empty() || !have_cpus) {
    return Status::InvalidArgument("the node's answer lacks its hostname or CPU count");
  }
  return p;
}

}  // namespace rota::ssh
