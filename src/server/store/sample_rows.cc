#include "server/store/sample_rows.h"

#include <utility>

#include "server/store/gpu_pack.h"

namespace rota::store {

void SampleRows::Add(int64_t node, const api::NodeSample* sample, int64_t mem_used) {
  (sample->gpus.empty() ? host_rows_ : gpu_rows_).push_back(Row{node, sample, mem_used});
}

Result<Stmt*> SampleRows::Statement(Db& db, bool gpus, size_t rows) {
  auto it = stmts_.find({gpus, rows});
  if (it != stmts_.end()) return &it->second;
  const int cols = gpus ? 8 : 6;
  std::string sql = gpus ? "INSERT INTO node_gpu_samples (node, t_ms, n_gpus, gpus, cpu_percent, "
                           "mem_used, mem_total, load1) VALUES "
                         : "INSERT INTO node_samples (node, t_ms, cpu_percent, mem_used, "
                           "mem_total, load1) VALUES ";
  int p = 0;
  for (size_t r = 0; r < rows; ++r) {
    sql += r == 0 ? "(" : ", (";
    for (int c = 0; c < cols; ++c) {
      if (c > 0) sql += ", ";
      sql += "?" + std::to_string(++p);
    }
    sql += ")";
  }
  sql += " ON CONFLICT DO NOTHING RETURNING node, t_ms";
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(sql));
  return &stmts_.emplace(std::make_pair(gpus, rows), std::move(s)).first->second;
}

Status SampleRows::Insert(Db& db, bool gpus, const std::vector<Row>& rows, size_t begin,
                          size_t end, std::vector<bool>* stored) {
  ASSIGN_OR_RETURN(Stmt * s, Statement(db, gpus, end - begin));
  s->Reset();
  const int cols = gpus ? 8 : 6;
  std::map<std::pair<int64_t, int64_t>, size_t> first;  // (node, t_ms) -> its first row here
  for (size_t i = begin; i < end; ++i) {
    const Row& r = rows[i];
    const api::HostSample& h = r.sample->host;
    first.emplace(std::make_pair(r.node, r.sample->time_ms), i);
    int p = static_cast<int>(i - begin) * cols;  // the row's first parameter is p + 1
    s->Bind(p + 1, r.node).Bind(p + 2, r.sample->time_ms);
    if (gpus) {
      PackGpus(r.sample->gpus, &packed_);
      s->Bind(p + 3, static_cast<int64_t>(r.sample->gpus.size())).BindBlob(p + 4, packed_);
      p += 2;
    }
    s->Bind(p + 3, h.cpu_percent).Bind(p + 4, r.mem_used);
    s->Bind(p + 5, static_cast<int64_t>(h.mem_total_bytes)).Bind(p + 6, h.load1);
  }
  while (true) {
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    auto it = first.find({s->Int(0), s->Int(1)});
    if (it != first.end()) (*stored)[it->second] = true;
  }
  s->Reset();
  return Status::Ok();
}

Status SampleRows::Flush(Db& db, const std::function<void(const Row&)>& fresh,
                         int64_t* duplicates) {
  std::vector<Row> gpu_rows = std::move(gpu_rows_), host_rows = std::move(host_rows_);
  gpu_rows_.clear();
  host_rows_.clear();
  for (bool gpus : {true, false}) {
    const std::vector<Row>& rows = gpus ? gpu_rows : host_rows;
    std::vector<bool> stored(rows.size(), false);
    size_t at = 0;
    while (at < rows.size()) {
      size_t n = kMaxRowsPerStatement;
      while (n > rows.size() - at) n /= 2;
      RETURN_IF_ERROR(Insert(db, gpus, rows, at, at + n, &stored));
      at += n;
    }
    for (size_t i = 0; i < rows.size(); ++i) {
      if (stored[i]) {
        fresh(rows[i]);
      } else {
        // A duplicate: a sample's GPU readings and its host row.
        *duplicates += gpus ? static_cast<int64_t>(rows[i].sample->gpus.size()) + 1 : 1;
      }
    }
  }
  return Status::Ok();
}

}  // namespace rota::store
