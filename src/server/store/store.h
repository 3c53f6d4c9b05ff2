#pragma once
// rota's store: nodes, raw GPU/node samples, 1-minute aggregates and
// downsampled history, in one SQLite database <data_dir>/rota.db (WAL mode), or
// in a PostgreSQL database (OpenUrl). See docs/design-store.md.
//
// Threading: every method is thread-safe. Writes go through one writer thread
// that owns the write connection and commits many writes per transaction;
// reads use a second connection under a mutex (WAL lets them run while the
// writer writes). Blocking calls (UpsertNode, Flush, RunRetention) must not be
// made from an Append callback (they return Internal instead of deadlocking).
// Done callbacks run on the writer thread after COMMIT with no lock of the store
// held: they may take their caller's locks, and must not block.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/types.h"
#include "common/clock.h"
#include "common/status.h"
#include "server/store/history.h"
#include "server/store/options.h"
#include "server/store/sql.h"

namespace rota::store {

// A node as stored: what its agent last reported, and when.
struct StoredNode {
  api::NodeInfo info;
  int64_t first_seen_ms = 0;  // first UpsertNode
  int64_t last_seen_ms = 0;   // latest UpsertNode (never moves back)
};

class Store {
 public:
  using Done = std::function<void(Status)>;

  // Opens (creating if needed) the store in `data_dir` (created with mode 0700):
  // takes an exclusive lock on <data_dir>/rota.lock (Unavailable if another
  // process holds it), opens <data_dir>/rota.db in WAL mode and applies the
  // schema. Errors name the file: IoError for a file that is not a SQLite
  // database, InvalidArgument for a SQLite database of another program or bad
  // options, Conflict for a database written by a newer rota.
  // `clock` must outlive the store.
  static Result<std::unique_ptr<Store>> Open(const std::string& data_dir,
                                             const StoreOptions& options, Clock& clock);
  // Opens the store a URL names (store_url.h): sqlite:PATH as Open does, with
  // PATH's directory as the data dir; postgresql://... on a PostgreSQL server
  // (no data dir, no lock file). Errors: InvalidArgument for a bad URL or
  // options, Unavailable naming the server when it cannot be reached, Conflict
  // for a schema written by a newer rota; messages never hold the URL's password.
  static Result<std::unique_ptr<Store>> OpenUrl(const std::string& url,
                                                const StoreOptions& options, Clock& clock);
  // Commits everything queued (calling its callbacks), then closes.
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // ---- Nodes ----

  // Inserts or replaces the node named info.name (keeping its first_seen and
  // internal id) and its gpus rows. Blocks until committed.
  // InvalidArgument if `info` does not pass the api codec's validation.
  Status UpsertNode(const api::NodeInfo& info, int64_t now_ms);
  // All nodes, by name.
  Result<std::vector<StoredNode>> ListNodes();
  // NotFound if no node has this name.
  Result<StoredNode> GetNode(const std::string& name);

  // ---- Samples ----

  // Queues `samples` of node `node` for writing and returns at once. `done` is
  // called exactly once: on the writer thread after the transaction holding
  // the samples committed (OK) or failed, or at once on the caller's thread
  // with ResourceExhausted when more than options.max_queued_samples samples
  // would be waiting, or Unavailable while closing. Samples whose (node, gpu,
  // time) / (node, time) are stored already are ignored (agents re-send after
  // a reconnect); samples older than now - raw_retention are dropped (both
  // count as stored: done gets OK). NotFound if `node` was never upserted.
  // `done` must be quick; it may call Append, not the blocking methods.
  // REQUIRES: samples decoded through the api codec (validated).
  void Append(const std::string& node, std::vector<api::NodeSample> samples, Done done);
  // The same for samples shared with other readers (the cluster's latest
  // sample points into the batch an agent message decoded to: not copied).
  void Append(const std::string& node, api::SampleBatch samples, Done done);
  // Returns once everything queued before the call is committed (the status
  // of the transaction that committed the last of it).
  Status Flush();
  // As Flush, and every minute with samples has its aggregates (gpu_minutes,
  // node_minutes) written, the current minute included. The writer computes a
  // minute's aggregates on its own some seconds after the minute ends; this is
  // for tests and tools that read the aggregate tables directly. History reads
  // need no call: they take raw rows for minutes not aggregated yet.
  Status AggregateMinutes();

  // Deletes raw samples older than now_ms - raw_retention and aggregates older
  // than now_ms - agg_retention, in transactions of at most
  // options.retention_batch_rows rows interleaved with writes. Blocks until done.
  Status RunRetention(int64_t now_ms);

  // ---- History ----

  // Points over [from_ms, to_ms) for GPU `gpu_index` of `node`, bucketed by
  // floor(t / step) * step. Metrics: util_gpu_pct, util_mem_pct,
  // mem_used_bytes, temp_c, power_mw (avg, max); energy_mj (last).
  // step_ms 0 picks a step for about kAutoHistoryPoints points. Reads raw rows
  // when from_ms is within raw retention (by the clock) and the step is below
  // or not a multiple of a minute; otherwise the 1-minute aggregates, with the
  // step rounded up to whole minutes and the range widened to whole minutes.
  // InvalidArgument for bad arguments (see ResolveStep); NotFound for an
  // unknown node, or a GPU that is neither registered (in the node's latest
  // info) nor has aggregates in the range.
  Result<Series> GpuHistory(const std::string& node, uint32_t gpu_index, int64_t from_ms,
                            int64_t to_ms, int64_t step_ms);
  // As GpuHistory for the node's host: cpu_pct, mem_used_bytes, load1 (avg, max).
  Result<Series> NodeHistory(const std::string& node, int64_t from_ms, int64_t to_ms,
                             int64_t step_ms);

  // ---- Generic access for the domain stores (accounts, reservations, audit) ----

  using DbTask = std::function<Status(Db&)>;
  // Runs `task` on the writer thread inside a savepoint of a write transaction
  // and returns once that transaction committed: its writes are rolled back when
  // it returns an error (which Write returns). Tasks run one at a time, so a
  // check-then-insert inside one task is serializable. Blocks; must not be
  // called from an Append callback.
  Status Write(const DbTask& task);
  // As Write, without waiting for the commit: `done` (may be empty) gets the
  // outcome on the writer thread and must not block. Writes queued by one
  // thread commit in order; tasks queued together share one transaction.
  void WriteAsync(DbTask task, std::function<void(Status)> done);
  // Runs `task` on the read connection (query_only; sees every committed
  // write) under the read mutex and returns its status.
  Status Read(const DbTask& task);

  StoreStats Stats() const;
  // <data_dir>/rota.db, or the PostgreSQL URL without password.
  const std::string& path() const;
  Dialect dialect() const;

 private:
  static Result<std::unique_ptr<Store>> OpenSqlite(const std::string& data_dir,
                                                   const std::string& path,
                                                   const StoreOptions& options, Clock& clock);
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rota::store
