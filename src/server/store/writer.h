#pragma once
// The store's single writer: one thread that owns the write connection,
// drains a FIFO queue of jobs and writes many of them per transaction
// (group commit). Callbacks run on the writer thread after COMMIT.
// On SQLite, WAL checkpoints run on a second thread with a connection of its own, so the
// writer never copies WAL pages into the database file inside a COMMIT: the
// writer's WAL hook asks for a PASSIVE checkpoint once the WAL holds
// wal_autocheckpoint_pages pages (SQLite's automatic checkpoint is off).
// Minute aggregates: each append marks its node's minute "dirty"; once a minute
// has closed (kAggregateDelayMs after its end) the writer writes its
// aggregates, from the totals it kept while storing the samples (open_minutes.h)
// or else from the raw rows (minutes.h), a bounded number per transaction,
// and moves the persisted "minutes_from_ms" mark past it. The next open marks
// dirty every minute from that mark on that has raw rows (after a crash, and
// after a stop, which leaves dirty minutes as they are), so no aggregate is lost.
// Internal to the store; the public surface is store.h.

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "api/types.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "server/store/minutes.h"
#include "server/store/open_minutes.h"
#include "server/store/options.h"
#include "server/store/sample_rows.h"
#include "server/store/sql.h"

namespace rota::store {

class Writer {
 public:
  using Done = std::function<void(Status)>;
  // Work run on the writer thread inside the current write transaction.
  using Task = std::function<Status(Db&)>;

  // Takes over `db` (schema applied), prepares statements, starts the thread.
  static Result<std::unique_ptr<Writer>> Start(Db db, const StoreOptions& options, Clock& clock);
  // Writes and commits everything queued, abandons a running retention
  // (Unavailable), stops the thread.
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // See Store::Append. Thread-safe.
  void Append(const std::string& node, api::SampleBatch samples, Done done);
  // Runs `task` in a savepoint of a write transaction; returns its status, or
  // the COMMIT error. Blocks until committed. Thread-safe; not from a callback.
  Status Run(Task task);
  // As Run, without waiting: `done` gets the outcome on the writer thread (it
  // must not block). Tasks queued by one thread run in the order queued.
  void RunAsync(Task task, Done done);
  // Returns once every job queued before the call is committed.
  Status Flush() { return Run(nullptr); }
  // As Flush, and every minute with raw rows has its aggregates computed, the
  // minute still open included (it is computed again when more samples come).
  Status AggregateMinutes();
  // Every minute before this time has its aggregates committed; later minutes
  // may not (readers take their raw rows). Thread-safe.
  int64_t AggregatedBeforeMs() const { return aggregated_before_.load(std::memory_order_acquire); }

  // How long after a minute's end its aggregates are computed: samples still
  // on their way get in first (a later one only makes the minute computed again).
  static constexpr int64_t kAggregateDelayMs = 10'000;
  // Time spent computing minutes per transaction at most (outside
  // AggregateMinutes), so appends in the same transaction are acked soon: a
  // node-minute of 8 GPUs sampled each second takes about 1 ms.
  static constexpr int64_t kAggregateSliceMs = 20;
  // Deletes raw rows older than now - raw_retention and aggregates older than
  // now - agg_retention, in transactions of at most retention_batch_rows rows
  // interleaved with appends. Blocks until done.
  Status RunRetention(int64_t now_ms);

  void FillStats(StoreStats* out) const;

 private:
  enum class Kind { kAppend, kTask, kRetention, kAggregateAll };
  struct Job {
    Kind kind = Kind::kTask;
    std::string node;
    api::SampleBatch samples;  // set for kAppend
    Task task;
    int64_t now_ms = 0;
    Done done;
  };
  struct Counters {
    int64_t gpu_rows = 0, node_rows = 0, duplicates = 0, late = 0;
    int64_t queued = 0;  // rows added to rows_ (PostgreSQL), new or not
  };
  struct MinuteCounters {
    int64_t from_memory = 0, recomputed = 0;
  };
  // Statements of one table for retention; it is walked node by node.
  struct RetentionTable {
    bool aggregate;
    Stmt next_key, boundary, delete_upto, delete_below;
  };
  struct RetentionRun {
    int64_t raw_cutoff = 0, agg_cutoff = 0;
    size_t table = 0;
    bool have_key = false;
    int64_t node = -1;  // current/last node id
    Done done;
  };

