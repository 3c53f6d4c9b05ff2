// Power screen helpers (pure): the policy form's text fields to the API's form and back.
import { powerW } from './format';
import type { PolicyWindow, PowerGpu, PowerPolicy, PowerPolicySpec, PowerScope } from '../api/types';

/** "a, b ,c" -> ["a", "b", "c"] (empty parts dropped). */
export function splitList(s: string): string[] {
  return s
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

/** "rack=r1, room=2" -> {rack: "r1", room: "2"}; throws on a part without "=". */
export function parseLabels(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of splitList(s)) {
    const eq = part.indexOf('=');
    if (eq <= 0 || eq === part.length - 1) throw new Error(`labels: "${part}" is not KEY=VALUE`);
    out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

/**
 * One window a line: "mon-fri 08:00-18:00", "sat,sun 10:00-14:00", "all 00:00-06:00" (the days
 * as the API takes them: mon..sun, ranges, weekdays, weekends, all). Throws naming the line.
 */
export function parseWindows(text: string): PolicyWindow[] {
  const out: PolicyWindow[] = [];
  const lines = text.split('\n').map((l) => l.trim());
  lines.forEach((line, i) => {
    if (line === '') return;
    const m = /^(\S+)\s+(\d{1,2}:\d{2})\s*-\s*(\d{1,2}:\d{2})$/.exec(line);
    if (!m) throw new Error(`windows, line ${i + 1}: "${line}" is not like "mon-fri 08:00-18:00"`);
    out.push({ days: splitList(m[1]), from: m[2].padStart(5, '0'), to: m[3].padStart(5, '0') });
  });
  return out;
}

/** The form's fields, as text. */
export interface PolicyFields {
  name: string;
  description: string;
  kind: 'limit' | 'budget';
  /** A number input's value (Svelte binds a number, or null when empty). */
  watts: string | number | null;
  nodes: string;
  models: string;
  labels: string;
  zone: string;
  windows: string;
}

/** The request body for the form's fields; throws on what cannot be sent (the server checks the rest). */
export function policyBody(f: PolicyFields): PowerPolicySpec {
  const watts = Number(f.watts);
  if (f.watts === null || String(f.watts).trim() === '' || !isFinite(watts)) {
    throw new Error(`${f.kind}: give the watts as a number`);
  }
  const body: PowerPolicySpec = { name: f.name.trim() };
  if (f.description.trim()) body.description = f.description.trim();
  body[f.kind] = watts;
  const scope: NonNullable<PowerPolicySpec['scope']> = {};
  const nodes = splitList(f.nodes);
  const models = splitList(f.models);
  const labels = parseLabels(f.labels);
  if (nodes.length) scope.nodes = nodes;
  if (models.length) scope.gpu_models = models;
  if (Object.keys(labels).length) scope.labels = labels;
  if (Object.keys(scope).length) body.scope = scope;
  const allow = parseWindows(f.windows);
  if (allow.length) body.windows = f.zone.trim() ? { zone: f.zone.trim(), allow } : { allow };
  return body;
}

/** "gpu-a, gpu-b · models A100 · rack=r1" or "the whole cluster". */
export function scopeText(s: PowerScope | undefined): string {
  const parts: string[] = [];
  if (s?.nodes?.length) parts.push(`nodes ${s.nodes.join(', ')}`);
  if (s?.gpu_models?.length) parts.push(`models ${s.gpu_models.join(', ')}`);
  const labels = Object.entries(s?.labels ?? {});
  if (labels.length) parts.push(`labels ${labels.map(([k, v]) => `${k}=${v}`).join(', ')}`);
  return parts.length ? parts.join(' · ') : 'the whole cluster';
}

/** "mon-fri 08:00-18:00 (Europe/Berlin)" or "always". */
export function windowsText(p: PowerPolicy): string {
  if (!p.windows?.allow?.length) return 'always';
  const w = p.windows.allow.map((a) => `${a.days.join(',')} ${a.from}-${a.to}`).join('; ');
  return `${w} (${p.windows.zone || 'UTC'})`;
}

/** A refused or failed limit: what the screen makes stand out. */
export const isBad = (g: PowerGpu) => g.outcome === 'refused' || g.outcome === 'error';

/** The power range of each GPU model the API reports ("NVIDIA A100: 100–400 W"), for the form's hint. */
export function rangesByModel(gpus: PowerGpu[]): string[] {
  const seen = new Map<string, string>();
  for (const g of gpus) {
    if (g.min_w === null || g.max_w === null) continue;
    const r = `${g.model || 'unknown model'}: ${g.min_w}–${g.max_w} W`;
    seen.set(r, r);
  }
  return [...seen.keys()].sort();
}

/** Watts, whole when whole; kW from 10,000 W (format.ts's powerW). */
export const w = powerW;

/** GPUs whose node or model contains `query` (any case); all of them for a blank query. */
export function filterGpus(gpus: PowerGpu[], query: string): PowerGpu[] {
  const q = query.trim().toLowerCase();
  if (!q) return gpus;
  return gpus.filter((g) => g.node.toLowerCase().includes(q) || g.model.toLowerCase().includes(q));
}

/** A sum of watts over a node's GPUs: `w` is null when no GPU had a value; `unknown` counts those without. */
export interface WattSum {
  w: number | null;
  unknown: number;
}

/** One node's row of the power table: its GPUs (in the API's order) and what they add up to. */
export interface PowerNode {
  node: string;
  gpus: PowerGpu[];
  /** The GPU models, each once, in the order they appear. */
  models: string[];
  /** The known power ranges ("100–400 W"), each once, in the order they appear. */
  ranges: string[];
  /** The planned limits: each GPU's target, or its default where no policy gives one. */
  planned: WattSum;
  /** The limits in force (read back from the GPUs). */
  inForce: WattSum;
  /** The current draw. */
  draw: WattSum;
  /** GPUs with a target from a policy. */
  targeted: number;
  busy: number;
  /** GPUs whose limit was refused or failed (isBad). */
  bad: number;
  /** The policies that give this node's GPUs their targets, each once, sorted. */
  policies: string[];
}

/** The limit planned for a GPU: the policies' target, else the GPU's default (null if unknown). */
export const plannedW = (g: PowerGpu): number | null => g.target_w ?? g.default_w;

/** Adds up the values that are known (to 0.1 W, so that 0.1 + 0.2 shows as 0.3). */
export function sumW(values: (number | null | undefined)[]): WattSum {
  let total = 0;
  let known = 0;
  for (const v of values) {
    if (v === null || v === undefined || !isFinite(v)) continue;
    total += v;
    known++;
  }
  return { w: known ? Math.round(total * 10) / 10 : null, unknown: values.length - known };
}

/** The GPUs grouped by node, nodes in the order they first appear (the API sorts them by name). */
export function groupByNode(gpus: PowerGpu[]): PowerNode[] {
  const byNode = new Map<string, PowerGpu[]>();
  for (const g of gpus) {
    const list = byNode.get(g.node);
    if (list) list.push(g);
    else byNode.set(g.node, [g]);
  }
  return [...byNode].map(([node, list]) => ({
    node,
    gpus: list,
    models: [...new Set(list.map((g) => g.model))],
    ranges: [...new Set(list.filter((g) => g.min_w !== null && g.max_w !== null).map((g) => `${g.min_w}–${w(g.max_w)}`))],
    planned: sumW(list.map(plannedW)),
    inForce: sumW(list.map((g) => g.in_force_w)),
    draw: sumW(list.map((g) => g.power_w)),
    targeted: list.filter((g) => g.target_w !== null).length,
    busy: list.filter((g) => g.busy).length,
    bad: list.filter(isBad).length,
    policies: [...new Set(list.flatMap((g) => g.policies))].sort(),
  }));
}

/** Why a node's GPUs have their targets: "cap-a", "cap-a on 3 of 8 GPUs" or "no policy". */
export function nodeWhy(n: PowerNode): string {
  if (!n.targeted) return 'no policy';
  const who = n.policies.length ? n.policies.join(', ') : 'a policy';
  return n.targeted === n.gpus.length ? who : `${who} on ${n.targeted} of ${n.gpus.length} GPUs`;
}

/**
 * Which nodes of the power table show their GPUs: a node the user opened or closed keeps that
 * choice; else "expand all" / "collapse all" (`all`) decides; else (`all` null) a node is open
 * when one of its GPUs is refused or failed.
 */
export interface Expansion {
  all: boolean | null;
  nodes: Record<string, boolean>;
}

/** Nothing chosen yet: the nodes with a refused or failed GPU open, the others closed. */
export const AUTO_EXPANSION: Expansion = { all: null, nodes: {} };

export const isExpanded = (n: PowerNode, e: Expansion): boolean => e.nodes[n.node] ?? e.all ?? n.bad > 0;

/** `e` with node `n` opened or closed. */
export const withNode = (e: Expansion, node: string, open: boolean): Expansion => ({
  all: e.all,
  nodes: { ...e.nodes, [node]: open },
});

/** Every node opened (true) or closed (false), forgetting the choices per node. */
export const allNodes = (open: boolean): Expansion => ({ all: open, nodes: {} });
