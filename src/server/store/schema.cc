#include "server/store/schema.h"

#include <array>
#include <cstdio>
#include <string>

namespace rota::store {
namespace {

// Version 1. Node ids are small integers so that sample rows stay small. The
// sample and aggregate tables are WITHOUT ROWID, clustered by (node, time[, gpu]):
// the key is the dedup key, a node's rows for one instant share a leaf page (a
// write transaction touches ~4 leaves per node sample instead of 2 + 2 per GPU),
// and history reads one node's time range in order (filtering the GPU).
// Sample tables carry no FOREIGN KEY (one lookup per row saved): nodes are never
// deleted, and deleting one would have to delete its samples explicitly.
constexpr const char* kV1 = R"sql(
CREATE TABLE nodes (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL UNIQUE,
  node_id       TEXT NOT NULL,
  info_json     TEXT NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  last_seen_ms  INTEGER NOT NULL
);
CREATE TABLE gpus (
  node         INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  idx          INTEGER NOT NULL,
  uuid         TEXT NOT NULL,
  name         TEXT NOT NULL,
  pci_bus_id   TEXT NOT NULL,
  memory_total INTEGER,
  PRIMARY KEY (node, idx)
) WITHOUT ROWID;
CREATE TABLE gpu_samples (
  node      INTEGER NOT NULL,
  gpu       INTEGER NOT NULL,
  t_ms      INTEGER NOT NULL,
  util_gpu  INTEGER,
  util_mem  INTEGER,
  mem_used  INTEGER,
  mem_total INTEGER,
  temp      INTEGER,
  power_mw  INTEGER,
  energy_mj INTEGER,
  sm_clock  INTEGER,
  mem_clock INTEGER,
  fan       INTEGER,
  failed    INTEGER NOT NULL,
  PRIMARY KEY (node, t_ms, gpu)
) WITHOUT ROWID;
CREATE TABLE node_samples (
  node        INTEGER NOT NULL,
  t_ms        INTEGER NOT NULL,
  cpu_percent REAL,
  mem_used    INTEGER,
  mem_total   INTEGER,
  load1       REAL,
  PRIMARY KEY (node, t_ms)
) WITHOUT ROWID;
CREATE TABLE gpu_minutes (
  node      INTEGER NOT NULL,
  gpu       INTEGER NOT NULL,
  minute_ms INTEGER NOT NULL,
  n         INTEGER NOT NULL,
  failed_n  INTEGER NOT NULL,
  util_gpu_sum INTEGER NOT NULL, util_gpu_n INTEGER NOT NULL, util_gpu_max INTEGER,
  util_mem_sum INTEGER NOT NULL, util_mem_n INTEGER NOT NULL, util_mem_max INTEGER,
  mem_used_sum INTEGER NOT NULL, mem_used_n INTEGER NOT NULL, mem_used_max INTEGER,
  temp_sum     INTEGER NOT NULL, temp_n     INTEGER NOT NULL, temp_max     INTEGER,
  power_mw_sum INTEGER NOT NULL, power_mw_n INTEGER NOT NULL, power_mw_max INTEGER,
  energy_mj INTEGER,
  energy_t  INTEGER,
  PRIMARY KEY (node, minute_ms, gpu)
) WITHOUT ROWID;
CREATE TABLE node_minutes (
  node      INTEGER NOT NULL,
  minute_ms INTEGER NOT NULL,
  n         INTEGER NOT NULL,
  cpu_percent_sum REAL NOT NULL,    cpu_percent_n INTEGER NOT NULL, cpu_percent_max REAL,
  mem_used_sum    INTEGER NOT NULL, mem_used_n    INTEGER NOT NULL, mem_used_max    INTEGER,
  load1_sum       REAL NOT NULL,    load1_n       INTEGER NOT NULL, load1_max       REAL,
  PRIMARY KEY (node, minute_ms)
) WITHOUT ROWID;
)sql";


// Version 2: accounts, reservations, policies, violations (issue: reservations
// and enforcement). Times are UTC milliseconds. A reservation covers GPUs of one
// node; reservation_gpus holds one row per GPU with the reservation's interval
// copied, so the overlap check is one indexed range scan per GPU. Cancelled
// reservations keep their row in `reservations` (history) and lose their
// reservation_gpus rows (the slot is free again).
constexpr const char* kV2 = R"sql(
CREATE TABLE users (
  id            INTEGER PRIMARY KEY,
  username      TEXT NOT NULL UNIQUE,
  display_name  TEXT NOT NULL DEFAULT '',
  email         TEXT NOT NULL DEFAULT '',
  unix_user     TEXT NOT NULL DEFAULT '',
  unix_users_json TEXT NOT NULL DEFAULT '{}',
  role          TEXT NOT NULL CHECK (role IN ('admin', 'user')),
  password_hash TEXT,
  disabled      INTEGER NOT NULL DEFAULT 0,
  created_ms    INTEGER NOT NULL,
  updated_ms    INTEGER NOT NULL
);
CREATE TABLE groups (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL DEFAULT '',
  created_ms  INTEGER NOT NULL
);
CREATE TABLE group_members (
  group_id INTEGER NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
  user_id  INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  PRIMARY KEY (group_id, user_id)
) WITHOUT ROWID;
CREATE INDEX group_members_user ON group_members(user_id);
CREATE TABLE tokens (
  id           TEXT PRIMARY KEY,
  user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  kind         TEXT NOT NULL CHECK (kind IN ('session', 'api')),
  name         TEXT NOT NULL DEFAULT '',
  secret_mac   TEXT NOT NULL,
  created_ms   INTEGER NOT NULL,
  expires_ms   INTEGER,
  last_used_ms INTEGER
);
CREATE INDEX tokens_user ON tokens(user_id);
CREATE TABLE reservations (
  id           INTEGER PRIMARY KEY,
  owner_id     INTEGER NOT NULL REFERENCES users(id),
  node         TEXT NOT NULL,
  title        TEXT NOT NULL,
  description  TEXT NOT NULL DEFAULT '',
  start_ms     INTEGER NOT NULL,
  end_ms       INTEGER NOT NULL,
  cancelled_ms INTEGER,
  created_ms   INTEGER NOT NULL,
  updated_ms   INTEGER NOT NULL,
  enforcement_json TEXT NOT NULL DEFAULT '{}',
  avg_util_gpu REAL,
  avg_util_mem REAL,
  idle_notified_ms INTEGER,
  CHECK (end_ms > start_ms)
);
CREATE INDEX reservations_owner ON reservations(owner_id, end_ms);
CREATE INDEX reservations_time ON reservations(end_ms, start_ms);
CREATE TABLE reservation_gpus (
  reservation_id INTEGER NOT NULL REFERENCES reservations(id) ON DELETE CASCADE,
  node     TEXT NOT NULL,
  gpu      INTEGER NOT NULL,
  uuid     TEXT NOT NULL DEFAULT '',
  start_ms INTEGER NOT NULL,
  end_ms   INTEGER NOT NULL,
  PRIMARY KEY (reservation_id, gpu)
) WITHOUT ROWID;
CREATE INDEX reservation_gpus_slot ON reservation_gpus(node, gpu, end_ms, start_ms);
CREATE TABLE policies (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL UNIQUE,
  spec_json  TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
);
CREATE TABLE violations (
  id             INTEGER PRIMARY KEY,
  node           TEXT NOT NULL,
  gpu            INTEGER NOT NULL,
  gpu_uuid       TEXT NOT NULL DEFAULT '',
  uid            INTEGER,
  unix_user      TEXT NOT NULL DEFAULT '',
  user_id        INTEGER,
  reservation_id INTEGER,
  reservation_owner_id INTEGER,
  mode           TEXT NOT NULL,
  dry_run        INTEGER NOT NULL DEFAULT 0,
  state          TEXT NOT NULL CHECK (state IN ('open', 'resolved')),
  opened_ms      INTEGER NOT NULL,
  closed_ms      INTEGER,
  processes_json TEXT NOT NULL DEFAULT '[]',
  resolution     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX violations_time ON violations(opened_ms);
CREATE INDEX violations_open ON violations(state, node);
CREATE TABLE violation_events (
  id           INTEGER PRIMARY KEY,
  violation_id INTEGER NOT NULL REFERENCES violations(id) ON DELETE CASCADE,
  t_ms         INTEGER NOT NULL,
  action       TEXT NOT NULL,
  outcome      TEXT NOT NULL DEFAULT '',
  detail       TEXT NOT NULL DEFAULT '',
  pids_json    TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX violation_events_violation ON violation_events(violation_id, t_ms);
)sql";

// Version 3: jobs. A job row carries its spec, state and the tasks of its
// current attempt (tasks_json: placement and last report of each process);
// job_events records every state change with its reason.
constexpr const char* kV3 = R"sql(
CREATE TABLE jobs (
  id            INTEGER PRIMARY KEY,
  owner_id      INTEGER NOT NULL REFERENCES users(id),
  name          TEXT NOT NULL,
  spec_json     TEXT NOT NULL,
  state         TEXT NOT NULL,
  reason        TEXT NOT NULL DEFAULT '',
  restart_count INTEGER NOT NULL DEFAULT 0,
  tasks_json    TEXT NOT NULL DEFAULT '[]',
  created_ms    INTEGER NOT NULL,
  updated_ms    INTEGER NOT NULL,
  ended_ms      INTEGER
);
CREATE INDEX jobs_state ON jobs(state);
CREATE INDEX jobs_owner ON jobs(owner_id, id);
CREATE TABLE job_events (
  id      INTEGER PRIMARY KEY,
  job_id  INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  t_ms    INTEGER NOT NULL,
  state   TEXT NOT NULL,
  reason  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX job_events_job ON job_events(job_id, t_ms);
)sql";

// Version 4: agentless nodes reached over OpenSSH, and the tasks rota started
// on them (so a restarted server keeps following them).
constexpr const char* kV4 = R"sql(
CREATE TABLE ssh_nodes (
  name        TEXT PRIMARY KEY,
  url         TEXT NOT NULL,
  gpus        INTEGER NOT NULL DEFAULT 0,
  gpu_model   TEXT NOT NULL DEFAULT '',
  labels_json TEXT NOT NULL DEFAULT '{}',
  created_ms  INTEGER NOT NULL
);
CREATE TABLE ssh_tasks (
  id          TEXT PRIMARY KEY,
  node        TEXT NOT NULL,
  unix_user   TEXT NOT NULL,
  created_ms  INTEGER NOT NULL
);
)sql";

// Version 5: the scheduler. Queues (admins' definitions; the default queue is
// built in), and per job what scheduling needs across restarts: when it last
// became pending, GPU time attained over all its runs (least attained service),
// and its preemptions with the GPU time they cost.
constexpr const char* kV5 = R"sql(
CREATE TABLE queues (
  name        TEXT PRIMARY KEY,
  spec_json   TEXT NOT NULL,
  created_ms  INTEGER NOT NULL,
  updated_ms  INTEGER NOT NULL
);
ALTER TABLE jobs ADD COLUMN queued_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN attained_gpu_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN preemptions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN lost_gpu_ms INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 6: per-user and per-group quotas and fair-share weights, and the
// fair-share usage (decayed GPU-ms, as of at_ms) kept across restarts.
constexpr const char* kV6 = R"sql(
CREATE TABLE quotas (
  kind        TEXT NOT NULL,
  name        TEXT NOT NULL,
  spec_json   TEXT NOT NULL,
  updated_ms  INTEGER NOT NULL,
  PRIMARY KEY (kind, name)
);
CREATE TABLE fairshare_usage (
  kind    TEXT NOT NULL,
  name    TEXT NOT NULL,
  gpu_ms  REAL NOT NULL,
  at_ms   INTEGER NOT NULL,
  PRIMARY KEY (kind, name)
);
)sql";

