// Agent cost per sample: CPU time and RSS of the agent's sampling path (NVML via
// the simulated libnvidia-ml.so.1 + /proc host monitoring + JSON encoding of the
// protocol message) with 8 simulated GPUs and 200 GPU processes.
//
// Usage: rota_agent_bench --sim-lib PATH [--processes 200] [--gpus 8] [--samples 40]
//                         [--interval-ms 500]
// Each sample is taken after a pause of --interval-ms (as the agent does), so
// caches that expire between real samples expire here too. Prints JSON.

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <thread>

#include "agent/collector.h"
#include "api/protocol.h"
#include "common/file_util.h"
#include "common/process.h"
#include "gpu/gpu_provider.h"
#include "host/host_monitor.h"

namespace {

double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// User and system CPU of this thread, ms.
void ThreadUserSysMs(double* user, double* sys) {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  *user = static_cast<double>(ru.ru_utime.tv_sec) * 1e3 + static_cast<double>(ru.ru_utime.tv_usec) / 1e3;
  *sys = static_cast<double>(ru.ru_stime.tv_sec) * 1e3 + static_cast<double>(ru.ru_stime.tv_usec) / 1e3;
}

double RssMb() {
  auto statm = rota::ReadFile("/proc/self/statm");
  unsigned long long size = 0, res = 0;
  if (statm.ok()) std::sscanf(statm->c_str(), "%llu %llu", &size, &res);
  return static_cast<double>(res * static_cast<unsigned long long>(sysconf(_SC_PAGESIZE))) / (1 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  std::string sim_lib;
  int processes = 200, gpus = 8, samples = 40, interval_ms = 500;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--sim-lib") sim_lib = v;
    else if (k == "--processes") processes = std::stoi(v);
    else if (k == "--gpus") gpus = std::stoi(v);
    else if (k == "--samples") samples = std::stoi(v);
    else if (k == "--interval-ms") interval_ms = std::stoi(v);
  }
  if (sim_lib.empty()) {
    std::cerr << "usage: rota_agent_bench --sim-lib PATH/libnvidia-ml.so.1\n";
    return 2;
  }
  char tmpl[] = "/tmp/rota_agent_bench_XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  rota::api::Json gpu_list = rota::api::Json::array();
  for (int i = 0; i < gpus; ++i) {
    gpu_list.push_back({{"model", "NVIDIA A100-SXM4-80GB"}, {"memory_mib", 81920}, {"power_limit_w", 400}});
  }
  std::string config = dir + "/sim.json";
  if (!rota::WriteFileAtomic(config, rota::api::Json{{"node", "bench"}, {"gpus", gpu_list}}.dump()).ok()) return 1;
  ::setenv("ROTA_SIM_NVML_CONFIG", config.c_str(), 1);

  std::vector<pid_t> children;
  for (int i = 0; i < processes; ++i) {
    rota::SpawnOptions o;
    o.env = {{"ROTA_SIM_NODE", "bench"}, {"CUDA_VISIBLE_DEVICES", std::to_string(i % gpus)}};
    auto pid = rota::SpawnProcess({"sleep", "600"}, o);
    if (pid.ok()) children.push_back(*pid);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  double rss_before = RssMb();

  auto provider = rota::gpu::OpenNvml(sim_lib);
  if (!provider.ok()) {
    std::cerr << provider.status().message() << "\n";
    return 1;
  }
  rota::host::HostMonitor host;
  // The steps of agent::Collector::Sample, timed apart: the NVML calls (through the
  // simulated library, which scans /proc to find CUDA processes; a real driver does
  // not) and the agent's own work (host monitor, process details, encoding).
  std::vector<double> cpu, nvml, own, host_ms, describe_ms, encode_ms;
  double user_total = 0, sys_total = 0;
  size_t procs_seen = 0, bytes = 0;
  for (int i = 0; i < samples + 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
    double u0, s0, u1, s1;
    ThreadUserSysMs(&u0, &s0);
    double t0 = ThreadCpuMs();
    rota::api::NodeSample s;
    s.time_ms = rota::RealClock::Get().NowMs();
    auto h = host.Sample();
    if (h.ok()) s.host = *h;
    double t1 = ThreadCpuMs();
    auto g = (*provider)->Sample();
    double t2 = ThreadCpuMs();
    if (g.ok()) s.gpus = std::move(*g);
    host.Describe(s.gpus);
    double t25 = ThreadCpuMs();
    std::string msg = rota::api::Encode(rota::api::SamplesMsg{static_cast<uint64_t>(i + 1), {s}});
    double t3 = ThreadCpuMs();
    ThreadUserSysMs(&u1, &s1);
    if (i >= 2) {  // the first samples fill caches
      cpu.push_back(t3 - t0);
      nvml.push_back(t2 - t1);
      own.push_back((t1 - t0) + (t3 - t2));
      host_ms.push_back(t1 - t0);
      describe_ms.push_back(t25 - t2);
      encode_ms.push_back(t3 - t25);
      user_total += u1 - u0;
      sys_total += s1 - s0;
    }
    procs_seen = 0;
    for (const auto& gs : s.gpus) procs_seen += gs.processes.size();
    bytes = msg.size();
  }
  double rss_after = RssMb();
  for (pid_t p : children) rota::StopProcess(p, 1000);
  auto mean_of = [](const std::vector<double>& v) {
    double m = 0;
    for (double x : v) m += x;
    return m / static_cast<double>(v.size());
  };
  auto p50_of = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double mean = mean_of(cpu);
  std::sort(cpu.begin(), cpu.end());
  rota::api::Json out{{"gpus", gpus},
                      {"gpu_processes_spawned", processes},
                      {"gpu_processes_seen", procs_seen},
                      {"samples", cpu.size()},
                      {"cpu_ms_per_sample_mean", mean},
                      {"cpu_ms_per_sample_p50", cpu[cpu.size() / 2]},
                      {"cpu_ms_per_sample_max", cpu.back()},
                      {"agent_own_ms_per_sample_mean", mean_of(own)},
                      {"agent_own_ms_per_sample_p50", p50_of(own)},
                      {"nvml_ms_per_sample_mean", mean_of(nvml)},
                      {"host_sample_ms_mean", mean_of(host_ms)},
                      {"process_details_ms_mean", mean_of(describe_ms)},
                      {"encode_ms_mean", mean_of(encode_ms)},
                      {"nvml_ms_per_sample_p50", p50_of(nvml)},
                      {"user_ms_per_sample_mean", user_total / static_cast<double>(cpu.size())},
                      {"sys_ms_per_sample_mean", sys_total / static_cast<double>(cpu.size())},
                      {"message_bytes", bytes},
                      {"rss_mb_before_nvml", rss_before},
                      {"rss_mb", rss_after}};
  std::cout << out.dump(2) << std::endl;
  return 0;
}
