#include "power/plan.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace rota::power {
namespace {

std::string Watts(uint64_t mw) { return std::to_string(mw / 1000) + " W"; }

// Gives `pool` mW to the GPUs with `wants` in equal shares, none above its want
// (water filling); returns what each gets and leaves in `pool` what is left.
std::vector<uint64_t> Fill(const std::vector<uint64_t>& wants, uint64_t* pool) {
  std::vector<size_t> order(wants.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return wants[a] < wants[b]; });
  std::vector<uint64_t> got(wants.size(), 0);
  size_t left = order.size();
  for (size_t i : order) {
    const uint64_t share = *pool / left;
    got[i] = std::min(wants[i], share);
    *pool -= got[i];
    --left;
  }
  return got;
}

struct Member {
  size_t gpu;        // index into the facts
  uint64_t floor;    // min_mw
  uint64_t cap;      // max_mw or a lower active limit
};

}  // namespace

Plan PlanLimits(const std::vector<PowerPolicy>& policies, const ClusterFacts& cluster,
                int64_t now_ms) {
  std::vector<const PowerPolicy*> active;
  for (const auto& p : policies) {
    if (p.ActiveAt(now_ms)) active.push_back(&p);
  }
  std::sort(active.begin(), active.end(),
            [](const PowerPolicy* a, const PowerPolicy* b) { return a->name < b->name; });

  const auto& gpus = cluster.gpus;
  Plan plan;
  plan.gpus.resize(gpus.size());
  std::vector<std::optional<uint64_t>> limit(gpus.size());  // lowest limit policy, in mW
  std::vector<std::vector<std::string>> why(gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i) {
    const GpuFacts& g = gpus[i];
    GpuTarget& t = plan.gpus[i];
    t.node = g.node;
    t.index = g.index;
    t.uuid = g.uuid;
    auto labels = cluster.node_labels.find(g.node);
    static const std::map<std::string, std::string> kNone;
    const auto& node_labels = labels == cluster.node_labels.end() ? kNone : labels->second;
    for (const PowerPolicy* p : active) {
      if (!p->Matches(g.node, node_labels, g.model)) continue;
      t.policies.push_back(p->name);
      if (p->kind != PolicyKind::kLimit) continue;
      const uint64_t mw = p->watts * 1000;
      if (!limit[i] || mw < *limit[i]) limit[i] = mw;
    }
  }
  // Limits, clamped into each GPU's range.
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (!limit[i]) continue;
    uint64_t mw = *limit[i];
    std::string text = "limit " + Watts(mw);
    if (const auto& r = gpus[i].range) {
      if (mw < r->min_mw) {
        mw = r->min_mw;
        text += ", raised to the GPU's minimum " + Watts(mw);
      } else if (mw > r->max_mw) {
        mw = r->max_mw;
        text += ", lowered to the GPU's maximum " + Watts(mw);
      }
    }
    limit[i] = mw;
    why[i].push_back(text);
  }
  // Budgets.
  std::vector<std::optional<uint64_t>> share(gpus.size());
  for (const PowerPolicy* p : active) {
    if (p->kind != PolicyKind::kBudget) continue;
    BudgetShare b;
    b.policy = p->name;
    b.budget_mw = p->watts * 1000;
    std::vector<Member> busy, idle;
    for (size_t i = 0; i < gpus.size(); ++i) {
      const auto& t = plan.gpus[i];
      if (std::find(t.policies.begin(), t.policies.end(), p->name) == t.policies.end()) continue;
      if (!gpus[i].reachable || !gpus[i].range) {
        ++b.left_out;
        continue;
      }
      const PowerRange& r = *gpus[i].range;
      Member m{i, r.min_mw, std::max<uint64_t>(r.min_mw, std::min<uint64_t>(r.max_mw, limit[i].value_or(r.max_mw)))};
      (gpus[i].busy ? busy : idle).push_back(m);
      b.min_total_mw += r.min_mw;
    }
    b.gpus = static_cast<int>(busy.size() + idle.size());
    b.busy = static_cast<int>(busy.size());
    b.feasible = b.min_total_mw <= b.budget_mw;
    uint64_t pool = b.feasible ? b.budget_mw - b.min_total_mw : 0;
    auto give = [&](const std::vector<Member>& members, const char* kind) {
      std::vector<uint64_t> wants;
      for (const auto& m : members) wants.push_back(m.cap - m.floor);
      auto got = Fill(wants, &pool);
      for (size_t k = 0; k < members.size(); ++k) {
        const Member& m = members[k];
        const uint64_t mw = std::max(m.floor, (m.floor + got[k]) / 1000 * 1000);
        b.assigned_mw += mw;
        if (!share[m.gpu] || mw < *share[m.gpu]) share[m.gpu] = mw;
        why[m.gpu].push_back("budget '" + p->name + "' " + Watts(b.budget_mw) + ": " + Watts(mw) +
                             " for this " + kind + " GPU" +
                             (b.feasible ? "" : " (the budget is below the GPUs' minimum total " +
                                                    Watts(b.min_total_mw) + ")"));
      }
    };
    give(busy, "busy");
    give(idle, "idle");
    plan.budgets.push_back(std::move(b));
  }
  for (size_t i = 0; i < gpus.size(); ++i) {
    GpuTarget& t = plan.gpus[i];
    std::optional<uint64_t> mw = limit[i];
    if (share[i] && (!mw || *share[i] < *mw)) mw = share[i];
    if (mw) t.limit_mw = static_cast<uint32_t>(std::min<uint64_t>(*mw, UINT32_MAX));
    std::string text;
    for (const auto& w : why[i]) text += (text.empty() ? "" : "; ") + w;
    if (!t.policies.empty() && text.empty()) {
      text = "in a budget's scope but not divided (node unreachable or power range unknown)";
    }
    t.reason = text;
  }
  return plan;
}

