// Server cost of decoding one agent `samples` message: the nlohmann decoder every
// message type uses, and the simdjson path the agent gateway takes for samples.
//
// Usage: rota_decode_bench [GPUS=8] [PROCESSES_PER_GPU=1] [ROUNDS=20000]
// The message is what an agent sends each interval (one node sample, every GPU field
// set, PROCESSES_PER_GPU processes on each GPU). Prints JSON: µs per message each way.

#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "api/fast_decode.h"
#include "api/protocol.h"

namespace {

double ThreadCpuUs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

std::string Message(int gpus, int processes) {
  rota::api::NodeSample s;
  s.time_ms = 1'764'000'000'000;
  s.host.cpu_percent = 12.5;
  s.host.per_core_percent = {10, 15, 20, 25};
  s.host.mem_total_bytes = 512ull << 30;
  s.host.mem_available_bytes = 300ull << 30;
  s.host.load1 = 1.5;
  s.host.cpu_busy_usec = 123'456'789;
  for (int i = 0; i < gpus; ++i) {
    rota::api::GpuSample g;
    g.index = static_cast<uint32_t>(i);
    g.uuid = "GPU-5d3e2f10-8a4b-4c6d-9e7f-00000000000" + std::to_string(i % 10);
    g.memory_total_bytes = 80ull << 30;
    g.memory_used_bytes = static_cast<uint64_t>(i) << 30;
    g.util_gpu_pct = 87;
    g.util_memory_pct = 20;
    g.temperature_c = 55;
    g.power_mw = 250'000;
    g.power_limit_mw = 400'000;
    g.energy_mj = 123'456'789;
    g.sm_clock_mhz = 1410;
    g.mem_clock_mhz = 1593;
    g.fan_pct = 40;
    for (int p = 0; p < processes; ++p) {
      rota::api::GpuProcess proc;
      proc.pid = static_cast<uint32_t>(10'000 + i * 100 + p);
      proc.gpu_memory_bytes = 4ull << 30;
      proc.uid = 1000;
      proc.user = "alice";
      proc.command = "python3 train.py --config configs/resnet50.yaml --epochs 90";
      proc.start_time_ms = 1'763'990'000'000;
      proc.cpu_percent = 99.5;
      proc.rss_bytes = 6ull << 30;
      proc.cgroup = "/rota.slice/job-42.scope";
      g.processes.push_back(proc);
    }
    s.gpus.push_back(g);
  }
  return rota::api::Encode(rota::api::SamplesMsg{1, {s}});
}

template <typename Decode>
double UsPerMessage(const std::string& text, int rounds, Decode decode) {
  size_t sink = 0;
  for (int i = 0; i < rounds / 10; ++i) sink += decode(text);  // warm up
  const double t0 = ThreadCpuUs();
  for (int i = 0; i < rounds; ++i) sink += decode(text);
  const double us = (ThreadCpuUs() - t0) / rounds;
  if (sink == 0) std::fprintf(stderr, "nothing decoded\n");
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  const int gpus = argc > 1 ? std::atoi(argv[1]) : 8;
  const int processes = argc > 2 ? std::atoi(argv[2]) : 1;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 20'000;
  if (gpus < 0 || gpus > 64 || processes < 0 || processes > 64 || rounds < 10) {
    std::fprintf(stderr, "usage: rota_decode_bench [GPUS<=64] [PROCESSES_PER_GPU<=64] [ROUNDS>=10]\n");
    return 2;
  }
  const std::string text = Message(gpus, processes);
  auto gpus_of = [](const rota::Result<rota::api::AgentMessage>& r) -> size_t {
    if (!r.ok()) return 0;
    const auto* m = std::get_if<rota::api::SamplesMsg>(&*r);
    return m != nullptr && !m->samples.empty() ? m->samples[0].gpus.size() + 1 : 0;
  };
  const double slow = UsPerMessage(text, rounds, [&](const std::string& t) {
    return gpus_of(rota::api::DecodeAgentMessage(t));
  });
  const double fast = UsPerMessage(text, rounds, [&](const std::string& t) {
    return gpus_of(rota::api::DecodeAgentMessageFast(t));
  });
  std::printf(
      "{\"gpus\": %d, \"processes_per_gpu\": %d, \"message_bytes\": %zu, \"rounds\": %d, "
      "\"nlohmann_us\": %.2f, \"simdjson_us\": %.2f}\n",
      gpus, processes, text.size(), rounds, slow, fast);
  return 0;
}
