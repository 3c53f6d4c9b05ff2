#pragma once
// Test helpers for src/gpu tests: a temporary directory and a child process started with
// an exact environment. Header-only; for tests only.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace rota::gpu::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/rota-gpu-test-XXXXXX";
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }  // "" if creation failed

 private:
  std::string path_;
};

// `sleep 1000` running with exactly `env`. Killed and reaped on destruction.
class Child {
 public:
  // Returns after the child has exec'd (its /proc/PID/environ is final), or nullptr.
  static std::unique_ptr<Child> Start(const std::vector<std::string>& env) {
    std::vector<std::string> env_copy = env;
    env_copy.push_back("PATH=/usr/bin:/bin");
    std::vector<char*> envp;
    for (std::string& e : env_copy) envp.push_back(e.data());
    envp.push_back(nullptr);
    char arg0[] = "sleep", arg1[] = "1000";
    char* argv[] = {arg0, arg1, nullptr};
    const char* path = access("/usr/bin/sleep", X_OK) == 0 ? "/usr/bin/sleep" : "/bin/sleep";
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return nullptr;
    pid_t pid = fork();
    if (pid < 0) {
      close(fds[0]);
      close(fds[1]);
      return nullptr;
    }
    if (pid == 0) {
      close(fds[0]);
      execve(path, argv, envp.data());
      int err = errno;
      (void)!write(fds[1], &err, sizeof(err));
      _exit(127);
    }
    close(fds[1]);
    int err = 0;
    ssize_t n;
    do {
      n = read(fds[0], &err, sizeof(err));
    } while (n < 0 && errno == EINTR);
    close(fds[0]);
    auto child = std::unique_ptr<Child>(new Child(pid));
    if (n != 0) return nullptr;  // exec failed; the destructor reaps it
    // The pipe closes early in exec, before the kernel records where the new
    // environment lies: until then /proc/PID/environ reads empty (seen under load).
    const std::string environ_path = "/proc/" + std::to_string(pid) + "/environ";
    for (int i = 0; i < 2000; ++i) {
      std::ifstream f(environ_path, std::ios::binary);
      if (f.get() != std::char_traits<char>::eof()) break;
      usleep(1000);
    }
    return child;
  }
  ~Child() {
    kill(pid_, SIGKILL);
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  pid_t pid() const { return pid_; }

 private:
  explicit Child(pid_t pid) : pid_(pid) {}
  pid_t pid_;
};

}  // namespace rota::gpu::testing
