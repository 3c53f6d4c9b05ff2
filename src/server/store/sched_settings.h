#pragma once
// SQL of the scheduler's settings: queues (table queues) and quotas (table
// quotas), each a name and its definition as JSON text that the owning
// service parses and checks. Called inside Store::Write / Store::Read tasks.

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/store/sql.h"

namespace rota::store {

struct QueueRow {
  std::string name;
  std::string spec_json;
  int64_t created_ms = 0, updated_ms = 0;
};

// Every stored queue (the built-in default only once an admin changed it).
Result<std::vector<QueueRow>> LoadQueues(Db& db);
// Inserts a new queue; the name's primary key refuses one that exists.
Status InsertQueue(Db& db, const QueueRow& row);
// Inserts or replaces a queue's definition and updated_ms (created_ms is kept
// when it exists).
Status PutQueue(Db& db, const QueueRow& row);
// Removes a queue; no error when there was none.
Status DeleteQueue(Db& db, const std::string& name);

struct QuotaRow {
  std::string kind;  // "user" or "group"
  std::string name;
  std::string spec_json;
  int64_t updated_ms = 0;
};

Result<std::vector<QuotaRow>> LoadQuotas(Db& db);
// Inserts or replaces the quota of (kind, name).
Status PutQuota(Db& db, const QuotaRow& row);
// Removes it; no error when there was none.
Status DeleteQuota(Db& db, const std::string& kind, const std::string& name);

}  // namespace rota::store
