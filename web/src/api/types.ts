// Types of rota's REST API v1, named as the UI uses them. The shapes are not written here:
// they come from the OpenAPI description the server serves (src/server/openapi.cc), which
// `npm run gen:api` turns into ./schema.d.ts. A field the UI needs and the spec lacks belongs
// in the spec. Times are RFC 3339 UTC strings; optional readings are absent when a GPU does
// not report them.
import type { components } from './schema';

type Schemas = components['schemas'];

/** Every error answer: `{"error": {"code", "message"}}`. */
export type ApiErrorBody = Schemas['Error'];

// ---- accounts ----

export type User = Schemas['User'];
export type Role = User['role'];
export type LoginRequest = Schemas['LoginRequest'];
/** POST /api/v1/auth/login: a session token, its expiry and the user. */
export type LoginResponse = Schemas['Session'];

// ---- nodes and GPUs ----

export type GpuInfo = Schemas['GpuInfo'];
/** A node as GET /api/v1/nodes and the stream's `node` event send it (`latest` only from GET /api/v1/nodes/{name}). */
export type Node = Schemas['Node'];
export type NodeState = Node['state'];
export type HostSample = Schemas['HostSample'];
export type NodeLatest = NonNullable<Node['latest']>;
export type GpuProcess = Schemas['GpuProcess'];
/** One row of GET /api/v1/gpus, and of a stream `sample` event's `gpus`. */
export type Gpu = Schemas['Gpu'];
export type GpuState = Gpu['state'];

/**
 * The stream's `sample` event (server-sent events, which the spec names but does not type).
 * `time`/`host` are absent before a node's first sample.
 */
export interface SampleEvent {
  node: string;
  time?: string;
  host?: HostSample;
  gpus: Gpu[];
}

/** GET /api/v1/nodes/{name}/metrics and /api/v1/nodes/{name}/gpus/{index}/metrics. */
export type Series = Schemas['Series'];
/** One bucket of a Series. */
export type SeriesPoint = Schemas['SeriesPoint'];

// ---- reservations ----

export type Reservation = Schemas['Reservation'];
export type ReservationState = Reservation['state'];
/** GET /api/v1/reservations/{id} while running, once samples arrived. */
export type ReservationLive = Schemas['ReservationLive'];
/** POST /api/v1/reservations. */
export type ReservationRequest = Schemas['ReservationRequest'];

// ---- policies ----

export type PolicyWindow = Schemas['PolicyWindow'];
/** A policy as the server answers it. */
export type Policy = Schemas['Policy'];
/** A policy as sent (POST, PUT); an answered Policy may be sent back. */
export type PolicySpec = Schemas['PolicySpec'];

// ---- violations (enforcement audit log) ----

export type ViolationProcess = Schemas['ViolationProcess'];
export type ViolationEvent = Schemas['ViolationEvent'];
export type Violation = Schemas['Violation'];
export type ViolationList = Schemas['ViolationList'];

// ---- queues ----

export type Queue = Schemas['Queue'];

// ---- jobs ----

export type Job = Schemas['Job'];
export type JobState = Job['state'];
export const JOB_STATES: JobState[] = ['pending', 'starting', 'running', 'succeeded', 'failed', 'cancelled'];
export const FINAL_JOB_STATES: JobState[] = ['succeeded', 'failed', 'cancelled'];

export type Framework = Schemas['Framework'];
export type TaskGroup = Schemas['TaskGroup'];
/** A job spec as sent: the body of POST /api/v1/jobs and /api/v1/jobs/preview. */
export type JobSpec = Schemas['JobSpec'];
/** A job's `spec` as the server answers it: defaults filled in, sizes in bytes. */
export type StoredJobSpec = Schemas['StoredJobSpec'];
export type JobTask = Schemas['JobTask'];
export type TaskState = JobTask['state'];
export type JobEvent = NonNullable<Job['events']>[number];
export type JobLogChunk = Schemas['JobLogChunk'];
/** POST /api/v1/jobs/preview. */
export type JobPreview = Schemas['JobPreview'];

// ---- arrays and sweeps ----

/** GET /api/v1/arrays/{id}: the array (a sweep's definition in `sweep`) with its members. */
export type JobArrayMembers = Schemas['JobArrayMembers'];
/** A member of an array: a Job without spec, with its metrics' summaries once reported. */
export type ArrayMember = Schemas['ArrayMember'];
/** GET /api/v1/jobs/{id}/metrics: the points a job reported, oldest first. */
export type JobMetrics = Schemas['JobMetrics'];
export type PreviewProcess = Schemas['PreviewProcess'];

// ---- scheduler queue, quotas ----

/** A pending job as GET /api/v1/queue lists it: a Job without spec and tasks. */
export type QueuedJob = Schemas['QueuedJob'];
/** GET /api/v1/queue: pending jobs in the scheduler's order (a page). */
export type QueuePage = Schemas['QueuePage'];
export type Quota = Schemas['Quota'];
export type QuotaKind = Quota['kind'];
/** A user's or group's GPU-hours (GET /api/v1/quotas). */
export type UsageRow = Schemas['QuotaUsage'];
/** GET /api/v1/quotas. */
export type QuotaList = Schemas['QuotaList'];

// ---- admin: groups, tokens, SSH nodes ----

export type Group = Schemas['Group'];
export type ApiToken = Schemas['ApiToken'];
export type SshNode = Schemas['SshNode'];

// ---- usage and energy report (GET /api/v1/usage) ----

export type UsageReport = Schemas['UsageReport'];
export type UsageBy = UsageReport['by'];
/** The figures of one row, and of the total. */
export type UsageFigures = Schemas['UsageFigures'];
export type EnergyMethod = UsageFigures['energy_method'];
/** A row: its key (user, group, job id, reservation id, node or area; "" = idle, no group, no area) and figures. */
export type UsageReportRow = Schemas['UsageReportRow'];

// ---- power (GET /api/v1/power, /api/v1/power/policies) ----

export type PowerGpu = Schemas['PowerGpu'];
export type PowerOutcome = PowerGpu['outcome'];
export type PowerBudget = Schemas['PowerBudget'];
export type PowerState = Schemas['PowerState'];
export type PowerScope = Schemas['PowerScope'];
/** A power policy as sent (exactly one of limit and budget). */
export type PowerPolicySpec = Schemas['PowerPolicySpec'];
/** A power policy as the server answers it. */
export type PowerPolicy = Schemas['PowerPolicy'];
export type PowerEvent = Schemas['PowerEvent'];
