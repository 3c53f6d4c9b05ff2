// Several `rota server`s on one PostgreSQL under load (docs/design-ha.md), real server
// processes on a database of the test PostgreSQL server, agents real (simulated GPUs) and
// simulated (loadgen::SimAgentFleet: the agent protocol, the agent's sample buffer and
// failover):
//  - T3: 200 simulated agents and 2 real ones with running tasks; the leader they are
//    connected to is killed (SIGKILL). Every agent fails over to the new leader; every
//    sample an agent made is in the store afterwards (per node: made - dropped by its full
//    buffer, which must be 0 here), and both tasks run on and end once, untouched.
//  - T4: 50 crash/restart cycles (SIGKILL, start again) of random servers while clients
//    submit jobs and reservations and agents report; then `rota store check` finds the
//    store consistent, every write answered 2xx is there, nothing is there that no client
//    sent, no job started twice, and no node's usage counts more GPU time than it had.
//    Short leases (leader_lease_ttl 1.5 s) keep the 50 cycles within about a minute.
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "common/clock.h"
#include "common/time_util.h"
#include "loadgen/sim_fleet.h"
#include "server/store/store_test_backend.h"
#include "tests/ha_cluster.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using api::Json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using store::testing::Backend;
using store::testing::TestStoreLocation;

int64_t NowMs() { return RealClock::Get().MonotonicMs(); }

std::string UnixUser() { return ::geteuid() == 0 ? "nobody" : ::getpwuid(::geteuid())->pw_name; }

class HaLoadE2E : public ::testing::Test {
 protected:
  void SetUp() override { ROTA_SKIP_WITHOUT_BACKEND(pg_); }

  // Servers a, b, c; a leads. `env` for each.
  void StartCluster(const std::map<std::string, std::string>& env = {}) {
    for (const char* name : {"a", "b", "c"}) {
      auto s = ClusterServer(dir_.path(), name, pg_.url(), env);
      ASSERT_NE(s, nullptr);
      Status st = s->Start();
      ASSERT_TRUE(st.ok()) << st.ToString() << "\n" << s->child().Log();
      if (servers_.empty()) {
        ASSERT_TRUE(WaitFor([&] { return Leads(s->url()); }, seconds(10))) << s->child().Log();
      }
      servers_.push_back(std::move(s));
    }
  }
  std::vector<std::string> Urls() const {
    std::vector<std::string> out;
    for (const auto& s : servers_) out.push_back(s->url());
    return out;
  }
  std::string UrlList() const {
    std::string out;
    for (const auto& u : Urls()) out += (out.empty() ? "" : ",") + u;
    return out;
  }
  // The leading server, waiting for one up to `timeout`; null if none.
  ServerProcess* WaitLeader(std::chrono::milliseconds timeout) {
    ServerProcess* leader = nullptr;
    WaitFor([&] {
      for (auto& s : servers_) {
        if (s->child().running() && Leads(s->url())) leader = s.get();
      }
      return leader != nullptr;
    }, timeout);
    return leader;
  }
  int64_t Count(const std::string& sql) {
    auto db = pg_.Connect();
    if (!db.ok()) return -1;
    auto n = db->QueryInt(sql);
    return n.ok() ? *n : -1;
  }
  // Rows of (text, integer) from `sql`.
  std::map<std::string, int64_t> TextToInt(const std::string& sql) {
    std::map<std::string, int64_t> out;
    auto db = pg_.Connect();
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return out;
    auto st = db->Prepare(sql);
    EXPECT_TRUE(st.ok()) << st.status().ToString();
    if (!st.ok()) return out;
    while (true) {
      auto row = st->Step();
      EXPECT_TRUE(row.ok()) << row.status().ToString();
      if (!row.ok() || !*row) break;
      out[st->Text(0)] = st->Int(1);
    }
    return out;
  }

  TempDir dir_;
  TestStoreLocation pg_{Backend::kPostgres};
  std::vector<std::unique_ptr<ServerProcess>> servers_;
  const std::string tag_ = std::to_string(::getpid());
};

