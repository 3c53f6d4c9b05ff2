#include "enforce/detector.h"

#include <algorithm>
#include <map>
#include <string_view>

namespace rota::enforce {
namespace {

bool Contains(const std::vector<uint32_t>& v, uint32_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

bool Contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

bool IsExemptProcess(const api::GpuProcess& p, const std::vector<std::string>& exempt_commands) {
  if (exempt_commands.empty()) return false;
  const std::string path = !p.exe.empty() ? p.exe : p.command.substr(0, p.command.find(' '));
  if (path.empty()) return false;
  const size_t slash = path.rfind('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  auto matches = [&](std::string_view exe) {
    if (exe.empty()) return false;
    if (exe[0] == '/') return exe == path;
    return !base.empty() && exe == base;
  };
  for (const std::string& entry : exempt_commands) {
    std::string_view exe = entry;
    const size_t colon = entry.find(':');
    if (!entry.empty() && entry[0] != '/' && colon != std::string::npos) {
      const std::string user = entry.substr(0, colon);
      const bool same_user = (!p.user.empty() && user == p.user) ||
                             (p.uid.has_value() && user == std::to_string(*p.uid));
      if (!same_user) continue;
      exe = std::string_view(entry).substr(colon + 1);
    }
    if (matches(exe)) return true;
  }
  return false;
}

std::vector<Offence> Detect(const std::string& node, const api::NodeSample& sample,
                            const std::vector<ReservationView>& active,
                            const std::vector<JobAllocationView>& jobs,
                            const EnforcementSettings& node_default) {
  std::vector<Offence> out;
  for (const api::GpuSample& gpu : sample.gpus) {
    // Reservations covering this GPU, lowest id first.
    std::vector<const ReservationView*> covering;
    for (const auto& r : active) {
      if (r.node == node && Contains(r.gpus, gpu.index)) covering.push_back(&r);
    }
    std::sort(covering.begin(), covering.end(),
              [](const ReservationView* a, const ReservationView* b) { return a->id < b->id; });
    const ReservationView* charged = covering.empty() ? nullptr : covering.front();
    const EnforcementSettings& settings = charged ? charged->settings : node_default;
    if (settings.mode == "off") continue;
    if (!charged && settings.mode != "strict") continue;
    if (charged && charged->owner_unix_user.empty()) continue;

    std::map<uint32_t, Offence> by_uid;
    for (const api::GpuProcess& p : gpu.processes) {
      if (!p.uid.has_value()) continue;
      if (*p.uid < settings.min_uid) continue;  // root or a system account
      bool fine = false;
      for (const ReservationView* r : covering) {
        fine = fine || (!p.user.empty() && p.user == r->owner_unix_user);
      }
      for (const auto& j : jobs) {
        fine = fine || (j.node == node && Contains(j.gpus, gpu.index) && !p.user.empty() &&
                        p.user == j.unix_user);
      }
      fine = fine || (!p.user.empty() && Contains(settings.exempt_users, p.user)) ||
             IsExemptProcess(p, settings.exempt_commands);
      if (fine) continue;

      auto [it, inserted] = by_uid.try_emplace(*p.uid);
      Offence& o = it->second;
      if (inserted) {
        o.node = node;
        o.gpu = gpu.index;
        o.gpu_uuid = gpu.uuid;
        o.uid = *p.uid;
        o.unix_user = p.user;
        o.settings = settings;
        if (charged) {
          o.reservation_id = charged->id;
          o.reservation_owner_id = charged->owner_id;
          o.reservation_owner_username = charged->owner_username;
          o.reservation_title = charged->title;
          o.reservation_start_ms = charged->start_ms;
          o.reservation_end_ms = charged->end_ms;
        }
      }
      if (o.unix_user.empty()) o.unix_user = p.user;
      bool seen = false;
      for (const auto& q : o.processes) seen = seen || q.pid == p.pid;
      if (!seen) o.processes.push_back({p.pid, p.start_time_ms.value_or(0), p.command});
    }
    for (auto& [uid, o] : by_uid) {
      std::sort(o.processes.begin(), o.processes.end(),
                [](const OffendingProcess& a, const OffendingProcess& b) { return a.pid < b.pid; });
      out.push_back(std::move(o));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Offence& a, const Offence& b) {
    return a.gpu != b.gpu ? a.gpu < b.gpu : a.uid < b.uid;
  });
  return out;
}

}  // namespace rota::enforce
