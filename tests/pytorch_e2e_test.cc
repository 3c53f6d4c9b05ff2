// Real PyTorch (Debian's python3-torch, /usr/bin/python3): a 2-node x 2-process
// DistributedDataParallel training with the gloo backend on CPU, launched by
// `rota run` across two simulated nodes. Every rank checks that its loss
// decreased and that all ranks hold identical parameters. Then one worker is
// killed mid-run: the gang restarts and the job succeeds.
//
// Skips when torch cannot be imported, unless ROTA_REQUIRE_TORCH=1 (set by
// scripts/test.sh, which installs it): then that is a failure.

#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "common/file_util.h"
#include "common/process.h"
#include "tests/harness.h"

namespace rota::testing {
namespace {

using api::Json;
using std::chrono::seconds;

constexpr char kDdp[] = R"py(
import datetime, os, time
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))
rank, world = dist.get_rank(), dist.get_world_size()
assert world == int(os.environ["WORLD_SIZE"]) and rank == int(os.environ["RANK"])
torch.manual_seed(0)
model = torch.nn.Linear(10, 1)
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
gen = torch.Generator().manual_seed(1234 + rank)
w_true = torch.arange(10, dtype=torch.float32).unsqueeze(1) / 10
first = last = None
for step in range(int(os.environ["STEPS"])):
    x = torch.randn(32, 10, generator=gen)
    loss = ((ddp(x) - x @ w_true) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    first = loss.item() if first is None else first
    last = loss.item()
    if step == 5:
        print(f"rank {rank} training", flush=True)
    time.sleep(float(os.environ["STEP_SLEEP"]))
params = torch.cat([p.detach().flatten() for p in model.parameters()])
gathered = [torch.zeros_like(params) for _ in range(world)]
dist.all_gather(gathered, params)
same = all(torch.equal(gathered[0], t) for t in gathered)
print(f"rank {rank}/{world} first {first:.4f} last {last:.4f} same {same} "
      f"restart {os.environ['ROTA_RESTART_COUNT']}", flush=True)
assert last < first, (first, last)
assert same
dist.destroy_process_group()
)py";

bool TorchAvailable() {
  SpawnOptions o;
  o.output_path = "/dev/null";
  auto pid = SpawnProcess({"/usr/bin/python3", "-c", "import torch"}, o);
  if (!pid.ok()) return false;
  auto st = WaitProcess(*pid, 120'000);
  return st.ok() && WIFEXITED(*st) && WEXITSTATUS(*st) == 0;
}

class PytorchE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!TorchAvailable()) {
      const char* require = std::getenv("ROTA_REQUIRE_TORCH");
      if (require != nullptr && std::string(require) == "1") {
        FAIL() << "/usr/bin/python3 cannot import torch (apt-get install python3-torch)";
      }
      GTEST_SKIP() << "/usr/bin/python3 cannot import torch (apt-get install python3-torch)";
    }
    server_ = std::make_unique<ServerProcess>(dir_.path() + "/server");
    // Ports apart from other tests, from this test in a suite running beside it, and
    // below Linux's ephemeral range (32768-60999), where any outgoing connection of a
    // test running at the same time may hold one (seen: gloo's bind failing).
    const int first_port = 27000 + static_cast<int>(::getpid() % 50) * 40;
    server_->SetEnv("ROTA_JOB_PORTS", std::to_string(first_port) + "-" + std::to_string(first_port + 39));
    ASSERT_TRUE(server_->Start().ok()) << server_->child().Log();
    // Node names of this test process's own (simulated processes are found by node name).
    const std::string suffix = "-" + std::to_string(::getpid());
    for (const char* name : {"gpu-p", "gpu-q"}) {
      agents_.push_back(std::make_unique<AgentProcess>(dir_.path(), SimGpuNode{.name = name + suffix, .gpus = 2},
                                                       *server_));
      ASSERT_TRUE(agents_.back()->Start().ok());
    }
    ASSERT_TRUE(WaitFor([&] { return NodeReady(*server_, "gpu-p" + suffix) && NodeReady(*server_, "gpu-q" + suffix); },
                        seconds(20)));
    Json extra{{"unix_user", ::geteuid() == 0 ? "nobody" : ::getpwuid(::geteuid())->pw_name}};
    auto a = server_->CreateUser("alice", "user", extra);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    env_ = server_->CliEnv();
    env_["ROTA_TOKEN"] = *a;
    script_ = dir_.path() + "/ddp.py";
    ASSERT_TRUE(WriteFileAtomic(script_, kDdp, 0644).ok());
    ::chmod(dir_.path().c_str(), 0755);
  }

  // `rota run` of the DDP script on 2 nodes x 2 GPUs; returns the job id.
  int64_t Run(int steps, double step_sleep, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"run", "--name", "ddp", "--framework", "pytorch", "--nodes", "2",
                                     "--gpus-per-node", "2", "--workdir", "/tmp", "-o", "json",
                                     "--env", "STEPS=" + std::to_string(steps),
                                     "--env", "STEP_SLEEP=" + std::to_string(step_sleep),
                                     "--env", "GLOO_SOCKET_IFNAME=lo", "--env", "OMP_NUM_THREADS=1"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--", "/usr/bin/python3", script_});
    CliResult r = RunCli(args, env_);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    auto j = Json::parse(r.out, nullptr, false);
    return j.is_object() ? j.value("id", int64_t{0}) : 0;
  }

  Json WaitEnd(int64_t id) { return WaitJobEnd(*server_, id, seconds(240)); }

  std::string Logs(int64_t id) {
    std::string all;
    for (const char* t : {"worker-0.0", "worker-0.1", "worker-1.0", "worker-1.1"}) {
      CliResult out = RunCli({"logs", std::to_string(id), "--task", t}, env_);
      CliResult err = RunCli({"logs", std::to_string(id), "--task", t, "--stderr"}, env_);
      all += std::string("== ") + t + "\n" + out.out + err.out.substr(0, 2000);
    }
    return all;
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::vector<std::unique_ptr<AgentProcess>> agents_;
  std::map<std::string, std::string> env_;
  std::string script_;
};

