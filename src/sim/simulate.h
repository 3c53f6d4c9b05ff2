#pragma once
// `rota simulate`: replays a trace under one or more policies and reports, as
// a table or JSON, with an optional SVG picture (JCT CDF per policy and
// cluster utilisation over time). Returns the exit status: 0 done, 1 error
// (unreadable trace, bad row without --skip-bad-rows), 2 usage error.

#include <string>
#include <vector>

#include "sim/replay.h"

namespace rota::sim {

struct SimulateOptions {
  std::string trace;
  std::vector<std::string> policies;  // empty: rota and every baseline
  uint32_t nodes = 0;                 // 0: sized to `load` (see docs)
  uint32_t gpus_per_node = 8;
  uint32_t pooled_gpus = 0;
  double load = 0.9;                  // offered load used to size the cluster when nodes == 0
  std::string from, to;               // RFC 3339 or "YYYY-MM-DD HH:MM:SS" (UTC)
  std::string preempt_cost = "30s";
  bool skip_bad_rows = false;
  std::string output = "table";       // table | json
  std::string plot;                   // SVG file
  std::vector<sched::Queue> queues;   // the trace's queues (ReplayOptions::queues)
  bool queues_given = false;          // --queues was given (it may name none)
};

int RunSimulate(const SimulateOptions& options);

// GPUs = gpus_per_node * ceil(offered GPU-hours / (window hours * load * gpus_per_node)).
uint32_t NodesForLoad(const std::vector<TraceJob>& jobs, int64_t from_ms, int64_t to_ms, double load,
                      uint32_t gpus_per_node);

// The SVG picture of a set of results.
std::string PlotSvg(const std::vector<ReplayResult>& results, const std::string& title);

}  // namespace rota::sim
