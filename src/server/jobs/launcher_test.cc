// The Launcher alone, over a transport that records what it is given and
// refuses what a test says.
#include "server/jobs/launcher.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "server/nodes/task_transport.h"

namespace rota::server {
namespace {

class RecordingTransport : public TaskTransport {
 public:
  void SetTaskListeners(TaskStatusListener, TaskLogListener) override {}
  Status SendTask(const std::string& node, const api::TaskStartMsg& m) override {
    if (refused.count(m.task.id)) return Status::Unavailable("node " + node + " is not connected");
    sent.push_back("start " + m.task.id);
    for (const auto& sec : m.task.secrets) sent.push_back("  secret " + sec.name + "=" + sec.value + " $" + sec.env);
    return Status::Ok();
  }
  Status SendTask(const std::string&, const api::TaskSignalMsg& m) override {
    if (refused.count(m.id)) return Status::Unavailable("gone");
    sent.push_back(m.signal + " " + m.id);
    return Status::Ok();
  }
  Status SendTask(const std::string&, const api::TaskLogsMsg&) override { return Status::Ok(); }
  std::set<std::string> refused;  // task ids
  std::vector<std::string> sent;  // in order
};

TaskSend Start(int64_t job, const std::string& id, const std::string& node = "gpu-a") {
  api::TaskStartMsg m;
  m.task.id = id;
  m.task.name = id.substr(id.rfind('.') + 1);
  return TaskSend{job, node, std::move(m), ""};
}
TaskSend Signal(int64_t job, const std::string& id, const std::string& signal) {
  return TaskSend{job, "gpu-a", api::TaskSignalMsg{id, signal, ""}, "job " + std::to_string(job) + ": " + signal};
}

TEST(LauncherTest, SendsEverythingInOrder) {
  RecordingTransport t;
  Launcher launcher(&t);
  auto failures = launcher.Send({Start(1, "job-1.r0.worker-0"), Signal(2, "job-2.r0.worker-0", "TERM"),
                                 Start(1, "job-1.r0.worker-1")});
  EXPECT_TRUE(failures.empty());
  EXPECT_EQ(t.sent, (std::vector<std::string>{"start job-1.r0.worker-0", "TERM job-2.r0.worker-0",
                                              "start job-1.r0.worker-1"}));
}

// A gang starts all or none: after a refused start nothing more of that job
// starts, other jobs' messages still go out, and the failure names the task,
// its node and why, with the starts that did go out (to be killed).
TEST(LauncherTest, ARefusedStartStopsItsGangOnlyAndSaysWhatWentOut) {
  RecordingTransport t;
  t.refused = {"job-1.r0.worker-1", "job-3.r0.worker-0"};
  Launcher launcher(&t);
  auto failures = launcher.Send({Start(1, "job-1.r0.worker-0"), Start(1, "job-1.r0.worker-1", "gpu-b"),
                                 Start(2, "job-2.r0.worker-0"), Start(1, "job-1.r0.worker-2"),
                                 Signal(3, "job-3.r0.worker-0", "KILL"), Start(3, "job-3.r0.worker-0")});
  EXPECT_EQ(t.sent, (std::vector<std::string>{"start job-1.r0.worker-0", "start job-2.r0.worker-0"}));
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].job_id, 1);
  EXPECT_EQ(failures[0].failure, "cannot start worker-1 on gpu-b: node gpu-b is not connected");
  EXPECT_EQ(failures[0].sent, std::set<std::string>{"job-1.r0.worker-0"});
  // A signal that cannot be sent is logged, not a launch failure; the start after it is.
  EXPECT_EQ(failures[1].job_id, 3);
  EXPECT_TRUE(failures[1].sent.empty());
  // A node that is not connected may be later: both are tried again.
  EXPECT_FALSE(failures[0].final);
  EXPECT_FALSE(failures[1].final);
}

// Gives "v-NAME" for owner 7's secrets, refuses others'.
class FakeSecrets : public SecretSource {
 public:
  Result<std::vector<api::TaskSecret>> ForTask(int64_t owner_id, const std::vector<jobs::SecretRef>& refs,
                                               const std::string& task_id, const std::string& node) override {
    asked.push_back(task_id + "@" + node);
    if (owner_id != 7) return Status::PermissionDenied("secret '" + refs[0].name + "' is not theirs any more");
    std::vector<api::TaskSecret> out;
    for (const auto& r : refs) out.push_back({r.name, "v-" + r.name, r.env});
    return out;
  }
  std::vector<std::string> asked;
};

TEST(LauncherTest, AStartNamingSecretsCarriesTheirValuesForThatTaskOnly) {
  RecordingTransport t;
  FakeSecrets secrets;
  Launcher launcher(&t);
  TaskSend with = Start(1, "job-1.r0.worker-0");
  with.secrets = {{"tok", "TOK", ""}, {"key", "", ""}};
  with.owner_id = 7;
  TaskSend theirs = Start(2, "job-2.r0.worker-0", "gpu-b");
  theirs.secrets = {{"tok", "", ""}};
  theirs.owner_id = 8;
  // Without a source such starts fail; with one, values go out in the start alone.
  auto none = launcher.Send({with});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_NE(none[0].failure.find("gives no secrets"), std::string::npos) << none[0].failure;
  launcher.set_secrets(&secrets);
  auto failures = launcher.Send({with, Start(1, "job-1.r0.worker-1"), theirs});
  EXPECT_EQ(t.sent, (std::vector<std::string>{"start job-1.r0.worker-0", "  secret tok=v-tok $TOK",
                                              "  secret key=v-key $", "start job-1.r0.worker-1"}));
  EXPECT_EQ(secrets.asked, (std::vector<std::string>{"job-1.r0.worker-0@gpu-a", "job-2.r0.worker-0@gpu-b"}));
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].failure, "cannot start worker-0 on gpu-b: secret 'tok' is not theirs any more");
  EXPECT_TRUE(failures[0].final);  // no later try can start it
  EXPECT_FALSE(none[0].final);     // a server that gives no secrets may be reconfigured
  // The queued message itself never held a value.
  EXPECT_TRUE(std::get<api::TaskStartMsg>(with.msg).task.secrets.empty());
}

}  // namespace
}  // namespace rota::server
