#include "agent/agent_main.h"

#include <sys/stat.h>
#include <unistd.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include "agent/agent.h"
#include "agent/agent_config.h"
#include "agent/collector.h"
#include "api/codec.h"
#include "common/file_util.h"
#include "common/log.h"
#include "common/process.h"
#include "common/strings.h"
#include "common/time_util.h"
#include "gpu/gpu_provider.h"
#include "host/host_monitor.h"
#include "host/rapl.h"
#include "net/tls.h"
#include "net/url.h"
#include "service/service_notify.h"

namespace rota::agent {
namespace {

// A ws:// (http://) server URL whose host is not this machine.
bool IsPlainToAnotherHost(const std::string& server) {
  auto urls = AgentConnectUrls(server);
  if (!urls.ok()) return false;
  for (const auto& ws : *urls) {
    Result<net::Url> url = net::ParseUrl(ws);
    if (url.ok() && url->scheme == "ws" && !net::IsLoopbackHost(url->host)) return true;
  }
  return false;
}

constexpr const char* kAgentVersion = "0.1.0";
// How long the agent waits for the server before it tells systemd it is up anyway.
constexpr int64_t kReadyWithoutServerMs = 15'000;

int Usage(const std::string& message) {
  std::cerr << "rota agent: " << message << "\n";
  return 2;
}

// SIGHUP: rereads cli_flags.config_file; applies log_level to the running agent and
// logs the other settings that changed (they take effect at the next start).
void ReloadAgentConfig(const AgentFlags& cli_flags, AgentFlags* running) {
  if (cli_flags.config_file.empty()) {
    ROTA_LOG(INFO) << "SIGHUP: no config file (--config) to reread";
    return;
  }
  AgentFlags file;
  if (Status st = LoadAgentConfigFile(&file, cli_flags.config_file); !st.ok()) {
    ROTA_LOG(WARNING) << "SIGHUP: " << st.message() << "; the running settings stay";
    return;
  }
  AgentFlags next = MergeAgentFlags(file, cli_flags, cli_flags.given);
  std::vector<std::string> restart;
  for (const std::string& key : ChangedAgentKeys(*running, next)) {
    if (key == "log_level") {
      log::Level level = log::Level::kInfo;
      if (!next.log_level.empty() && !log::ParseLevel(next.log_level, &level)) {
        ROTA_LOG(WARNING) << "SIGHUP: bad log_level '" << next.log_level << "'; it stays";
        next.log_level = running->log_level;
        continue;
      }
      log::SetLevel(level);
      ROTA_LOG(INFO) << "SIGHUP: log_level is now " << (next.log_level.empty() ? "info" : next.log_level);
      continue;
    }
    restart.push_back(key);
  }
  if (restart.empty()) {
    ROTA_LOG(INFO) << "SIGHUP: config reread, nothing else changed";
  } else {
    ROTA_LOG(WARNING) << "SIGHUP: changed settings that need a restart (systemctl restart rota-agent; "
                      << "tasks keep running): " << Join(restart, ", ");
    // What runs stays what is compared against, so the next SIGHUP says them again.
    const std::string applied_log_level = next.log_level;
    next = *running;
    next.log_level = applied_log_level;
  }
  *running = std::move(next);
}

}  // namespace

Result<std::string> LoadOrCreateNodeId(const std::string& state_dir) {
  std::string path = state_dir + "/node-id";
  auto existing = ReadFile(path);
  if (existing.ok()) {
    std::string id(Trim(*existing));
    if (!id.empty() && id.size() <= 128) return id;
    return Status::InvalidArgument("node id in " + path + " is empty or too long");
  }
  if (existing.status().code() != StatusCode::kNotFound) return existing.status();
  ASSIGN_OR_RETURN(std::string id, RandomHex(16));
  RETURN_IF_ERROR(WriteFileAtomic(path, id + "\n", 0600));
  return id;
}

int RunAgent(const AgentFlags& cli_flags) {
  AgentFlags flags = cli_flags;
  if (!cli_flags.config_file.empty()) {
    AgentFlags file;
    if (Status st = LoadAgentConfigFile(&file, cli_flags.config_file); !st.ok()) return Usage(st.message());
    flags = MergeAgentFlags(file, cli_flags, cli_flags.given);
  }
  if (flags.server.empty()) return Usage("no server: give --server URL or server: in the config file (--config)");
  if (!flags.log_level.empty()) {
    log::Level level;
    if (!log::ParseLevel(flags.log_level, &level)) return Usage("bad --log-level " + flags.log_level);
    log::SetLevel(level);
  }
  AgentOptions options;
  options.server_url = flags.server;
  if (auto url = AgentConnectUrls(flags.server); !url.ok()) return Usage(url.status().message());

  options.tls = {flags.ca_file, flags.server_pin};
  if (!flags.server_pin.empty()) {
    if (Status st = net::ValidatePin(flags.server_pin); !st.ok()) return Usage("--server-pin: " + st.message());
  }
  if (!flags.ca_file.empty() && !ReadFile(flags.ca_file).ok()) {
    return Usage("--ca-file " + flags.ca_file + " is not readable");
  }
  if (IsPlainToAnotherHost(flags.server)) {
    ROTA_LOG(WARNING) << "talking to " << flags.server << " without TLS: the join token, this node's "
                      << "credential and every job's command line cross the network in clear text; "
                      << "use https:// (docs/operations.md, \"TLS\")";
  }

  options.token = flags.token;
  if (options.token.empty() && !flags.token_file.empty()) {
    auto text = ReadFile(flags.token_file);
    if (!text.ok()) return Usage("cannot read --token-file: " + text.status().message());
    options.token = std::string(Trim(*text));
  }
  if (options.token.empty()) {
    if (const char* env = std::getenv("ROTA_JOIN_TOKEN")) options.token = env;
  }
  // The node's own credential, once enrolled (server/nodes/node_credentials.h);
  // the join token is then needed only to enrol again.
  options.credential_file = flags.state_dir + "/credential";
  options.epoch_file = flags.state_dir + "/leader-epoch";
  const bool enrolled = ReadFile(options.credential_file).ok();
  if (options.token.empty() && !enrolled) {
    return Usage("a join token is required to enrol this node (--token, --token-file or ROTA_JOIN_TOKEN)");
  }

  if (flags.enforcement_min_uid < 0 || flags.enforcement_min_uid > 4'294'967'294LL) {
    return Usage("--enforcement-min-uid must be a uid (0..4294967294)");
  }
  options.enforcement_min_uid = static_cast<uint32_t>(flags.enforcement_min_uid);

  auto interval = ParseDurationMs(flags.interval);
  if (!interval.ok()) return Usage("--interval: " + interval.status().message());
  if (*interval < 500 || *interval > 60'000) return Usage("--interval must be between 0.5s and 60s");
  options.interval_ms = *interval;
  auto buffer = ParseDurationMs(flags.buffer);
  if (!buffer.ok()) return Usage("--buffer: " + buffer.status().message());
  if (*buffer > 24LL * 3600 * 1000) return Usage("--buffer must be at most 24h");
  options.buffer_ms = *buffer;
  auto server_timeout = ParseDurationMs(flags.server_timeout);
  if (!server_timeout.ok()) return Usage("--server-timeout: " + server_timeout.status().message());
  if (*server_timeout < 2000 || *server_timeout > 600'000) return Usage("--server-timeout must be between 2s and 10m");
  options.server_timeout_ms = *server_timeout;

  api::NodeInfo info;
  for (const auto& label : flags.labels) {
    size_t eq = label.find('=');
    if (eq == std::string::npos || eq == 0 || label.size() > 2 * api::kMaxNameLength) {
      return Usage("--label '" + label + "' must be KEY=VALUE");
    }
    info.labels[label.substr(0, eq)] = label.substr(eq + 1);
  }
  if (info.labels.size() > api::kMaxLabels) return Usage("too many --label flags");

  auto host_info = host::ReadStaticInfo();
  if (!host_info.ok()) {
    std::cerr << "rota agent: " << host_info.status().message() << "\n";
    return 1;
  }
  info.hostname = host_info->hostname;
  info.name = flags.name.empty() ? host_info->hostname.substr(0, host_info->hostname.find('.')) : flags.name;
  if (!api::IsValidNodeName(info.name)) {
    return Usage("node name '" + info.name + "' is not valid (1-63 of [A-Za-z0-9._-]); set --name");
  }
  info.addresses = host_info->addresses;
  info.cpus = host_info->cpus;
  info.memory_bytes = host_info->memory_bytes;
  info.agent_version = kAgentVersion;
  info.sample_interval_ms = options.interval_ms;

  // 0711: job tasks (running as their owners) reach their own task directories
  // (e.g. an MPI hostfile) without being able to list the state directory.
  if (Status st = MakeDirs(flags.state_dir, 0711); !st.ok()) {
    std::cerr << "rota agent: state directory: " << st.message() << "\n";
    return 1;
  }
  ::chmod(flags.state_dir.c_str(), 0711);
  auto self = SelfExecutable();
  if (!self.ok()) {
    std::cerr << "rota agent: " << self.status().message() << "\n";
    return 1;
  }
  options.task_state_dir = flags.state_dir;
  // The small supervisor built beside rota or installed in <prefix>/lib/rota (the
  // packages), else rota's own subcommand.
  const std::string dir = self->substr(0, self->rfind('/') + 1);
  options.task_shim_argv = {*self, "task-shim"};
  for (const std::string& shim : {dir + "rota-task-shim", dir + "../lib/rota/rota-task-shim"}) {
    if (::access(shim.c_str(), X_OK) == 0) {
      options.task_shim_argv = {shim};
      break;
    }
  }
  auto node_id = LoadOrCreateNodeId(flags.state_dir);
  if (!node_id.ok()) {
    std::cerr << "rota agent: " << node_id.status().message() << "\n";
    return 1;
  }
  info.node_id = *node_id;

  std::unique_ptr<gpu::GpuProvider> gpus;
  auto nvml = gpu::OpenNvml(flags.nvml_library);
  if (nvml.ok()) {
    gpus = std::move(*nvml);
    auto devices = gpus->Devices();
    if (devices.ok()) {
      info.gpus = std::move(*devices);
    } else {
      info.gpu_status = "cannot list GPUs: " + devices.status().message();
    }
  } else {
    info.gpu_status = nvml.status().message();
    ROTA_LOG(WARNING) << "no GPU monitoring: " << info.gpu_status << " (CPU and memory are still reported)";
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // CPU package energy: read once here so that the server is told at registration
  // whether samples will carry it, and why not (the collector logs it).
  std::unique_ptr<host::RaplMeter> rapl;
  if (flags.powercap_root.empty()) {
    info.cpu_energy_status = "not reported: --powercap-root is empty";
    ROTA_LOG(INFO) << "no CPU energy in samples: --powercap-root is empty";
  } else {
    rapl = std::make_unique<host::RaplMeter>(flags.powercap_root, RealClock::Get());
    auto first = rapl->Read();
    info.cpu_energy_status = first.ok() ? "ok" : first.status().message();
  }
  host::HostMonitor host_monitor;
  Collector collector(gpus.get(), &host_monitor, &RealClock::Get(), rapl.get());
  Agent agent(options, info, &collector, &RealClock::Get());
  // GPUs whose power limit an earlier run changed and did not restore (it was
  // killed) get their default back before the server says what they should have.
  PowerLimiter power(gpus.get(), info.gpus, flags.state_dir + "/power-limits.json");
  for (const auto& r : power.RestoreLeftovers().gpus) {
    ROTA_LOG(INFO) << "power limit left by an earlier run: " << DescribePowerReport(r);
  }
  agent.set_power_limiter(&power);
  std::atomic<bool> stop{false};
  service::ServiceNotifier notifier(service::NotifyTargetFromEnvironment());
  std::thread signal_thread([&] {
    int sig = 0;
    AgentFlags running = flags;
    while (sigwait(&signals, &sig) == 0 && sig == SIGHUP) {
      notifier.Reloading();
      ReloadAgentConfig(cli_flags, &running);
      // Back to READY (systemd waits for it after RELOADING=1), unless not yet connected.
      notifier.SetStatus("config reloaded");
      if (agent.registered()) notifier.Ready("connected to " + options.server_url + ", config reloaded");
    }
    ROTA_LOG(INFO) << "signal " << sig << " received, stopping";
    stop = true;
  });
  ROTA_LOG(INFO) << "rota agent " << info.name << " (" << info.gpus.size() << " GPUs) reporting to "
                 << options.server_url << " every " << options.interval_ms << " ms";
  // systemd (Type=notify): READY once the server has accepted the node; the watchdog
  // pings while Run()'s loop keeps going round (a sample or a server call that hangs
  // stops the pings, and systemd restarts the agent, which re-adopts its tasks).
  std::thread ready_thread;
  if (notifier.active()) {
    notifier.SetStatus("connecting to " + options.server_url);
    const int64_t stuck_ms = std::max<int64_t>(10'000, 3 * options.interval_ms);
    notifier.StartWatchdog([&agent, stuck_ms] {
      const int64_t beat = agent.last_loop_ms();
      return beat != 0 && RealClock::Get().MonotonicMs() - beat < stuck_ms;
    });
    // Not connected after kReadyWithoutServerMs: READY all the same (the agent runs, keeps
    // its tasks and keeps trying), so that a package upgrade or boot does not wait on the
    // server; STATUS says so, and READY's status changes once connected.
    ready_thread = std::thread([&] {
      const int64_t start = RealClock::Get().MonotonicMs();
      bool said_ready = false;
      while (!stop.load()) {
        if (agent.registered()) {
          notifier.Ready("connected to " + options.server_url + " as " + info.name);
          return;
        }
        if (!said_ready && RealClock::Get().MonotonicMs() - start >= kReadyWithoutServerMs) {
          notifier.Ready("not yet connected to " + options.server_url + " (retrying)");
          said_ready = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
  }
  agent.Run(stop);
  signal_thread.join();
  if (ready_thread.joinable()) ready_thread.join();
  notifier.Stopping();
  return 0;
}

}  // namespace rota::agent
