#pragma once
// rota store check: the store's integrity, read in one snapshot (a running server may keep
// writing meanwhile; nothing is written).
//  - SQLite: PRAGMA integrity_check (pages, indexes) and PRAGMA foreign_key_check.
//  - Both backends: the schema version is this rota's, at most one leader lease row, and the
//    consistency rules the store keeps that no foreign key states (each a count query that
//    must answer 0): rows pointing at nodes, users, jobs, reservations or violations that do
//    not exist (samples, minutes, GPUs, members, tokens, reservations' GPUs, events, usage),
//    a reservation's GPUs on another node than the reservation, ended jobs without an end
//    time, negative amounts of usage.
//  - Row counts of the main tables, for the report.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace rota::store {

struct CheckProblem {
  std::string check;  // what was checked, e.g. "gpus without their node"
  int64_t rows = 0;   // rows that break it
};

struct CheckReport {
  std::string store;  // the store URL without password
  int64_t schema_version = 0;
  int checks = 0;     // rules checked
  std::vector<CheckProblem> problems;  // empty: the store is consistent
  std::vector<std::pair<std::string, int64_t>> counts;  // table -> rows
};

// Checks the store at `url` (sqlite:PATH or a PostgreSQL URL). Errors (not problems):
// InvalidArgument (bad URL, not a rota store), NotFound (no such SQLite file),
// Unavailable (PostgreSQL unreachable), Conflict (a newer rota's schema).
Result<CheckReport> CheckStore(const std::string& url);

}  // namespace rota::store