// Version 7: usage and energy accounting. usage_hourly holds the amounts of GPU
// time and energy per hour, node, job, user, group and reservation (the ledger's
// keys, see src/accounting/ledger.h; "" and 0 mean none); energy_meters where
// each GPU's meter stands, written in the same transaction as the amounts.
constexpr const char* kV7 = R"sql(
CREATE TABLE usage_hourly (
  bucket_ms       INTEGER NOT NULL,
  node            TEXT NOT NULL,
  job_id          INTEGER NOT NULL,
  user            TEXT NOT NULL,
  grp             TEXT NOT NULL,
  reservation_id  INTEGER NOT NULL,
  gpu_ms          REAL NOT NULL,
  busy_ms         REAL NOT NULL,
  util_ms         REAL NOT NULL,
  energy_mj       REAL NOT NULL,
  counter_mj      REAL NOT NULL,
  estimated_mj    REAL NOT NULL,
  unmeasured_ms   REAL NOT NULL,
  PRIMARY KEY (bucket_ms, node, job_id, user, grp, reservation_id)
) WITHOUT ROWID;
CREATE INDEX usage_hourly_user ON usage_hourly (user, bucket_ms);
CREATE TABLE energy_meters (
  node        TEXT NOT NULL,
  gpu_index   INTEGER NOT NULL,
  uuid        TEXT NOT NULL,
  time_ms     INTEGER NOT NULL,
  counter_mj  INTEGER,
  power_mw    INTEGER,
  PRIMARY KEY (node, gpu_index)
) WITHOUT ROWID;
)sql";