TEST_F(PytorchE2E, DdpTrainsAcrossTwoNodesAndSurvivesAKilledWorker) {
  const int64_t id = Run(40, 0.0);
  ASSERT_GT(id, 0);
  Json end = WaitEnd(id);
  ASSERT_EQ(end.value("state", ""), "succeeded") << end.dump(2) << Logs(id);
  const std::string logs = Logs(id);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_NE(logs.find("rank " + std::to_string(rank) + "/4 "), std::string::npos) << logs;
  }
  EXPECT_EQ(logs.find("same False"), std::string::npos) << logs;
  std::set<std::string> nodes;
  for (const auto& t : end["tasks"]) nodes.insert(t.value("node", ""));
  EXPECT_EQ(nodes.size(), 2u) << end.dump(2);

  // Kill one worker mid-run: the gang restarts and the job succeeds.
  const int64_t id2 = Run(200, 0.05, {"--restart", "on-failure", "--max-restarts", "2"});
  ASSERT_GT(id2, 0);
  int64_t victim = 0;
  ASSERT_TRUE(WaitFor([&] {
    auto j = server_->GetJson("/api/v1/jobs/" + std::to_string(id2));
    if (!j.ok() || (*j).value("state", "") != "running") return false;
    for (const auto& t : (*j)["tasks"]) {
      if (t.value("name", "") == "worker-1.1") victim = t.value("pid", int64_t{0});
    }
    if (victim <= 1) return false;
    CliResult log = RunCli({"logs", std::to_string(id2), "--task", "worker-1.1"}, env_);
    return log.out.find("training") != std::string::npos;
  }, seconds(120))) << Logs(id2);
  ASSERT_EQ(::kill(static_cast<pid_t>(victim), SIGKILL), 0);
  Json end2 = WaitEnd(id2);
  ASSERT_EQ(end2.value("state", ""), "succeeded") << end2.dump(2) << Logs(id2);
  EXPECT_EQ(end2.value("restart_count", 0), 1);
  EXPECT_NE(Logs(id2).find("restart 1"), std::string::npos);
  EXPECT_NE(end2["events"].dump().find("killed by signal 9"), std::string::npos) << end2.dump(2);
}

}  // namespace
}  // namespace rota::testing
