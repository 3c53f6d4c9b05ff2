// Several `rota server`s on one PostgreSQL (issue 42, phase 2; docs/design-ha.md): real
// server processes on a database of the test PostgreSQL server
// (src/server/store/pg_test_instance.h), a real agent with simulated GPUs dialing all of
// them.
//  - T1: the leader is killed (SIGKILL) while 4 clients submit jobs and reservations
//    through any server: every write answered 2xx is in the store afterwards, a follower
//    leads, and the failover time is measured and printed.
//  - T2: the leader is paused (SIGSTOP) past its lease, another takes over, and the old
//    one, resumed, steps down at once (exits) writing nothing: no job ran twice.
//  - Bad input: an unreachable store; a PostgreSQL that refuses writes.
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "common/clock.h"
#include "common/file_util.h"
#include "common/time_util.h"
#include "server/store/store_test_backend.h"
#include "tests/ha_cluster.h"
#include "tests/harness.h"
#include "net/http_client.h"

namespace rota::testing {
namespace {

using api::Json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using store::testing::Backend;
using store::testing::TestStoreLocation;

int64_t NowMs() { return RealClock::Get().MonotonicMs(); }

class HaE2E : public ::testing::Test {
 protected:
  void SetUp() override { ROTA_SKIP_WITHOUT_BACKEND(pg_); }

  // A server of the cluster; `wait_ready` as ServerProcess::Start (a follower needs a leader
  // to sign the admin in).
  std::unique_ptr<ServerProcess> StartServer(const std::string& name) {
    auto s = ClusterServer(dir_.path(), name, pg_.url());
    EXPECT_NE(s, nullptr);
    if (s == nullptr) return nullptr;
    Status st = s->Start();
    EXPECT_TRUE(st.ok()) << st.ToString() << "\n" << s->child().Log();
    return st.ok() ? std::move(s) : nullptr;
  }
  std::string Urls(const std::vector<ServerProcess*>& servers) {
    std::string out;
    for (auto* s : servers) out += (out.empty() ? "" : ",") + s->url();
    return out;
  }
  int64_t Count(const std::string& sql) {
    auto db = pg_.Connect();
    if (!db.ok()) return -1;
    auto n = db->QueryInt(sql);
    return n.ok() ? *n : -1;
  }