// Version 8: power policies (the spec as JSON, see src/power/policy.h) and the
// power audit log: every limit an agent set, restored or refused, and every
// policy change. usage_hourly gains the energy spent with no process on the GPU
// (idle_mj): a reserved GPU left idle is now its owner's time, so "idle" can no
// longer be read from the user column. Older rows were idle exactly when they
// had no user and no job.
constexpr const char* kV8 = R"sql(
ALTER TABLE usage_hourly ADD COLUMN idle_mj REAL NOT NULL DEFAULT 0;
UPDATE usage_hourly SET idle_mj = energy_mj WHERE user = '' AND job_id = 0;
CREATE TABLE power_policies (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  spec_json   TEXT NOT NULL,
  created_ms  INTEGER NOT NULL,
  updated_ms  INTEGER NOT NULL
);
CREATE TABLE power_events (
  id            INTEGER PRIMARY KEY,
  t_ms          INTEGER NOT NULL,
  action        TEXT NOT NULL,
  node          TEXT NOT NULL,
  gpu           INTEGER,
  uuid          TEXT NOT NULL,
  limit_mw      INTEGER,
  previous_mw   INTEGER,
  requested_mw  INTEGER,
  policy        TEXT NOT NULL,
  actor         TEXT NOT NULL,
  detail        TEXT NOT NULL
);
CREATE INDEX power_events_time ON power_events (t_ms);
)sql";

