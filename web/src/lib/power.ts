// Power screen helpers (pure): the policy form's text fields to the API's form and back.
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

/** Watts, whole when whole. */
export function w(v: number | null | undefined): string {
  if (v === null || v === undefined || !isFinite(v)) return '–';
  return `${Number.isInteger(v) ? v : v.toFixed(1)} W`;
}