Json PinnedJob(const std::string& name, const std::string& node, const std::string& command, int gpus) {
  Json group{{"role", "worker"}, {"nodes", {node}}};
  if (gpus > 0) group["gpus_per_task"] = gpus;
  return Json{{"name", name}, {"command", {"/bin/sh", "-c", command}}, {"workdir", "/tmp"}, {"groups", {group}}};
}

TEST_F(HaLoadE2E, T3_TwoHundredAgentsFailOverLosingNoSampleAndNoTask) {
  StartCluster();
  ServerProcess& a = *servers_[0];
  std::vector<std::unique_ptr<AgentProcess>> agents;
  std::vector<std::string> nodes;
  for (int i = 0; i < 2; ++i) {
    nodes.push_back("gpu-t3-" + std::to_string(i) + "-" + tag_);
    agents.push_back(std::make_unique<AgentProcess>(dir_.path(), SimGpuNode{.name = nodes.back(), .gpus = 2}, a));
    agents.back()->SetServers(UrlList());
    ASSERT_TRUE(agents.back()->Start().ok());
  }
  for (const auto& n : nodes) ASSERT_TRUE(WaitFor([&] { return NodeReady(a, n); }, seconds(20)));
  Json extra{{"unix_user", UnixUser()}};
  auto alice = a.CreateUser("alice", "user", extra);
  ASSERT_TRUE(alice.ok()) << alice.status().ToString();
  // A task on each real node that outlives the failover.
  std::vector<int64_t> jobs;
  for (const auto& n : nodes) {
    auto r = a.CallAs(*alice, "POST", "/api/v1/jobs", PinnedJob("t3", n, "sleep 14", 1).dump());
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->status, 201) << r->body;
    jobs.push_back(Json::parse(r->body)["id"]);
  }
  auto state_of = [&](ServerProcess& s, int64_t id) {
    auto j = s.GetJson("/api/v1/jobs/" + std::to_string(id));
    return j.ok() ? j->value("state", "") : "";
  };
  for (int64_t id : jobs) ASSERT_TRUE(WaitFor([&] { return state_of(a, id) == "running"; }, seconds(20)));

  const std::string prefix = "sim-t3-" + tag_ + "-";
  loadgen::FleetOptions fo;
  fo.servers = UrlList();
  fo.token = a.token();
  fo.agents = 200;
  fo.gpus = 8;
  fo.interval_ms = 1000;
  fo.name_prefix = prefix;
  fo.buffer_samples = 600;  // the agent's default: 10 minutes at 1 s
  loadgen::SimAgentFleet fleet(fo);
  ASSERT_TRUE(fleet.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return fleet.registered() == 200; }, seconds(30))) << fleet.registered();
  std::this_thread::sleep_for(seconds(3));  // samples flowing, acked

  const int64_t killed = NowMs();
  a.child().Kill();  // kill -9
  ServerProcess* leader = WaitLeader(seconds(20));
  ASSERT_NE(leader, nullptr) << servers_[1]->child().Log() << servers_[2]->child().Log();
  const int64_t leading_ms = NowMs() - killed;
  ASSERT_TRUE(WaitFor([&] {
    auto counts = fleet.Counts();
    return std::all_of(counts.begin(), counts.end(),
                       [](const loadgen::SimAgentCounts& c) { return c.registered && c.registrations >= 2; });
  }, seconds(30))) << fleet.registered() << " registered";
  const int64_t agents_ms = NowMs() - killed;
  for (const auto& n : nodes) {
    EXPECT_TRUE(WaitFor([&] { return NodeReady(*leader, n); }, seconds(20))) << n;
  }
  const int64_t real_agents_ms = NowMs() - killed;
  // The tasks are known to the new leader, still running.
  for (int64_t id : jobs) EXPECT_EQ(state_of(*leader, id), "running") << id;
  std::this_thread::sleep_for(seconds(2));
  fleet.PauseSampling(true);
  ASSERT_TRUE(WaitFor([&] { return fleet.buffered() == 0; }, seconds(20))) << fleet.buffered() << " unacked";
  const auto counts = fleet.Counts();
  fleet.Stop();

  // Every sample made is stored: per node, made - dropped (the buffer's documented loss).
  const auto stored = TextToInt("SELECT n.name, count(*) FROM node_gpu_samples s JOIN nodes n ON n.id = s.node "
                                "WHERE n.name LIKE '" + prefix + "%' GROUP BY n.name");
  uint64_t made = 0, dropped = 0, lost = 0;
  int64_t in_store = 0;
  for (const auto& c : counts) {
    made += c.produced;
    dropped += c.dropped;
    auto it = stored.find(c.name);
    const int64_t have = it == stored.end() ? 0 : it->second;
    in_store += have;
    EXPECT_EQ(have, static_cast<int64_t>(c.produced - c.dropped)) << c.name << ": made " << c.produced;
    if (have < static_cast<int64_t>(c.produced - c.dropped)) lost += c.produced - c.dropped - have;
  }
  EXPECT_EQ(dropped, 0u) << "a 10-minute buffer overflowed in a failover of seconds";
  EXPECT_EQ(stored.size(), counts.size());
  std::printf("[ha] T3: 200 agents x 8 GPUs; kill -9 of their server: new leader in %lld ms, all 200 simulated "
              "agents registered again in %lld ms, the 2 real agents in %lld ms; samples made %llu, stored %lld, "
              "lost %llu, dropped by buffers %llu\n",
              static_cast<long long>(leading_ms), static_cast<long long>(agents_ms),
              static_cast<long long>(real_agents_ms), static_cast<unsigned long long>(made),
              static_cast<long long>(in_store), static_cast<unsigned long long>(lost),
              static_cast<unsigned long long>(dropped));

  // The tasks ran on through the failover and ended once, never restarted.
  for (int64_t id : jobs) {
    Json end = WaitJobEnd(*leader, id, seconds(40));
    EXPECT_EQ(end.value("state", ""), "succeeded") << end.dump(2);
    EXPECT_EQ(end.value("restart_count", -1), 0) << end.dump(2);
    EXPECT_EQ(Count("SELECT count(*) FROM job_events WHERE state = 'running' AND job_id = " + std::to_string(id)), 1);
  }
  for (auto& ag : agents) ag->child().Stop();
}

