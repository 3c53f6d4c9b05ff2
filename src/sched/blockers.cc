// What keeps a job off GPUs for a run starting now (pass.h): the blockers
// and their mask.

#include "sched/pass.h"

namespace rota::sched::detail {

bool Pass::FindBlockers(const PendingJob& job) {
  // Holds are only added: the same job with as many holds has the same blockers.
  if (blockers_found_ && blockers_job_ == job.meta.id && blockers_holds_ == protect_holds_.size())
    return !blockers_.empty();
  blockers_found_ = true;
  blockers_job_ = job.meta.id;
  blockers_holds_ = protect_holds_.size();
  const int64_t t = s_.now_ms;
  const int64_t end = EndOf(job, t);
  blockers_.clear();
  for (uint32_t i = 0; i < reservations_.size(); ++i) {
    const auto& a = reservations_[i];
    if (!a.flat.empty() && ReservationBlocks(*a.r, job, t, end)) blockers_.push_back(i);
  }
  const auto n_res = static_cast<uint32_t>(reservations_.size());
  for (uint32_t i : protect_holds_) {
    const Hold& h = holds_[i];
    if (h.flat.empty() || h.id == job.meta.id || !Overlaps(t, end, h.start, h.end)) continue;
    blockers_.push_back(n_res + i);
  }
  blockers_bits_.assign((n_res + holds_.size() + 63) / 64, 0);
  for (uint32_t b : blockers_) blockers_bits_[b / 64] |= uint64_t{1} << (b % 64);
  return !blockers_.empty();
}

const GpuMask* Pass::BlockerMask() {
  if (blockers_.empty()) return nullptr;
  if (blockers_ == mask_blockers_) return &mask_;  // the mask is made of these already
  const auto n_res = static_cast<uint32_t>(reservations_.size());
  auto apply = [&](uint32_t b, int delta) {
    for (uint32_t f : b < n_res ? reservations_[b].flat : holds_[b - n_res].flat) {
      mask_[f] = static_cast<uint16_t>(mask_[f] + delta);
    }
  };
  // Both lists are ascending: apply only what differs (successive jobs share
  // most of their blockers).
  size_t i = 0, j = 0;
  while (i < mask_blockers_.size() || j < blockers_.size()) {
    if (j == blockers_.size() || (i < mask_blockers_.size() && mask_blockers_[i] < blockers_[j])) {
      apply(mask_blockers_[i++], -1);
    } else if (i == mask_blockers_.size() || blockers_[j] < mask_blockers_[i]) {
      apply(blockers_[j++], 1);
    } else {
      ++i;
      ++j;
    }
  }
  mask_blockers_ = blockers_;
  return &mask_;
}

}  // namespace rota::sched::detail
