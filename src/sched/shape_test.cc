// A pass shares what it learns between pending jobs of one shape (what
// failed, where an earlier job of the shape first fit: pass.h). These tests
// check that the sharing never changes a decision: random snapshots are
// scheduled as they are, and again with every pending job made a shape of
// its own (its demands name every node, in an order no other job uses, which
// changes no eligibility), and the decisions must be the same.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sched/sched_test_util.h"
#include "sched/scheduler.h"

namespace rota::sched {
namespace {

using namespace testing;

class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed * 2654435761ULL + 1) {}
  uint64_t Below(uint64_t n) {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state_ >> 33) % n;
  }
  bool OneIn(uint64_t n) { return Below(n) == 0; }

 private:
  uint64_t state_;
};

// A cluster mostly busy with jobs that end at known times, reservations of
// some of the pending jobs' users (now and later, owners there or idle), and
// pending jobs of a few shapes with mixed limits, users and preemptibility.
Snapshot RandomSnapshot(uint64_t seed) {
  Random rnd(seed);
  std::vector<Node> nodes;
  const size_t n_nodes = 4 + rnd.Below(6);
  for (size_t i = 0; i < n_nodes; ++i) {
    Node n = MakeNode("n" + std::to_string(i), rnd.OneIn(3) ? 4 : 8);
    if (rnd.OneIn(3)) n.gpu_model = "V100";
    nodes.push_back(n);
  }
  Snapshot s = Base(nodes);
  s.policy.preempt_after_ms = 10 * kMin;
  s.policy.backfill = rnd.OneIn(3) ? Backfill::kConservative : Backfill::kEasy;
  s.policy.plan_depth = 30;
  const std::vector<std::string> users = {"ann", "bob", "cat", "dan", "eve"};
  JobId id = 1;
  for (const auto& n : s.nodes) {
    uint32_t g = 0;
    while (g < n.gpus) {
      const uint32_t size = std::min<uint32_t>(n.gpus - g, 1u << rnd.Below(3));
      if (rnd.OneIn(5)) {  // a hole
        g += size;
        continue;
      }
      std::vector<uint32_t> gpus;
      for (uint32_t k = 0; k < size; ++k) gpus.push_back(g + k);
      const int64_t started = kNow - static_cast<int64_t>(rnd.Below(300)) * kMin;
      const int64_t end = kNow + (1 + static_cast<int64_t>(rnd.Below(40))) * 15 * kMin;
      RunningJob r =
          Running(id++, users[rnd.Below(users.size())], {On(n.name, gpus)}, started, end);
      r.meta.preemptible = rnd.OneIn(3);
      r.meta.time_limit_ms = end - started;
      r.demands.push_back(Demand(1, size));
      s.running.push_back(r);
      g += size;
    }
  }
  for (int i = 0; i < 4; ++i) {
    Reservation r;
    r.id = i + 1;
    r.user = users[rnd.Below(users.size())];
    r.node = s.nodes[rnd.Below(s.nodes.size())].name;
    r.gpus = {0, 1};
    r.start_ms = kNow + (static_cast<int64_t>(rnd.Below(12)) - 2) * 30 * kMin;
    r.end_ms = r.start_ms + (1 + static_cast<int64_t>(rnd.Below(6))) * kHour;
    r.owner_idle = rnd.OneIn(2);
    s.reservations.push_back(r);
  }
  // A few shapes, one of them with two demands.
  std::vector<std::vector<TaskDemand>> shapes = {{Demand(1, 1)}, {Demand(1, 2)},
                                                 {Demand(1, 4)}, {Demand(2, 4)},
                                                 {Demand(1, 8)}, {Demand(1, 4), Demand(2, 1)}};
  shapes.push_back({Demand(1, 2)});
  shapes.back()[0].gpu_model = "V100";
  const size_t n_pending = 20 + rnd.Below(40);
  for (size_t i = 0; i < n_pending; ++i) {
    PendingJob p = Pending(id++, users[rnd.Below(users.size())], shapes[rnd.Below(shapes.size())],
                           kNow - static_cast<int64_t>(rnd.Below(120)) * kMin);
    p.meta.time_limit_ms = rnd.OneIn(6) ? 0 : (1 + static_cast<int64_t>(rnd.Below(16))) * 30 * kMin;
    p.meta.preemptible = rnd.OneIn(3);
    p.spread = rnd.OneIn(8);
    s.pending.push_back(p);
  }
  return s;
}

// The same snapshot with every pending job a shape of its own.
Snapshot ShapeOfItsOwn(Snapshot s) {
  for (size_t i = 0; i < s.pending.size(); ++i) {
    for (auto& d : s.pending[i].demands) {
      d.nodes.clear();
      for (size_t k = 0; k < s.nodes.size(); ++k)
        d.nodes.push_back(s.nodes[(i + k) % s.nodes.size()].name);
      // More jobs than rotations: repeat a name to keep the lists apart.
      for (size_t r = 0; r < i / s.nodes.size(); ++r) d.nodes.push_back(s.nodes[0].name);
    }
  }
  return s;
}

std::string Describe(const Decisions& d) {
  std::string out;
  for (const auto& s : d.starts) {
    out += "start " + std::to_string(s.id) + ":";
    for (const auto& t : s.tasks) {
      out += " " + t.node + "[";
      for (uint32_t g : t.gpus) out += std::to_string(g) + ",";
      out += "]";
    }
    out += "\n";
  }
  for (const auto& p : d.preemptions)
    out += "preempt " + std::to_string(p.id) + " " + p.reason + "\n";
  for (const auto& w : d.waits) {
    out += "wait " + std::to_string(w.id) + " #" + std::to_string(w.position) + " at " +
           std::to_string(w.estimated_start_ms) + ": " + w.reason + "\n";
  }
  return out;
}

TEST(ShapeSharingTest, JobsOfOneShapeAreDecidedAsIfEachHadItsOwn) {
  size_t estimates = 0, starts = 0, preemptions = 0;
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    const Snapshot s = RandomSnapshot(seed);
    const Decisions shared = Schedule(s);
    const Decisions own = Schedule(ShapeOfItsOwn(s));
    ASSERT_EQ(Describe(shared), Describe(own)) << "seed " << seed;
    for (const auto& w : shared.waits) estimates += w.estimated_start_ms > kNow ? 1 : 0;
    starts += shared.starts.size();
    preemptions += shared.preemptions.size();
  }
  // The snapshots exercise what is shared: estimates in the future, starts
  // and preemptions.
  EXPECT_GT(estimates, 500u);
  EXPECT_GT(starts, 100u);
  EXPECT_GT(preemptions, 20u);
}

}  // namespace
}  // namespace rota::sched
