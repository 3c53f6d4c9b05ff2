#include "cli/top/top_screen.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <iostream>
#include <map>
#include <thread>
#include <vector>

#include "cli/top/top_view.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "net/http_client.h"

namespace rota::cli::top {
namespace {

// The self-pipe the signal handlers write to, so that poll() wakes.
int g_wake_fd = -1;
volatile std::sig_atomic_t g_resized = 0;
volatile std::sig_atomic_t g_stop_signal = 0;

void OnSignal(int sig) {
  if (sig == SIGWINCH) g_resized = 1;
  else g_stop_signal = sig;
  if (g_wake_fd >= 0) {
    const char b = 1;
    [[maybe_unused]] ssize_t n = ::write(g_wake_fd, &b, 1);
  }
}

void WriteAll(const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(STDOUT_FILENO, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

void TerminalSize(int* rows, int* cols) {
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
    *rows = ws.ws_row;
    *cols = ws.ws_col;
  } else {
    *rows = 24;
    *cols = 80;
  }
}

// What the reader threads leave for the drawing thread.
class Shared {
 public:
  void SetNode(const std::string& name, api::Json event) ROTA_EXCLUDES(mu_) {
    MutexLock l(&mu_);
    nodes_[name].first = std::move(event);
  }
  void SetSample(const std::string& name, api::Json sample) ROTA_EXCLUDES(mu_) {
    MutexLock l(&mu_);
    nodes_[name].second = std::move(sample);
  }
  void SetJobs(std::vector<Job> jobs) ROTA_EXCLUDES(mu_) {
    MutexLock l(&mu_);
    jobs_ = std::move(jobs);
    jobs_known_ = true;
  }
  void SetNotice(std::string notice) ROTA_EXCLUDES(mu_) {
    MutexLock l(&mu_);
    notice_ = std::move(notice);
  }
  // Copies what was seen into `m` (parsed after the copy, outside the lock).
  void Fill(Model* m) ROTA_EXCLUDES(mu_) {
    std::map<std::string, std::pair<api::Json, api::Json>> nodes;
    {
      MutexLock l(&mu_);
      nodes = nodes_;
      m->jobs = jobs_;
      m->jobs_known = jobs_known_;
      m->notice = notice_;
    }
    m->nodes.clear();
    for (const auto& [name, ev] : nodes) m->nodes.emplace(name, NodeFromEvents(name, ev.first, ev.second));
  }

 private:
  Mutex mu_;
  std::map<std::string, std::pair<api::Json, api::Json>> nodes_ ROTA_GUARDED_BY(mu_);
  std::vector<Job> jobs_ ROTA_GUARDED_BY(mu_);
  bool jobs_known_ ROTA_GUARDED_BY(mu_) = false;
  std::string notice_ ROTA_GUARDED_BY(mu_);
};

class Stopper {
 public:
  void Stop() ROTA_EXCLUDES(mu_) {
    MutexLock l(&mu_);
    stopped_ = true;
    cv_.NotifyAll();
  }
  bool stopped() ROTA_EXCLUDES(mu_) {
    MutexLock l(&mu_);
    return stopped_;
  }
  // Sleeps up to `ms`; true when stopped meanwhile.
  bool Sleep(int ms) ROTA_EXCLUDES(mu_) {
    MutexLock l(&mu_);
    return cv_.WaitFor(&mu_, std::chrono::milliseconds(ms), [&]() ROTA_REQUIRES(mu_) { return stopped_; });
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool stopped_ ROTA_GUARDED_BY(mu_) = false;
};

void Wake(int fd) {
  const char b = 0;
  [[maybe_unused]] ssize_t n = ::write(fd, &b, 1);
}

void ReadStream(const std::string& url, const std::vector<std::string>& headers, Shared* shared,
                Stopper* stop, int wake_fd) {
  while (!stop->stopped()) {
    Status st = net::ReadEventStream(
        url, headers,
        [&](const std::string& event, const std::string& data) {
          if (stop->stopped()) return false;
          auto j = api::ParseJson(data);
          if (!j.ok() || !j->is_object()) return true;
          if (event == "node" && j->contains("name") && (*j)["name"].is_string()) {
            std::string name = (*j)["name"].get<std::string>();
            shared->SetNode(name, std::move(*j));
          } else if (event == "sample" && j->contains("node") && (*j)["node"].is_string()) {
            std::string name = (*j)["node"].get<std::string>();
            shared->SetSample(name, std::move(*j));
          } else {
            return true;
          }
          shared->SetNotice("");
          Wake(wake_fd);
          return true;
        },
        /*connect_timeout_ms=*/3000, /*idle_timeout_ms=*/15000);
    if (stop->stopped()) return;
    shared->SetNotice("live stream lost: " + (st.ok() ? std::string("ended") : st.message()) + "; reconnecting");
    Wake(wake_fd);
    if (stop->Sleep(1000)) return;
  }
}

void PollJobs(const ApiClient& client, Shared* shared, Stopper* stop, int wake_fd) {
  while (!stop->stopped()) {
    std::vector<Job> jobs;
    bool ok = true;
    for (const char* state : {"running", "starting", "pending"}) {
      auto list = client.Get(std::string("/api/v1/jobs?mine=true&limit=200&state=") + state);
      if (!list.ok()) {
        ok = false;
        break;
      }
      for (auto& j : JobsFromList(*list)) jobs.push_back(std::move(j));
    }
    if (ok) {
      shared->SetJobs(std::move(jobs));
      Wake(wake_fd);
    }
    if (stop->Sleep(3000)) return;
  }
}

// Raw keys, no echo, the alternate screen and no cursor, for the scope; given back on
// destruction.
class RawTerminal {
 public:
  bool Enter() {
    if (::tcgetattr(STDIN_FILENO, &saved_) != 0) return false;
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO | ISIG | IEXTEN);
    raw.c_iflag &= ~static_cast<tcflag_t>(IXON | ICRNL);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    if (::tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) != 0) return false;
    entered_ = true;
    WriteAll("\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J");
    return true;
  }
  ~RawTerminal() {
    if (!entered_) return;
    WriteAll("\x1b[0m\x1b[?25h\x1b[?1049l");
    ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_);
  }