// Version 9: CPU package energy (RAPL). usage_hourly gains the CPU energy
// attributed to each key (cpu_mj, apart from the GPUs' energy_mj; 0 in older
// rows); cpu_meters holds where each node's CPU meter stands (the agent's energy
// counter, the node's busy CPU time and each task's cgroup CPU time as a JSON
// object {task id: usec}), written in the same transaction as the amounts.
constexpr const char* kV9 = R"sql(
ALTER TABLE usage_hourly ADD COLUMN cpu_mj REAL NOT NULL DEFAULT 0;
CREATE TABLE cpu_meters (
  node        TEXT PRIMARY KEY,
  time_ms     INTEGER NOT NULL,
  energy_mj   INTEGER NOT NULL,
  busy_usec   INTEGER,
  tasks_json  TEXT NOT NULL
) WITHOUT ROWID;
)sql";

// Version 10: minute aggregates are computed once a minute has closed, from its
// raw rows (server/store/minutes.h). store_state holds small values of the
// store itself; 'minutes_from_ms': every node's minutes before it have their
// aggregates computed from all their raw rows, so a restart recomputes only
// the minutes from there on that have raw rows.
constexpr const char* kV10 = R"sql(
CREATE TABLE store_state (
  key   TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
)sql";

// Version 11: GPU samples are stored one row per node sample, its GPUs packed
// into one blob (server/store/gpu_pack.h): a ninth of the rows of gpu_samples
// for 8-GPU nodes, and most of the writer's cost gone. n_gpus: how many GPUs
// the blob holds. gpu_samples keeps the rows written before; readers read both
// until raw retention has emptied it (server/store/gpu_samples.h).
constexpr const char* kV11 = R"sql(
CREATE TABLE node_gpu_samples (
  node    INTEGER NOT NULL,
  t_ms    INTEGER NOT NULL,
  n_gpus  INTEGER NOT NULL,
  gpus    BLOB NOT NULL,
  PRIMARY KEY (node, t_ms)
) WITHOUT ROWID;
)sql";

