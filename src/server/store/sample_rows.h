#pragma once
// Sample rows written many per statement (the PostgreSQL writer's ingest): the
// writer adds the samples of every append of its transaction, then Flush inserts
// them with multi-row `INSERT ... VALUES (...), (...) ON CONFLICT DO NOTHING
// RETURNING node, t_ms`, up to kMaxRowsPerStatement rows per statement, and tells
// which samples were new (a row came back for them) so the writer adds exactly
// those to its minute totals. One round trip per few hundred samples instead of
// one per sample (docs/design-store.md, "Backends"). Internal to the store; used
// by the writer thread only.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "api/types.h"
#include "common/status.h"
#include "server/store/sql.h"

namespace rota::store {

class SampleRows {
 public:
  // Rows per statement at most; statements are prepared for powers of two up to
  // it (a batch of 300 is one of 256, one of 32, one of 8 and one of 4), so a
  // connection holds at most 2 x 10 of these statements.
  static constexpr size_t kMaxRowsPerStatement = 512;

  // A sample to insert: `sample` must stay valid until Flush returns (the writer
  // keeps its append's batch alive). `mem_used` is the host's used memory.
  void Add(int64_t node, const api::NodeSample* sample, int64_t mem_used);
  bool empty() const { return gpu_rows_.empty() && host_rows_.empty(); }
  size_t size() const { return gpu_rows_.size() + host_rows_.size(); }

  // Inserts every sample added, then calls `fresh` for each one whose row was
  // new, table by table in the order added (of two samples with the same node and time, the
  // first is stored and the second is a duplicate, as one statement per sample
  // gives). Returns the number of duplicates through `duplicates`. The batch is
  // empty afterwards, on error too (the transaction is lost then: the caller
  // rolls it back).
  struct Row {
    int64_t node;
    const api::NodeSample* sample;
    int64_t mem_used;
  };
  Status Flush(Db& db, const std::function<void(const Row&)>& fresh, int64_t* duplicates);

 private:
  // Inserts rows [begin, end) of `rows` into `gpus ? node_gpu_samples : node_samples`,
  // marking new[i] for those stored.
  Status Insert(Db& db, bool gpus, const std::vector<Row>& rows, size_t begin, size_t end,
                std::vector<bool>* stored);
  Result<Stmt*> Statement(Db& db, bool gpus, size_t rows);

  std::vector<Row> gpu_rows_, host_rows_;
  std::map<std::pair<bool, size_t>, Stmt> stmts_;  // (gpus, rows) -> statement
  std::string packed_;
};

}  // namespace rota::store
