#pragma once
// SQL of usage and energy accounting (tables usage_hourly, energy_meters and
// cpu_meters, schema version 9). Called inside Store::Write / Store::Read tasks.

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "accounting/ledger.h"
#include "common/status.h"
#include "server/store/sql.h"

namespace rota::store {

// Adds `rows` to the stored amounts (same key: summed) and stores `meters` (GPU
// meters in energy_meters; a node's CPU meter, key {node, kCpuMeter}, in
// cpu_meters); the caller's transaction makes both durable together.
Status AddUsage(Db& db, const std::map<accounting::Key, accounting::Amounts>& rows,
                const std::map<accounting::MeterKey, accounting::MeterState>& meters);

// Every stored meter, CPU meters included (a restarted server continues from them).
// A CPU meter row that does not parse is left out.
Result<std::map<accounting::MeterKey, accounting::MeterState>> LoadMeters(Db& db);

// What to sum: the usage in [from_ms, to_ms), grouped by one column. Buckets the
// window covers in part count pro rata (accounting::BucketShare, with now_ms).
struct UsageQuery {
  // "user", "group", "job", "reservation" or "node".
  std::string by;
  int64_t from_ms = 0;
  int64_t to_ms = 0;
  std::string node;  // "" : every node
  std::string user;  // "" : every user (a non-admin's own figures)
  // How much of the current bucket has passed (default: every bucket has ended).
  int64_t now_ms = std::numeric_limits<int64_t>::max();
  int64_t bucket_ms = 3'600'000;  // the ledger's bucket length (LedgerOptions::bucket_ms)
};

struct UsageSum {
  std::string key;  // the grouping column's value (job and reservation ids as text)
  accounting::Amounts amounts;
  double reserved_idle_ms = 0;  // GPU time in a reservation with no process on the GPU
  double idle_energy_mj = 0;    // energy of GPUs with no process and no job (reserved or not)
  int gpus = 0;                 // by node: the node's GPUs as last registered (0: unknown)
};

// Sums, largest GPU time first. InvalidArgument for an unknown `by` or a bucket_ms <= 0.
Result<std::vector<UsageSum>> QueryUsage(Db& db, const UsageQuery& query);

}  // namespace rota::store