// Version 12: a sample with GPUs keeps its host readings in its
// node_gpu_samples row (one B-tree insert per sample instead of two: the
// writer's cost fell by about a quarter); mem_total is set on every such row.
// node_samples keeps the samples of nodes without GPUs and the rows written
// before. A (node, t_ms) has its host readings in exactly one of the two:
// a sample replayed across the upgrade finds the row it had (node_gpu_samples
// when it has GPUs, node_samples when not) and is ignored.
constexpr const char* kV12 = R"sql(
ALTER TABLE node_gpu_samples ADD COLUMN cpu_percent REAL;
ALTER TABLE node_gpu_samples ADD COLUMN mem_used INTEGER;
ALTER TABLE node_gpu_samples ADD COLUMN mem_total INTEGER;
ALTER TABLE node_gpu_samples ADD COLUMN load1 REAL;
)sql";

// Version 13: node drains. An admin takes a node out of scheduling (no new job
// starts there; running ones go on) with a reason; server/nodes/node_drains.h.
constexpr const char* kV13 = R"sql(
CREATE TABLE node_drains (
  node      TEXT PRIMARY KEY,
  reason    TEXT NOT NULL,
  by_user   TEXT NOT NULL,
  since_ms  INTEGER NOT NULL
) WITHOUT ROWID;
)sql";

// Version 14: per-node credentials. An agent enrols once with the join token and
// gets a secret bound to its node's name; only a hash of the secret is kept
// (server/nodes/node_credentials.h).
constexpr const char* kV14 = R"sql(
CREATE TABLE node_credentials (
  node         TEXT PRIMARY KEY,
  secret_hash  TEXT NOT NULL UNIQUE,
  enrolled_ms  INTEGER NOT NULL,
  remote       TEXT NOT NULL
) WITHOUT ROWID;
)sql";

// Version 15: the accounts audit trail: sign-ins refused by throttling, password
// changes and resets (server/audit.h, AuthEvent).
constexpr const char* kV15 = R"sql(
CREATE TABLE auth_events (
  id        INTEGER PRIMARY KEY,
  t_ms      INTEGER NOT NULL,
  action    TEXT NOT NULL,
  address   TEXT NOT NULL,
  username  TEXT NOT NULL,
  actor     TEXT NOT NULL,
  detail    TEXT NOT NULL
);
)sql";

// Version 16: SSH host keys pinned per agentless node: the key ssh accepts
// ("type base64"; '' for nodes declared before, which are checked against the
// known_hosts file learnt at their first contact), how it was pinned ("given",
// "fingerprint", "scanned") and when (server/nodes/ssh_nodes.h).
constexpr const char* kV16 = R"sql(
ALTER TABLE ssh_nodes ADD COLUMN host_key TEXT NOT NULL DEFAULT '';
ALTER TABLE ssh_nodes ADD COLUMN host_key_source TEXT NOT NULL DEFAULT '';
ALTER TABLE ssh_nodes ADD COLUMN host_key_ms INTEGER NOT NULL DEFAULT 0;
)sql";
constexpr const char* kPgV16 = R"sql(
ALTER TABLE ssh_nodes ADD COLUMN host_key TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE ssh_nodes ADD COLUMN host_key_source TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE ssh_nodes ADD COLUMN host_key_ms BIGINT NOT NULL DEFAULT 0;
)sql";

// Version 17: several servers on one PostgreSQL (server/leadership/, docs/design-store.md,
// "Leader lease"). leader_lease holds one row, 'leader': the server holding the lease,
// the address it serves, its epoch (the fencing token: +1 at each acquisition) and when
// it expires, on the database's clock (ms since the epoch). servers: every server's last
// renewal of its registration. Unused on SQLite (one server, always leader), created
// there too so both backends keep one schema.
constexpr const char* kV17 = R"sql(
CREATE TABLE leader_lease (
  name           TEXT PRIMARY KEY,
  holder         TEXT NOT NULL,
  address        TEXT NOT NULL,
  epoch          INTEGER NOT NULL,
  expires_at_ms  INTEGER NOT NULL,
  renewed_at_ms  INTEGER NOT NULL
);
INSERT INTO leader_lease VALUES ('leader', '', '', 0, 0, 0);
CREATE TABLE servers (
  id             TEXT PRIMARY KEY,
  address        TEXT NOT NULL,
  version        TEXT NOT NULL,
  started_ms     INTEGER NOT NULL,
  last_seen_ms   INTEGER NOT NULL
);
)sql";
constexpr const char* kPgV17 = R"sql(
CREATE TABLE leader_lease (
  name           TEXT COLLATE "C" PRIMARY KEY,
  holder         TEXT COLLATE "C" NOT NULL,
  address        TEXT COLLATE "C" NOT NULL,
  epoch          BIGINT NOT NULL,
  expires_at_ms  BIGINT NOT NULL,
  renewed_at_ms  BIGINT NOT NULL
);
INSERT INTO leader_lease VALUES ('leader', '', '', 0, 0, 0);
CREATE TABLE servers (
  id             TEXT COLLATE "C" PRIMARY KEY,
  address        TEXT COLLATE "C" NOT NULL,
  version        TEXT COLLATE "C" NOT NULL,
  started_ms     BIGINT NOT NULL,
  last_seen_ms   BIGINT NOT NULL
);
)sql";

