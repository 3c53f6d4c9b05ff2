#include "malleable/core_split.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace rota::malleable {
namespace {

// Bounded weighted water-filling: the level L with sum clamp(w_i * L, min_i,
// max_i) = budget (or every task at its max when the budget is larger), found
// by bisection (the sum grows with L).
std::vector<double> Fill(const std::vector<const Task*>& tasks, const std::vector<double>& weights, double budget) {
  std::vector<double> out(tasks.size());
  auto at = [&](double level) {
    double sum = 0;
    for (size_t i = 0; i < tasks.size(); ++i) {
      out[i] = std::clamp(weights[i] * level, tasks[i]->min_cpus, tasks[i]->max_cpus);
      sum += out[i];
    }
    return sum;
  };
  double hi = 1;
  double max_sum = 0;
  for (const Task* t : tasks) max_sum += t->max_cpus;
  if (max_sum <= budget) {
    for (size_t i = 0; i < tasks.size(); ++i) out[i] = tasks[i]->max_cpus;
    return out;
  }
  while (at(hi) < budget) hi *= 2;
  double lo = 0;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (at(mid) < budget ? lo : hi) = mid;
  }
  at(lo);  // never above the budget
  return out;
}

}  // namespace

const char* PolicyName(Policy p) {
  switch (p) {
    case Policy::kEqual: return "equal";
    case Policy::kByRequest: return "by-request";
    case Policy::kByPriority: return "by-priority";
  }
  return "equal";
}

Result<Policy> ParsePolicy(const std::string& text) {
  for (Policy p : {Policy::kEqual, Policy::kByRequest, Policy::kByPriority}) {
    if (text == PolicyName(p)) return p;
  }
  return Status::InvalidArgument("malleable policy '" + text + "' is not equal, by-request or by-priority");
}

std::string CpuRange(uint32_t first, uint32_t last) {
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

Result<std::vector<Allotment>> DivideCores(const NodeCores& cores, const std::vector<Task>& tasks, Policy policy) {
  if (cores.count == 0) return Status::InvalidArgument("the node has no CPUs for malleable tasks");
  std::set<std::string> ids;
  double min_sum = 0;
  for (const Task& t : tasks) {
    if (t.id.empty() || !ids.insert(t.id).second) {
      return Status::InvalidArgument("malleable task id '" + t.id + "' is empty or given twice");
    }
    if (!std::isfinite(t.min_cpus) || !std::isfinite(t.max_cpus) || !std::isfinite(t.request) ||
        !(t.min_cpus > 0) || t.max_cpus < t.min_cpus || t.request < 0) {
      return Status::InvalidArgument("malleable task " + t.id + ": needs 0 < min_cpus <= max_cpus and request >= 0");
    }
    min_sum += t.min_cpus;
  }
  const double budget = cores.count;
  if (min_sum > budget + 1e-9) {
    char text[64];
    std::snprintf(text, sizeof text, "%g", min_sum);
    return Status::ResourceExhausted("the minimums of " + std::to_string(tasks.size()) + " malleable tasks need " +
                                     text + " cores; the node has " + std::to_string(cores.count));
  }
  std::vector<double> cpus(tasks.size());
  if (policy == Policy::kByPriority) {
    // Minimums first; then each priority level (highest first) fills up from what is left.
    std::map<int, std::vector<size_t>, std::greater<int>> levels;
    for (size_t i = 0; i < tasks.size(); ++i) {
      levels[tasks[i].priority].push_back(i);
      cpus[i] = tasks[i].min_cpus;
    }
    double left = budget - min_sum;
    for (const auto& [priority, members] : levels) {
      std::vector<const Task*> group;
      double group_min = 0;
      for (size_t i : members) {
        group.push_back(&tasks[i]);
        group_min += tasks[i].min_cpus;
      }
      const std::vector<double> got = Fill(group, std::vector<double>(group.size(), 1.0), group_min + left);
      for (size_t k = 0; k < members.size(); ++k) {
        cpus[members[k]] = got[k];
        left -= got[k] - tasks[members[k]].min_cpus;
      }
      left = std::max(0.0, left);
    }
  } else {
    std::vector<const Task*> all;
    std::vector<double> weights;
    for (const Task& t : tasks) {
      all.push_back(&t);
      weights.push_back(policy == Policy::kByRequest ? (t.request > 0 ? t.request : t.min_cpus) : 1.0);
    }
    cpus = Fill(all, weights, budget);
  }
  // Steps of kCpuStep, rounded down (never more than the node), never below the minimum.
  std::vector<Allotment> out;
  double at = 0;  // where the next task's share starts, in cores from first_cpu
  for (size_t i = 0; i < tasks.size(); ++i) {
    double c = std::floor(cpus[i] * kStepsPerCore + 1e-6) / kStepsPerCore;
    c = std::max(c, tasks[i].min_cpus);
    Allotment a;
    a.id = tasks[i].id;
    a.cpus = c;
    const double end = std::min(at + c, budget);
    uint32_t first = static_cast<uint32_t>(std::floor(at + 1e-9));
    uint32_t last = static_cast<uint32_t>(std::max<double>(first, std::ceil(end - 1e-9) - 1));
    // A task of at least n whole cores gets at least n CPUs: a share that starts
    // within a CPU and would cover fewer is moved to whole CPUs where it fits.
    const uint32_t need = static_cast<uint32_t>(std::max(1.0, std::ceil(c - 1e-9)));
    if (last - first + 1 < need) last = std::min(cores.count - 1, first + need - 1);
    if (last - first + 1 < need) first = last + 1 >= need ? last + 1 - need : 0;
    first = std::min(first, cores.count - 1);
    last = std::min(last, cores.count - 1);
    a.cpuset = CpuRange(cores.first_cpu + first, cores.first_cpu + last);
    at = end;
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace rota::malleable
