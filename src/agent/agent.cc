#include "agent/agent.h"

#include <random>

#include "agent/leader_epoch.h"
#include "api/protocol.h"
#include "common/file_util.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/strings.h"
#include "net/ws_client.h"

namespace rota::agent {

Result<std::string> AgentConnectUrl(const std::string& server_url) {
  std::string url = server_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"http://", "ws://"},
                                 {"https://", "wss://"}, {"ws://", "ws://"}, {"wss://", "wss://"}}) {
    if (url.rfind(from, 0) == 0) {
      if (url.size() == from.size()) break;
      return to + url.substr(from.size()) + "/api/v1/agent/connect";
    }
  }
  return Status::InvalidArgument("server URL '" + server_url +
                                 "' must look like http://HOST:PORT (or https://, ws://, wss://)");
}

Result<std::vector<std::string>> AgentConnectUrls(const std::string& server_urls) {
  std::vector<std::string> out;
  for (const auto& part : Split(server_urls, ',')) {
    std::string one(Trim(part));
    if (one.empty()) continue;
    ASSIGN_OR_RETURN(std::string url, AgentConnectUrl(one));
    out.push_back(std::move(url));
  }
  if (out.empty()) return Status::InvalidArgument("no server URL given");
  return out;
}

Agent::Agent(AgentOptions options, api::NodeInfo info, Collector* collector, Clock* clock)
    : options_(std::move(options)),
      info_(std::move(info)),
      collector_(collector),
      clock_(clock),
      buffer_(static_cast<size_t>(std::max<int64_t>(1, options_.buffer_ms / options_.interval_ms))),
      loop_(std::make_unique<net::WsClientLoop>(1)),
      executor_(kDefaultUtmpPath, options_.enforcement_min_uid) {
  auto urls = AgentConnectUrls(options_.server_url);
  if (urls.ok()) ws_urls_ = std::move(*urls);
  if (!options_.credential_file.empty()) {
    if (auto text = ReadFile(options_.credential_file); text.ok()) {
      MutexLock lock(&mu_);
      credential_ = std::string(Trim(*text));
    }
  }
  if (!options_.epoch_file.empty()) {
    const uint64_t kept = LoadLeaderEpoch(options_.epoch_file);
    MutexLock lock(&mu_);
    highest_epoch_ = kept;
  }
  if (!options_.task_state_dir.empty()) {
    tasks_ = std::make_unique<TaskManager>(
        options_.task_shim_argv, options_.task_state_dir, [this](std::string text) {
          MutexLock lock(&mu_);
          if (!client_ || !registered_) return false;
          return client_->Send(std::move(text));
        });
  }
  cmd_thread_ = std::thread([this] { CommandLoop(); });
}

Agent::~Agent() {
  {
    MutexLock lock(&cmd_mu_);
    cmd_stop_ = true;
  }
  cmd_cv_.NotifyAll();
  cmd_thread_.join();
  // The task manager goes before the connection it sends on. It is taken out
  // under mu_: the network thread reads tasks_ under mu_ until then.
  std::unique_ptr<TaskManager> tasks;
  {
    MutexLock lock(&mu_);
    tasks = std::move(tasks_);
    ++attempt_;  // callbacks of the last connection are ignored from now on
  }
  tasks.reset();
  std::unique_ptr<net::WsClient> client;
  {
    MutexLock lock(&mu_);
    client = std::move(client_);
  }
  client.reset();  // closes; no callback runs after this
  loop_.reset();  // joins the network thread
}

size_t Agent::buffered() const {
  MutexLock lock(&mu_);
  return buffer_.size();
}

uint64_t Agent::dropped() const {
  MutexLock lock(&mu_);
  return buffer_.dropped();
}

bool Agent::registered() const {
  MutexLock lock(&mu_);
  return registered_;
}