  Writer(Db db, std::optional<Db> checkpoint_db, const StoreOptions& options, Clock& clock);
  Status Prepare();
  Status Enqueue(Job job);  // Unavailable once stopping
  Status WaitFor(Job job);
  void Loop() ROTA_EXCLUDES(mu_);
  // The checkpoint thread: one PASSIVE checkpoint per request, until stopped.
  void CheckpointLoop() ROTA_EXCLUDES(ckpt_mu_);
  // sqlite3_wal_hook callback (writer thread, after each COMMIT).
  static int OnWalCommit(void* self, sqlite3* db, const char* name, int wal_pages);
  // Commits one batch and then calls its Done callbacks, without mu_ held.
  // Aggregates the minutes due (all of them with `aggregate_all`) before COMMIT.
  void WriteBatch(bool aggregate_all = false) ROTA_EXCLUDES(mu_);
  // Reads the persisted mark and marks dirty the minutes from it on (Start).
  Status LoadDirtyMinutes();
  void MarkDirty(int64_t node, int64_t minute_ms);
  bool AggregationDue(int64_t now_ms) const;
  // Computes the aggregates of due minutes (all with `all`) in the current
  // transaction; they are listed in aggregated_in_tx_.
  Status AggregateDue(bool all, int64_t now_ms);
  // Puts the minutes of aggregated_in_tx_ back among the dirty ones, and
  // forgets the totals in memory: rows they counted, or totals taken for
  // writing, were rolled back.
  void TakeBackAggregated();
  // Moves the mark to the oldest dirty minute (or now's) and stores it if it moved.
  Status StoreMinutesFrom(int64_t now_ms);
  // After COMMIT (or its failure): publishes the mark, or takes back the
  // minutes aggregated in the lost transaction.
  void AfterCommit(bool committed);
  // Writes an append's samples (SQLite), or adds them to rows_ (PostgreSQL).
  Status WriteAppend(const Job& job, Counters* c);
  // Inserts the samples in rows_ (PostgreSQL), counting them in `c` and adding
  // the new ones to the minute totals. An error leaves the transaction failed.
  Status FlushRows(Counters* c);
  Status InSavepoint(const std::function<Status()>& fn);
  // BEGIN, unless the batch's transaction has begun (PostgreSQL begins it lazily).
  Status BeginIfNeeded();
  // The lease check of opt_.fence in the open transaction (OK without a fence).
  Status Fence();
  Result<int64_t> NodeId(const std::string& name);
  // One retention transaction; finishes the run at the end.
  void RetentionStep() ROTA_EXCLUDES(mu_);
  Status RetentionWork(RetentionRun& r, int64_t* deleted);

  const StoreOptions opt_;
  Clock& clock_;
  Db db_;  // writer thread only (after Start)

  // Writer-thread state.
  Stmt ins_node_, ins_gpus_, node_id_, set_minutes_from_;
  std::string packed_;  // the blob of the sample being inserted (reused)
  // PostgreSQL: the samples of the transaction's appends, inserted many per
  // statement before the next task and before the minutes and COMMIT; their
  // batches are kept alive in rows_keep_ until then.
  SampleRows rows_;
  std::vector<api::SampleBatch> rows_keep_;
  std::optional<MinuteAggregates> minutes_;
  OpenMinutes open_{0};  // floor set by LoadDirtyMinutes
  MinuteCounters minute_counts_;  // in the current transaction
  std::map<int64_t, std::set<int64_t>> dirty_;  // minute -> node ids without aggregates
  std::vector<std::pair<int64_t, int64_t>> aggregated_in_tx_;  // (minute, node)
  int64_t minutes_from_ = 0;            // the mark as the current transaction leaves it
  int64_t persisted_minutes_from_ = 0;  // the mark as committed
  std::atomic<int64_t> aggregated_before_{0};
  Stmt sp_begin_, sp_release_, sp_rollback_;
  // PostgreSQL: the last write's savepoint is not released yet (InSavepoint).
  bool savepoint_open_ = false;
  // The batch's transaction has begun (on PostgreSQL at its first statement).
  bool tx_begun_ = false;
  std::vector<RetentionTable> ret_tables_;
  std::deque<RetentionRun> retention_;                 // front is running
  std::unordered_map<std::string, int64_t> node_ids_;  // committed or in current tx

  mutable Mutex mu_;
  CondVar cv_;
  std::deque<Job> queue_ ROTA_GUARDED_BY(mu_);
  size_t queued_samples_ ROTA_GUARDED_BY(mu_) = 0;
  bool stop_ ROTA_GUARDED_BY(mu_) = false;
  StoreStats stats_ ROTA_GUARDED_BY(mu_);  // queued_samples unused
  std::thread thread_;

  // Checkpoint thread state.
  std::optional<Db> ckpt_db_;  // SQLite only; checkpoint thread only (after Start)
  mutable Mutex ckpt_mu_;
  CondVar ckpt_cv_;
  bool ckpt_wanted_ ROTA_GUARDED_BY(ckpt_mu_) = false;
  bool ckpt_stop_ ROTA_GUARDED_BY(ckpt_mu_) = false;
  // A RESTART checkpoint far behind (8x the threshold) wants the write lock:
  // the writer waits (briefly) before its next transaction. A writer that takes the lock again right after
  // each commit was otherwise seldom caught free by the checkpointer's busy
  // handler, and the WAL grew to hundreds of MB before one got through.
  bool restart_waiting_ ROTA_GUARDED_BY(ckpt_mu_) = false;
  int64_t checkpoints_ ROTA_GUARDED_BY(ckpt_mu_) = 0;
  int64_t checkpoint_failures_ ROTA_GUARDED_BY(ckpt_mu_) = 0;
  int64_t wal_restarts_ ROTA_GUARDED_BY(ckpt_mu_) = 0;
  std::thread ckpt_thread_;
};

}  // namespace rota::store
