#include "reserve/reservation.h"

#include <algorithm>
#include <limits>
#include <set>

#include "common/strings.h"
#include "common/time_util.h"
#include "reserve/json_fields.h"

namespace rota::reserve {
namespace {

using api::Json;

}  // namespace

const char* StateName(State state) {
  switch (state) {
    case State::kUpcoming: return "upcoming";
    case State::kRunning: return "running";
    case State::kEnded: return "ended";
    case State::kCancelled: return "cancelled";
  }
  return "unknown";
}

Result<State> ParseState(const std::string& text) {
  for (State s : {State::kUpcoming, State::kRunning, State::kEnded, State::kCancelled}) {
    if (text == StateName(s)) return s;
  }
  return Status::InvalidArgument("state '" + text +
                                 "' must be one of upcoming, running, ended, cancelled");
}

State Reservation::StateAt(int64_t now_ms) const {
  if (cancelled_ms) return State::kCancelled;
  if (now_ms < start_ms) return State::kUpcoming;
  if (now_ms < end_ms) return State::kRunning;
  return State::kEnded;
}

bool Reservation::Overlaps(int64_t from_ms, int64_t to_ms) const {
  return !cancelled_ms && start_ms < to_ms && from_ms < end_ms;
}

Status ValidateTitle(const std::string& title) {
  if (Trim(title).empty()) return Status::InvalidArgument("title: must not be empty");
  return CheckText("title", title, kMaxTitleChars, false);
}

Status ValidateDescription(const std::string& text) {
  return CheckText("description", text, kMaxDescriptionChars, true);
}

Status ValidateEnforcement(const Json& j) {
  if (!j.is_object()) return Status::InvalidArgument("enforcement: must be a JSON object");
  if (j.dump().size() > kMaxEnforcementBytes) {
    return Status::InvalidArgument("enforcement: larger than " +
                                   std::to_string(kMaxEnforcementBytes) + " bytes");
  }
  return Status::Ok();
}

Result<CreateRequest> CreateRequestFromJson(const Json& j) {
  JsonFields f(j, "reservation");
  RETURN_IF_ERROR(f.Only({"node", "gpus", "gpu_uuids", "count", "whole_node", "start", "end",
                          "title", "description", "enforcement"}));
  CreateRequest r;
  RETURN_IF_ERROR(f.Str("node", &r.node, /*required=*/true, 63));
  if (!api::IsValidNodeName(r.node)) {
    return Status::InvalidArgument("node: '" + r.node + "' is not a valid node name");
  }
  int ways = 0;
  if (f.Has("gpus")) {
    ++ways;
    r.choice = GpuChoice::kIndices;
    RETURN_IF_ERROR(f.UintArray("gpus", &r.gpus, api::kMaxGpusPerNode));
    if (r.gpus.empty()) return Status::InvalidArgument("gpus: must name at least one GPU");
    std::set<uint32_t> seen(r.gpus.begin(), r.gpus.end());
    if (seen.size() != r.gpus.size()) return Status::InvalidArgument("gpus: a GPU is named twice");
  }
  if (f.Has("gpu_uuids")) {
    ++ways;
    r.choice = GpuChoice::kUuids;
    RETURN_IF_ERROR(f.StrArray("gpu_uuids", &r.gpu_uuids, api::kMaxGpusPerNode, 128));
    if (r.gpu_uuids.empty()) return Status::InvalidArgument("gpu_uuids: must name at least one GPU");
  }
  if (f.Has("count")) {
    ++ways;
    r.choice = GpuChoice::kCount;
    int64_t n = 0;
    RETURN_IF_ERROR(f.Int("count", &n, 1, static_cast<int64_t>(api::kMaxGpusPerNode)));
    r.count = static_cast<uint32_t>(n);
  }
  if (f.Has("whole_node")) {
    bool whole = false;
    RETURN_IF_ERROR(f.Bool("whole_node", &whole));
    if (whole) {
      ++ways;
      r.choice = GpuChoice::kWholeNode;
    }
  }
  if (ways != 1) {
    return Status::InvalidArgument(
        "give exactly one of gpus, gpu_uuids, count or whole_node: true");
  }
  RETURN_IF_ERROR(f.Time("start", &r.start_ms, true));
  RETURN_IF_ERROR(f.Time("end", &r.end_ms, true));
  RETURN_IF_ERROR(f.Str("title", &r.title, true, 4 * kMaxTitleChars + 64));
  RETURN_IF_ERROR(ValidateTitle(r.title));
  RETURN_IF_ERROR(f.Str("description", &r.description, false, 4 * kMaxDescriptionChars + 64));
  RETURN_IF_ERROR(ValidateDescription(r.description));
  if (f.Has("enforcement")) {
    r.enforcement = j["enforcement"];
    RETURN_IF_ERROR(ValidateEnforcement(r.enforcement));
  }
  return r;
}

Result<Patch> PatchFromJson(const Json& j) {
  JsonFields f(j, "patch");
  RETURN_IF_ERROR(f.Only({"start", "end", "title", "description", "enforcement"}));
  Patch p;
  int64_t t;
  std::string s;
  if (f.Has("start")) {
    RETURN_IF_ERROR(f.Time("start", &t, true));
    p.start_ms = t;
  }
  if (f.Has("end")) {
    RETURN_IF_ERROR(f.Time("end", &t, true));
    p.end_ms = t;
  }
  if (f.Has("title")) {
    RETURN_IF_ERROR(f.Str("title", &s, true, 4 * kMaxTitleChars + 64));
    RETURN_IF_ERROR(ValidateTitle(s));
    p.title = s;
  }
  if (f.Has("description")) {
    RETURN_IF_ERROR(f.Str("description", &s, true, 4 * kMaxDescriptionChars + 64));
    RETURN_IF_ERROR(ValidateDescription(s));
    p.description = s;
  }
  if (f.Has("enforcement")) {
    RETURN_IF_ERROR(ValidateEnforcement(j["enforcement"]));
    p.enforcement = j["enforcement"];
  }
  if (!p.start_ms && !p.end_ms && !p.title && !p.description && !p.enforcement) {
    return Status::InvalidArgument("patch: nothing to change (give start, end, title, "
                                   "description or enforcement)");
  }
  return p;
}

namespace {

Status CheckLength(int64_t start_ms, int64_t end_ms) {
  if (end_ms < start_ms) {
    return Status::InvalidArgument("end (" + FormatRfc3339(end_ms) + ") is before start (" +
                                   FormatRfc3339(start_ms) + ")");
  }
  if (end_ms == start_ms) {
    return Status::InvalidArgument("end equals start (" + FormatRfc3339(start_ms) +
                                   "): a reservation must last at least 1 ms");
  }
  if (end_ms - start_ms > kMaxLengthMs) {
    return Status::InvalidArgument("reservation lasts " + FormatDurationMs(end_ms - start_ms) +
                                   "; at most " + FormatDurationMs(kMaxLengthMs) + " allowed");
  }
  return Status::Ok();
}

Result<int64_t> CheckStart(int64_t start_ms, int64_t now_ms) {
  if (start_ms < now_ms - kPastGraceMs) {
    return Status::InvalidArgument("start (" + FormatRfc3339(start_ms) +
                                   ") is in the past (now is " + FormatRfc3339(now_ms) + ")");
  }
  if (start_ms - now_ms > kMaxAheadMs) {
    return Status::InvalidArgument("start (" + FormatRfc3339(start_ms) + ") is more than " +
                                   FormatDurationMs(kMaxAheadMs) + " ahead");
  }
  return std::max(start_ms, now_ms);
}

}  // namespace

Result<int64_t> CheckNewInterval(int64_t start_ms, int64_t end_ms, int64_t now_ms) {
  RETURN_IF_ERROR(CheckLength(start_ms, end_ms));
  ASSIGN_OR_RETURN(int64_t start, CheckStart(start_ms, now_ms));
  RETURN_IF_ERROR(CheckLength(start, end_ms));
  return start;
}

Result<Reservation> ApplyPatch(const Reservation& cur, const Patch& p, int64_t now_ms) {
  const std::string what = "reservation " + std::to_string(cur.id);
  switch (cur.StateAt(now_ms)) {
    case State::kCancelled:
      return Status::Conflict(what + " was cancelled; it cannot change");
    case State::kEnded:
      return Status::Conflict(what + " ended at " + FormatRfc3339(cur.end_ms) +
                              "; the past cannot change");
    case State::kRunning:
      if (p.start_ms && *p.start_ms != cur.start_ms) {
        return Status::Conflict(what + " started at " + FormatRfc3339(cur.start_ms) +
                                "; its start cannot change while it runs");
      }
      break;
    case State::kUpcoming:
      break;
  }
  Reservation next = cur;
  if (p.title) next.title = *p.title;
  if (p.description) next.description = *p.description;
  if (p.enforcement) next.enforcement = *p.enforcement;
  if (p.start_ms || p.end_ms) {
    next.start_ms = p.start_ms.value_or(cur.start_ms);
    next.end_ms = p.end_ms.value_or(cur.end_ms);
    if (cur.StateAt(now_ms) == State::kRunning) {
      if (next.end_ms < now_ms - kPastGraceMs) {
        return Status::InvalidArgument("end (" + FormatRfc3339(next.end_ms) +
                                       ") is in the past; a running reservation can end now "
                                       "at the earliest");
      }
      next.end_ms = std::max(next.end_ms, now_ms);
      RETURN_IF_ERROR(CheckLength(next.start_ms, next.end_ms));
    } else {
      RETURN_IF_ERROR(CheckLength(next.start_ms, next.end_ms));
      ASSIGN_OR_RETURN(next.start_ms, CheckStart(next.start_ms, now_ms));
      RETURN_IF_ERROR(CheckLength(next.start_ms, next.end_ms));
    }
  }
  next.updated_ms = now_ms;
  return next;
}

Result<Reservation> ApplyCancel(const Reservation& cur, int64_t now_ms) {
  const std::string what = "reservation " + std::to_string(cur.id);
  Reservation next = cur;
  next.updated_ms = now_ms;
  switch (cur.StateAt(now_ms)) {
    case State::kCancelled:
      return Status::Conflict(what + " is cancelled already");
    case State::kEnded:
      return Status::Conflict(what + " ended at " + FormatRfc3339(cur.end_ms) +
                              "; the past cannot change");
    case State::kRunning:
      next.end_ms = now_ms;
      if (next.end_ms <= next.start_ms) next.end_ms = next.start_ms + 1;
      return next;
    case State::kUpcoming:
      next.cancelled_ms = now_ms;
      return next;
  }
  return Status::Internal("unknown state");
}

Status CheckFree(const std::string& node, const std::vector<uint32_t>& gpus,
                 const std::vector<Busy>& busy) {
  std::vector<Busy> hits;
  for (const Busy& b : busy) {
    if (std::find(gpus.begin(), gpus.end(), b.gpu) != gpus.end()) hits.push_back(b);
  }
  if (hits.empty()) return Status::Ok();
  return Status::Conflict(ConflictMessage(node, hits));
}

Result<std::vector<uint32_t>> ChooseGpus(const CreateRequest& req,
                                         const std::vector<NodeGpu>& node_gpus,
                                         const std::vector<Busy>& busy) {
  if (node_gpus.empty()) {
    return Status::InvalidArgument("node '" + req.node + "' has no GPUs to reserve");
  }
  std::string have;
  for (const auto& g : node_gpus) have += (have.empty() ? "" : ", ") + std::to_string(g.index);
  std::vector<uint32_t> out;
  switch (req.choice) {
    case GpuChoice::kIndices:
      for (uint32_t i : req.gpus) {
        bool known = std::any_of(node_gpus.begin(), node_gpus.end(),
                                 [&](const NodeGpu& g) { return g.index == i; });
        if (!known) {
          return Status::NotFound("gpus: node '" + req.node + "' has no GPU " +
                                  std::to_string(i) + " (it has " + have + ")");
        }
        out.push_back(i);
      }
      break;
    case GpuChoice::kUuids:
      for (const auto& u : req.gpu_uuids) {
        auto it = std::find_if(node_gpus.begin(), node_gpus.end(),
                               [&](const NodeGpu& g) { return g.uuid == u; });
        if (it == node_gpus.end()) {
          return Status::NotFound("gpu_uuids: node '" + req.node + "' has no GPU " + u);
        }
        if (std::find(out.begin(), out.end(), it->index) != out.end()) {
          return Status::InvalidArgument("gpu_uuids: " + u + " is named twice");
        }
        out.push_back(it->index);
      }
      break;
    case GpuChoice::kWholeNode:
      for (const auto& g : node_gpus) out.push_back(g.index);
      break;
    case GpuChoice::kCount: {
      if (req.count > node_gpus.size()) {
        return Status::InvalidArgument("count: node '" + req.node + "' has only " +
                                       std::to_string(node_gpus.size()) + " GPUs, not " +
                                       std::to_string(req.count));
      }
      std::set<uint32_t> taken;
      for (const Busy& b : busy) taken.insert(b.gpu);
      for (const auto& g : node_gpus) {
        if (out.size() < req.count && !taken.count(g.index)) out.push_back(g.index);
      }
      if (out.size() < req.count) {
        return Status::Conflict("only " + std::to_string(out.size()) + " of the " +
                                std::to_string(node_gpus.size()) + " GPUs of " + req.node +
                                " are free from " + FormatRfc3339(req.start_ms) + " to " +
                                FormatRfc3339(req.end_ms) + ", " + std::to_string(req.count) +
                                " asked: " + ConflictMessage(req.node, busy));
      }
      break;
    }
  }
  std::sort(out.begin(), out.end());
  RETURN_IF_ERROR(CheckFree(req.node, out, busy));
  return out;
}

std::string ConflictMessage(const std::string& node, const std::vector<Busy>& busy) {
  std::vector<Busy> sorted = busy;
  std::sort(sorted.begin(), sorted.end(), [](const Busy& a, const Busy& b) {
    return std::tie(a.gpu, a.start_ms, a.reservation_id) <
           std::tie(b.gpu, b.start_ms, b.reservation_id);
  });
  std::vector<std::string> parts;
  for (const Busy& b : sorted) {
    if (b.job_id > 0) {
      parts.push_back(node + "/" + std::to_string(b.gpu) + " is held by job " + std::to_string(b.job_id) + " of " +
                      b.owner + ", which is not preemptible and runs " +
                      (b.end_ms == std::numeric_limits<int64_t>::max() ? std::string("with no time limit")
                                                                        : "until " + FormatRfc3339(b.end_ms)));
      continue;
    }
    parts.push_back(node + "/" + std::to_string(b.gpu) + " is reserved by " + b.owner + " from " +
                    FormatRfc3339(b.start_ms) + " to " + FormatRfc3339(b.end_ms) +
                    " (reservation " + std::to_string(b.reservation_id) + ")");
  }
  return Join(parts, "; ");
}

Json ToJson(const Reservation& r, int64_t now_ms) {
  Json j{{"id", r.id},
         {"owner", r.owner},
         {"owner_id", r.owner_id},
         {"node", r.node},
         {"gpus", r.gpus},
         {"gpu_uuids", r.gpu_uuids},
         {"title", r.title},
         {"description", r.description},
         {"start", FormatRfc3339(r.start_ms)},
         {"end", FormatRfc3339(r.end_ms)},
         {"start_ms", r.start_ms},
         {"end_ms", r.end_ms},
         {"state", StateName(r.StateAt(now_ms))},
         {"created", FormatRfc3339(r.created_ms)},
         {"updated", FormatRfc3339(r.updated_ms)},
         {"enforcement", r.enforcement}};
  if (r.cancelled_ms) j["cancelled"] = FormatRfc3339(*r.cancelled_ms);
  if (r.avg_util_gpu) j["avg_util_gpu"] = *r.avg_util_gpu;
  if (r.avg_util_mem) j["avg_util_mem"] = *r.avg_util_mem;
  if (r.idle_notified_ms) j["idle_notified"] = FormatRfc3339(*r.idle_notified_ms);
  return j;
}

std::string FormatDurationMs(int64_t ms) {
  if (ms < 1000) return std::to_string(ms) + "ms";
  int64_t s = ms / 1000;
  int64_t d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;
  std::vector<std::string> parts;
  if (d) parts.push_back(std::to_string(d) + "d");
  if (h) parts.push_back(std::to_string(h) + "h");
  if (m) parts.push_back(std::to_string(m) + "m");
  if (sec && !d) parts.push_back(std::to_string(sec) + "s");
  return parts.empty() ? "0s" : Join(parts, " ");
}

}  // namespace rota::reserve
