#pragma once
// Tuning knobs and counters of the store (see store.h).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/status.h"

namespace rota::store {

// A leader's lease as its write transactions check it (lease.h, CheckFence).
struct LeaseFence {
  std::string holder;
  int64_t epoch = 0;
};

struct StoreOptions {
  // Raw samples older than this are deleted by RunRetention (and samples that
  // arrive already older than this are dropped, see Store::Append).
  int64_t raw_retention_ms = 24LL * 3600 * 1000;
  // 1-minute aggregates older than this are deleted by RunRetention.
  int64_t agg_retention_ms = 30LL * 24 * 3600 * 1000;
  // NodeSamples waiting for the writer; Append beyond this fails with ResourceExhausted.
  size_t max_queued_samples = 100'000;
  // A write transaction is committed once it holds this many rows (GPU + node rows) ...
  size_t max_batch_rows = 20'000;
  // ... or has been open this long (Clock::MonotonicMs), or the queue is empty.
  int64_t max_batch_ms = 200;
  // When the queue runs empty, keep the transaction open up to this long
  // (real time) for more appends, unless a caller waits on it (Flush,
  // UpsertNode). Fewer, larger commits write fewer WAL pages (see
  // docs/design-store.md) at the price of later acks. 0: commit at once.
  int64_t linger_ms = 0;
  // Rows deleted per retention transaction (writes wait at most one such batch).
  size_t retention_batch_rows = 5'000;
  // SQLite busy timeout for both connections.
  int busy_timeout_ms = 5'000;
  // SQLite page cache of the write / read connection: a cap, filled only as
  // pages are used. The writer appends to the last leaf page of every node in
  // node_samples and node_gpu_samples, and each minute reads the minute's rows
  // back and writes gpu_minutes and node_minutes: about 4 hot pages per node,
  // 16 KB, so 160 MB at 10,000 nodes. A smaller cache reads those pages back
  // from the file at every sample.
  int write_cache_mb = 256;
  int read_cache_mb = 16;
  // WAL pages after a commit that make the checkpoint thread run a PASSIVE
  // checkpoint (SQLite's automatic checkpoint, off here, defaults to 1000 = 4 MB,
  // less than one busy transaction writes).
  int wal_autocheckpoint_pages = 10'000;
  // synchronous=FULL instead of NORMAL: commits also survive power loss, at the
  // price of an fsync per commit. NORMAL (WAL) survives process crashes.
  bool sync_full = false;
  // PostgreSQL with several servers: every write transaction first checks that this
  // server still holds the leader lease (CheckFence, lease.h) and rolls back when it does
  // not; its writes then fail with that Unavailable, and `on_fenced` is called with it (on
  // the writer thread; it must not block). The write connection's sessions also end when
  // idle in a transaction longer than `idle_in_transaction_ms` (a paused server's locks go).
  std::optional<LeaseFence> fence;
  std::function<void(const Status&)> on_fenced;
  int64_t idle_in_transaction_ms = 2'000;
};

// Counters since Open. Rows are counted when their transaction committed.
struct StoreStats {
  size_t queued_samples = 0;     // NodeSamples waiting for the writer now
  int64_t gpu_rows = 0;          // raw GPU sample rows written
  int64_t node_rows = 0;         // raw node sample rows written
  int64_t duplicate_rows = 0;    // rows ignored because (node[, gpu], t) was stored already
  int64_t late_samples = 0;      // NodeSamples dropped as older than raw retention
  int64_t rejected_appends = 0;  // Appends refused because the queue was full
  int64_t transactions = 0;      // write transactions committed
  int64_t failed_transactions = 0;
  int64_t retention_deleted_rows = 0;
  int64_t checkpoints = 0;          // WAL checkpoints that copied pages into the database
  int64_t checkpoint_failures = 0;  // ... that failed (logged; the next one retries)
  int64_t wal_restarts = 0;  // checkpoints that held writes back to start the WAL again
  // Node-minutes whose aggregates were written from the totals kept in memory,
  // and those recomputed from their raw rows (after a restart, late samples).
  int64_t minutes_from_memory = 0;
  int64_t minutes_recomputed = 0;
};

}  // namespace rota::store
