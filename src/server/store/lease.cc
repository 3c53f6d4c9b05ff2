#include "server/store/lease.h"

#include "server/store/pg_backend.h"
#include "server/store/schema.h"
#include "server/store/store_url.h"

namespace rota::store {
namespace {

// The database's clock in ms. clock_timestamp(): the time of the statement, not of the
// transaction (these statements run alone).
constexpr const char* kDbNow = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

}  // namespace

Result<std::unique_ptr<LeaseStore>> LeaseStore::Open(const std::string& url, Clock& clock) {
  ASSIGN_OR_RETURN(StoreUrl u, ParseStoreUrl(url));
  if (u.dialect != Dialect::kPostgres) {
    return Status::InvalidArgument("a leader lease needs a PostgreSQL store, not " + u.display);
  }
  auto fail = [](const Status& st) { return st.WithContext("cannot open store"); };
  auto db = OpenPostgres(u.pg_url, u.display);
  if (!db.ok()) return fail(db.status());
  if (Status st = ApplySchema(*db, clock.NowMs()); !st.ok()) return fail(st);
  return std::unique_ptr<LeaseStore>(new LeaseStore(std::move(*db)));
}

LeaseStore::~LeaseStore() = default;

Result<LeaseRecord> LeaseStore::Read() {
  ASSIGN_OR_RETURN(Stmt s, db_.Prepare(std::string("SELECT holder, address, epoch, expires_at_ms, "
                                                   "renewed_at_ms, ") +
                                       kDbNow + " FROM leader_lease WHERE name = 'leader'"));
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::Internal("the store has no leader_lease row");
  LeaseRecord r;
  r.holder = s.Text(0);
  r.address = s.Text(1);
  r.epoch = s.Int(2);
  r.expires_at_ms = s.Int(3);
  r.renewed_at_ms = s.Int(4);
  r.db_now_ms = s.Int(5);
  return r;
}

Result<std::optional<int64_t>> LeaseStore::TryAcquire(const LeaseRecord& seen,
                                                      const std::string& holder,
                                                      const std::string& address, int64_t ttl_ms) {
  ASSIGN_OR_RETURN(Stmt s, db_.Prepare(std::string("UPDATE leader_lease SET holder = ?1, address = ?2, "
                                                   "epoch = epoch + 1, expires_at_ms = ") +
                                       kDbNow + " + ?3, renewed_at_ms = " + kDbNow +
                                       " WHERE name = 'leader' AND epoch = ?4 AND expires_at_ms <= " +
                                       kDbNow + " RETURNING epoch"));
  s.Bind(1, holder).Bind(2, address).Bind(3, ttl_ms).Bind(4, seen.epoch);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<int64_t>();
  return std::optional<int64_t>(s.Int(0));
}

Result<bool> LeaseStore::Renew(const std::string& holder, int64_t epoch, int64_t ttl_ms) {
  ASSIGN_OR_RETURN(Stmt s, db_.Prepare(std::string("UPDATE leader_lease SET expires_at_ms = ") + kDbNow +
                                       " + ?1, renewed_at_ms = " + kDbNow +
                                       " WHERE name = 'leader' AND holder = ?2 AND epoch = ?3 AND "
                                       "expires_at_ms > " +
                                       kDbNow));
  s.Bind(1, ttl_ms).Bind(2, holder).Bind(3, epoch);
  RETURN_IF_ERROR(s.Run());
  return db_.Changes() == 1;
}

Status LeaseStore::Release(const std::string& holder, int64_t epoch) {
  ASSIGN_OR_RETURN(Stmt s, db_.Prepare(std::string("UPDATE leader_lease SET expires_at_ms = ") + kDbNow +
                                       " WHERE name = 'leader' AND holder = ?1 AND epoch = ?2"));
  s.Bind(1, holder).Bind(2, epoch);
  return s.Run();
}

Status LeaseStore::Register(const ServerRecord& server) {
  ASSIGN_OR_RETURN(Stmt s, db_.Prepare(std::string("INSERT INTO servers (id, address, version, started_ms, "
                                                   "last_seen_ms) VALUES (?1, ?2, ?3, ?4, ") +
                                       kDbNow +
                                       ") ON CONFLICT (id) DO UPDATE SET address = excluded.address, "
                                       "version = excluded.version, last_seen_ms = excluded.last_seen_ms"));
  s.Bind(1, server.id).Bind(2, server.address).Bind(3, server.version).Bind(4, server.started_ms);
  return s.Run();
}

Result<std::vector<ServerRecord>> LeaseStore::ListServers(int64_t max_age_ms) {
  {
    ASSIGN_OR_RETURN(Stmt del, db_.Prepare(std::string("DELETE FROM servers WHERE last_seen_ms < ") +
                                           kDbNow + " - ?1"));
    del.Bind(1, max_age_ms);
    RETURN_IF_ERROR(del.Run());
  }
  ASSIGN_OR_RETURN(Stmt s, db_.Prepare("SELECT id, address, version, started_ms, last_seen_ms FROM "
                                       "servers ORDER BY id"));
  std::vector<ServerRecord> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(ServerRecord{s.Text(0), s.Text(1), s.Text(2), s.Int(3), s.Int(4)});
  }
  return out;
}

Status CheckFence(Db& db, const LeaseFence& fence) {
  ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT epoch FROM leader_lease WHERE name = 'leader' AND holder = ?1 "
                                      "AND epoch = ?2 AND expires_at_ms > (extract(epoch from now()) * "
                                      "1000)::bigint FOR SHARE"));
  s.Bind(1, fence.holder).Bind(2, fence.epoch);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) {
    return Status::Unavailable("this server no longer holds the leader lease (epoch " +
                               std::to_string(fence.epoch) + "): write refused");
  }
  return Status::Ok();
}

}  // namespace rota::store