void Agent::Run(const std::atomic<bool>& stop) {
  int64_t next_sample = clock_->MonotonicMs();
  MutexLock lock(&mu_);
  while (!stop.load()) {
    int64_t now = clock_->MonotonicMs();
    loop_beat_ms_.store(now, std::memory_order_relaxed);
    if (now >= next_sample) {
      lock.Unlock();
      // The job tasks' cgroups: their CPU time splits the CPU energy.
      auto sample = collector_->Sample(tasks_ ? tasks_->RunningTaskCgroups() : std::vector<TaskCgroups>{});
      lock.Lock();
      if (sample.ok()) {
        buffer_.Push(std::move(*sample));
      } else {
        ROTA_LOG(WARNING) << "sample failed: " << sample.status().message();
      }
      next_sample += options_.interval_ms;
      if (next_sample < now) next_sample = now + options_.interval_ms;  // we fell behind
    }
    if (pending_power_) ApplyPowerLimits();
    if (!client_ && !connecting_ && now >= next_connect_ms_) Connect();
    if (registered_) SendPending();
    int64_t wake = std::min(next_sample, client_ ? next_sample : next_connect_ms_);
    int64_t wait = std::clamp<int64_t>(wake - clock_->MonotonicMs(), 1, 100);
    cv_.WaitFor(&mu_, std::chrono::milliseconds(wait));
  }
  if (power_ != nullptr) {
    lock.Unlock();
    for (const auto& r : power_->RestoreAll().gpus) {
      ROTA_LOG(INFO) << "power limit at stop: " << DescribePowerReport(r);
    }
  }
}

void Agent::ApplyPowerLimits() {
  api::PowerLimitsMsg msg = std::move(*pending_power_);
  const uint64_t attempt = pending_power_attempt_;
  pending_power_.reset();
  api::PowerReportMsg report;
  if (power_ == nullptr) {
    for (const auto& g : msg.gpus) {
      api::PowerGpuReport r;
      r.index = g.index;
      r.uuid = g.uuid;
      r.requested_mw = g.limit_mw;
      r.outcome = api::PowerOutcome::kError;
      r.detail = "this agent does not apply power limits";
      report.gpus.push_back(std::move(r));
    }
  } else {
    mu_.Unlock();
    report = power_->Apply(msg);
    mu_.Lock();
  }
  for (const auto& r : report.gpus) {
    if (r.outcome != api::PowerOutcome::kUnchanged) ROTA_LOG(INFO) << "power limit: " << DescribePowerReport(r);
  }
  SendOn(attempt, api::Encode(report));
}

void Agent::Connect() {
  if (ws_urls_.empty()) {
    ROTA_LOG(ERROR) << "invalid server URL " << options_.server_url;
    ScheduleReconnect(false);
    return;
  }
  uint64_t attempt = ++attempt_;
  connecting_ = true;
  registered_ = false;
  net::WsClientOptions ws;
  ws.idle_timeout = std::chrono::milliseconds(options_.server_timeout_ms);
  ws.tls = options_.tls;
  client_ = loop_->NewClient(ws);
  client_->SetOnMessage([this, attempt](const std::string& text) { OnMessage(attempt, text); });
  client_->SetOnClosed([this, attempt](const Status& st) { OnClosed(attempt, st); });
  // The node's own credential once enrolled; the join token to enrol.
  presenting_credential_ = !credential_.empty();
  const std::string& bearer = presenting_credential_ ? credential_ : options_.token;
  client_->Connect(ws_urls_[reconnect_.server_index % ws_urls_.size()], {{"Authorization", "Bearer " + bearer}},
                   [this, attempt](const Status& st) { OnConnected(attempt, st); });
}

void Agent::OnConnected(uint64_t attempt, const Status& st) {
  MutexLock lock(&mu_);
  if (attempt != attempt_) return;
  connecting_ = false;
  if (!st.ok()) {
    if (st.message() != last_error_) {
      ROTA_LOG(WARNING) << "cannot connect to " << ws_urls_[reconnect_.server_index % ws_urls_.size()] << ": "
                        << st.message();
      last_error_ = st.message();
    }
    if (presenting_credential_ && st.code() == StatusCode::kUnauthenticated && !options_.token.empty()) {
      // Revoked (or the server's store was replaced): enrol again with the join token.
      ROTA_LOG(WARNING) << "the server refused this node's credential; enrolling again with the join token";
      credential_.clear();
    }
    client_.reset();  // from inside its own callback: allowed, and the last one
    ScheduleReconnect(IsFollowerRefusal(st));
    cv_.NotifyAll();
    return;
  }
  if (client_) client_->Send(api::Encode(api::RegisterMsg{info_, !options_.credential_file.empty()}));
}