// Version 18: secrets (server/secrets/secrets.h, docs/design-secrets.md): each value
// sealed with AES-256-GCM under the key `key_id` of the data directory's keyring,
// owned by a user (owner_user_id) or a group (owner_group, by name).
constexpr const char* kV18 = R"sql(
CREATE TABLE secrets (
  name           TEXT PRIMARY KEY,
  owner_user_id  INTEGER NOT NULL,
  owner_group    TEXT NOT NULL,
  created_by     INTEGER NOT NULL,
  created_ms     INTEGER NOT NULL,
  last_used_ms   INTEGER NOT NULL,
  size           INTEGER NOT NULL,
  key_id         INTEGER NOT NULL,
  sealed         TEXT NOT NULL
);
)sql";
constexpr const char* kPgV18 = R"sql(
CREATE TABLE secrets (
  name           TEXT COLLATE "C" PRIMARY KEY,
  owner_user_id  BIGINT NOT NULL,
  owner_group    TEXT COLLATE "C" NOT NULL,
  created_by     BIGINT NOT NULL,
  created_ms     BIGINT NOT NULL,
  last_used_ms   BIGINT NOT NULL,
  size           BIGINT NOT NULL,
  key_id         BIGINT NOT NULL,
  sealed         TEXT COLLATE "C" NOT NULL
);
)sql";

// Version 19: job arrays (docs/design-jobs.md, "Job arrays"). job_arrays holds
// what was submitted (the template spec, the indices as text, the cap on
// members running at once); each member is an ordinary job row that names its
// array, its index and the array's cap (what the scheduling pass needs without
// reading job_arrays), and a sweep's trial its parameters (params_json) and the
// sweep's budget of failed trials. array_id 0: not a member.
constexpr const char* kV19 = R"sql(
CREATE TABLE job_arrays (
  id           INTEGER PRIMARY KEY,
  owner_id     INTEGER NOT NULL REFERENCES users(id),
  name         TEXT NOT NULL,
  indices      TEXT NOT NULL,
  max_running  INTEGER NOT NULL,
  size         INTEGER NOT NULL,
  spec_json    TEXT NOT NULL,
  created_ms   INTEGER NOT NULL,
  sweep_json   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX job_arrays_owner ON job_arrays(owner_id, id);
ALTER TABLE jobs ADD COLUMN array_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN array_index INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN array_cap INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN array_max_failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN params_json TEXT NOT NULL DEFAULT '';
CREATE INDEX jobs_array ON jobs(array_id, id);
)sql";
constexpr const char* kPgV19 = R"sql(
CREATE TABLE job_arrays (
  id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  owner_id     BIGINT NOT NULL REFERENCES users(id),
  name         TEXT COLLATE "C" NOT NULL,
  indices      TEXT COLLATE "C" NOT NULL,
  max_running  BIGINT NOT NULL,
  size         BIGINT NOT NULL,
  spec_json    TEXT COLLATE "C" NOT NULL,
  created_ms   BIGINT NOT NULL,
  sweep_json   TEXT COLLATE "C" NOT NULL DEFAULT ''
);
CREATE INDEX job_arrays_owner ON job_arrays(owner_id, id);
ALTER TABLE jobs ADD COLUMN array_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN array_index BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN array_cap BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN array_max_failures BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN params_json TEXT COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX jobs_array ON jobs(array_id, id);
)sql";

