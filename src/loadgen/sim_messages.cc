#include "loadgen/sim_messages.h"

namespace rota::loadgen {

api::RegisterMsg SimRegistration(const std::string& name, const std::string& node_id, int salt, int gpus,
                                 int64_t interval_ms) {
  api::RegisterMsg reg;
  reg.node.name = name;
  reg.node.node_id = node_id;
  reg.node.cpus = 64;
  reg.node.memory_bytes = 512ull << 30;
  reg.node.sample_interval_ms = interval_ms;
  for (int g = 0; g < gpus; ++g) {
    reg.node.gpus.push_back({static_cast<uint32_t>(g), "GPU-load-" + std::to_string(salt) + "-" + std::to_string(g),
                             "NVIDIA A100-SXM4-80GB", "00000000:0" + std::to_string(g) + ":00.0", 80ull << 30,
                             400000});
  }
  return reg;
}

api::NodeSample SimSample(int gpus, int64_t t_ms, int salt) {
  api::NodeSample s;
  s.time_ms = t_ms;
  s.host.cpu_percent = 12.5;
  s.host.per_core_percent = {10, 15};
  s.host.mem_total_bytes = 512ull << 30;
  s.host.mem_available_bytes = 300ull << 30;
  s.host.load1 = 1.5;
  for (int i = 0; i < gpus; ++i) {
    api::GpuSample g;
    g.index = static_cast<uint32_t>(i);
    g.uuid = "GPU-load-" + std::to_string(salt) + "-" + std::to_string(i);
    g.memory_total_bytes = 80ull << 30;
    g.memory_used_bytes = static_cast<uint64_t>(i) << 30;
    g.util_gpu_pct = static_cast<uint32_t>((salt + i) % 100);
    g.util_memory_pct = 20;
    g.temperature_c = 55;
    g.power_mw = 250000;
    g.power_limit_mw = 400000;
    g.energy_mj = 123456789 + static_cast<uint64_t>(t_ms / 1000) % 1'000'000 * 250'000;  // 250 W
    g.sm_clock_mhz = 1410;
    g.mem_clock_mhz = 1593;
    s.gpus.push_back(g);
  }
  return s;
}

}  // namespace rota::loadgen
