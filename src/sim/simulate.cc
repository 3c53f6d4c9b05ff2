#include "sim/simulate.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/clock.h"
#include "common/file_util.h"
#include "common/time_util.h"

namespace rota::sim {
namespace {

using Json = nlohmann::json;

Result<int64_t> ParseWhen(const std::string& text) {
  std::string t = text;
  if (t.size() == 10) t += "T00:00:00Z";  // a date
  if (t.size() == 19 && t[10] == ' ') t[10] = 'T';
  if (t.size() == 19) t += "Z";
  auto ms = ParseRfc3339(t);
  if (!ms.ok()) return Status::InvalidArgument("'" + text + "' is not a time (YYYY-MM-DD[ HH:MM:SS] UTC or RFC 3339)");
  return *ms;
}

Json PercentilesJson(const Percentiles& p) {
  return {{"avg", p.avg}, {"p50", p.p50}, {"p95", p.p95}, {"p99", p.p99}, {"max", p.max}};
}

Json PassBucketsJson(const std::vector<ReplayResult::PassBucket>& buckets) {
  Json out = Json::array();
  for (const auto& b : buckets) {
    Json j = PercentilesJson(b.ms);
    j["passes"] = b.passes;
    if (b.queue_max > 0) j["queue_max"] = b.queue_max;
    out.push_back(std::move(j));
  }
  return out;
}

Json ByQueueJson(const std::vector<ReplayResult::QueueResult>& queues) {
  Json out = Json::array();
  for (const auto& q : queues) {
    out.push_back({{"queue", q.queue},
                   {"jobs", q.jobs},
                   {"jct_hours", PercentilesJson(q.jct_h)},
                   {"wait_hours", PercentilesJson(q.wait_h)}});
  }
  return out;
}

// null for an undefined figure (NaN).
Json Num(double v) { return std::isnan(v) ? Json(nullptr) : Json(v); }

Json ToJson(const ReplayResult& r) {
  return {{"policy", r.policy},
          {"jobs", r.jobs},
          {"dropped", r.dropped},
          {"gpus", r.gpus},
          {"jct_hours", PercentilesJson(r.jct_h)},
          {"wait_hours", PercentilesJson(r.wait_h)},
          {"bounded_slowdown", PercentilesJson(r.bounded_slowdown)},
          {"window_hours", r.window_h},
          {"utilisation", Num(r.utilisation)},
          {"utilisation_while_waiting", Num(r.utilisation_while_waiting)},
          {"idle_while_waiting", Num(r.idle_while_waiting)},
          {"preemptions_per_job", r.preemptions_per_job},
          {"lost_gpu_hours", r.lost_gpu_hours},
          {"fairness_jain", r.fairness_jain},
          {"pass_ms", PercentilesJson(r.pass_ms)},
          {"pass_ms_by_queue", PassBucketsJson(r.pass_ms_by_queue)},
          {"by_queue", ByQueueJson(r.by_queue)},
          {"passes", r.passes},
          {"max_queue", r.max_queue},
          {"replay_seconds", r.replay_s}};
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// "n/a" for an undefined figure (NaN), else `v` with `digits` decimals, in
// `width` columns.
std::string Cell(double v, int width, int digits) {
  char buf[64];
  if (std::isnan(v)) {
    std::snprintf(buf, sizeof buf, "%*s", width, "n/a");
  } else {
    std::snprintf(buf, sizeof buf, "%*.*f", width, digits, v);
  }
  return buf;
}

// Hours (h), utilisation shares of the window (util, utilW, idleW), preemptions
// per job, GPU-hours lost to them, Jain's index, scheduler pass wall time (ms).
void PrintTable(const std::vector<ReplayResult>& rs) {
  std::printf("%-6s %8s %8s %8s %8s %8s %8s %6s %6s %6s %7s %9s %8s %6s %7s %8s %8s %8s %9s\n", "policy", "avgJCTh",
              "p50JCTh", "p95JCTh", "p99JCTh", "avgWaith", "p99Waith", "util", "utilW", "idleW", "slowdn", "preempt/j",
              "lostGPUh", "jain", "passes", "maxQueue", "pass50ms", "pass99ms", "passMaxMs");
  for (const auto& r : rs) {
    std::printf("%-6s %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %s %s %s %7.2f %9.3f %8.1f %6.3f %7zu %8zu %8.3f %8.3f %9.2f\n",
                r.policy.c_str(), r.jct_h.avg, r.jct_h.p50, r.jct_h.p95, r.jct_h.p99, r.wait_h.avg, r.wait_h.p99,
                Cell(r.utilisation, 6, 3).c_str(), Cell(r.utilisation_while_waiting, 6, 3).c_str(),
                Cell(r.idle_while_waiting, 6, 4).c_str(), r.bounded_slowdown.avg, r.preemptions_per_job,
                r.lost_gpu_hours, r.fairness_jain, r.passes, r.max_queue, r.pass_ms.p50, r.pass_ms.p99, r.pass_ms.max);
  }
  if (rs.empty() || rs.front().by_queue.empty()) return;
  std::printf("\nby queue:\n%-6s %-12s %7s %8s %8s %8s %8s\n", "policy", "queue", "jobs", "avgJCTh", "p99JCTh",
              "avgWaith", "p99Waith");
  for (const auto& r : rs) {
    for (const auto& q : r.by_queue) {
      std::printf("%-6s %-12s %7zu %8.3f %8.3f %8.3f %8.3f\n", r.policy.c_str(), q.queue.c_str(), q.jobs,
                  q.jct_h.avg, q.jct_h.p99, q.wait_h.avg, q.wait_h.p99);
    }
  }
}

}  // namespace

uint32_t NodesForLoad(const std::vector<TraceJob>& jobs, int64_t from_ms, int64_t to_ms, double load,
                      uint32_t gpus_per_node) {
  double gpu_ms = 0, gpus = 0;
  int64_t first = 0, last = 0;
  bool any = false;
  for (const auto& j : jobs) {
    if (to_ms > from_ms && (j.submit_ms < from_ms || j.submit_ms >= to_ms)) continue;
    gpu_ms += static_cast<double>(j.gpus) * static_cast<double>(j.duration_ms);
    gpus += j.gpus;
    if (!any) first = j.submit_ms;
    last = j.submit_ms;
    any = true;
  }
  const double window_ms = to_ms > from_ms ? static_cast<double>(to_ms - from_ms) : static_cast<double>(last - first);
  if (!any || window_ms <= 0 || load <= 0 || gpus_per_node == 0) return 1;
  // Never more than runs every job at once (a window of a few seconds would
  // otherwise ask for thousands of nodes).
  const double all_at_once = std::ceil(gpus / gpus_per_node);
  const double nodes = std::min(std::ceil(gpu_ms / (window_ms * load * gpus_per_node)), all_at_once);
  return static_cast<uint32_t>(std::clamp(nodes, 1.0, 4e9));  // beyond any cluster simulated
}

namespace {

// Horizontal grid lines and labels of a 0..1 axis on the panel at (x, y),
// `height` high and `width` wide.
void FractionAxis(std::ostringstream& s, double x, double y, double width, double height) {
  for (int k = 0; k <= 4; ++k) {
    const double yy = y + height - k / 4.0 * height;
    s << "<line x1='" << x << "' y1='" << yy << "' x2='" << x + width << "' y2='" << yy << "' stroke='#eee'/>"
      << "<text x='" << x - 6 << "' y='" << yy + 4 << "' text-anchor='end'>" << Fixed(k / 4.0, 2) << "</text>\n";
  }
}

}  // namespace

std::string PlotSvg(const std::vector<ReplayResult>& results, const std::string& title) {
  static const char* kColours[] = {"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"};
  const double w = 960, h = 380, pad = 60, panel = (w - 3 * pad) / 2;
  std::ostringstream s;
  s << "<svg xmlns='http://www.w3.org/2000/svg' width='" << w << "' height='" << h + 40
    << "' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' fill='white'/>\n";
  s << "<text x='" << pad << "' y='20' font-size='14'>" << title << "</text>\n";
  // Panel 1: JCT CDF, log10 hours from 0.01 h to the largest JCT.
  double max_jct = 0.02;
  for (const auto& r : results) {
    if (!r.jct_sorted_h.empty()) max_jct = std::max(max_jct, r.jct_sorted_h.back());
  }
  const double lo = std::log10(0.01), hi = std::log10(max_jct);
  const double x0 = pad, y0 = 40, ph = h - 80;
  FractionAxis(s, x0, y0, panel, ph);
  s << "<rect x='" << x0 << "' y='" << y0 << "' width='" << panel << "' height='" << ph
    << "' fill='none' stroke='#999'/>\n";
  s << "<text x='" << x0 << "' y='" << y0 + ph + 30 << "'>JCT (hours, log scale): fraction of jobs done within</text>\n";
  for (double d = -2; d <= hi + 1e-9; d += 1) {
    const double x = x0 + (d - lo) / (hi - lo) * panel;
    s << "<line x1='" << x << "' y1='" << y0 << "' x2='" << x << "' y2='" << y0 + ph << "' stroke='#eee'/>"
      << "<text x='" << x << "' y='" << y0 + ph + 14 << "' text-anchor='middle'>" << Fixed(std::pow(10, d), d < 0 ? 2 : 0)
      << "</text>\n";
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& v = results[i].jct_sorted_h;
    if (v.empty()) continue;
    s << "<polyline fill='none' stroke-width='1.5' stroke='" << kColours[i % 7] << "' points='";
    const size_t step = std::max<size_t>(1, v.size() / 400);
    for (size_t k = 0; k < v.size(); k += step) {
      const double lx = std::log10(std::max(0.01, v[k]));
      s << Fixed(x0 + (lx - lo) / (hi - lo) * panel, 1) << ","
        << Fixed(y0 + ph - static_cast<double>(k + 1) / static_cast<double>(v.size()) * ph, 1) << " ";
    }
    s << "'/>\n<text x='" << x0 + 8 << "' y='" << y0 + 16 + 14 * static_cast<double>(i) << "' fill='"
      << kColours[i % 7] << "'>" << results[i].policy << " (avg " << Fixed(results[i].jct_h.avg, 2)
      << " h)</text>\n";
  }
  // Panel 2: the share of GPUs busy, hour by hour (steps), from the window's
  // start until the last job ended or half a window after its end (the long
  // tail of a few jobs says little); a dashed line marks the window's end.
  const double x1 = 2 * pad + panel;
  size_t hours = 1;
  for (const auto& r : results) hours = std::max(hours, r.utilisation_series.size());
  if (!results.empty() && results.front().window_h > 0) {
    hours = std::min(hours, static_cast<size_t>(std::ceil(results.front().window_h * 1.5)) + 1);
  }
  const double per_hour = panel / static_cast<double>(hours);
  FractionAxis(s, x1, y0, panel, ph);
  const size_t tick = hours <= 48 ? 6 : hours <= 24 * 21 ? 24 : 24 * 7;
  for (size_t t = 0; t <= hours; t += tick) {
    const double x = x1 + static_cast<double>(t) * per_hour;
    s << "<line x1='" << x << "' y1='" << y0 + ph << "' x2='" << x << "' y2='" << y0 + ph + 4 << "' stroke='#999'/>"
      << "<text x='" << x << "' y='" << y0 + ph + 14 << "' text-anchor='middle'>"
      << (tick < 24 ? t : t / 24) << "</text>\n";
  }
  s << "<rect x='" << x1 << "' y='" << y0 << "' width='" << panel << "' height='" << ph
    << "' fill='none' stroke='#999'/>\n";
  s << "<text x='" << x1 << "' y='" << y0 + ph + 30 << "'>share of GPUs busy, by hour; " << (tick < 24 ? "hours" : "days")
    << " from the window's start</text>\n";
  if (!results.empty() && results.front().window_h > 0) {
    const double x = x1 + std::min(results.front().window_h, static_cast<double>(hours)) * per_hour;
    s << "<line x1='" << x << "' y1='" << y0 << "' x2='" << x << "' y2='" << y0 + ph
      << "' stroke='#555' stroke-dasharray='4 3'/><text x='" << x + 4 << "' y='" << y0 + ph - 6
      << "' fill='#555'>window end</text>\n";
  }
  for (size_t i = 0; i < results.size(); ++i) {
    s << "<polyline fill='none' stroke-width='1' stroke='" << kColours[i % 7] << "' points='";
    for (const auto& [hour, u] : results[i].utilisation_series) {
      if (hour >= static_cast<double>(hours)) break;
      const std::string y = Fixed(y0 + ph - std::min(1.0, u) * ph, 1);
      s << Fixed(x1 + hour * per_hour, 1) << "," << y << " " << Fixed(x1 + (hour + 1) * per_hour, 1) << "," << y
        << " ";
    }
    s << "'/>\n";
  }
  s << "</svg>\n";
  return s.str();
}

int RunSimulate(const SimulateOptions& o) {
  auto usage = [](const std::string& m) {
    std::cerr << "rota: " << m << "\n";
    return 2;
  };
  if (o.trace.empty()) return usage("simulate needs --trace FILE");
  if (o.output != "table" && o.output != "json") return usage("-o must be table or json");
  if (o.gpus_per_node == 0 || o.gpus_per_node > 4096) return usage("--gpus-per-node must be 1..4096");
  if (!(o.load > 0 && o.load <= 100)) return usage("--load must be above 0, at most 100");
  if (!o.plot.empty()) {  // said now, not after the replay
    const size_t slash = o.plot.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : o.plot.substr(0, slash);
    if (::access(dir.c_str(), W_OK) != 0) return usage("--plot: cannot write into " + dir);
    // It replaces the file: never a device, a link or a directory of that name.
    struct stat st {};
    if (::lstat(o.plot.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      return usage("--plot: " + o.plot + " exists and is not a regular file");
    }
  }
  if (o.pooled_gpus > 0 && o.nodes > 0) return usage("--pooled and --nodes exclude each other");
  if (!o.preempt_cost.empty() && o.preempt_cost[0] == '-') return usage("--preempt-cost must not be negative");
  auto cost = ParseDurationMs(o.preempt_cost);
  if (!cost.ok()) return usage("--preempt-cost: " + cost.status().message());
  ReplayOptions ro;
  ro.gpus_per_node = o.gpus_per_node;
  ro.pooled_gpus = o.pooled_gpus;
  ro.preempt_cost_ms = *cost;
  ro.queues = o.queues;
  // Trace jobs have no time limit (as submitted they would get the default):
  // a queue's maximum, checked live at submission and by every pass, would
  // hold them for ever.
  for (auto& q : ro.queues) q.max_time_limit_ms = 0;
  if (!o.from.empty()) {
    auto t = ParseWhen(o.from);
    if (!t.ok()) return usage("--from: " + t.status().message());
    ro.from_ms = *t;
  }
  if (!o.to.empty()) {
    auto t = ParseWhen(o.to);
    if (!t.ok()) return usage("--to: " + t.status().message());
    ro.to_ms = *t;
  }
  if ((ro.from_ms != 0) != (ro.to_ms != 0) || (ro.to_ms != 0 && ro.to_ms <= ro.from_ms)) {
    return usage("--from and --to go together, --to after --from");
  }
  std::vector<PolicySpec> specs;
  for (const auto& name : o.policies.empty() ? PolicyNames() : o.policies) {
    auto p = PolicyByName(name);
    if (!p.ok()) return usage(p.status().message());
    const bool again = std::any_of(specs.begin(), specs.end(), [&](const PolicySpec& q) { return q.name == p->name; });
    if (!again) specs.push_back(*p);  // each policy once, in the order first named
  }
  TraceReadOptions tro;
  tro.skip_bad_rows = o.skip_bad_rows;
  auto trace = ReadTrace(o.trace, tro);
  if (!trace.ok()) {
    std::cerr << "rota: " << trace.status().message() << "\n";
    return 1;
  }
  for (const auto& w : trace->warnings) std::cerr << "rota: skipped " << w << "\n";
  if (trace->bad_rows > trace->warnings.size()) {
    std::cerr << "rota: skipped " << trace->bad_rows - trace->warnings.size() << " more bad row(s)\n";
  }
  if (o.queues_given) {
    std::set<std::string> named;
    for (const auto& j : trace->jobs) {
      if (!j.queue.empty() && j.queue != "default") named.insert(j.queue);
    }
    for (const auto& q : o.queues) named.erase(q.name);
    for (const auto& name : named) {
      std::cerr << "rota: the trace's queue '" << name
                << "' is not in --queues: it runs with the default queue's settings\n";
    }
  }
  const bool in_window = std::any_of(trace->jobs.begin(), trace->jobs.end(), [&](const TraceJob& j) {
    return ro.to_ms <= ro.from_ms || (j.submit_ms >= ro.from_ms && j.submit_ms < ro.to_ms);
  });
  if (!in_window) {
    std::cerr << "rota: no job of the trace is submitted in the window" << (ro.to_ms > ro.from_ms ? " --from .. --to" : "")
              << "\n";
    return 1;
  }
  const bool sized = o.nodes == 0 && ro.pooled_gpus == 0;
  ro.nodes = o.nodes > 0 ? o.nodes : NodesForLoad(trace->jobs, ro.from_ms, ro.to_ms, o.load, o.gpus_per_node);
  constexpr uint64_t kMaxSimulatedGpus = 1'000'000;
  const uint64_t gpus = ro.pooled_gpus > 0 ? ro.pooled_gpus : uint64_t{ro.nodes} * ro.gpus_per_node;
  if (gpus > kMaxSimulatedGpus) {
    return usage("the simulated cluster would have " + std::to_string(gpus) + " GPUs" +
                 (o.nodes > 0 || o.pooled_gpus > 0 ? "" : " (sized to --load)") + "; at most 1,000,000");
  }
  std::vector<ReplayResult> results;
  for (const auto& spec : specs) {
    // A long replay says how far it is, every 10 s (on stderr: -o json stays clean).
    const int64_t began_ns = MonotonicNs();
    int64_t said_ns = began_ns;
    ro.progress = [&](size_t arrived, size_t total, size_t in_system) {
      const int64_t now_ns = MonotonicNs();
      if (now_ns - said_ns < 10'000'000'000) return;
      said_ns = now_ns;
      std::cerr << "rota: policy " << spec.name << ": " << arrived << " of " << total << " jobs arrived, "
                << in_system << " in the system (" << (now_ns - began_ns) / 1'000'000'000 << " s)\n";
    };
    auto r = Replay(trace->jobs, spec, ro);
    if (!r.ok()) {
      std::cerr << "rota: policy " << spec.name << ": " << r.status().message() << "\n";
      return 1;
    }
    results.push_back(std::move(*r));
  }
  const std::string cluster = ro.pooled_gpus > 0 ? "one pool of " + std::to_string(ro.pooled_gpus) + " GPUs"
                                                 : std::to_string(ro.nodes) + (ro.nodes == 1 ? " node x " : " nodes x ") +
                                                       std::to_string(ro.gpus_per_node) + " GPUs";
  if (o.output == "json") {
    // What the replay ran on, enough to run it again.
    Json j = {{"trace", o.trace},
              {"cluster", cluster},
              {"nodes", ro.pooled_gpus > 0 ? 0 : ro.nodes},
              {"gpus_per_node", ro.pooled_gpus > 0 ? 0 : ro.gpus_per_node},
              {"pooled_gpus", ro.pooled_gpus},
              {"load", sized ? Json(o.load) : Json(nullptr)},
              {"from", ro.to_ms > ro.from_ms ? Json(FormatRfc3339(ro.from_ms)) : Json(nullptr)},
              {"to", ro.to_ms > ro.from_ms ? Json(FormatRfc3339(ro.to_ms)) : Json(nullptr)},
              {"bad_rows", trace->bad_rows},
              {"preempt_cost_ms", ro.preempt_cost_ms},
              {"results", Json::array()}};
    for (const auto& r : results) j["results"].push_back(ToJson(r));
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("%s%s, %zu job%s (%zu dropped: larger than the cluster or their queue's cap)%s, window %.1f h, "
                "preemption cost %s\n",
                cluster.c_str(), sized ? (" (sized to load " + Fixed(o.load, 2) + ")").c_str() : "",
                results.front().jobs, results.front().jobs == 1 ? "" : "s", results.front().dropped,
                trace->bad_rows > 0 ? (", " + std::to_string(trace->bad_rows) + " bad rows skipped").c_str() : "",
                results.front().window_h, FormatExactDuration(ro.preempt_cost_ms).c_str());
    PrintTable(results);
  }
  if (!o.plot.empty()) {
    Status st = WriteFileAtomic(o.plot, PlotSvg(results, "rota simulate: " + cluster));
    if (!st.ok()) {
      std::cerr << "rota: --plot: " << st.message() << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace rota::sim