// Version 20: tasks' metrics (docs/design-jobs.md, "Metrics"): the points a
// job's tasks reported in rota-metric lines, each kept once by its identity
// (task, source 0 stdout / 1 the metrics file, the line's offset, name); step -1:
// none given.
constexpr const char* kV20 = R"sql(
CREATE TABLE task_metrics (
  job_id   INTEGER NOT NULL,
  task     TEXT NOT NULL,
  source   INTEGER NOT NULL,
  seq      INTEGER NOT NULL,
  name     TEXT NOT NULL,
  step     INTEGER NOT NULL,
  value    REAL NOT NULL,
  time_ms  INTEGER NOT NULL,
  PRIMARY KEY (task, source, seq, name)
);
CREATE INDEX task_metrics_job ON task_metrics(job_id, time_ms);
)sql";
constexpr const char* kPgV20 = R"sql(
CREATE TABLE task_metrics (
  job_id   BIGINT NOT NULL,
  task     TEXT COLLATE "C" NOT NULL,
  source   BIGINT NOT NULL,
  seq      BIGINT NOT NULL,
  name     TEXT COLLATE "C" NOT NULL,
  step     BIGINT NOT NULL,
  value    DOUBLE PRECISION NOT NULL,
  time_ms  BIGINT NOT NULL,
  PRIMARY KEY (task, source, seq, name)
);
CREATE INDEX task_metrics_job ON task_metrics(job_id, time_ms);
)sql";

constexpr std::array<Migration, 20> kAll = {{{kV1}, {kV2}, {kV3}, {kV4}, {kV5}, {kV6}, {kV7}, {kV8},
                                             {kV9}, {kV10}, {kV11}, {kV12}, {kV13}, {kV14},
                                             {kV15}, {kV16, kPgV16}, {kV17, kPgV17}, {kV18, kPgV18}, {kV19, kPgV19},
                                             {kV20, kPgV20}}};

std::string Hex(int64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%08llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::span<const Migration> Migrations() { return kAll; }

Result<int64_t> SchemaVersion(Db& db) {
  if (db.dialect() == Dialect::kPostgres) return PgSchemaVersion(db);
  ASSIGN_OR_RETURN(int64_t has_table,
                   db.QueryInt("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
                               "name = 'schema_version'"));
  if (has_table == 0) return int64_t{0};
  return db.QueryInt("SELECT coalesce(max(version), 0) FROM schema_version");
}

Status ApplySchema(Db& db, int64_t now_ms, std::span<const Migration> migrations) {
  if (db.dialect() == Dialect::kPostgres) return ApplyPgSchema(db, now_ms, migrations);
  const auto target = static_cast<int64_t>(migrations.size());
  ASSIGN_OR_RETURN(auto tx, Transaction::Begin(db));

  // Recognize files that are SQLite databases but not ours.
  ASSIGN_OR_RETURN(int64_t app_id, db.QueryInt("PRAGMA application_id"));
  if (app_id != 0 && app_id != kApplicationId) {
    return Status::InvalidArgument(db.path() +
                                   " is a SQLite database of another program "
                                   "(application_id " +
                                   Hex(app_id) + "), not a rota store");
  }
  ASSIGN_OR_RETURN(int64_t version, SchemaVersion(db));
  if (version == 0) {
    ASSIGN_OR_RETURN(int64_t tables,
                     db.QueryInt("SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE "
                                 "'sqlite_%'"));
    if (tables != 0) {
      return Status::InvalidArgument(db.path() +
                                     " holds tables but no schema_version: "
                                     "not a rota store");
    }
    RETURN_IF_ERROR(db.Exec(
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_ms INTEGER NOT NULL)"));
    RETURN_IF_ERROR(db.Exec("PRAGMA application_id = " + std::to_string(kApplicationId)));
  }
  if (version > target) {
    return Status::Conflict(db.path() + " has schema version " + std::to_string(version) +
                            " but this rota supports up to version " + std::to_string(target) +
                            "; it was written by a newer rota: upgrade rota (the database was "
                            "not changed)");
  }
  ASSIGN_OR_RETURN(Stmt record,
                   db.Prepare("INSERT INTO schema_version (version, applied_ms) VALUES (?1, ?2)"));
  for (int64_t v = version + 1; v <= target; ++v) {
    Status st = db.Exec(migrations[static_cast<size_t>(v - 1)].sql);
    if (!st.ok()) return st.WithContext("schema migration to version " + std::to_string(v));
    record.Reset();
    RETURN_IF_ERROR(record.Bind(1, v).Bind(2, now_ms).Run());
  }
  return tx.Commit();
}

}  // namespace rota::store
