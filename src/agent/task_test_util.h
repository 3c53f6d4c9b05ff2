#pragma once
// What the TaskRunner tests share (task_runner_test.cc, task_cgroup_test.cc): a
// task state directory that kills what its tasks left running, a runner with the
// real `rota task-shim` (ROTA_BINARY), and waits on tasks and their pid files.

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "agent/task_runner.h"
#include "api/codec.h"
#include "common/file_util.h"
#include "common/process.h"
#include "common/test_util.h"

namespace rota::agent::testing_tasks {

namespace fs = std::filesystem;

// Kills what the tasks under `state_dir` left running (a test that failed midway):
// each task's process group and whatever is in its cgroups. Their shims then end.
inline void KillTasks(const std::string& state_dir) {
  std::error_code ec;
  for (const auto& task : fs::directory_iterator(state_dir + "/tasks", ec)) {
    if (fs::exists(task.path() / "status.json", ec)) continue;  // ended: its pid may be reused
    auto pid = ReadFile(task.path().string() + "/pid");
    if (pid.ok() && std::atoi(pid->c_str()) > 1) ::kill(-std::atoi(pid->c_str()), SIGKILL);
    auto spec = ReadFile(task.path().string() + "/spec.json");
    auto j = spec.ok() ? api::ParseJson(*spec) : Result<api::Json>(spec.status());
    if (j.ok() && j->contains("cgroups")) {
      SignalCgroups((*j)["cgroups"].get<std::vector<std::string>>(), SIGKILL);
    }
  }
}

// A task state directory; on destruction the tasks in it are killed and it is removed.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "rota-task-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp";
    path_ = tmpl;
    ::chmod(path_.c_str(), 0755);
  }
  ~TempDir() {
    KillTasks(path_);
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline TaskRunner MakeRunner(const std::string& dir) { return TaskRunner({ROTA_BINARY, "task-shim"}, dir); }

inline TaskStatus WaitEnded(TaskRunner& r, const std::string& id) {
  Result<TaskStatus> st = Status::NotFound("not polled");
  const bool ended = testutil::WaitFor([&] {
    st = r.Poll(id);
    return !st.ok() || st->state != TaskState::kRunning;
  });
  if (!st.ok()) {
    ADD_FAILURE() << st.status().ToString();
    return {};
  }
  if (!ended) {
    ADD_FAILURE() << "task " << id << " did not end";
    return {};
  }
  return *st;
}

// The pid a task wrote to `path`, once it is there (0 if it never is).
inline pid_t WaitPidFile(const std::string& path) {
  std::string text;
  testutil::WaitFor([&] {
    auto t = ReadFile(path);
    text = t.ok() ? *t : "";
    return !text.empty() && text.back() == '\n';  // written whole
  });
  return text.empty() ? 0 : std::stoi(text);
}

inline std::string Read(const std::string& path) {
  auto t = ReadFile(path);
  return t.ok() ? *t : "<" + t.status().message() + ">";
}

}  // namespace rota::agent::testing_tasks