void Agent::OnMessage(uint64_t attempt, const std::string& text) {
  auto msg = api::DecodeServerMessage(text);
  MutexLock lock(&mu_);
  if (attempt != attempt_ || attempt == stale_attempt_) return;
  if (!msg.ok()) {
    ROTA_LOG(WARNING) << "bad message from server: " << msg.status().message();
    // A command we cannot run still gets an answer, so the server need not time out.
    if (auto id = api::CommandIdOf(text)) {
      api::CommandResultMsg r;
      r.id = *id;
      r.error = "agent refused the command: " + msg.status().message();
      SendOn(attempt, api::Encode(r));
    }
    return;
  }
  if (auto* reg = std::get_if<api::RegisteredMsg>(&*msg)) {
    const EpochVerdict verdict = JudgeLeaderEpoch(highest_epoch_, reg->epoch);
    if (!verdict.accept) {
      // A leader that has been replaced: nothing it sends is run; the next server is tried.
      ROTA_LOG(ERROR) << ws_urls_[reconnect_.server_index % ws_urls_.size()] << " registered this node as leader epoch "
                      << reg->epoch << ", older than epoch " << highest_epoch_
                      << " this node registered under before: refused (a replaced leader); trying the next server";
      stale_attempt_ = attempt;
      if (client_) client_->Close();
      return;
    }
    if (verdict.highest != highest_epoch_) {
      highest_epoch_ = verdict.highest;
      if (!options_.epoch_file.empty()) StoreLeaderEpoch(options_.epoch_file, highest_epoch_);
    }
    if (!reg->credential.empty() && !options_.credential_file.empty()) {
      // Enrolled: keep the credential (owner-only) and present it from now on.
      if (Status st = WriteFileAtomic(options_.credential_file, reg->credential + "\n", 0600); !st.ok()) {
        ROTA_LOG(ERROR) << "cannot keep this node's credential in " << options_.credential_file << ": "
                        << st.message() << " (the server must revoke it before this node can enrol again)";
      } else {
        ROTA_LOG(INFO) << "enrolled: this node's credential is kept in " << options_.credential_file;
      }
      credential_ = reg->credential;
    }
    registered_ = true;
    AfterRegistration(&reconnect_);
    last_error_.clear();
    sent_up_to_ = buffer_.first_seq() - 1;  // resend everything not yet acked
    ROTA_LOG(INFO) << "registered with " << options_.server_url << " as " << info_.name << "; "
                   << buffer_.size() << " buffered samples to send";
    if (tasks_) tasks_->OnRegistered();
  } else if (auto* ack = std::get_if<api::AckMsg>(&*msg)) {
    buffer_.Ack(ack->seq);
  } else if (auto* err = std::get_if<api::ErrorMsg>(&*msg)) {
    ROTA_LOG(WARNING) << "server: " << err->message;
  } else if (auto* cmd = std::get_if<api::CommandMsg>(&*msg)) {
    QueueCommand(attempt, std::move(*cmd));
  } else if (auto* power = std::get_if<api::PowerLimitsMsg>(&*msg)) {
    pending_power_ = std::move(*power);  // only the latest counts
    pending_power_attempt_ = attempt;
  } else if (!tasks_) {
    ROTA_LOG(WARNING) << "server sent a job task message; this agent runs no job tasks";
  } else if (auto* start = std::get_if<api::TaskStartMsg>(&*msg)) {
    tasks_->OnStart(std::move(*start));
  } else if (auto* sig = std::get_if<api::TaskSignalMsg>(&*msg)) {
    tasks_->OnSignal(std::move(*sig));
  } else if (auto* logs = std::get_if<api::TaskLogsMsg>(&*msg)) {
    tasks_->OnLogs(std::move(*logs));
  } else if (auto* resize = std::get_if<api::TaskResizeMsg>(&*msg)) {
    tasks_->OnResize(std::move(*resize));
  }
  cv_.NotifyAll();
}

