// Types of rota's REST API v1, written by hand from docs/api.md and the
// server's JSON writers (src/server/*_api.cc, views.cc, jobs_rows.cc).
// Times are RFC 3339 UTC strings. Optional readings are absent when a GPU does
// not support them.

/** Every error answer: `{"error": {"code", "message"}}`. */
export interface ApiErrorBody {
  error: { code: string; message: string };
}

// ---- accounts ----

export type Role = 'admin' | 'user' | string;

export interface User {
  id: number;
  username: string;
  display_name: string;
  email: string;
  unix_user: string;
  unix_users: Record<string, string>;
  role: Role;
  groups: string[];
  disabled: boolean;
  has_password: boolean;
  created_at: string;
  updated_at: string;
}

export interface LoginRequest {
  username: string;
  password: string;
}

/** POST /api/v1/auth/login. The server names the expiry `expires_at` (docs: `expires`). */
export interface LoginResponse {
  token: string;
  token_id?: string;
  expires_at?: string;
  expires?: string;
  user: User;
}

// ---- nodes and GPUs ----

export interface GpuInfo {
  index: number;
  uuid: string;
  name: string;
  pci_bus_id: string;
  memory_total_bytes?: number;
  power_limit_mw?: number;
}

export type NodeState = 'ready' | 'unreachable' | string;

/** A node as GET /api/v1/nodes and the stream's `node` event send it. */
export interface Node {
  name: string;
  node_id: string;
  hostname: string;
  addresses: string[];
  cpus: number;
  memory_bytes: number;
  labels: Record<string, string>;
  gpus: GpuInfo[];
  gpu_status: string;
  agent_version: string;
  sample_interval_ms: number;
  state: NodeState;
  connected: boolean;
  last_seen: string | null;
  state_since: string | null;
  unreachable_reason?: string;
  gpu_count: number;
  failed_gpu_count: number;
  latest?: NodeLatest | null;
}

export interface HostSample {
  cpu_percent: number;
  per_core_percent: number[];
  mem_total_bytes: number;
  mem_available_bytes: number;
  load1: number;
  load5: number;
  load15: number;
}

export interface NodeLatest {
  time: string;
  time_ms: number;
  host: HostSample;
  gpus: unknown[];
}

export interface GpuProcess {
  pid: number;
  type: string;
  gpu_memory_bytes?: number;
  uid?: number;
  user?: string;
  command?: string;
  start_time_ms?: number;
  cpu_percent?: number;
  rss_bytes?: number;
  cgroup?: string;
}

export type GpuState = 'ok' | 'failed' | 'unreachable';

/** One row of GET /api/v1/gpus, and of a stream `sample` event's `gpus`. */
export interface Gpu {
  node: string;
  index: number;
  uuid: string;
  name: string;
  pci_bus_id: string;
  state: GpuState;
  users: string[];
  processes: GpuProcess[];
  time?: string;
  failed?: boolean;
  error?: string;
  util_gpu_pct?: number;
  util_memory_pct?: number;
  memory_used_bytes?: number;
  memory_total_bytes?: number;
  temperature_c?: number;
  power_mw?: number;
  power_limit_mw?: number;
  energy_mj?: number;
  sm_clock_mhz?: number;
  mem_clock_mhz?: number;
  fan_pct?: number;
}

/** The stream's `sample` event. `time`/`host` are absent before a node's first sample. */
export interface SampleEvent {
  node: string;
  time?: string;
  host?: HostSample;
  gpus: Gpu[];
}

// ---- reservations ----

export type ReservationState = 'upcoming' | 'running' | 'ended' | 'cancelled';

export interface Reservation {
  id: number;
  owner: string;
  node: string;
  gpus: number[];
  gpu_uuids: string[];
  title: string;
  description?: string;
  start: string;
  end: string;
  state: ReservationState;
  created?: string;
  updated?: string;
  enforcement?: Record<string, unknown>;
  avg_util_gpu?: number;
  avg_util_mem?: number;
  start_ms?: number;
  end_ms?: number;
  /** GET /api/v1/reservations/{id} while running, once samples arrived. */
  live?: ReservationLive;
}

export interface ReservationLive {
  avg_util_gpu: number;
  avg_util_mem: number;
  samples: number;
  /** Set while every reserved GPU is below the idle threshold of a policy. */
  idle_since?: string;
}

/** POST /api/v1/reservations (by GPU index; the UI never uses count/whole_node). */
export interface ReservationRequest {
  node: string;
  gpus: number[];
  start: string;
  end: string;
  title: string;
  description?: string;
}

// ---- policies ----