 private:
  termios saved_{};
  bool entered_ = false;
};

}  // namespace

int RunScreen(const ApiClient& client, const std::string& stream_url, const std::string& user,
              const TopOptions& top) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    std::cerr << "rota: top: cannot create a pipe\n";
    return 1;
  }
  g_wake_fd = pipe_fds[1];
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_winch {}, old_term {}, old_hup {}, old_int {};
  sigaction(SIGWINCH, &sa, &old_winch);
  sigaction(SIGTERM, &sa, &old_term);
  sigaction(SIGHUP, &sa, &old_hup);
  sigaction(SIGINT, &sa, &old_int);

  Shared shared;
  Stopper stop;
  // Each reader says when it has ended: leaving never waits on one for long (below).
  std::atomic<int> readers_running{user.empty() ? 1 : 2};
  std::thread stream([&] {
    ReadStream(stream_url, client.Headers(), &shared, &stop, pipe_fds[1]);
    readers_running.fetch_sub(1);
  });
  std::thread jobs;
  if (!user.empty()) {
    jobs = std::thread([&] {
      PollJobs(client, &shared, &stop, pipe_fds[1]);
      readers_running.fetch_sub(1);
    });
  }

  int code = 0;
  {
    RawTerminal term;
    if (!term.Enter()) {
      std::cerr << "rota: top: cannot set up the terminal (try -o json or a pipe)\n";
      code = 1;
    } else {
      Model model;
      model.server = client.base_url();
      model.user = user;
      View view;
      int rows = 24, cols = 80;
      TerminalSize(&rows, &cols);
      const int64_t refresh_ms = std::max<int64_t>(50, static_cast<int64_t>(top.refresh_s * 1000));
      int64_t last_draw = -refresh_ms;
      bool redraw_now = true;
      int frames = 0;
      while (!view.quit && g_stop_signal == 0) {
        const int64_t now = RealClock::Get().MonotonicMs();
        // New data is drawn once per refresh period (the clock too); keys and resizes at once.
        if (redraw_now || now - last_draw >= refresh_ms) {
          shared.Fill(&model);
          model.now_ms = RealClock::Get().NowMs();
          std::vector<std::string> lines = Render(model, view, rows, cols);
          std::string frame = "\x1b[H";
          for (size_t i = 0; i < lines.size(); ++i) {
            frame += lines[i] + "\x1b[K";
            if (i + 1 < lines.size()) frame += "\r\n";
          }
          WriteAll(frame);
          last_draw = now;
          redraw_now = false;
          if (top.frames > 0 && ++frames >= top.frames) break;
        }
        pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {pipe_fds[0], POLLIN, 0}};
        const int64_t wait = std::max<int64_t>(1, refresh_ms - (RealClock::Get().MonotonicMs() - last_draw));
        int n = ::poll(fds, 2, static_cast<int>(wait));
        if (n < 0 && errno != EINTR) break;
        if (n > 0 && (fds[1].revents & POLLIN)) {
          char buf[256];
          while (::read(pipe_fds[0], buf, sizeof buf) > 0) {
          }
        }
        if (g_resized) {
          g_resized = 0;
          TerminalSize(&rows, &cols);
          WriteAll("\x1b[2J");
          redraw_now = true;
        }
        if (n > 0 && (fds[0].revents & (POLLIN | POLLHUP))) {
          char buf[256];
          ssize_t got = ::read(STDIN_FILENO, buf, sizeof buf);
          if (got == 0 && (fds[0].revents & POLLHUP)) break;  // the terminal went away
          if (got > 0) {
            for (const Key& k : ParseKeys(std::string_view(buf, static_cast<size_t>(got)))) {
              ApplyKey(view, k, model, rows);
            }
            redraw_now = true;
          }
        }
      }
    }
  }  // the terminal is given back before waiting for the readers

  stop.Stop();
  // A reader ends at its next event or answer; a quiet stream could hold one for its idle
  // timeout, a slow server a job list for its request timeout (10 s each), so the process
  // leaves without them after half a second rather than keep the user waiting.
  for (int i = 0; i < 50 && readers_running.load() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (readers_running.load() > 0) {
    std::cout.flush();
    std::cerr.flush();
    ::_exit(code);
  }
  if (jobs.joinable()) jobs.join();
  stream.join();
  sigaction(SIGWINCH, &old_winch, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  sigaction(SIGINT, &old_int, nullptr);
  g_wake_fd = -1;
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  return code;
}

}  // namespace rota::cli::top