// What the clients of T4 sent and what was answered 201.
struct Ledger {
  std::mutex mu;
  std::set<std::string> sent_jobs, sent_reservations;       // names / titles sent (each once)
  std::set<std::string> committed_jobs, committed_reservations;  // ... answered 201
  std::atomic<int> refused{0};
};

TEST_F(HaLoadE2E, T4_FiftyCrashCyclesUnderLoadLeaveAConsistentStore) {
  const int64_t t0 = RealClock::Get().NowMs();
  StartCluster({{"ROTA_LEADER_LEASE_TTL", "1500ms"}, {"ROTA_ACCOUNTING_FLUSH", "1s"}});
  const std::string node = "gpu-t4-" + tag_;
  AgentProcess agent(dir_.path(), SimGpuNode{.name = node, .gpus = 2}, *servers_[0]);
  agent.SetServers(UrlList());
  ASSERT_TRUE(agent.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return NodeReady(*servers_[0], node); }, seconds(20)));
  Json extra{{"unix_user", UnixUser()}};
  auto alice = servers_[0]->CreateUser("alice", "user", extra);
  ASSERT_TRUE(alice.ok()) << alice.status().ToString();

  loadgen::FleetOptions fo;
  fo.servers = UrlList();
  fo.token = servers_[0]->token();
  fo.agents = 20;
  fo.gpus = 8;
  fo.name_prefix = "sim-t4-" + tag_ + "-";
  loadgen::SimAgentFleet fleet(fo);
  ASSERT_TRUE(fleet.Start().ok());

  // Clients: one submits jobs (1 GPU, 0.2 s) to the real node, one reserves GPUs (each
  // request a slot of its own). Every request has a name of its own and is never sent
  // twice: a request whose answer was lost may have committed, so the check below is
  // "answered 201 => stored exactly once; stored => sent".
  const std::vector<std::string> urls = Urls();
  Ledger ledger;
  std::atomic<bool> stop{false};
  const int64_t base = RealClock::Get().NowMs() + 24 * 3600'000;
  std::vector<std::thread> clients;
  for (int k = 0; k < 2; ++k) {
    clients.emplace_back([&, k] {
      const bool jobs = k == 0;
      size_t start = static_cast<size_t>(k);  // into urls
      for (int i = 0; !stop.load(); ++i) {
        const std::string name = (jobs ? "t4-job-" : "t4-res-") + std::to_string(i);
        std::string body;
        if (jobs) {
          body = PinnedJob(name, node, "sleep 0.2", 1).dump();
        } else {
          const int64_t slot = base + i * 3600'000;
          body = Json{{"node", node}, {"gpus", {i % 2}}, {"start", FormatRfc3339(slot)},
                      {"end", FormatRfc3339(slot + 3600'000)}, {"title", name}}
                     .dump();
        }
        {
          std::lock_guard<std::mutex> lock(ledger.mu);
          (jobs ? ledger.sent_jobs : ledger.sent_reservations).insert(name);
        }
        // One attempt (a retry of the same body could commit it twice); the next request
        // goes to the next server after a failure.
        auto r = net::HttpCall("POST", urls[start % urls.size()] + (jobs ? "/api/v1/jobs" : "/api/v1/reservations"),
                               body, {"Content-Type: application/json", "Authorization: Bearer " + *alice}, 5000);
        if (!r.ok() || r->status >= 500) ++start;
        if (r.ok() && r->status == 201) {
          std::lock_guard<std::mutex> lock(ledger.mu);
          (jobs ? ledger.committed_jobs : ledger.committed_reservations).insert(name);
        } else {
          ledger.refused++;
        }
        std::this_thread::sleep_for(milliseconds(jobs ? 300 : 200));
      }
    });
  }

  // The cycles: a random server killed and started again on its port; a server that
  // stopped on its own (a leader that lost its lease exits 75) is started again too, as
  // its supervisor would.
  std::mt19937 rng(static_cast<uint32_t>(::getpid()));
  int leader_kills = 0, self_exits = 0;
  const int64_t cycles_t0 = NowMs();
  for (int cycle = 0; cycle < 50; ++cycle) {
    for (auto& s : servers_) {
      if (!s->child().running()) {
        ++self_exits;
        ASSERT_TRUE(s->Launch().ok()) << s->child().Log();
      }
    }
    ServerProcess& victim = *servers_[rng() % servers_.size()];
    if (RoleOf(victim.url()) == "leader") ++leader_kills;
    victim.child().Kill();
    std::this_thread::sleep_for(milliseconds(100 + rng() % 300));
    Status st = victim.Launch();
    ASSERT_TRUE(st.ok()) << "cycle " << cycle << ": " << st.ToString();
    std::this_thread::sleep_for(milliseconds(600 + rng() % 600));
  }
  const int64_t cycles_ms = NowMs() - cycles_t0;
  for (auto& s : servers_) {
    if (!s->child().running()) {
      ASSERT_TRUE(s->Launch().ok()) << s->child().Log();
    }
  }
  ServerProcess* leader = WaitLeader(seconds(20));
  ASSERT_NE(leader, nullptr);
  std::this_thread::sleep_for(seconds(2));  // writes after the last cycle
  stop = true;
  for (auto& t : clients) t.join();
  fleet.PauseSampling(true);
  leader = WaitLeader(seconds(20));
  ASSERT_NE(leader, nullptr);
  EXPECT_TRUE(WaitFor([&] { return NodeReady(*leader, node); }, seconds(20))) << agent.child().Log();
  EXPECT_TRUE(WaitFor([&] {
    return Count("SELECT count(*) FROM jobs WHERE state NOT IN ('succeeded','failed','cancelled')") == 0;
  }, seconds(60))) << Count("SELECT count(*) FROM jobs WHERE state NOT IN ('succeeded','failed','cancelled')");
  EXPECT_TRUE(WaitFor([&] { return fleet.buffered() == 0; }, seconds(20))) << fleet.buffered();
  const auto fleet_counts = fleet.Counts();
  fleet.Stop();
  std::this_thread::sleep_for(milliseconds(1500));  // the accounting's last flush
  for (auto& s : servers_) s->child().Stop();
  agent.child().Stop();

  // The store's own check (a server would be allowed to run; none does now).
  auto check = RunCli({"store", "check", "--store", pg_.url(), "--json"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  auto report = api::ParseJson(check.out);
  ASSERT_TRUE(report.ok()) << check.out << check.err;
  EXPECT_TRUE((*report)["ok"].get<bool>()) << report->dump(2);

  // Recount against what the clients saw.
  const auto job_names = TextToInt("SELECT name, count(*) FROM jobs GROUP BY name");
  const auto res_titles = TextToInt("SELECT title, count(*) FROM reservations GROUP BY title");
  auto recount = [](const std::map<std::string, int64_t>& stored, const std::set<std::string>& sent,
                    const std::set<std::string>& committed, const char* what) {
    for (const auto& name : committed) {
      auto it = stored.find(name);
      EXPECT_TRUE(it != stored.end()) << what << " " << name << " was answered 201 and is not stored";
    }
    for (const auto& [name, n] : stored) {
      EXPECT_EQ(n, 1) << what << " " << name << " is stored " << n << " times";
      EXPECT_TRUE(sent.count(name) == 1) << what << " " << name << " is stored and no client sent it";
    }
  };
  recount(job_names, ledger.sent_jobs, ledger.committed_jobs, "job");
  recount(res_titles, ledger.sent_reservations, ledger.committed_reservations, "reservation");
  EXPECT_GT(ledger.committed_jobs.size(), 20u);
  EXPECT_GT(ledger.committed_reservations.size(), 20u);
  // Every sample of the simulated agents is stored (they dropped none).
  const auto stored = TextToInt("SELECT n.name, count(*) FROM node_gpu_samples s JOIN nodes n ON n.id = s.node "
                                "WHERE n.name LIKE '" + fo.name_prefix + "%' GROUP BY n.name");
  for (const auto& c : fleet_counts) {
    auto it = stored.find(c.name);
    EXPECT_EQ(it == stored.end() ? 0 : it->second, static_cast<int64_t>(c.produced - c.dropped)) << c.name;
    EXPECT_EQ(c.dropped, 0u) << c.name;
  }
  EXPECT_EQ(Count("SELECT count(*) FROM jobs WHERE state <> 'succeeded'"), 0)
      << Count("SELECT count(*) FROM jobs WHERE state = 'failed'") << " failed";
  // No job started twice.
  EXPECT_EQ(Count("SELECT count(*) FROM (SELECT job_id FROM job_events WHERE state = 'running' GROUP BY job_id "
                  "HAVING count(*) > 1) twice"),
            0);
  EXPECT_EQ(Count("SELECT count(*) FROM jobs WHERE restart_count > 0"), 0);
  // Usage: no node counts more GPU time than its GPUs had since the test began (usage
  // counted twice by two leaders would), and no job more than its run.
  const int64_t span_ms = RealClock::Get().NowMs() - t0;
  const auto node_gpu_ms = TextToInt("SELECT node, CAST(sum(gpu_ms) AS BIGINT) FROM usage_hourly GROUP BY node");
  for (const auto& [n, gpu_ms] : node_gpu_ms) {
    EXPECT_LE(gpu_ms, span_ms * 8) << n << " (at most 8 GPUs for " << span_ms << " ms)";
  }
  EXPECT_EQ(Count("SELECT count(*) FROM (SELECT h.job_id FROM usage_hourly h JOIN jobs j ON j.id = h.job_id "
                  "GROUP BY h.job_id, j.created_ms, j.ended_ms "
                  "HAVING sum(h.gpu_ms) > coalesce(j.ended_ms - j.created_ms, 0) + 2000) over"),
            0);
  const int64_t job_gpu_ms = Count("SELECT CAST(coalesce(sum(gpu_ms), 0) AS BIGINT) FROM usage_hourly WHERE job_id <> 0");
  std::printf("[ha] T4: 50 kill -9/restart cycles in %lld ms (%d of the leader, %d servers stopped on their own); "
              "%zu jobs and %zu reservations answered 201 (%zu and %zu sent, %d refused or unanswered); "
              "jobs' GPU usage %lld ms\n",
              static_cast<long long>(cycles_ms), leader_kills, self_exits, ledger.committed_jobs.size(),
              ledger.committed_reservations.size(), ledger.sent_jobs.size(), ledger.sent_reservations.size(),
              ledger.refused.load(), static_cast<long long>(job_gpu_ms));
}

}  // namespace
}  // namespace rota::testing
