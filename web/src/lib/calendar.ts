// Pure helpers of the reservations calendar: local-time ranges, snapping,
// <input type="datetime-local"> values, user colours and policy windows.
import type { Job, Node, Policy, Reservation, User } from '../api/types';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

export type View = 'day' | 'week';

/** Local midnight of the day holding `t`. */
export function startOfDay(t: number): number {
  const d = new Date(t);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

/** Local Monday 00:00 of the week holding `t`. */
export function startOfWeek(t: number): number {
  const d = new Date(startOfDay(t));
  const wd = (d.getDay() + 6) % 7; // Monday = 0
  d.setDate(d.getDate() - wd);
  return d.getTime();
}

/** `t` plus `n` local days (DST-safe). */
export function addDays(t: number, n: number): number {
  const d = new Date(t);
  d.setDate(d.getDate() + n);
  return d.getTime();
}

/** The shown range [from, to) of a view around `anchor`. */
export function rangeOf(view: View, anchor: number): { from: number; to: number } {
  const from = view === 'day' ? startOfDay(anchor) : startOfWeek(anchor);
  return { from, to: addDays(from, view === 'day' ? 1 : 7) };
}

const pad = (n: number) => String(n).padStart(2, '0');

/** `2026-11-25` of a local time (the calendar's `date=` parameter). */
export function dateParam(t: number): string {
  const d = new Date(t);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** Local noon of a `YYYY-MM-DD` (null when malformed). */
export function parseDateParam(s: string | null): number | null {
  const m = s ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(s) : null;
  if (!m) return null;
  const t = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 12).getTime();
  return isNaN(t) ? null : t;
}

/** The value of an `<input type="datetime-local">` for a time (minutes). */
export function toLocalInput(t: number): string {
  const d = new Date(t);
  return `${dateParam(t)}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A datetime-local value read as local time; NaN when empty or malformed. */
export function fromLocalInput(s: string): number {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(s)) return NaN;
  return new Date(s).getTime();
}

/** RFC 3339 UTC without milliseconds. */
export function rfc3339(t: number): string {
  return new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export const floorTo = (t: number, step: number) => Math.floor(t / step) * step;
export const ceilTo = (t: number, step: number) => Math.ceil(t / step) * step;

export function hhmm(t: number): string {
  const d = new Date(t);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** "Wed 25 Nov, 14:00–16:00" or "Wed 25 Nov 14:00 – Thu 26 Nov 10:00". */
export function spanText(start: number, end: number): string {
  const day = (t: number) => new Date(t).toLocaleDateString(undefined, { weekday: 'short', day: 'numeric', month: 'short' });
  if (startOfDay(start) === startOfDay(end - 1)) return `${day(start)}, ${hhmm(start)}–${hhmm(end)}`;
  return `${day(start)} ${hhmm(start)} – ${day(end)} ${hhmm(end)}`;
}

/** A stable hue per user name (FNV-1a), spread over the colour wheel. */
export function userHue(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // 24 well-separated hues; the golden-angle step keeps neighbours apart.
  return Math.round(((h >>> 0) % 24) * 137.508) % 360;
}

// ---- policy windows -------------------------------------------------------

const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/** "mon-fri", "sat", "mon,wed", "*" -> a set of weekdays (0 = Sunday). */
export function parseDays(days: string[] | undefined): Set<number> {
  const out = new Set<number>();
  for (const item of days ?? []) {
    for (const part of item.toLowerCase().split(',')) {
      const p = part.trim();
      if (p === '*' || p === 'all' || p === 'daily') {
        for (let i = 0; i < 7; i++) out.add(i);
        continue;
      }
      const [a, b] = p.split('-').map((x) => DAY_NAMES.indexOf(x.slice(0, 3)));
      if (a < 0) continue;
      if (b === undefined || b < 0) {
        out.add(a);
        continue;
      }
      for (let i = a; ; i = (i + 1) % 7) {
        out.add(i);
        if (i === b) break;
      }
    }
  }
  return out;
}

/** Offset (ms, local - UTC) of a zone at instant `t`: "UTC", "+02:00", or an IANA name. */
export function zoneOffset(zone: string | undefined, t: number): number {
  const z = (zone || 'UTC').trim();
  if (z === 'UTC' || z === 'Z') return 0;
  const m = /^([+-])(\d{2}):?(\d{2})$/.exec(z);
  if (m) return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) * 60_000;
  try {
    const f = new Intl.DateTimeFormat('en-US', {
      timeZone: z,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    const p: Record<string, number> = {};
    for (const part of f.formatToParts(new Date(t))) p[part.type] = Number(part.value);
    const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
    return wall - Math.floor(t / 1000) * 1000;
  } catch {
    return 0;
  }
}

function hmToMs(s: string): number {
  const m = /^(\d{1,2}):(\d{2})$/.exec(s.trim());
  return m ? (Number(m[1]) * 60 + Number(m[2])) * 60_000 : NaN;
}

export type Interval = [number, number];

/** Allowed intervals of one policy's windows over [from, to) (UTC ms, merged). */
export function windowIntervals(p: Policy, from: number, to: number): Interval[] {
  const w = p.windows;
  if (!w || !w.allow || w.allow.length === 0) return [[from, to]];
  const zone = w.zone;
  const out: Interval[] = [];
  // Walk the zone's calendar days that touch the range (one day of margin).
  const off0 = zoneOffset(zone, from);
  let wallDay = Math.floor((from + off0) / DAY) * DAY - DAY;
  const wallEnd = to + zoneOffset(zone, to) + DAY;
  const toUtc = (wall: number) => {
    let t = wall - zoneOffset(zone, wall);
    t = wall - zoneOffset(zone, t);
    return t;
  };
  for (; wallDay < wallEnd; wallDay += DAY) {
    const wd = new Date(wallDay).getUTCDay();
    for (const a of w.allow) {
      if (!parseDays(a.days).has(wd)) continue;
      const f = hmToMs(a.from);
      const e = hmToMs(a.to);
      if (isNaN(f) || isNaN(e) || e <= f) continue;
      const s = Math.max(toUtc(wallDay + f), from);
      const en = Math.min(toUtc(wallDay + e), to);
      if (en > s) out.push([s, en]);
    }
  }
  return merge(out);
}

export function merge(list: Interval[]): Interval[] {
  const s = [...list].sort((a, b) => a[0] - b[0]);
  const out: Interval[] = [];
  for (const iv of s) {
    const last = out[out.length - 1];
    if (last && iv[0] <= last[1]) last[1] = Math.max(last[1], iv[1]);
    else out.push([iv[0], iv[1]]);
  }
  return out;
}

export function intersect(a: Interval[], b: Interval[]): Interval[] {
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const s = Math.max(a[i][0], b[j][0]);
    const e = Math.min(a[i][1], b[j][1]);
    if (e > s) out.push([s, e]);
    if (a[i][1] < b[j][1]) i++;
    else j++;
  }
  return out;
}

/** Does a policy cover this user (subjects) and target this GPU (targets)? */
export function policyApplies(p: Policy, user: User | null, node: string, model: string): boolean {
  const users = p.subjects?.users ?? [];
  const groups = p.subjects?.groups ?? [];
  if (users.length || groups.length) {
    if (!user) return false;
    const covered = users.includes('*') || users.includes(user.username) || groups.some((g) => user.groups?.includes(g));
    if (!covered) return false;
  }
  const nodes = p.targets?.nodes ?? [];
  if (nodes.length && !nodes.includes(node)) return false;
  const models = p.targets?.gpu_models ?? [];
  if (models.length && !models.some((m) => model.toLowerCase().includes(m.toLowerCase()))) return false;
  return true;
}

/**
 * Where the user may book this GPU over [from, to) by the windows of the
 * policies that apply (every one must allow), or null when no window limits it.
 */
export function allowedWindows(
  policies: Policy[],
  user: User | null,
  node: string,
  model: string,
  from: number,
  to: number,
): Interval[] | null {
  let acc: Interval[] | null = null;
  for (const p of policies) {
    if (!p.windows?.allow?.length || !policyApplies(p, user, node, model)) continue;
    const iv = windowIntervals(p, from, to);
    acc = acc ? intersect(acc, iv) : iv;
  }
  return acc;
}

/** A running job's hold on one GPU, as the calendar draws it. */
export interface JobHold {
  id: number;
  name: string;
  owner: string;
  start: number;
  /** Its time limit's end; without a limit, `now` plus an hour (`open`). */
  end: number;
  open: boolean;
}

/** The GPUs running jobs hold, per `node/gpu` row, from their run's start to
 * their time limit's end (or, without one, an hour past `now`). */
export function jobHolds(jobs: Job[], now: number): Map<string, JobHold[]> {
  const m = new Map<string, JobHold[]>();
  for (const j of jobs) {
    if (j.state !== 'running' && j.state !== 'starting') continue;
    const start = j.started ? Date.parse(j.started) : now;
    const deadline = j.deadline ? Date.parse(j.deadline) : NaN;
    const open = isNaN(deadline);
    const hold: JobHold = { id: j.id, name: j.name, owner: j.owner, start, end: open ? now + HOUR : deadline, open };
    const seen = new Set<string>();
    for (const t of j.tasks ?? []) {
      if (!t.node || t.state === 'exited' || t.state === 'lost' || t.state === 'unstarted') continue;
      for (const g of t.gpus) {
        const k = `${t.node}/${g}`;
        if (seen.has(k)) continue;  // processes of one task share its GPUs
        seen.add(k);
        const list = m.get(k);
        if (list) list.push(hold);
        else m.set(k, [hold]);
      }
    }
  }
  return m;
}

/** The GPU a new booking on `node` from `at` starts with: the lowest that no
 * running job holds and no live reservation covers then; else the lowest. */
export function firstFreeGpu(node: Node, holds: Map<string, JobHold[]>, reservations: Reservation[], at: number): number | undefined {
  const taken = (g: number) =>
    (holds.get(`${node.name}/${g}`)?.length ?? 0) > 0 ||
    reservations.some(
      (r) => r.node === node.name && r.state !== 'cancelled' && r.gpus.includes(g) &&
        Date.parse(r.start) <= at && at < Date.parse(r.end),
    );
  const free = node.gpus.find((g) => !taken(g.index));
  return (free ?? node.gpus[0])?.index;
}

// ---- collapsed node rows --------------------------------------------------

/** What a collapsed node row draws: one band per live reservation and per running
 * job on the node, merged over its GPUs ("alice · 8 GPUs"). */
export interface NodeBand {
  kind: 'reservation' | 'job';
  id: number;
  owner: string;
  title: string;
  gpus: number;
  start: number;
  end: number;
  /** Reservation state, or 'running' for a job. */
  state: string;
  /** A job without a time limit (its end is a guess). */
  open: boolean;
  /** Reservations that overlap in time share the row: this one's lane of `lanes`. */
  lane: number;
  lanes: number;
}

/** The bands of a collapsed node row: its live reservations (one band each, whatever
 * GPUs they cover) and the running jobs holding its GPUs (one band per job, the GPUs
 * it holds there counted), overlapping [from, to). */
export function nodeBands(
  node: string,
  reservations: Reservation[],
  holds: Map<string, JobHold[]>,
  from: number,
  to: number,
): NodeBand[] {
  const out: NodeBand[] = [];
  for (const r of reservations) {
    if (r.node !== node || r.state === 'cancelled') continue;
    const start = Date.parse(r.start);
    const end = Date.parse(r.end);
    if (!(end > from && start < to)) continue;
    out.push({ kind: 'reservation', id: r.id, owner: r.owner, title: r.title, gpus: r.gpus.length, start, end, state: r.state, open: false, lane: 0, lanes: 1 });
  }
  out.sort((a, b) => a.start - b.start || a.id - b.id);
  // Lanes: each reservation takes the lowest lane free at its start; every band of a
  // group that overlaps (transitively) gets that group's lane count.
  let group: NodeBand[] = [];
  let groupEnd = -Infinity;
  let laneEnds: number[] = [];
  const close = () => {
    for (const b of group) b.lanes = laneEnds.length;
    group = [];
    laneEnds = [];
  };
  for (const b of out) {
    if (b.start >= groupEnd) close();
    let lane = laneEnds.findIndex((e) => e <= b.start);
    if (lane < 0) lane = laneEnds.push(b.end) - 1;
    else laneEnds[lane] = b.end;
    b.lane = lane;
    group.push(b);
    groupEnd = Math.max(groupEnd, b.end);
  }
  close();
  const jobs = new Map<number, NodeBand>();
  const prefix = `${node}/`;
  for (const [k, list] of holds) {
    if (!k.startsWith(prefix)) continue;
    for (const h of list) {
      const b = jobs.get(h.id);
      if (b) b.gpus++;
      else jobs.set(h.id, { kind: 'job', id: h.id, owner: h.owner, title: h.name, gpus: 1, start: h.start, end: h.end, state: 'running', open: h.open, lane: 0, lanes: 1 });
    }
  }
  for (const b of jobs.values()) if (b.end > from && b.start < to) out.push(b);
  return out.sort((a, b) => a.start - b.start || a.id - b.id);
}

/** "alice · 8 GPUs", "bob · 1 GPU". */
export function bandText(b: NodeBand): string {
  return `${b.owner} · ${b.gpus} GPU${b.gpus === 1 ? '' : 's'}`;
}

/** How many nodes start open on a large cluster; with more than COLLAPSE_OVER nodes
 * the rest start collapsed. */
export const OPEN_FIRST = 4;
export const COLLAPSE_OVER = 12;

/** Whether a node row starts collapsed: on a cluster of more than COLLAPSE_OVER nodes,
 * every node after the first OPEN_FIRST, except those holding a live reservation of
 * `me` in [from, to) (a user's own bookings are never folded away). */
export function startsCollapsed(
  nodes: { name: string }[],
  index: number,
  mine: Set<string>,
): boolean {
  return nodes.length > COLLAPSE_OVER && index >= OPEN_FIRST && !mine.has(nodes[index].name);
}

/** The nodes holding a live reservation of `me` that overlaps [from, to). */
export function nodesWithMine(reservations: Reservation[], me: string, from: number, to: number): Set<string> {
  const out = new Set<string>();
  if (!me) return out;
  for (const r of reservations) {
    if (r.owner !== me || r.state === 'cancelled') continue;
    if (Date.parse(r.end) > from && Date.parse(r.start) < to) out.add(r.node);
  }
  return out;
}
