#include "server/store/usage.h"

#include <algorithm>
#include <limits>
#include <map>

#include "accounting/report.h"
#include "api/codec.h"

namespace rota::store {
namespace {

constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// SQLite integers are signed: counters beyond int64 (never sent: the codec caps them) are
// clamped rather than wrapped.
int64_t ToInt(uint64_t v) { return static_cast<int64_t>(std::min(v, kInt64Max)); }

Status PutCpuMeter(Stmt& put, const std::string& node, const accounting::CpuMeterState& m) {
  api::Json tasks = api::Json::object();
  for (const auto& [id, usec] : m.task_usec) tasks[id] = ToInt(usec);
  std::optional<int64_t> busy;
  if (m.busy_usec) busy = ToInt(*m.busy_usec);
  put.Reset();
  return put.Bind(1, node).Bind(2, m.time_ms).Bind(3, ToInt(m.energy_mj)).Bind(4, busy)
      .Bind(5, tasks.dump()).Run();
}

// tasks_json as written by PutCpuMeter; nullopt when it is not that.
std::optional<std::map<std::string, uint64_t>> ParseTasks(const std::string& text) {
  auto j = api::ParseJson(text);
  if (!j.ok() || !j->is_object()) return std::nullopt;
  std::map<std::string, uint64_t> out;
  for (auto it = j->begin(); it != j->end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0) return std::nullopt;
    out[it.key()] = it.value().get<uint64_t>();
  }
  return out;
}

}  // namespace

Status AddUsage(Db& db, const std::map<accounting::Key, accounting::Amounts>& rows,
                const std::map<accounting::MeterKey, accounting::MeterState>& meters) {
  if (!rows.empty()) {
    ASSIGN_OR_RETURN(Stmt add, db.Prepare(
        "INSERT INTO usage_hourly (bucket_ms, node, job_id, \"user\", grp, reservation_id, gpu_ms, "
        "busy_ms, util_ms, energy_mj, counter_mj, estimated_mj, unmeasured_ms, idle_mj, cpu_mj) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) "
        "ON CONFLICT (bucket_ms, node, job_id, \"user\", grp, reservation_id) DO UPDATE SET "
        "gpu_ms = usage_hourly.gpu_ms + excluded.gpu_ms, "
        "busy_ms = usage_hourly.busy_ms + excluded.busy_ms, "
        "util_ms = usage_hourly.util_ms + excluded.util_ms, "
        "energy_mj = usage_hourly.energy_mj + excluded.energy_mj, "
        "counter_mj = usage_hourly.counter_mj + excluded.counter_mj, "
        "estimated_mj = usage_hourly.estimated_mj + excluded.estimated_mj, "
        "unmeasured_ms = usage_hourly.unmeasured_ms + excluded.unmeasured_ms, "
        "idle_mj = usage_hourly.idle_mj + excluded.idle_mj, "
        "cpu_mj = usage_hourly.cpu_mj + excluded.cpu_mj"));
    for (const auto& [k, a] : rows) {
      add.Reset();
      RETURN_IF_ERROR(add.Bind(1, k.bucket_ms).Bind(2, k.node).Bind(3, k.job_id).Bind(4, k.user)
                          .Bind(5, k.group).Bind(6, k.reservation_id).Bind(7, a.gpu_ms)
                          .Bind(8, a.busy_ms).Bind(9, a.util_ms).Bind(10, a.energy_mj)
                          .Bind(11, a.counter_mj).Bind(12, a.estimated_mj).Bind(13, a.unmeasured_ms)
                          .Bind(14, a.idle_mj).Bind(15, a.cpu_mj).Run());
    }
  }
  if (!meters.empty()) {
    ASSIGN_OR_RETURN(Stmt put, db.Prepare(
        "INSERT INTO energy_meters (node, gpu_index, uuid, time_ms, counter_mj, power_mw) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (node, gpu_index) DO UPDATE SET "
        "uuid = excluded.uuid, time_ms = excluded.time_ms, counter_mj = excluded.counter_mj, "
        "power_mw = excluded.power_mw"));
    ASSIGN_OR_RETURN(Stmt put_cpu, db.Prepare(
        "INSERT INTO cpu_meters (node, time_ms, energy_mj, busy_usec, tasks_json) "
        "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (node) DO UPDATE SET time_ms = excluded.time_ms, "
        "energy_mj = excluded.energy_mj, busy_usec = excluded.busy_usec, "
        "tasks_json = excluded.tasks_json"));
    for (const auto& [k, m] : meters) {
      if (k.second == accounting::kCpuMeter) {
        if (m.cpu) RETURN_IF_ERROR(PutCpuMeter(put_cpu, k.first, *m.cpu));
        continue;
      }
      put.Reset();
      std::optional<int64_t> counter;
      if (m.last.counter_mj) counter = static_cast<int64_t>(*m.last.counter_mj);
      std::optional<int64_t> power;
      if (m.last.power_mw) power = static_cast<int64_t>(*m.last.power_mw);
      RETURN_IF_ERROR(put.Bind(1, k.first).Bind(2, static_cast<int64_t>(k.second)).Bind(3, m.uuid)
                          .Bind(4, m.last.time_ms).Bind(5, counter).Bind(6, power).Run());
    }
  }
  return Status::Ok();
}

