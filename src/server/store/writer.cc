#include "server/store/writer.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <utility>

#include "common/clock.h"
#include "common/log.h"
#include "common/mutex.h"
#include "server/store/backup.h"
#include "server/store/gpu_pack.h"
#include "server/store/history.h"
#include "server/store/lease.h"
#include "server/store/sqlite_backend.h"

namespace rota::store {

Writer::Writer(Db db, std::optional<Db> checkpoint_db, const StoreOptions& options, Clock& clock)
    : opt_(options), clock_(clock), db_(std::move(db)), ckpt_db_(std::move(checkpoint_db)) {}

Result<std::unique_ptr<Writer>> Writer::Start(Db db, const StoreOptions& options, Clock& clock) {
  std::optional<Db> ckpt;
  if (db.dialect() == Dialect::kSqlite) {  // WAL checkpoints are SQLite's
    ASSIGN_OR_RETURN(ckpt, Db::Open(db.path(), SQLITE_OPEN_READWRITE));
    RETURN_IF_ERROR(ckpt->Exec("PRAGMA busy_timeout = " + std::to_string(options.busy_timeout_ms)));
    RETURN_IF_ERROR(
        ckpt->Exec(std::string("PRAGMA synchronous = ") + (options.sync_full ? "FULL" : "NORMAL")));
    // A read opens the WAL on this connection: without it a checkpoint copies nothing.
    RETURN_IF_ERROR(ckpt->QueryInt("SELECT count(*) FROM sqlite_schema").status());
  }
  std::unique_ptr<Writer> w(new Writer(std::move(db), std::move(ckpt), options, clock));
  RETURN_IF_ERROR(w->Prepare());
  RETURN_IF_ERROR(w->LoadDirtyMinutes());
  if (w->ckpt_db_) {
    // Replaces SQLite's automatic checkpoint (itself a WAL hook) on the write connection.
    sqlite3_wal_hook(w->db_.raw(), &Writer::OnWalCommit, w.get());
    w->ckpt_thread_ = std::thread([p = w.get()] { p->CheckpointLoop(); });
  }
  w->thread_ = std::thread([p = w.get()] { p->Loop(); });
  return w;
}

int Writer::OnWalCommit(void* self, sqlite3*, const char*, int wal_pages) {
  auto* w = static_cast<Writer*>(self);
  if (wal_pages >= w->opt_.wal_autocheckpoint_pages) {
    {
      MutexLock lk(&w->ckpt_mu_);
      w->ckpt_wanted_ = true;
    }
    w->ckpt_cv_.NotifyOne();
  }
  return SQLITE_OK;
}

void Writer::CheckpointLoop() {
  while (true) {
    {
      MutexLock lk(&ckpt_mu_);
      ckpt_cv_.Wait(&ckpt_mu_, [&]() ROTA_REQUIRES(ckpt_mu_) { return ckpt_stop_ || ckpt_wanted_; });
      if (ckpt_stop_) return;
      ckpt_wanted_ = false;
    }
    // PASSIVE: copies what no reader still needs, never waits for or blocks the
    // writer; the writer starts the WAL again from its beginning once it is all copied.
    int wal_frames = 0, copied_frames = 0;
    int rc = sqlite3_wal_checkpoint_v2(ckpt_db_->raw(), nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                       &wal_frames, &copied_frames);
    // A writer that never pauses (thousands of agents) appends while each passive
    // checkpoint copies, so the copy never catches up with the WAL's end at a
    // moment the writer could start it again, and the WAL grew to gigabytes:
    // every frame written to new file space, every checkpoint reading it back.
    // Past twice the threshold, RESTART copies the rest with new write
    // transactions held back (the passive pass above copied the bulk, so this
    // is short) and makes the next one start the WAL from its beginning.
    // A backup (rota admin backup, backup.h) holds one snapshot for the whole copy: a
    // RESTART would wait for it, holding the writes back; the WAL grows meanwhile instead.
    bool restarted = false;
    // The backup exclusion is held through the checkpoint, so that no backup's snapshot
    // begins under it; while a backup copies, it is not had.
    const bool far_behind = rc == SQLITE_OK && wal_frames >= 2 * opt_.wal_autocheckpoint_pages;
    BackupExclusion no_backup = far_behind ? BackupExclusion::TryTake(ckpt_db_->path())
                                           : BackupExclusion::None();
    if (no_backup.held()) {
      // Far behind (the writer kept the lock through earlier tries): the writer
      // pauses before its next transaction so that this one gets through.
      if (wal_frames >= 8 * opt_.wal_autocheckpoint_pages) {
        MutexLock lk(&ckpt_mu_);
        restart_waiting_ = true;
      }
      rc = sqlite3_wal_checkpoint_v2(ckpt_db_->raw(), nullptr, SQLITE_CHECKPOINT_RESTART,
                                     &wal_frames, &copied_frames);
      {
        MutexLock lk(&ckpt_mu_);
        restart_waiting_ = false;
      }
      ckpt_cv_.NotifyAll();
      if (rc == SQLITE_BUSY) rc = SQLITE_OK;  // a reader held on: passive again next time
      restarted = rc == SQLITE_OK;
    }
    MutexLock lk(&ckpt_mu_);
    if (restarted) ++wal_restarts_;
    if (rc == SQLITE_OK) {
      if (copied_frames > 0) ++checkpoints_;  // counted when it copied something
    } else {
      ++checkpoint_failures_;
      ROTA_LOG(WARNING) << "store: WAL checkpoint failed: "
                        << SqliteError(ckpt_db_->raw(), rc, "checkpoint").message();
    }
  }
}

Status Writer::Prepare() {
  ASSIGN_OR_RETURN(ins_node_, db_.Prepare("INSERT INTO node_samples (node, t_ms, cpu_percent, "
                                          "mem_used, mem_total, load1) "
                                          "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING"));
  ASSIGN_OR_RETURN(ins_gpus_, db_.Prepare("INSERT INTO node_gpu_samples (node, t_ms, n_gpus, "
                                          "gpus, cpu_percent, mem_used, mem_total, load1) "
                                          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
                                          "ON CONFLICT DO NOTHING"));
  ASSIGN_OR_RETURN(set_minutes_from_,
                   db_.Prepare("UPDATE store_state SET value = ?1 WHERE key = 'minutes_from_ms'"));
  ASSIGN_OR_RETURN(MinuteAggregates minutes, MinuteAggregates::Prepare(db_));
  minutes_.emplace(std::move(minutes));
  ASSIGN_OR_RETURN(node_id_, db_.Prepare("SELECT id FROM nodes WHERE name = ?1"));
  ASSIGN_OR_RETURN(sp_begin_, db_.Prepare("SAVEPOINT job"));
  ASSIGN_OR_RETURN(sp_release_, db_.Prepare("RELEASE job"));
  ASSIGN_OR_RETURN(sp_rollback_, db_.Prepare("ROLLBACK TO job"));

  struct Def {
    const char* table;
    bool aggregate;
  };
  const Def defs[] = {{"node_gpu_samples", false},
                      {"gpu_samples", false},  // rows written before schema version 11
                      {"node_samples", false},
                      {"gpu_minutes", true},
                      {"node_minutes", true}};
  for (const Def& d : defs) {
    const std::string t = d.table;
    const std::string tcol = d.aggregate ? "minute_ms" : "t_ms";
    RetentionTable rt{d.aggregate, {}, {}, {}, {}};
    ASSIGN_OR_RETURN(rt.next_key, db_.Prepare("SELECT node FROM " + t +
                                              " WHERE node > ?1 ORDER BY node LIMIT 1"));
    ASSIGN_OR_RETURN(rt.boundary,
                     db_.Prepare("SELECT " + tcol + " FROM " + t + " WHERE node = ?1 AND " + tcol +
                                 " < ?3 ORDER BY " + tcol + " LIMIT 1 OFFSET ?4"));
    ASSIGN_OR_RETURN(rt.delete_upto,
                     db_.Prepare("DELETE FROM " + t + " WHERE node = ?1 AND " + tcol + " <= ?3"));
    ASSIGN_OR_RETURN(rt.delete_below,
                     db_.Prepare("DELETE FROM " + t + " WHERE node = ?1 AND " + tcol + " < ?3"));
    ret_tables_.push_back(std::move(rt));
  }
  return Status::Ok();
}

Writer::~Writer() {
  {
    MutexLock lk(&mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
  {
    MutexLock lk(&ckpt_mu_);
    ckpt_stop_ = true;
  }
  ckpt_cv_.NotifyAll();
  if (ckpt_thread_.joinable()) ckpt_thread_.join();
  // The write connection's hook points at this object: detach it before db_ closes
  // (closing the last connection checkpoints the whole WAL itself).
  if (ckpt_db_) sqlite3_wal_hook(db_.raw(), nullptr, nullptr);
}

void Writer::Append(const std::string& node, api::SampleBatch samples, Done done) {
  if (!samples) samples = std::make_shared<const std::vector<api::NodeSample>>();
  const size_t n = samples->size();
  Status refused;
  {
    MutexLock lk(&mu_);
    if (stop_) {
      refused = Status::Unavailable("store is closing");
    } else if (queued_samples_ + n > opt_.max_queued_samples) {
      ++stats_.rejected_appends;
      refused = Status::ResourceExhausted(
          "store write queue is full: " + std::to_string(queued_samples_) +
          " samples waiting, limit " + std::to_string(opt_.max_queued_samples) + "; " +
          std::to_string(n) + " samples from node " + node + " not stored");
    } else {
      queue_.push_back(Job{Kind::kAppend, node, std::move(samples), nullptr, 0, std::move(done)});
      queued_samples_ += n;
    }
  }
  if (!refused.ok()) {
    if (done) done(refused);
    return;
  }
  cv_.NotifyOne();
}

Status Writer::Enqueue(Job job) {
  {
    MutexLock lk(&mu_);
    if (stop_) return Status::Unavailable("store is closing");
    queue_.push_back(std::move(job));
  }
  cv_.NotifyOne();
  return Status::Ok();
}

Status Writer::WaitFor(Job job) {
  if (std::this_thread::get_id() == thread_.get_id()) {
    return Status::Internal(
        "store: a blocking call was made from a store callback "
        "(writer thread); it would deadlock");
  }
  auto promise = std::make_shared<std::promise<Status>>();
  std::future<Status> result = promise->get_future();
  job.done = [promise](Status st) { promise->set_value(std::move(st)); };
  RETURN_IF_ERROR(Enqueue(std::move(job)));
  return result.get();
}

Status Writer::Run(Task task) {
  Job job;
  job.kind = Kind::kTask;
  job.task = std::move(task);
  return WaitFor(std::move(job));
}

void Writer::RunAsync(Task task, Done done) {
  Job job;
  job.kind = Kind::kTask;
  job.task = std::move(task);
  job.done = done;
  Status st = Enqueue(std::move(job));
  if (!st.ok() && done) done(st);
}

Status Writer::AggregateMinutes() {
  Job job;
  job.kind = Kind::kAggregateAll;
  return WaitFor(std::move(job));
}

Status Writer::RunRetention(int64_t now_ms) {
  Job job;
  job.kind = Kind::kRetention;
  job.now_ms = now_ms;
  return WaitFor(std::move(job));
}

void Writer::FillStats(StoreStats* out) const {
  {
    MutexLock lk(&mu_);
    *out = stats_;
    out->queued_samples = queued_samples_;
  }
  MutexLock lk(&ckpt_mu_);
  out->checkpoints = checkpoints_;
  out->checkpoint_failures = checkpoint_failures_;
  out->wal_restarts = wal_restarts_;
}

void Writer::Loop() {
  MutexLock lk(&mu_);
  while (true) {
    auto ready = [&]() ROTA_REQUIRES(mu_) {
      return stop_ || !queue_.empty() || !retention_.empty();
    };
    if (dirty_.empty()) {
      cv_.Wait(&mu_, ready);
    } else {  // minutes close with time too
      cv_.WaitUntil(&mu_, SteadyNow() + std::chrono::seconds(1), ready);
    }
    const bool have_jobs = !queue_.empty();
    if (!have_jobs && stop_) break;
    lk.Unlock();
    if (have_jobs || AggregationDue(clock_.NowMs())) WriteBatch();
    // One retention transaction between write batches, so writes wait at most
    // one bounded delete.
    if (!retention_.empty()) {
      bool stopping;
      {
        MutexLock g(&mu_);
        stopping = stop_ && queue_.empty();
      }
      if (!stopping) RetentionStep();
    }
    lk.Lock();
  }
  lk.Unlock();
  // Minutes still dirty are left to the next open (the mark): computing every
  // open minute of a large cluster here would hold up the server's stop.
  while (!retention_.empty()) {
    if (retention_.front().done) retention_.front().done(Status::Unavailable("store is closing"));
    retention_.pop_front();
  }
}

Status Writer::InSavepoint(const std::function<Status()>& fn) {
  if (db_.dialect() == Dialect::kPostgres) {
    // One round trip in place of two per write: the savepoint of the write before
    // is released together with this one's start, the last by COMMIT (which
    // releases every savepoint); a failed write's savepoint is rolled back to and
    // released in one as well.
    // The transaction's BEGIN goes with its first savepoint, too (BeginIfNeeded).
    const char* sql = !tx_begun_        ? "BEGIN; SAVEPOINT job"
                      : savepoint_open_ ? "RELEASE job; SAVEPOINT job"
                                        : "SAVEPOINT job";
    Status begun = db_.Exec(sql);
    tx_begun_ = tx_begun_ || db_.InTransaction();
    RETURN_IF_ERROR(begun);
    savepoint_open_ = true;
    Status st = fn();
    if (st.ok()) return st;
    (void)db_.Exec("ROLLBACK TO job; RELEASE job");
    savepoint_open_ = false;
    return st;
  }
  sp_begin_.Reset();
  RETURN_IF_ERROR(sp_begin_.Run());
  Status st = fn();
  if (st.ok()) {
    sp_release_.Reset();
    st = sp_release_.Run();
    if (st.ok()) return st;
  }
  sp_rollback_.Reset();
  (void)sp_rollback_.Run();
  sp_release_.Reset();
  (void)sp_release_.Run();
  return st;
}

Status Writer::BeginIfNeeded() {
  if (tx_begun_) return Status::Ok();
  Status st = db_.Begin();
  tx_begun_ = db_.InTransaction();
  return st;
}

Result<int64_t> Writer::NodeId(const std::string& name) {
  auto it = node_ids_.find(name);
  if (it != node_ids_.end()) return it->second;
  node_id_.Reset();
  node_id_.Bind(1, name);
  ASSIGN_OR_RETURN(bool row, node_id_.Step());
  if (!row) return Status::NotFound("node " + name + " is not registered; samples not stored");
  int64_t id = node_id_.Int(0);
  node_id_.Reset();
  node_ids_.emplace(name, id);
  return id;
}

Status Writer::WriteAppend(const Job& job, Counters* c) {
  ASSIGN_OR_RETURN(int64_t node, NodeId(job.node));
  // Samples older than raw retention may already have been deleted together
  // with their contribution counted in the aggregates: storing them again would
  // count them twice, and they would be deleted at the next retention anyway.
  const int64_t cutoff = clock_.NowMs() - opt_.raw_retention_ms;
  for (const api::NodeSample& s : *job.samples) {
    if (s.time_ms < cutoff) {
      ++c->late;
      continue;
    }
    const int64_t minute = BucketStart(s.time_ms, kMinuteMs);
    const api::HostSample& h = s.host;
    const int64_t mem_used = static_cast<int64_t>(
        h.mem_total_bytes >= h.mem_available_bytes ? h.mem_total_bytes - h.mem_available_bytes : 0);
    const auto mem_total = static_cast<int64_t>(h.mem_total_bytes);
    if (db_.dialect() == Dialect::kPostgres) {  // inserted many per statement (FlushRows)
      rows_.Add(node, &s, mem_used);
      c->queued += static_cast<int64_t>(s.gpus.size()) + 1;
      continue;
    }
    // One row per sample: node_gpu_samples with the host readings when it has
    // GPUs, node_samples when not (schema version 12).
    bool fresh = false;  // the sample was new: its minute changed
    if (s.gpus.empty()) {
      ins_node_.Reset();
      ins_node_.Bind(1, node).Bind(2, s.time_ms).Bind(3, h.cpu_percent).Bind(4, mem_used);
      ins_node_.Bind(5, mem_total).Bind(6, h.load1);
      RETURN_IF_ERROR(ins_node_.Run());
      fresh = db_.Changes() == 1;
    } else {
      PackGpus(s.gpus, &packed_);
      const auto n = static_cast<int64_t>(s.gpus.size());
      ins_gpus_.Reset();
      ins_gpus_.Bind(1, node).Bind(2, s.time_ms).Bind(3, n).BindBlob(4, packed_);
      ins_gpus_.Bind(5, h.cpu_percent).Bind(6, mem_used).Bind(7, mem_total).Bind(8, h.load1);
      RETURN_IF_ERROR(ins_gpus_.Run());
      fresh = db_.Changes() == 1;
      if (fresh) {
        c->gpu_rows += n;
        open_.AddGpus(node, s.time_ms, s.gpus);
      } else {
        c->duplicates += n;
      }
    }
    if (fresh) {
      ++c->node_rows;
      open_.AddHost(node, s.time_ms, h, mem_used);
      MarkDirty(node, minute);
    } else {
      ++c->duplicates;
    }
  }
  return Status::Ok();
}

Status Writer::FlushRows(Counters* c) {
  if (rows_.empty()) return Status::Ok();
  RETURN_IF_ERROR(BeginIfNeeded());
  Status st = rows_.Flush(
      db_,
      [&](const SampleRows::Row& r) {
        const api::NodeSample& s = *r.sample;
        if (!s.gpus.empty()) {
          c->gpu_rows += static_cast<int64_t>(s.gpus.size());
          open_.AddGpus(r.node, s.time_ms, s.gpus);
        }
        ++c->node_rows;
        open_.AddHost(r.node, s.time_ms, s.host, r.mem_used);
        MarkDirty(r.node, BucketStart(s.time_ms, kMinuteMs));
      },
      &c->duplicates);
  rows_keep_.clear();
  return st;
}

Status Writer::LoadDirtyMinutes() {
  ASSIGN_OR_RETURN(Stmt get,
                   db_.Prepare("SELECT value FROM store_state WHERE key = 'minutes_from_ms'"));
  ASSIGN_OR_RETURN(bool row, get.Step());
  int64_t from = BucketStart(clock_.NowMs(), kMinuteMs);
  if (row) {
    from = get.Int(0);
  } else {
    // A new store, or one whose aggregates were all written with each sample
    // (before store_state): nothing before now lacks its aggregates.
    ASSIGN_OR_RETURN(Stmt put, db_.Prepare("INSERT INTO store_state (key, value) "
                                           "VALUES ('minutes_from_ms', ?1)"));
    RETURN_IF_ERROR(put.Bind(1, from).Run());
  }
  get.Reset();
  ASSIGN_OR_RETURN(Stmt nodes, db_.Prepare("SELECT id FROM nodes"));
  ASSIGN_OR_RETURN(Stmt minutes,
                   db_.Prepare("SELECT DISTINCT t_ms / 60000 * 60000 FROM ("
                               "SELECT t_ms FROM node_samples WHERE node = ?1 AND t_ms >= ?2 "
                               "UNION ALL "
                               "SELECT t_ms FROM node_gpu_samples WHERE node = ?1 AND t_ms >= ?2) AS t"));
  while (true) {
    ASSIGN_OR_RETURN(bool more, nodes.Step());
    if (!more) break;
    const int64_t node = nodes.Int(0);
    minutes.Reset();
    minutes.Bind(1, node).Bind(2, std::max<int64_t>(from, 0));
    while (true) {
      ASSIGN_OR_RETURN(bool m, minutes.Step());
      if (!m) break;
      dirty_[minutes.Int(0)].insert(node);
    }
  }
  minutes_from_ = persisted_minutes_from_ = from;
  aggregated_before_.store(from, std::memory_order_release);
  // Minutes with rows from before this process are recomputed from them.
  int64_t floor = BucketStart(clock_.NowMs(), kMinuteMs) + kMinuteMs;
  if (!dirty_.empty()) floor = std::max(floor, dirty_.rbegin()->first + kMinuteMs);
  open_.RaiseFloor(floor);
  return Status::Ok();
}

void Writer::MarkDirty(int64_t node, int64_t minute_ms) { dirty_[minute_ms].insert(node); }

bool Writer::AggregationDue(int64_t now_ms) const {
  return !dirty_.empty() && dirty_.begin()->first + kMinuteMs + kAggregateDelayMs <= now_ms;
}

Status Writer::AggregateDue(bool all, int64_t now_ms) {
  // A minute whose raw rows retention has started deleting keeps what it has.
  const int64_t raw_from = now_ms - opt_.raw_retention_ms;
  const int64_t until = clock_.MonotonicMs() + kAggregateSliceMs;
  size_t done = 0;  // at least one node-minute per call makes progress
  auto more = [&] { return all || done == 0 || clock_.MonotonicMs() < until; };
  while (!dirty_.empty() && (all || AggregationDue(now_ms)) && more()) {
    auto it = dirty_.begin();
    const int64_t minute = it->first;
    // Its rows' totals are taken as it is written; a node's late first row of
    // it is then recomputed from the rows.
    open_.RaiseFloor(minute + kMinuteMs);
    std::set<int64_t>& nodes = it->second;
    while (!nodes.empty() && more()) {
      const int64_t node = *nodes.begin();
      const std::optional<MinuteTotals> totals = open_.Take(node, minute);
      if (minute >= raw_from) {
        if (totals) {
          RETURN_IF_ERROR(minutes_->Put(node, minute, *totals));
          ++minute_counts_.from_memory;
        } else {
          RETURN_IF_ERROR(minutes_->Recompute(node, minute));
          ++minute_counts_.recomputed;
        }
      }
      aggregated_in_tx_.emplace_back(minute, node);
      nodes.erase(nodes.begin());
      ++done;
    }
    if (nodes.empty()) dirty_.erase(it);
  }
  return Status::Ok();
}

void Writer::TakeBackAggregated() {
  for (const auto& [minute, node] : aggregated_in_tx_) dirty_[minute].insert(node);
  aggregated_in_tx_.clear();
  minute_counts_ = {};
  // Every minute that may hold rows the totals miss is dirty now: none of them is tracked again.
  open_.Clear(dirty_.empty() ? 0 : dirty_.rbegin()->first + kMinuteMs);
}

Status Writer::StoreMinutesFrom(int64_t now_ms) {
  // Every minute before the mark has its aggregates; a late sample moves it back.
  const int64_t now_minute = BucketStart(now_ms, kMinuteMs);
  minutes_from_ = dirty_.empty() ? now_minute : std::min(dirty_.begin()->first, now_minute);
  if (minutes_from_ == persisted_minutes_from_) return Status::Ok();
  RETURN_IF_ERROR(BeginIfNeeded());
  set_minutes_from_.Reset();
  return set_minutes_from_.Bind(1, minutes_from_).Run();
}

void Writer::AfterCommit(bool committed) {
  if (committed) {
    persisted_minutes_from_ = minutes_from_;
    aggregated_before_.store(minutes_from_, std::memory_order_release);
    aggregated_in_tx_.clear();
  } else {
    TakeBackAggregated();
    minutes_from_ = persisted_minutes_from_;
  }
}

void Writer::WriteBatch(bool aggregate_all) {
  const int64_t start = clock_.MonotonicMs();
  std::vector<std::pair<Done, Status>> results;
  Counters total;
  {
    // Lets a waiting RESTART checkpoint take the write lock (at most 100 ms).
    MutexLock lk(&ckpt_mu_);
    ckpt_cv_.WaitUntil(&ckpt_mu_,
                       SteadyNow() + std::chrono::milliseconds(100),
                       [&]() ROTA_REQUIRES(ckpt_mu_) { return !restart_waiting_; });
  }
  // On PostgreSQL the BEGIN waits for the transaction's first statement and goes
  // with it when that is a savepoint (one round trip less per transaction); a
  // transaction that wrote nothing sends neither BEGIN nor COMMIT. With a fence (a
  // leader's store) every transaction begins at once with its lease check, before
  // anything is written in it: a failed check fails the whole batch.
  tx_begun_ = false;
  savepoint_open_ = false;
  Status begin = Status::Ok();
  if (db_.dialect() == Dialect::kSqlite || opt_.fence) {
    begin = db_.Begin();
    tx_begun_ = db_.InTransaction();
    if (begin.ok()) begin = Fence();
  }
  size_t rows = 0;
  bool urgent = false;  // a caller is blocked on this transaction (Flush, UpsertNode)
  std::vector<size_t> aggregate_waiters;  // results of AggregateMinutes calls
  const auto linger_until =
      SteadyNow() + std::chrono::milliseconds(opt_.linger_ms);
  while (true) {
    Job job;
    {
      MutexLock lk(&mu_);
      if (queue_.empty() && opt_.linger_ms > 0 && !urgent && !stop_) {
        cv_.WaitUntil(&mu_, linger_until,
                      [&]() ROTA_REQUIRES(mu_) { return stop_ || !queue_.empty(); });
      }
      if (queue_.empty()) break;
      job = std::move(queue_.front());
      queue_.pop_front();
      if (job.samples) queued_samples_ -= job.samples->size();
    }
    Status st = begin;
    switch (job.kind) {
      case Kind::kRetention: {
        RetentionRun r;
        r.raw_cutoff = job.now_ms - opt_.raw_retention_ms;
        r.agg_cutoff = job.now_ms - opt_.agg_retention_ms;
        r.done = std::move(job.done);
        retention_.push_back(std::move(r));
        continue;
      }
      case Kind::kAppend:
        if (st.ok()) {
          Counters c;
          const uint64_t additions = open_.additions();
          // On PostgreSQL a savepoint is two more round trips per append, and an
          // append's statements fail only with the whole transaction (its NotFound
          // comes before any): there a failed statement aborts the transaction, and
          // every write in it gets the COMMIT's error. Nothing is acked unstored.
          st = db_.dialect() == Dialect::kSqlite
                   ? InSavepoint([&] { return WriteAppend(job, &c); })
                   : WriteAppend(job, &c);
          // Totals that counted rows now rolled back are forgotten (an
          // unregistered node's samples fail before adding anything).
          if (!st.ok() && open_.additions() != additions) TakeBackAggregated();
          if (st.ok()) {
            total.gpu_rows += c.gpu_rows;
            total.node_rows += c.node_rows;
            total.duplicates += c.duplicates;
            total.late += c.late;
            rows += static_cast<size_t>(c.gpu_rows + c.node_rows + c.queued);
            if (c.queued > 0) rows_keep_.push_back(job.samples);
          }
        }
        break;
      case Kind::kTask:
        // A task sees the samples appended before it (PostgreSQL inserts them now);
        // a failed insert fails the transaction, and everything in it gets its error.
        if (st.ok() && job.task) {
          if (Status f = FlushRows(&total); !f.ok()) st = begin = f;
        }
        if (st.ok() && job.task) st = InSavepoint([&] { return job.task(db_); });
        ++rows;
        urgent = true;
        break;
      case Kind::kAggregateAll:  // its status is the aggregation's, set below
        aggregate_all = true;
        urgent = true;
        aggregate_waiters.push_back(results.size());
        break;
    }
    results.emplace_back(std::move(job.done), std::move(st));
    if (rows >= opt_.max_batch_rows || clock_.MonotonicMs() - start >= opt_.max_batch_ms) break;
  }
  if (begin.ok()) begin = FlushRows(&total);
  if (!begin.ok()) rows_keep_.clear();
  if (begin.ok()) {
    const int64_t now_ms = clock_.NowMs();
    Status agg = Status::Ok();
    if (aggregate_all || AggregationDue(now_ms)) {  // a savepoint is a round trip on PostgreSQL
      agg = InSavepoint([&] { return AggregateDue(aggregate_all, now_ms); });
    }
    if (!agg.ok()) {
      TakeBackAggregated();
      ROTA_LOG(ERROR) << "store: computing minute aggregates failed (tried again later): "
                      << agg.ToString();
    }
    for (size_t i : aggregate_waiters) results[i].second = agg;
    // Without its mark a late minute could lose its aggregates in a crash: the
    // transaction fails with it (so it needs no savepoint of its own).
    Status mark = StoreMinutesFrom(now_ms);
    if (!mark.ok()) begin = mark;
  }
  Status commit = !begin.ok() ? begin : tx_begun_ ? db_.Exec("COMMIT") : Status::Ok();
  AfterCommit(commit.ok());
  if (!commit.ok()) {
    if (db_.InTransaction()) (void)db_.Exec("ROLLBACK");
    node_ids_.clear();  // ids of nodes created in this transaction are gone
    ROTA_LOG(ERROR) << "store: write transaction failed, " << results.size()
                    << " writes not stored: " << commit.ToString();
  }
  {
    MutexLock lk(&mu_);
    if (commit.ok()) {
      ++stats_.transactions;
      stats_.gpu_rows += total.gpu_rows;
      stats_.node_rows += total.node_rows;
      stats_.duplicate_rows += total.duplicates;
      stats_.late_samples += total.late;
      stats_.minutes_from_memory += minute_counts_.from_memory;
      stats_.minutes_recomputed += minute_counts_.recomputed;
    } else {
      ++stats_.failed_transactions;
    }
    minute_counts_ = {};
  }
  for (auto& [done, st] : results) {
    if (done) done(st.ok() ? commit : st);
  }
}

Status Writer::Fence() {
  if (!opt_.fence) return Status::Ok();
  Status st = CheckFence(db_, *opt_.fence);
  if (!st.ok() && opt_.on_fenced) opt_.on_fenced(st);
  return st;
}

void Writer::RetentionStep() {
  RetentionRun& r = retention_.front();
  int64_t deleted = 0;
  Status st = RetentionWork(r, &deleted);
  if (!st.ok()) {
    if (db_.InTransaction()) (void)db_.Exec("ROLLBACK");
    ROTA_LOG(ERROR) << "store: retention failed: " << st.ToString();
  } else {
    MutexLock lk(&mu_);
    stats_.retention_deleted_rows += deleted;
  }
  if (!st.ok() || r.table >= ret_tables_.size()) {
    Done done = std::move(r.done);
    retention_.pop_front();
    if (done) done(st);
  }
}

Status Writer::RetentionWork(RetentionRun& r, int64_t* deleted) {
  ASSIGN_OR_RETURN(auto tx, Transaction::Begin(db_));
  RETURN_IF_ERROR(Fence());
  auto budget = static_cast<int64_t>(opt_.retention_batch_rows);
  while (budget > 0 && r.table < ret_tables_.size()) {
    RetentionTable& t = ret_tables_[r.table];
    const int64_t cutoff = t.aggregate ? r.agg_cutoff : r.raw_cutoff;
    auto bind_key = [&](Stmt& s) {
      s.Reset();
      s.Bind(1, r.node);
    };
    if (!r.have_key) {
      bind_key(t.next_key);
      ASSIGN_OR_RETURN(bool row, t.next_key.Step());
      if (!row) {
        ++r.table;
        r.node = -1;
        continue;
      }
      r.node = t.next_key.Int(0);
      t.next_key.Reset();
      r.have_key = true;
    }
    // The time of the budget-th oldest expired row of this node, if there are that
    // many (rows sharing that time are deleted too: at most one sample's GPUs more).
    bind_key(t.boundary);
    t.boundary.Bind(3, cutoff).Bind(4, budget - 1);
    ASSIGN_OR_RETURN(bool more, t.boundary.Step());
    Stmt& del = more ? t.delete_upto : t.delete_below;
    const int64_t limit = more ? t.boundary.Int(0) : cutoff;
    t.boundary.Reset();
    bind_key(del);
    del.Bind(3, limit);
    RETURN_IF_ERROR(del.Run());
    budget -= db_.Changes();
    *deleted += db_.Changes();
    if (!more) r.have_key = false;  // this node is done; the cursor moves past it
  }
  return tx.Commit();
}

}  // namespace rota::store