export interface PolicyWindow {
  days: string[];
  from: string;
  to: string;
}

export interface Policy {
  id?: number;
  name: string;
  description?: string;
  subjects?: { users?: string[]; groups?: string[] };
  targets?: { nodes?: string[]; gpu_models?: string[] };
  windows?: { zone?: string; allow?: PolicyWindow[] } | null;
  max_duration?: string | number;
  max_ahead?: string | number;
  max_gpus?: number;
  weekly_gpu_hours?: number;
  idle?: { threshold_pct?: number; after?: string | number; release?: boolean } | null;
}

// ---- violations (enforcement audit log) ----

export interface ViolationProcess {
  pid: number;
  start_time_ms: number;
  command?: string;
}

export interface ViolationEvent {
  id: number;
  time: string;
  t_ms: number;
  action: string;
  outcome: string;
  detail: string;
  pids: ViolationProcess[];
}

export interface Violation {
  id: number;
  node: string;
  gpu: number;
  gpu_uuid: string;
  uid: number | null;
  unix_user: string;
  user: string | null;
  reservation_id: number | null;
  reservation_owner: string | null;
  mode: string;
  dry_run: boolean;
  state: 'open' | 'resolved' | string;
  opened: string;
  opened_ms: number;
  closed: string | null;
  closed_ms: number | null;
  processes: ViolationProcess[];
  resolution: string;
  last_action: string;
  /** GET /api/v1/violations/{id} only. */
  events?: ViolationEvent[];
}

export interface ViolationList {
  violations: Violation[];
  limit: number;
  offset: number;
  next_offset?: number;
}

// ---- queues ----

export interface Queue {
  name: string;
  description: string;
  priority: number;
  min_priority: number;
  max_priority: number;
  users: string[];
  groups: string[];
  max_gpus: number;
  default_time_limit: string | number;
  preemptible: boolean;
  built_in: boolean;
  pending: number;
  unfinished: number;
}

// ---- jobs ----

export type JobState = 'pending' | 'starting' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export const JOB_STATES: JobState[] = ['pending', 'starting', 'running', 'succeeded', 'failed', 'cancelled'];
export const FINAL_JOB_STATES: JobState[] = ['succeeded', 'failed', 'cancelled'];

export type Framework = 'generic' | 'tensorflow' | 'pytorch' | 'mpi' | 'jax';

export interface TaskGroup {
  role: string;
  replicas: number;
  gpus_per_task: number;
  cpus_per_task?: number;
  memory?: string | number;
  node_labels?: Record<string, string>;
  nodes?: string[];
  command?: string[];
}

/** A job spec: the body of POST /api/v1/jobs (and `spec` of a Job). */
export interface JobSpec {
  name: string;
  framework?: Framework;
  command: string[];
  shell?: boolean;
  env?: Record<string, string>;
  workdir?: string;
  groups: TaskGroup[];
  restart?: { policy: string; max_restarts?: number; backoff?: string; max_backoff?: string };
  time_limit?: string | number;
  process_per_node?: boolean;
  queue?: string;
  priority?: number;
  preemptible?: boolean;
  spread?: boolean;
  stop_after_disconnect?: string | number;
}

export type TaskState = 'created' | 'running' | 'exited' | 'lost' | 'unstarted';

export interface JobTask {
  id: string;
  name: string;
  role: string;
  index: number;
  node: string;
  address: string;
  gpus: number[];
  port: number;
  runs: boolean;
  unix_user: string;
  state: TaskState;
  pid: number;
  exit_code?: number;
  signal?: number;
  error?: string;
  ended_ms?: number;
}

export interface JobEvent {
  time: string;
  state: JobState;
  reason: string;
}

export interface Job {
  id: number;
  name: string;
  owner: string;
  state: JobState;
  reason: string;
  restart_count: number;
  framework: Framework;
  spec: JobSpec;
  tasks: JobTask[];
  created: string;
  updated: string;
  ended?: string;
  stopping?: boolean;
  queue: string;
  priority: number;
  preemptible: boolean;
  preemptions: number;
  lost_gpu_seconds: number;
  gpu_seconds: number;
  /** Pending jobs: 1 = next. */
  position?: number;
  /** Pending jobs (the first 100 blocked ones). */
  estimated_start?: string;
  /** GET /api/v1/jobs/{id} only. */
  events?: JobEvent[];
}

export interface JobLogChunk {
  task: string;
  stream: 'stdout' | 'stderr';
  /** Where `data` starts in the file. */
  offset: number;
  /** The file's size now. */
  size: number;
  data: string;
  /** Not sent yet: where the next read starts (see README, "server side"). */
  next_offset?: number;
}