Result<std::map<accounting::MeterKey, accounting::MeterState>> LoadMeters(Db& db) {
  std::map<accounting::MeterKey, accounting::MeterState> out;
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(
      "SELECT node, gpu_index, uuid, time_ms, counter_mj, power_mw FROM energy_meters"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    accounting::MeterState m;
    m.uuid = s.Text(2);
    m.last.time_ms = s.Int(3);
    if (auto c = s.OptInt(4)) m.last.counter_mj = static_cast<uint64_t>(*c);
    if (auto p = s.OptInt(5)) m.last.power_mw = static_cast<uint32_t>(*p);
    out[{s.Text(0), static_cast<uint32_t>(s.Int(1))}] = m;
  }
  ASSIGN_OR_RETURN(Stmt cpu, db.Prepare(
      "SELECT node, time_ms, energy_mj, busy_usec, tasks_json FROM cpu_meters"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, cpu.Step());
    if (!row) break;
    // A row that does not read back (edited by hand) is left out: that node's next
    // interval is then not accounted, as after its first sample.
    auto tasks = ParseTasks(cpu.Text(4));
    if (!tasks || cpu.Int(2) < 0) continue;
    accounting::CpuMeterState c;
    c.time_ms = cpu.Int(1);
    c.energy_mj = static_cast<uint64_t>(cpu.Int(2));
    if (auto b = cpu.OptInt(3); b && *b >= 0) c.busy_usec = static_cast<uint64_t>(*b);
    c.task_usec = std::move(*tasks);
    accounting::MeterState m;
    m.cpu = std::move(c);
    out[{cpu.Text(0), accounting::kCpuMeter}] = std::move(m);
  }
  return out;
}

Result<std::vector<UsageSum>> QueryUsage(Db& db, const UsageQuery& q) {
  std::string column;
  if (q.by == "user") column = "\"user\"";
  else if (q.by == "group") column = "grp";
  else if (q.by == "job") column = "CAST(job_id AS TEXT)";
  else if (q.by == "reservation") column = "CAST(reservation_id AS TEXT)";
  else if (q.by == "node") column = "node";
  else return Status::InvalidArgument("by: use user, group, job, reservation or node");
  if (q.bucket_ms <= 0) return Status::InvalidArgument("bucket_ms: must be > 0");
  // Every bucket that overlaps the window, summed per bucket; weighted below.
  std::string sql = "SELECT bucket_ms, " + column + " AS k, sum(gpu_ms), sum(busy_ms), sum(util_ms), "
                    "sum(energy_mj), sum(counter_mj), sum(estimated_mj), sum(unmeasured_ms), "
                    "sum(CASE WHEN reservation_id != 0 THEN gpu_ms - busy_ms ELSE 0 END), "
                    "sum(CASE WHEN job_id = 0 THEN idle_mj ELSE 0 END), sum(idle_mj), sum(cpu_mj) "
                    "FROM usage_hourly WHERE bucket_ms > ?1 AND bucket_ms < ?2";
  if (!q.node.empty()) sql += " AND node = ?3";
  if (!q.user.empty()) sql += " AND \"user\" = ?4";
  if (q.by == "job") sql += " AND job_id != 0";
  if (q.by == "reservation") sql += " AND reservation_id != 0";
  sql += " GROUP BY bucket_ms, k";
  ASSIGN_OR_RETURN(Stmt s, db.Prepare(sql));
  s.Bind(1, q.from_ms - q.bucket_ms).Bind(2, q.to_ms);
  if (!q.node.empty()) s.Bind(3, q.node);
  if (!q.user.empty()) s.Bind(4, q.user);
  std::map<std::string, UsageSum> by_key;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    const double share = accounting::BucketShare(s.Int(0), q.bucket_ms, q.from_ms, q.to_ms, q.now_ms);
    if (share <= 0) continue;
    accounting::Amounts a;
    a.gpu_ms = s.Double(2);
    a.busy_ms = s.Double(3);
    a.util_ms = s.Double(4);
    a.energy_mj = s.Double(5);
    a.counter_mj = s.Double(6);
    a.estimated_mj = s.Double(7);
    a.unmeasured_ms = s.Double(8);
    a.idle_mj = s.Double(11);
    a.cpu_mj = s.Double(12);
    UsageSum& u = by_key[s.Text(1)];
    u.amounts += accounting::Scaled(a, share);
    u.reserved_idle_ms += s.Double(9) * share;
    u.idle_energy_mj += s.Double(10) * share;
  }
  if (q.by == "node" && !by_key.empty()) {
    ASSIGN_OR_RETURN(Stmt g, db.Prepare("SELECT n.name, count(*) FROM nodes n JOIN gpus ON gpus.node = n.id "
                                        "GROUP BY n.name"));
    while (true) {
      ASSIGN_OR_RETURN(bool row, g.Step());
      if (!row) break;
      auto it = by_key.find(g.Text(0));
      if (it != by_key.end()) it->second.gpus = static_cast<int>(g.Int(1));
    }
  }
  std::vector<UsageSum> out;
  out.reserve(by_key.size());
  for (auto& [key, u] : by_key) {
    u.key = key;
    out.push_back(std::move(u));
  }
  std::stable_sort(out.begin(), out.end(), [](const UsageSum& x, const UsageSum& y) {
    return x.amounts.gpu_ms > y.amounts.gpu_ms;  // ties stay in key order
  });
  return out;
}

}  // namespace rota::store