bool WindowsMayOverlap(const PowerPolicy& a, const PowerPolicy& b, int64_t now_ms) {
  if (a.windows.windows.empty() || b.windows.windows.empty()) return true;
  const int64_t start = now_ms - now_ms % 60'000;
  for (int64_t m = 0; m < 7 * 24 * 60; ++m) {
    const int64_t t = start + m * 60'000;
    if (a.ActiveAt(t) && b.ActiveAt(t)) return true;
  }
  return false;
}

Status ValidateAgainstCluster(const PowerPolicy& p, const std::vector<PowerPolicy>& others,
                              const ClusterFacts& cluster, int64_t now_ms) {
  for (size_t i = 0; i < p.scope.nodes.size(); ++i) {
    if (!cluster.node_labels.count(p.scope.nodes[i])) {
      return Status::InvalidArgument("policy.scope.nodes[" + std::to_string(i) + "]: no node named '" +
                                     p.scope.nodes[i] + "'");
    }
  }
  for (const auto& [k, v] : p.scope.labels) {
    std::set<std::string> values;
    for (const auto& [node, labels] : cluster.node_labels) {
      if (auto it = labels.find(k); it != labels.end()) values.insert(it->second);
    }
    if (!values.count(v)) {
      std::string known;
      for (const auto& x : values) known += (known.empty() ? "" : ", ") + k + "=" + x;
      return Status::InvalidArgument("policy.scope.labels: no node has the label " + k + "=" + v +
                                     (known.empty() ? " (no node has a label " + k + ")"
                                                    : " (known: " + known + ")"));
    }
  }
  uint64_t matched = 0, min_total = 0;
  for (const auto& g : cluster.gpus) {
    auto labels = cluster.node_labels.find(g.node);
    if (labels == cluster.node_labels.end() || !p.Matches(g.node, labels->second, g.model)) continue;
    ++matched;
    if (!g.range) continue;
    min_total += g.range->min_mw;
    if (p.kind == PolicyKind::kLimit) {
      const uint64_t mw = p.watts * 1000;
      if (mw < g.range->min_mw || mw > g.range->max_mw) {
        return Status::InvalidArgument(
            "policy.limit: " + Watts(mw) + " is outside the power range of " + g.node + " GPU " +
            std::to_string(g.index) + " (" + g.model + ": " + Watts(g.range->min_mw) + " to " +
            Watts(g.range->max_mw) + ")");
      }
    }
  }
  if (matched == 0) {
    return Status::InvalidArgument("policy.scope: matches no GPU of the cluster (" +
                                   std::to_string(cluster.gpus.size()) + " GPUs on " +
                                   std::to_string(cluster.node_labels.size()) + " nodes)");
  }
  if (p.kind == PolicyKind::kBudget && p.watts * 1000 < min_total) {
    return Status::InvalidArgument("policy.budget: " + Watts(p.watts * 1000) +
                                   " is below the minimum total of the " + std::to_string(matched) +
                                   " GPUs in scope (" + Watts(min_total) + ")");
  }
  if (p.kind == PolicyKind::kBudget) {
    for (const auto& o : others) {
      if (o.id == p.id || o.kind != PolicyKind::kBudget || !(o.scope == p.scope)) continue;
      if (WindowsMayOverlap(p, o, now_ms)) {
        return Status::Conflict("policy '" + o.name +
                                "' already budgets the same GPUs at overlapping times; edit it, or "
                                "give the two budgets windows that do not overlap");
      }
    }
  }
  return Status::Ok();
}

}  // namespace rota::power
