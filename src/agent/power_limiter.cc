#include "agent/power_limiter.h"

#include <unistd.h>

#include "api/codec.h"
#include "common/file_util.h"
#include "common/log.h"

namespace rota::agent {
namespace {

std::string Watts(uint32_t mw) {
  return mw % 1000 == 0 ? std::to_string(mw / 1000) + " W" : std::to_string(mw) + " mW";
}

bool IsRefusal(const Status& st) {
  return st.code() == StatusCode::kPermissionDenied || st.code() == StatusCode::kUnimplemented ||
         st.code() == StatusCode::kInvalidArgument;
}

}  // namespace

PowerLimiter::PowerLimiter(gpu::GpuProvider* gpu, std::vector<api::GpuInfo> gpus, std::string state_path)
    : gpu_(gpu), gpus_(std::move(gpus)), state_path_(std::move(state_path)) {}

api::PowerGpuReport PowerLimiter::SetOne(uint32_t index, const std::string& uuid,
                                         std::optional<uint32_t> mw) {
  api::PowerGpuReport r;
  r.index = index;
  r.uuid = uuid;
  r.requested_mw = mw;
  if (gpu_ == nullptr) {
    r.detail = "this node has no GPU access (NVML not loaded)";
    return r;
  }
  const api::GpuInfo* info = nullptr;
  for (const auto& g : gpus_) {
    if (g.index == index) info = &g;
  }
  if (info == nullptr || (!uuid.empty() && info->uuid != uuid)) {
    r.detail = info == nullptr ? "this node has no GPU " + std::to_string(index)
                               : "GPU " + std::to_string(index) + " is " + info->uuid + ", not " + uuid;
    return r;
  }
  r.uuid = info->uuid;
  auto limits = gpu_->GetPowerLimits(index);
  if (!limits.ok()) {
    r.outcome = IsRefusal(limits.status()) ? api::PowerOutcome::kRefused : api::PowerOutcome::kError;
    r.detail = "cannot read the power limits: " + limits.status().message();
    return r;
  }
  r.previous_mw = limits->current_mw;
  r.limit_mw = limits->current_mw;
  r.default_mw = limits->default_mw;
  r.min_mw = limits->min_mw;
  r.max_mw = limits->max_mw;
  const uint32_t want = mw.value_or(limits->default_mw);
  if (limits->current_mw == want) {
    r.outcome = api::PowerOutcome::kUnchanged;
    r.detail = Watts(want) + " in force already";
  } else if (Status st = gpu_->SetPowerLimit(index, want); !st.ok()) {
    r.outcome = IsRefusal(st) ? api::PowerOutcome::kRefused : api::PowerOutcome::kError;
    r.detail = st.message();
    return r;
  } else {
    r.outcome = mw ? api::PowerOutcome::kSet : api::PowerOutcome::kRestored;
    auto after = gpu_->GetPowerLimits(index);
    r.limit_mw = after.ok() ? after->current_mw : want;
    r.detail = (mw ? "set to " : "restored to the default ") + Watts(*r.limit_mw) + " (was " +
               Watts(limits->current_mw) + ")";
  }
  if (want == limits->default_mw) {
    changed_.erase(index);
  } else {
    changed_[index] = r.uuid;
  }
  return r;
}

api::PowerReportMsg PowerLimiter::Apply(const api::PowerLimitsMsg& msg) {
  api::PowerReportMsg out;
  std::map<uint32_t, bool> listed;
  for (const auto& s : msg.gpus) {
    listed[s.index] = s.limit_mw.has_value();
    // Asking for the default of a GPU this agent never changed: report what is in force.
    out.gpus.push_back(SetOne(s.index, s.uuid, s.limit_mw));
  }
  std::vector<std::pair<uint32_t, std::string>> restore;
  for (const auto& [index, uuid] : changed_) {
    if (!listed.count(index)) restore.emplace_back(index, uuid);
  }
  for (const auto& [index, uuid] : restore) out.gpus.push_back(SetOne(index, uuid, std::nullopt));
  Save();
  return out;
}

api::PowerReportMsg PowerLimiter::RestoreAll() {
  api::PowerReportMsg out;
  auto changed = changed_;
  for (const auto& [index, uuid] : changed) out.gpus.push_back(SetOne(index, uuid, std::nullopt));
  Save();
  return out;
}

api::PowerReportMsg PowerLimiter::RestoreLeftovers() {
  if (state_path_.empty()) return {};
  auto text = ReadFile(state_path_);
  if (!text.ok()) return {};
  auto j = api::ParseJson(*text);
  if (j.ok() && j->is_object() && j->contains("gpus") && (*j)["gpus"].is_array()) {
    for (const auto& e : (*j)["gpus"]) {
      if (!e.is_object() || !e.contains("index") || !e["index"].is_number_unsigned()) continue;
      const auto index = e["index"].get<uint32_t>();
      if (index >= api::kMaxGpusPerNode) continue;
      changed_[index] = e.contains("uuid") && e["uuid"].is_string() ? e["uuid"].get<std::string>() : "";
    }
  } else {
    ROTA_LOG(WARNING) << "ignoring unreadable " << state_path_;
  }
  return RestoreAll();
}

void PowerLimiter::Save() {
  if (state_path_.empty()) return;
  if (changed_.empty()) {
    ::unlink(state_path_.c_str());
    return;
  }
  api::Json gpus = api::Json::array();
  for (const auto& [index, uuid] : changed_) gpus.push_back({{"index", index}, {"uuid", uuid}});
  if (Status st = WriteFileAtomic(state_path_, api::Json{{"gpus", gpus}}.dump() + "\n", 0600); !st.ok()) {
    ROTA_LOG(WARNING) << "cannot record the GPUs whose power limit was changed: " << st.message();
  }
}

std::string DescribePowerReport(const api::PowerGpuReport& r) {
  return "GPU " + std::to_string(r.index) + ": " + api::PowerOutcomeName(r.outcome) +
         (r.detail.empty() ? "" : ": " + r.detail);
}

}  // namespace rota::agent