// ---- scheduler queue, quotas, usage ----

/** GET /api/v1/queue: pending jobs in the scheduler's order (a page). */
export interface QueuePage {
  jobs: Job[];
  total: number;
}

export type QuotaKind = 'user' | 'group';

export interface Quota {
  kind: QuotaKind;
  name: string;
  /** GPUs held at once; 0 = no limit. */
  max_gpus: number;
  /** Per quota period; 0 = no limit. */
  max_gpu_hours: number;
  /** Fair-share weight (> 0, default 1). */
  share: number;
  updated?: string;
}

export interface UsageRow {
  kind: QuotaKind;
  name: string;
  fairshare_gpu_hours: number;
  period_gpu_hours: number;
}

/** GET /api/v1/quotas. */
export interface QuotaList {
  quotas: Quota[];
  /** The quota period, e.g. "30d". */
  period: string;
  usage: UsageRow[];
}

// ---- admin: groups, tokens, SSH nodes ----

export interface Group {
  name: string;
  description: string;
  members: string[];
}

export interface ApiToken {
  id: string;
  kind: string;
  name: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  /** POST /api/v1/tokens only: the secret, shown once. */
  token?: string;
}

export interface SshNode {
  name: string;
  url: string;
  gpus: number;
  gpu_model: string;
  labels: Record<string, string>;
  created_ms: number;
  reachable: boolean;
  tasks: number;
  error?: string;
}

// ---- usage and energy report (GET /api/v1/usage) ----

export type UsageBy = 'user' | 'group' | 'job' | 'reservation' | 'node' | 'area';

export type EnergyMethod = 'counter' | 'integrated' | 'estimated' | 'mixed' | 'none';

/** The figures of one row, and of the total. */
export interface UsageFigures {
  gpu_hours: number;
  /** A process on the GPU. */
  busy_gpu_hours: number;
  /** Weighted by utilisation. */
  used_gpu_hours: number;
  avg_util_pct: number;
  idle_gpu_hours: number;
  /** Reserved, no process on the GPU. */
  reserved_idle_gpu_hours: number;
  energy_kwh: number;
  /** No process, no job. */
  idle_energy_kwh: number;
  /** No energy reading. */
  unmeasured_gpu_hours: number;
  energy_method: EnergyMethod;
  energy_shares?: { counter: number; integrated: number; estimated: number };
  /** With prices configured. */
  cost?: number;
  currency?: string;
  /** With co2_g_per_kwh configured. */
  co2_kg?: number;
}

export interface UsageReportRow extends UsageFigures {
  /** User, group, job id, reservation id, node or area; "" = idle (by user), no group, no area. */
  key: string;
}

export interface UsageReport {
  by: UsageBy;
  from: string;
  to: string;
  /** by=area: the node label that names areas. */
  label?: string;
  /** Only this user's figures (always set for a non-admin). */
  user?: string;
  /** Largest GPU time first. */
  rows: UsageReportRow[];
  total: UsageFigures;
}

// ---- power (GET /api/v1/power, /api/v1/power/policies) ----

export type PowerOutcome = 'set' | 'restored' | 'unchanged' | 'refused' | 'error' | '';

export interface PowerGpu {
  node: string;
  index: number;
  uuid: string;
  model: string;
  min_w: number | null;
  max_w: number | null;
  default_w: number | null;
  /** null: no policy covers it, the GPU's default. */
  target_w: number | null;
  in_force_w: number | null;
  power_w: number | null;
  busy: boolean;
  policies: string[];
  reason: string;
  outcome: PowerOutcome;
  detail: string;
  reported: string | null;
}

export interface PowerBudget {
  policy: string;
  budget_w: number;
  gpus: number;
  busy: number;
  left_out: number;
  min_total_w: number;
  assigned_w: number;
  feasible: boolean;
}

export interface PowerState {
  planned: string | null;
  gpus: PowerGpu[];
  budgets: PowerBudget[];
}

export interface PowerScope {
  nodes?: string[];
  gpu_models?: string[];
  labels?: Record<string, string>;
}

/** A power policy as sent (exactly one of limit and budget). */
export interface PowerPolicySpec {
  name: string;
  description?: string;
  scope?: PowerScope;
  limit?: number;
  budget?: number;
  windows?: { zone?: string; allow: PolicyWindow[] };
}

/** A power policy as the server answers it. */
export interface PowerPolicy extends PowerPolicySpec {
  id: number;
  kind: 'limit' | 'budget';
  watts: number;
  created: string;
  updated: string;
}
