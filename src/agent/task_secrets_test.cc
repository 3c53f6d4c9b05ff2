// A task's secrets on the node (task_secrets.h), and through TaskRunner with the real
// shim: the file and the variable the task gets, nothing in spec.json, the
// directory gone when the task ends, the sweep after a restart.

#include "agent/task_secrets.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "agent/task_runner.h"
#include "agent/task_test_util.h"
#include "common/file_util.h"

namespace rota::agent {
namespace {

using testing_tasks::MakeRunner;
using testing_tasks::Read;
using testing_tasks::TempDir;
using testing_tasks::WaitEnded;

// A root of this test's own on /dev/shm (a tmpfs here).
class SecretsRoot {
 public:
  SecretsRoot() : path_("/dev/shm/rota-secrets-test-" + std::to_string(::getpid())) {}
  ~SecretsRoot() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(TaskSecretsTest, WritesOwnerOnlyFilesAndSweepsUnknownTasks) {
  SecretsRoot root;
  auto dir = WriteTaskSecrets(root.path(), "k1", "job-1.r0.w-0", {{"tok", "v1", ""}, {"bin", std::string("\0\1", 2), ""}},
                              std::nullopt, std::nullopt);
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  EXPECT_EQ(*dir, root.path() + "/k1.job-1.r0.w-0");
  struct stat st {};
  ASSERT_EQ(::stat(root.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0711u);
  ASSERT_EQ(::stat(dir->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat((*dir + "/tok").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0400u);
  EXPECT_EQ(*ReadFile(*dir + "/tok"), "v1");
  EXPECT_EQ(*ReadFile(*dir + "/bin"), std::string("\0\1", 2));
  // Another agent's (k2) and a known task's stay; the unknown one of k1 goes.
  ASSERT_TRUE(WriteTaskSecrets(root.path(), "k1", "kept", {{"a", "b", ""}}, std::nullopt, std::nullopt).ok());
  ASSERT_TRUE(WriteTaskSecrets(root.path(), "k2", "job-1.r0.w-0", {{"a", "b", ""}}, std::nullopt, std::nullopt).ok());
  SweepTaskSecrets(root.path(), "k1", {"kept"});
  EXPECT_NE(::access(dir->c_str(), F_OK), 0);
  EXPECT_EQ(::access((root.path() + "/k1.kept").c_str(), F_OK), 0);
  EXPECT_EQ(::access((root.path() + "/k2.job-1.r0.w-0").c_str(), F_OK), 0);
}

TEST(TaskSecretsTest, RefusesARootOffTmpfs) {
  TempDir dir;  // on the disk
  auto r = WriteTaskSecrets(dir.path() + "/secrets", "k", "t", {{"a", "b", ""}}, std::nullopt, std::nullopt);
  if (r.ok()) GTEST_SKIP() << dir.path() << " is on a tmpfs here";
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("not on a tmpfs"), std::string::npos) << r.status().message();
}

TEST(TaskSecretsTest, TheTaskGetsFileAndVariableAndTheyGoWhenItEnds) {
  SecretsRoot root;
  TempDir dir;
  TaskRunner r = MakeRunner(dir.path());
  r.set_secrets_root(root.path());
  TaskRequest req;
  req.id = "job-3.r0.worker-0";
  req.argv = {"sh", "-c", "cat \"$ROTA_SECRETS_DIR/tok\"; echo; echo \"env:$TOK\"; echo \"dir:$ROTA_SECRETS_DIR\""};
  req.env = {{"PATH", "/usr/bin:/bin"}};
  req.secrets = {{"tok", "value-in-tmpfs-only", "TOK"}};
  auto st = r.Start(req);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  TaskStatus end = WaitEnded(r, req.id);
  ASSERT_EQ(end.state, TaskState::kExited);
  EXPECT_EQ(end.exit->exit_code, 0) << end.exit->error;
  const std::string out = Read(r.StdoutPath(req.id));
  EXPECT_NE(out.find("value-in-tmpfs-only\nenv:value-in-tmpfs-only\n"), std::string::npos) << out;
  EXPECT_NE(out.find("dir:" + root.path() + "/"), std::string::npos) << out;
  // The spec on disk names the file, not the value; the directory is gone.
  std::string spec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path())) {
    if (e.is_regular_file() && e.path().filename() == "spec.json") spec = Read(e.path().string());
  }
  ASSERT_FALSE(spec.empty());
  EXPECT_EQ(spec.find("value-in-tmpfs-only"), std::string::npos) << spec;
  EXPECT_NE(spec.find("env_files"), std::string::npos) << spec;
  std::error_code ec;
  EXPECT_TRUE(std::filesystem::is_empty(root.path(), ec)) << "left behind in " << root.path();
}

}  // namespace
}  // namespace rota::agent
