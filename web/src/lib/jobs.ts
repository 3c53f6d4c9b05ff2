// Small helpers about jobs shared by the list and the detail page.
import type { Job, QueuedJob } from '../api/types';

/** A job as any list gives it: GET /api/v1/queue leaves out spec and tasks and says
 * how many GPUs the job asks for; a job in full has no such count. */
type AnyJob = Omit<QueuedJob, 'gpus'> & Partial<Pick<QueuedJob, 'gpus'>> & Partial<Pick<Job, 'spec' | 'tasks'>>;
import { FINAL_JOB_STATES } from '../api/types';

export function jobGpus(j: AnyJob): number {
  if (typeof j.gpus === 'number') return j.gpus;  // the queue's rows say it
  const groups = j.spec?.groups ?? [];
  let n = 0;
  for (const g of groups) n += (g.replicas ?? 1) * (g.gpus_per_task ?? 0);
  if (n === 0) for (const t of j.tasks ?? []) n += t.gpus.length;
  return n;
}

export function jobNodes(j: AnyJob): string[] {
  return [...new Set((j.tasks ?? []).map((t) => t.node).filter(Boolean))].sort();
}

export function isFinal(j: Job): boolean {
  return FINAL_JOB_STATES.includes(j.state);
}

function quote(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

/** The command as a shell would read it (`sh -c '…'` for shell jobs). */
export function commandText(j: Job): string {
  const c = j.spec?.command ?? [];
  if (j.spec?.shell) return `sh -c ${quote(c.join(' '))}`;
  return c.map(quote).join(' ');
}

/** Whether the jobs list shows only the signed-in user's jobs: as `mine=` says, else
 * by default a user's own, an admin's all. */
export function listMine(param: string | null, admin: boolean): boolean {
  return param === null ? !admin : param === 'true';
}

/** Where a page of the jobs list starts: below a job id (older), above one (the page
 * just newer), or null for the newest. Ids, not offsets: jobs submitted meanwhile do
 * not move a page. */
export type JobsCursor = { before: number } | { after: number } | null;

/** The cursor in a jobs URL (`before=` or `after=`, a positive id), else null. */
export function jobsCursor(params: URLSearchParams): JobsCursor {
  const id = (key: string) => {
    const n = Number(params.get(key));
    return Number.isSafeInteger(n) && n > 0 ? n : 0;
  };
  if (id('before')) return { before: id('before') };
  if (id('after')) return { after: id('after') };
  return null;
}

/** Paging of the jobs list (shown newest first, `ids` in that order): the cursors of
 * the newer and older pages (null: none) and what the page shows. `truncated`: the
 * server has more in the page's direction (older; newer for an `after` page). */
export function jobsPage(cursor: JobsCursor, ids: number[], truncated: boolean) {
  const first = ids[0];
  const last = ids[ids.length - 1];
  let newer: JobsCursor = null;
  let older: JobsCursor = null;
  if (cursor === null) {
    if (truncated) older = { before: last };
  } else if ('before' in cursor) {
    newer = { after: ids.length ? first : cursor.before - 1 };
    if (truncated) older = { before: last };
  } else {
    if (truncated) newer = { after: first };
    older = { before: ids.length ? last : cursor.after + 1 };
  }
  const text =
    ids.length === 0 ? 'no jobs' : cursor === null ? `newest ${ids.length}` : ids.length === 1 ? `job ${first}` : `jobs ${first} to ${last}`;
  return { newer, older, text };
}

/** What a task's state badge says: an exited task that ended with a non-zero status or
 * a signal "failed" (red), "exited" only for status 0, "stopped" when its job was
 * cancelled and the task ended by the signal that stopped it; other states as they are. */
export function taskBadge(t: { state: string; exit_code?: number; signal?: number }, jobState?: string): string {
  if (t.state !== 'exited') return t.state;
  if (jobState === 'cancelled' && t.signal) return 'stopped';  // rota stopped it: not a failure
  return t.signal || (t.exit_code !== undefined && t.exit_code !== 0) ? 'failed' : 'exited';
}

/** The log a job's page opens on: for a failed job the first task that failed, on
 * stderr (where the failure is written); else the first task that runs, on stdout. */
export function firstLog(j: Pick<Job, 'state'> & { tasks: Pick<Job['tasks'][number], 'name' | 'runs' | 'state' | 'exit_code' | 'signal'>[] }): {
  task: string;
  stream: 'stdout' | 'stderr';
} {
  const runs = j.tasks.filter((t) => t.runs);
  if (j.state === 'failed') {
    const bad = runs.find((t) => taskBadge(t) === 'failed') ?? runs[0];
    return { task: bad?.name ?? '', stream: 'stderr' };
  }
  return { task: runs[0]?.name ?? '', stream: 'stdout' };
}

/** The label of a job's last reason: what it waits for, why it ended, else the last event. */
export function reasonLabel(state: string): string {
  if (state === 'pending') return 'Waiting:';
  if (FINAL_JOB_STATES.includes(state as Job['state'])) return 'Reason:';
  return 'Last event:';
}
