// Crash durability: a child process appends samples and reports every append
// whose done() got OK through a pipe; the parent SIGKILLs it mid-stream and
// checks, on reopening, that every acked sample is in the database.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <set>

#include "server/store/sqlite_backend.h"
#include "server/store/store.h"
#include "server/store/store_test_util.h"

namespace rota::store {
namespace {

using testing::MakeNode;
using testing::MakeSample;
using testing::TempDir;

constexpr int64_t kBase = 1'700'000'000'000;
constexpr int kGpus = 4;

int64_t TimeOf(int64_t seq) { return kBase + seq * 10; }

// Wall time fixed at kBase (so no sample is "late"), real monotonic time (so
// the writer's batch time limit applies as in production).
class ChildClock final : public Clock {
 public:
  int64_t NowMs() const override { return kBase; }
  int64_t MonotonicMs() const override { return RealClock::Get().MonotonicMs(); }
};

// Runs in the child: appends forever like an agent with at most 64 unacked
// appends in flight (so commits happen continuously and a kill lands at any
// point), writing each acked sequence number to `fd`.
[[noreturn]] void RunChild(const std::string& dir, int fd, int64_t first_seq) {
  ChildClock clock;
  StoreOptions options;  // defaults, as the server uses them
  auto store = Store::Open(dir, options, clock);
  if (!store.ok()) _exit(2);
  if (!(*store)->UpsertNode(MakeNode("n1", kGpus), kBase).ok()) _exit(3);
  std::mutex mu;
  std::condition_variable cv;
  int inflight = 0;
  for (int64_t seq = first_seq;; ++seq) {
    {
      std::unique_lock lk(mu);
      cv.wait(lk, [&] { return inflight < 64; });
      ++inflight;
    }
    (*store)->Append("n1", {MakeSample(TimeOf(seq), kGpus, static_cast<uint32_t>(seq % 100))},
                     [&, fd, seq](Status st) {
                       if (st.ok()) {
                         ssize_t n = ::write(fd, &seq, sizeof seq);
                         (void)n;
                       }
                       std::lock_guard lk(mu);
                       --inflight;
                       cv.notify_one();
                     });
  }
}

// Reads acked sequence numbers until `want` are seen, SIGKILLs the child, then
// reads the rest until EOF. Returns false if the child died on its own.
bool CollectAcks(pid_t pid, int fd, size_t want, std::set<int64_t>* acked) {
  bool killed = false;
  while (true) {
    int64_t seq;
    ssize_t n = ::read(fd, &seq, sizeof seq);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (n != sizeof seq) {
      ADD_FAILURE() << "short read from the child's pipe";
      break;
    }
    acked->insert(seq);
    if (!killed && acked->size() >= want) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
  }
  return killed;
}

TEST(StoreDurabilityTest, AckedSamplesSurviveSigkill) {
  TempDir dir;
  std::set<int64_t> acked;
  for (int round = 0; round < 3; ++round) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      RunChild(dir.path(), fds[1], int64_t{round} * 1'000'000);
    }
    ::close(fds[1]);
    std::set<int64_t> round_acks;
    // Kill at counts that are not Flush boundaries, while acks are being written.
    const bool killed = CollectAcks(pid, fds[0], 1234 + 1111 * round, &round_acks);
    ::close(fds[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(killed) << "child exited early, status " << status;
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
    acked.insert(round_acks.begin(), round_acks.end());

    // Reopen (recovering the WAL) and check every acked sample of every round.
    FakeClock clock(kBase);
    auto store = Store::Open(dir.path(), {}, clock);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->GetNode("n1").ok());
    // The minutes the child left without aggregates are found from the mark.
    ASSERT_TRUE((*store)->AggregateMinutes().ok());
    store->reset();
    auto db = Db::Open(dir.path() + "/rota.db", SQLITE_OPEN_READWRITE);
    ASSERT_TRUE(db.ok());
    const int64_t node = *db->QueryInt("SELECT id FROM nodes WHERE name = 'n1'");
    auto q = db->Prepare(
        "SELECT (SELECT count(*) FROM " + testing::kHostSamples + " WHERE node = ?2 AND t_ms = ?1), "
        "(SELECT coalesce(sum(n_gpus), 0) FROM node_gpu_samples WHERE node = ?2 AND t_ms = ?1)");
    ASSERT_TRUE(q.ok());
    size_t missing = 0;
    for (int64_t seq : acked) {
      q->Reset();
      q->Bind(1, TimeOf(seq)).Bind(2, node);
      auto row = q->Step();
      ASSERT_TRUE(row.ok() && *row);
      if (q->Int(0) != 1 || q->Int(1) != kGpus) ++missing;
    }
    q->Reset();
    EXPECT_EQ(missing, 0u) << "of " << acked.size() << " acked samples after round " << round;
    const int64_t stored = *db->QueryInt("SELECT count(*) FROM " + testing::kHostSamples);
    EXPECT_GE(stored, static_cast<int64_t>(acked.size()));
    // Every raw row counted once in the aggregates.
    EXPECT_EQ(*db->QueryInt("SELECT sum(n) FROM node_minutes"), stored);
    EXPECT_EQ(*db->QueryInt("SELECT sum(n) FROM gpu_minutes"),
              *db->QueryInt("SELECT coalesce(sum(n_gpus), 0) FROM node_gpu_samples"));
    std::cerr << "round " << round << ": " << round_acks.size() << " acked, "
              << stored - static_cast<int64_t>(acked.size()) << " more committed, not acked\n";
  }
}

}  // namespace
}  // namespace rota::store
