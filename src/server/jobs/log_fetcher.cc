#include "server/jobs/log_fetcher.h"

#include <utility>
#include <vector>

#include "common/log.h"

namespace rota::server {

LogFetcher::LogFetcher(TaskTransport* transport, std::chrono::milliseconds timeout,
                       size_t max_pending)
    : transport_(transport), timeout_(timeout), max_pending_(max_pending) {
  timer_ = std::thread([this] { TimerLoop(); });
}

LogFetcher::~LogFetcher() {
  std::map<uint64_t, Pending> left;
  {
    MutexLock lock(&mu_);
    stop_ = true;
    left.swap(pending_);
  }
  cv_.NotifyAll();
  timer_.join();
  for (auto& [req, p] : left) p.done(Status::Unavailable("server stopping"));
}

void LogFetcher::Fetch(const std::string& node, api::TaskLogsMsg request, Done done) {
  {
    MutexLock lock(&mu_);
    if (stop_) {
      lock.Unlock();
      return done(Status::Unavailable("server stopping"));
    }
    if (pending_.size() >= max_pending_) {
      lock.Unlock();
      return done(Status::ResourceExhausted(
          std::to_string(max_pending_) + " log reads are waiting for their nodes; retry later"));
    }
    request.req = next_req_++;
    pending_.emplace(request.req, Pending{node, std::move(done), SteadyNow() + timeout_});
  }
  cv_.NotifyAll();  // a new, possibly nearest, deadline
  const uint64_t req = request.req;
  Status st = transport_->SendTask(node, request);
  if (st.ok()) return;
  MutexLock lock(&mu_);
  auto it = pending_.find(req);
  if (it == pending_.end()) return;  // answered (or stopped) meanwhile
  Done failed = std::move(it->second.done);
  pending_.erase(it);
  lock.Unlock();
  failed(st.WithContext("logs of task " + request.id));
}

void LogFetcher::OnAnswer(const std::string& node, api::TaskLogMsg answer) {
  Done done;
  {
    MutexLock lock(&mu_);
    auto it = pending_.find(answer.req);
    if (it == pending_.end()) return;  // late (timed out) or unknown
    if (it->second.node != node) {
      ++foreign_;
      ROTA_LOG(WARNING) << "node " << node << " answered log read " << answer.req
                        << ", which was sent to node " << it->second.node << ": dropped";
      return;
    }
    done = std::move(it->second.done);
    pending_.erase(it);
  }
  if (!answer.error.empty()) return done(Status::NotFound(answer.error));
  done(std::move(answer));
}

size_t LogFetcher::pending() const {
  MutexLock lock(&mu_);
  return pending_.size();
}

uint64_t LogFetcher::foreign_answers() const {
  MutexLock lock(&mu_);
  return foreign_;
}

void LogFetcher::TimerLoop() {
  MutexLock lock(&mu_);
  while (!stop_) {
    SteadyTime next = SteadyTime::max();
    std::vector<std::pair<std::string, Done>> expired;
    const SteadyTime now = SteadyNow();
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.deadline <= now) {
        expired.emplace_back(it->second.node, std::move(it->second.done));
        it = pending_.erase(it);
      } else {
        next = std::min(next, it->second.deadline);
        ++it;
      }
    }
    if (!expired.empty()) {
      lock.Unlock();
      for (auto& [node, done] : expired) {
        done(Status::Unavailable("node " + node + " did not send the log in time"));
      }
      lock.Lock();
      continue;
    }
    if (next == SteadyTime::max()) {
      cv_.Wait(&mu_);
    } else {
      cv_.WaitFor(&mu_, next - now);
    }
  }
}

}  // namespace rota::server