  TempDir dir_;
  TestStoreLocation pg_{Backend::kPostgres};
  const std::string node_ = "gpu-ha" + std::to_string(::getpid());
};

TEST_F(HaE2E, T1_KillTheLeaderUnderWritesNothingAnsweredIsLostAndAFollowerLeads) {
  auto a = StartServer("a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitFor([&] { return Leads(a->url()); }, seconds(10))) << a->child().Log();
  auto b = StartServer("b");
  ASSERT_NE(b, nullptr);
  auto c = StartServer("c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(RoleOf(b->url()), "follower");
  EXPECT_EQ(RoleOf(c->url()), "follower");

  AgentProcess agent(dir_.path(), SimGpuNode{.name = node_, .gpus = 2}, *a);
  agent.SetServers(Urls({a.get(), b.get(), c.get()}));
  ASSERT_TRUE(agent.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return NodeReady(*a, node_); }, seconds(20))) << agent.child().Log();

  // `rota servers` through a follower: the leader's registry, with all three.
  auto listed = RunCli({"servers", "-o", "json"}, b->CliEnv());
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  ASSERT_TRUE(WaitFor([&] {
    auto r = b->GetJson("/api/v1/servers");
    return r.ok() && (*r)["servers"].size() == 3;
  }, seconds(10)));
  auto anonymous = net::HttpCall("GET", b->url() + "/api/v1/servers");
  ASSERT_TRUE(anonymous.ok());
  EXPECT_EQ(anonymous->status, 401) << anonymous->body;

  Json extra = Json::object();
  extra["unix_user"] = ::geteuid() == 0 ? "nobody" : ::getpwuid(::geteuid())->pw_name;
  auto alice = a->CreateUser("alice", "user", extra);
  ASSERT_TRUE(alice.ok()) << alice.status().ToString();

  const std::vector<std::string> urls = {a->url(), b->url(), c->url()};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<int64_t> jobs, reservations;
  std::atomic<int64_t> first_write_after_kill{0};
  std::atomic<int64_t> killed_at{0};
  std::atomic<int> failures{0};
  std::atomic<int64_t> slots{0};
  const int64_t base = RealClock::Get().NowMs() + 24 * 3600'000;
  std::vector<std::thread> clients;
  for (int k = 0; k < 4; ++k) {
    clients.emplace_back([&, k] {
      size_t start = static_cast<size_t>(k) % urls.size();
      for (int i = 0; !stop.load(); ++i) {
        const bool job = i % 2 == 0;
        std::string body;
        if (job) {
          body = Json{{"name", "ha" + std::to_string(k)},
                      {"command", {"/bin/true"}},
                      {"workdir", "/tmp"},
                      {"groups", {{{"role", "worker"}}}}}
                     .dump();
        } else {
          const int64_t slot = base + slots.fetch_add(1) * 3600'000;  // none overlaps another
          body = Json{{"node", node_},
                      {"gpus", {0}},
                      {"start", FormatRfc3339(slot)},
                      {"end", FormatRfc3339(slot + 3600'000)},
                      {"title", "ha"}}
                     .dump();
        }
        const int64_t sent = NowMs();
        auto r = CallAny(urls, *alice, "POST", job ? "/api/v1/jobs" : "/api/v1/reservations", body, &start);
        if (r.ok() && r->status == 201) {
          auto j = api::ParseJson(r->body);
          if (!j.ok() || !j->contains("id")) continue;
          std::lock_guard<std::mutex> lock(mu);
          (job ? jobs : reservations).push_back((*j)["id"].get<int64_t>());
          int64_t expected = 0;
          // The first write sent after the kill that was answered 2xx.
          if (killed_at.load() != 0 && sent > killed_at.load()) {
            first_write_after_kill.compare_exchange_strong(expected, NowMs());
          }
          std::this_thread::sleep_for(milliseconds(40));  // a steady load, not a flood
        } else {
          ++failures;
          std::this_thread::sleep_for(milliseconds(100));
        }
      }
    });
  }
  std::this_thread::sleep_for(seconds(2));
  killed_at = NowMs();
  a->child().Kill();  // kill -9
  std::string leader;
  ASSERT_TRUE(WaitFor([&] {
    for (auto* s : {b.get(), c.get()}) {
      if (Leads(s->url())) leader = s->url();
    }
    return !leader.empty();
  }, seconds(20))) << b->child().Log() << c->child().Log();
  const int64_t leading_ms = NowMs() - killed_at.load();
  ASSERT_TRUE(WaitFor([&] { return first_write_after_kill.load() != 0; }, seconds(15)));
  std::this_thread::sleep_for(seconds(1));
  stop = true;
  for (auto& t : clients) t.join();
  const int64_t write_ms = first_write_after_kill.load() - killed_at.load();
  std::printf("[ha] failover after kill -9: new leader serving in %lld ms, first write answered after %lld ms "
              "(%zu jobs, %zu reservations committed, %d refused or unanswered meanwhile)\n",
              static_cast<long long>(leading_ms), static_cast<long long>(write_ms), jobs.size(),
              reservations.size(), failures.load());
  EXPECT_LE(leading_ms, 15'000);

  // The CLI with ROTA_SERVER naming all three, the dead one first: it moves on.
  auto env = b->CliEnv();
  env["ROTA_SERVER"] = Urls({a.get(), b.get(), c.get()});
  auto servers = RunCli({"servers"}, env);
  EXPECT_EQ(servers.exit_code, 0) << servers.err;
  EXPECT_NE(servers.out.find("leader"), std::string::npos) << servers.out;
  EXPECT_NE(servers.out.find(leader), std::string::npos) << servers.out;

  // Exactly one leader; the other follows it.
  const std::string other = leader == b->url() ? c->url() : b->url();
  EXPECT_EQ(RoleOf(other), "follower");
  // Every write answered 2xx is in the store.
  ASSERT_FALSE(jobs.empty());
  ASSERT_FALSE(reservations.empty());
  for (int64_t id : jobs) {
    EXPECT_EQ(Count("SELECT count(*) FROM jobs WHERE id = " + std::to_string(id)), 1) << "job " << id;
  }
  for (int64_t id : reservations) {
    EXPECT_EQ(Count("SELECT count(*) FROM reservations WHERE id = " + std::to_string(id)), 1)
        << "reservation " << id;
  }
  // The agent follows the new leader; its jobs run there.
  ServerProcess* now_leading = leader == b->url() ? b.get() : c.get();
  EXPECT_TRUE(WaitFor([&] { return NodeReady(*now_leading, node_); }, seconds(20))) << agent.child().Log();
  EXPECT_TRUE(WaitFor([&] {
    return Count("SELECT count(*) FROM jobs WHERE state NOT IN ('succeeded','failed','cancelled')") == 0;
  }, seconds(60)));
  EXPECT_EQ(Count("SELECT count(*) FROM (SELECT job_id FROM job_events WHERE state = 'running' GROUP BY job_id "
                  "HAVING count(*) > 1) twice"),
            0);
  agent.child().Stop();
}

TEST_F(HaE2E, T2_APausedLeaderLosesItsLeaseAndStepsDownWritingNothing) {
  auto a = StartServer("a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitFor([&] { return Leads(a->url()); }, seconds(10)));
  auto b = StartServer("b");
  ASSERT_NE(b, nullptr);
  AgentProcess agent(dir_.path(), SimGpuNode{.name = node_, .gpus = 2}, *a,
                     {"--server-timeout", "3s"});
  agent.SetServers(Urls({a.get(), b.get()}));
  ASSERT_TRUE(agent.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return NodeReady(*a, node_); }, seconds(20)));

  const int64_t epoch_a = Count("SELECT epoch FROM leader_lease");
  a->child().Signal(SIGSTOP);
  const int64_t paused = NowMs();
  ASSERT_TRUE(WaitFor([&] { return Leads(b->url()); }, seconds(20))) << b->child().Log();
  std::printf("[ha] paused leader replaced in %lld ms\n", static_cast<long long>(NowMs() - paused));
  EXPECT_EQ(Count("SELECT epoch FROM leader_lease"), epoch_a + 1);
  ASSERT_TRUE(WaitFor([&] { return NodeReady(*b, node_); }, seconds(20))) << agent.child().Log();
  Json extra = Json::object();
  extra["unix_user"] = ::geteuid() == 0 ? "nobody" : ::getpwuid(::geteuid())->pw_name;
  auto alice = b->CreateUser("alice", "user", extra);
  ASSERT_TRUE(alice.ok()) << alice.status().ToString();

  Json spec{{"name", "once"},
            {"command", {"/bin/sh", "-c", "sleep 2"}},
            {"workdir", "/tmp"},
            {"groups", {{{"role", "worker"}}}}};
  auto job = b->CallAs(*alice, "POST", "/api/v1/jobs", spec.dump());
  ASSERT_TRUE(job.ok());
  ASSERT_EQ(job->status, 201) << job->body;
  const int64_t id = Json::parse(job->body)["id"];

  a->child().Signal(SIGCONT);  // wakes past its deadline: exits without leader work
  EXPECT_TRUE(WaitFor([&] { return !a->child().running(); }, seconds(5))) << a->child().Log();
  EXPECT_NE(a->child().Log().find("leader lease lost"), std::string::npos) << a->child().Log();
  EXPECT_EQ(Count("SELECT epoch FROM leader_lease"), epoch_a + 1) << "the old leader took nothing back";

  Json end = WaitJobEnd(*b, id, seconds(60));
  EXPECT_EQ(end.value("state", ""), "succeeded") << end.dump(2);
  EXPECT_EQ(end.value("restart_count", 0), 0) << end.dump(2);
  EXPECT_EQ(Count("SELECT count(*) FROM job_events WHERE state = 'running' AND job_id = " + std::to_string(id)), 1);
  EXPECT_EQ(RoleOf(b->url()), "leader");
  agent.child().Stop();
}

// Servers serving TLS with certificates from one generated CA (the first server's tls/ca.pem
// and ca.key given to the others before their first start): a follower trusts that CA when
// it forwards to the leader, so a request to the follower is answered by the leader.
TEST_F(HaE2E, AFollowerForwardsToATlsLeaderTrustingTheClustersCa) {
  auto a = ClusterServer(dir_.path(), "a", pg_.url(), {{"ROTA_TLS", "on"}});
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->Start().ok()) << a->child().Log();
  ASSERT_EQ(a->url().rfind("https://", 0), 0u) << a->url();
  ASSERT_TRUE(WaitFor([&] { return Leads(a->url()); }, seconds(10)));
  auto b = ClusterServer(dir_.path(), "b", pg_.url(), {{"ROTA_TLS", "on"}});
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(MakeDirs(b->data_dir() + "/tls", 0700).ok());
  for (const char* f : {"ca.pem", "ca.key"}) {
    auto bytes = ReadFile(a->data_dir() + "/tls/" + f);
    ASSERT_TRUE(bytes.ok());
    ASSERT_TRUE(WriteFileAtomic(b->data_dir() + "/tls/" + f, *bytes, 0600).ok());
  }
  ASSERT_TRUE(b->Start().ok()) << b->child().Log();
  EXPECT_EQ(RoleOf(b->url()), "follower");
  auto alice = b->CreateUser("alice");  // a write, forwarded over HTTPS to the leader
  ASSERT_TRUE(alice.ok()) << alice.status().ToString() << "\n" << b->child().Log();
  auto nodes = b->CallAs(*alice, "GET", "/api/v1/nodes");
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(nodes->status, 200) << nodes->body;
  auto users = a->GetJson("/api/v1/users");
  ASSERT_TRUE(users.ok());
  EXPECT_NE(users->dump().find("alice"), std::string::npos) << users->dump();
}

// A follower relays the leader's event stream (stream_relay.h): a client of the follower
// gets the node and its live samples; a bad token gets the leader's refusal as a
// relay-error event and the stream ends; when the leader dies the relayed stream ends the
// same way, and once the follower leads, the stream is its own.
TEST_F(HaE2E, AFollowerRelaysTheLeadersEventStreamAndEndsItWhenTheLeaderGoes) {
  auto a = StartServer("a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitFor([&] { return Leads(a->url()); }, seconds(10))) << a->child().Log();
  auto b = StartServer("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(RoleOf(b->url()), "follower");
  AgentProcess agent(dir_.path(), SimGpuNode{.name = node_, .gpus = 2}, *a);
  agent.SetServers(Urls({a.get(), b.get()}));
  ASSERT_TRUE(agent.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return NodeReady(*a, node_); }, seconds(20))) << agent.child().Log();
  auto alice = b->CreateUser("alice");
  ASSERT_TRUE(alice.ok()) << alice.status().ToString();

  // Read until `enough` says so; what arrived, and how the stream ended.
  struct Read {
    Status status;
    std::vector<std::pair<std::string, std::string>> events;
  };
  auto read = [&](const std::string& url, const std::string& token, auto enough) {
    Read r;
    r.status = net::ReadEventStream(
        url + "/api/v1/stream?node=" + node_, {"Authorization: Bearer " + token},
        [&](const std::string& e, const std::string& d) {
          r.events.emplace_back(e, d);
          return !enough(r.events);
        },
        5000, 20'000);
    return r;
  };
  auto has = [](const std::vector<std::pair<std::string, std::string>>& events, const std::string& name) {
    return std::count_if(events.begin(), events.end(), [&](const auto& e) { return e.first == name; });
  };

  // Live samples through the follower: the node first, then samples as the agent sends them.
  Read live = read(b->url(), *alice, [&](const auto& ev) { return has(ev, "sample") >= 3; });
  ASSERT_TRUE(live.status.ok()) << live.status.ToString() << "\n" << b->child().Log();
  ASSERT_FALSE(live.events.empty());
  EXPECT_EQ(live.events[0].first, "node");
  EXPECT_NE(live.events[0].second.find(node_), std::string::npos) << live.events[0].second;
  EXPECT_EQ(has(live.events, "sample"), 3);

  // The leader refuses a bad token: said in the stream, which then ends.
  Read refused = read(b->url(), "not-a-token", [](const auto&) { return false; });
  ASSERT_TRUE(refused.status.ok()) << refused.status.ToString();
  ASSERT_EQ(refused.events.size(), 1u);
  EXPECT_EQ(refused.events[0].first, "relay-error");
  EXPECT_EQ(Json::parse(refused.events[0].second).value("status", 0), 401) << refused.events[0].second;

  // A stream another server relayed here is never relayed on (no loop between followers
  // that each think the other leads): 503 at once, naming who sent it.
  Status looped = net::ReadEventStream(b->url() + "/api/v1/stream",
                                       {"Authorization: Bearer " + *alice, "X-Rota-Forwarded-By: server-x"},
                                       [](const std::string&, const std::string&) { return true; }, 5000, 10'000);
  EXPECT_EQ(looped.code(), StatusCode::kUnavailable) << looped.ToString();
  EXPECT_NE(looped.message().find("relayed here by server-x"), std::string::npos) << looped.message();

  // The leader dies under a relayed stream: it ends with a relay-error (unreachable).
  Read cut;
  std::atomic<bool> relaying{false};
  std::thread reader([&] {
    cut = read(b->url(), *alice, [&](const auto&) {
      relaying = true;  // the node's first event came through b
      return false;
    });
  });
  const bool opened = WaitFor([&] { return relaying.load(); }, seconds(10));
  ::kill(a->child().pid(), SIGKILL);
  reader.join();
  ASSERT_TRUE(opened) << cut.status.ToString();
  EXPECT_TRUE(cut.status.ok()) << cut.status.ToString();
  ASSERT_FALSE(cut.events.empty());
  EXPECT_EQ(cut.events.back().first, "relay-error") << cut.events.back().second;
  EXPECT_GE(Json::parse(cut.events.back().second).value("status", 0), 500) << cut.events.back().second;

  // b leads now: the same request is served by b itself.
  ASSERT_TRUE(WaitFor([&] { return Leads(b->url()); }, seconds(30))) << b->child().Log();
  ASSERT_TRUE(WaitFor([&] { return NodeReady(*b, node_); }, seconds(30))) << agent.child().Log();
  Read own = read(b->url(), *alice, [&](const auto& ev) { return has(ev, "sample") >= 1; });
  ASSERT_TRUE(own.status.ok()) << own.status.ToString();
  EXPECT_EQ(has(own.events, "relay-error"), 0);
}

TEST_F(HaE2E, BadStoresStopTheStartSayingWhy) {
  const std::string data = dir_.path() + "/bad";
  auto unreachable = RunCli({"server", "--listen", "127.0.0.1:0", "--data-dir", data, "--store",
                             "postgresql://rota@127.0.0.1:1/rota"});
  EXPECT_EQ(unreachable.exit_code, 1) << unreachable.err;
  EXPECT_NE(unreachable.err.find("cannot connect to the store"), std::string::npos) << unreachable.err;

  // A database that refuses writes (a read-only replica, here default_transaction_read_only).
  {
    auto db = pg_.Connect();
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Exec("ALTER DATABASE " + *db->QueryText("SELECT current_database()") +
                         " SET default_transaction_read_only = on")
                    .ok());
  }
  auto read_only = RunCli({"server", "--listen", "127.0.0.1:0", "--data-dir", data, "--store", pg_.url()});
  EXPECT_EQ(read_only.exit_code, 1) << read_only.err;
  EXPECT_NE(read_only.err.find("read-only"), std::string::npos) << read_only.err;
}

}  // namespace
}  // namespace rota::testing
