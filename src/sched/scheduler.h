#pragma once
// Schedule: one scheduling pass. Snapshot in, decisions out; no I/O, no clock,
// no locks. Deterministic: the same snapshot gives the same decisions.
//
// What a pass decides (docs/design-sched.md):
//  - Reservations: a running preemptible job of someone else on GPUs of a
//    reservation that has started, and whose owner is not idle, is preempted.
//  - Pending jobs, in the policy's order (order.h):
//     * a job naming an unknown queue, in restart backoff, or over a quota
//       (GPUs at once per user, group or queue; GPU-hours per period) waits
//       with that reason and does not hold up others;
//     * a job that fits now (gang placement, free_map.h) starts, unless it
//       would take GPUs a protected earlier job is planned to get before this
//       one ends (backfill: kEasy protects the first blocked job, kConservative
//       every blocked job planned, kSkip none; kNone starts nothing after the
//       first blocked job);
//     * a job that does not fit, but would once the jobs already being stopped
//       (stoppable false) let go of their GPUs, waits for them: the free GPUs
//       it will use are kept for it, and it preempts nothing more;
//     * a job that does not fit may preempt running preemptible jobs that order
//       after it, worst first and as few as needed, once it has waited
//       policy.preempt_after_ms; it then waits for them to stop;
//     * defragmentation (policy.defragment): a job that has waited as long,
//       with enough GPUs free in total but scattered over nodes, has smaller
//       preemptible jobs moved out of its way (stopped and requeued), the
//       fullest nodes first, only when each of them fits at once on GPUs free
//       elsewhere (those are kept for it in the pass); one job per pass, and
//       none while a moved job (RunningJob::moving) is still stopping: its new
//       place is kept for it by every pass until it has;
//     * reserved GPUs: the owner's jobs may use them; others' jobs only when
//       their time limit ends before the reservation starts, or when they are
//       preemptible (stopped when the reservation starts, or, on an idle
//       reservation, when its owner comes back).
//  - With policy.explain, every job left pending gets a reason, its place in
//    the order and, for the first plan_depth blocked jobs, an estimated start
//    (the earliest time its gang fits, given running jobs' expected ends,
//    reservations and the jobs planned before it).

#include "sched/snapshot.h"

namespace rota::sched {

Decisions Schedule(const Snapshot& snapshot);

}  // namespace rota::sched