void Agent::SendOn(uint64_t attempt, std::string text) {
  if (attempt == attempt_ && client_) client_->Send(std::move(text));
}

void Agent::QueueCommand(uint64_t attempt, api::CommandMsg cmd) {
  MutexLock lock(&cmd_mu_);
  if (commands_.size() >= options_.max_queued_commands) {
    lock.Unlock();
    api::CommandResultMsg r;
    r.id = cmd.id;
    r.error = "agent busy: " + std::to_string(options_.max_queued_commands) + " commands queued";
    ROTA_LOG(WARNING) << "command " << cmd.id << " refused: " << r.error;
    SendOn(attempt, api::Encode(r));
    return;
  }
  commands_.emplace_back(attempt, std::move(cmd));
  cmd_cv_.NotifyOne();
}

void Agent::CommandLoop() {
  MutexLock lock(&cmd_mu_);
  while (true) {
    cmd_cv_.Wait(&cmd_mu_, [this]() ROTA_REQUIRES(cmd_mu_) { return cmd_stop_ || !commands_.empty(); });
    if (cmd_stop_) return;
    auto [attempt, cmd] = std::move(commands_.front());
    commands_.pop_front();
    lock.Unlock();
    ROTA_LOG(INFO) << "command " << cmd.id << ": " << api::CommandActionName(cmd.action) << " uid "
                   << cmd.uid << ", " << cmd.targets.size() << " target(s)";
    std::string reply = api::Encode(executor_.Execute(cmd));
    {
      MutexLock mu_lock(&mu_);
      SendOn(attempt, std::move(reply));
    }
    lock.Lock();
  }
}

void Agent::OnClosed(uint64_t attempt, const Status& reason) {
  MutexLock lock(&mu_);
  if (attempt != attempt_) return;
  if (registered_) {
    ROTA_LOG(WARNING) << "connection to server lost: " << reason.message() << "; buffering samples";
  } else if (reason.message() != last_error_) {
    ROTA_LOG(WARNING) << "connection to server closed: " << reason.message();
    last_error_ = reason.message();
  }
  registered_ = false;
  connecting_ = false;
  client_.reset();
  if (tasks_) tasks_->OnDisconnected();
  // A replaced leader answered: the cluster is up, the next server is tried at once.
  ScheduleReconnect(attempt == stale_attempt_);
  cv_.NotifyAll();
}

void Agent::ScheduleReconnect(bool answered) {
  ReconnectPolicy p;
  p.min_backoff_ms = options_.min_backoff_ms;
  p.max_backoff_ms = options_.max_backoff_ms;
  const ReconnectDelay d = AfterFailure(&reconnect_, ws_urls_.empty() ? 1 : ws_urls_.size(), answered, p);
  int64_t jitter = 0;
  if (d.backoff) {
    static thread_local std::mt19937 rng(std::random_device{}());
    jitter = std::uniform_int_distribution<int64_t>(0, d.delay_ms / 4)(rng);
  }
  next_connect_ms_ = clock_->MonotonicMs() + d.delay_ms + jitter;
}

bool IsFollowerRefusal(const Status& st) {
  return st.code() == StatusCode::kUnavailable && st.message().find(": HTTP 503") != std::string::npos &&
         st.message().find(api::kFollowerRefusal) != std::string::npos;
}

void Agent::SendPending() {
  while (client_ && sent_up_to_ + 1 < buffer_.next_seq()) {
    uint64_t first = 0;
    auto batch = buffer_.From(sent_up_to_ + 1, options_.max_samples_per_message, &first);
    if (batch.empty()) break;
    size_t n = batch.size();
    if (!client_->Send(api::Encode(api::SamplesMsg{first, std::move(batch)}))) break;
    sent_up_to_ = first + n - 1;
  }
}

}  // namespace rota::agent
