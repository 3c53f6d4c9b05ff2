// The submit form's values, the job spec they make, and the framework templates
// (each just a set of initial values).
import type { Framework, JobPreview, JobSpec, PreviewProcess } from '../api/types';
import { splitWords } from './format';

export interface GroupValues {
  role: string;
  replicas: number;
  gpusPerTask: number;
}

export interface JobFormValues {
  name: string;
  framework: Framework;
  /** 'shell': one string for /bin/sh -c; 'argv': words split like a shell does. */
  mode: 'shell' | 'argv';
  command: string;
  groups: GroupValues[];
  /** pytorch: one process per task (torchrun starts the per-GPU ones). */
  processPerNode: boolean;
  queue: string;
  /** "" (the queue's default) or a duration such as 30m, 2h, 1d12h. */
  timeLimit: string;
}

export const FRAMEWORKS: { value: Framework; label: string }[] = [
  { value: 'generic', label: 'Generic' },
  { value: 'pytorch', label: 'PyTorch' },
  { value: 'tensorflow', label: 'TensorFlow' },
  { value: 'mpi', label: 'MPI' },
  { value: 'jax', label: 'JAX' },
];

/** The roles a framework allows (docs/api.md "Jobs"); generic: any [a-z][a-z0-9_-]*. */
export const ROLES: Record<Framework, string[] | null> = {
  generic: null,
  tensorflow: ['chief', 'master', 'worker', 'ps', 'evaluator'],
  pytorch: ['master', 'worker'],
  mpi: ['launcher', 'worker'],
  jax: ['worker'],
};

export const defaultJobForm = (): JobFormValues => ({
  name: '',
  framework: 'generic',
  mode: 'shell',
  command: '',
  groups: [{ role: 'worker', replicas: 1, gpusPerTask: 1 }],
  processPerNode: false,
  queue: 'default',
  timeLimit: '',
});

export interface Template {
  key: string;
  label: string;
  /** One line on what it sets up. */
  help: string;
  values: Omit<JobFormValues, 'name' | 'queue' | 'timeLimit'>;
}

export const TEMPLATES: Template[] = [
  {
    key: 'generic',
    label: 'Generic',
    help: 'Any program; rota sets ROTA_* variables and CUDA_VISIBLE_DEVICES.',
    values: { framework: 'generic', mode: 'shell', command: '', groups: [{ role: 'worker', replicas: 1, gpusPerTask: 1 }], processPerNode: false },
  },
  {
    key: 'pytorch-ddp',
    label: 'PyTorch DDP (one process per GPU)',
    help: 'rota starts one process per GPU with MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK and LOCAL_RANK set.',
    values: {
      framework: 'pytorch',
      mode: 'argv',
      command: 'python train.py --epochs 10',
      groups: [{ role: 'worker', replicas: 2, gpusPerTask: 1 }],
      processPerNode: false,
    },
  },
  {
    key: 'pytorch-torchrun',
    label: 'PyTorch torchrun (one process per node)',
    help: 'One torchrun per task; it starts a process per GPU from the PET_* variables rota sets.',
    values: {
      framework: 'pytorch',
      mode: 'shell',
      command:
        'torchrun --nnodes=$PET_NNODES --node_rank=$PET_NODE_RANK --nproc_per_node=$PET_NPROC_PER_NODE ' +
        '--master_addr=$PET_MASTER_ADDR --master_port=$PET_MASTER_PORT train.py --epochs 10',
      groups: [{ role: 'worker', replicas: 2, gpusPerTask: 2 }],
      processPerNode: true,
    },
  },
  {
    key: 'tf-multiworker',
    label: 'TensorFlow MultiWorker',
    help: 'MultiWorkerMirroredStrategy: a chief and workers, each reading TF_CONFIG.',
    values: {
      framework: 'tensorflow',
      mode: 'argv',
      command: 'python train.py',
      groups: [
        { role: 'chief', replicas: 1, gpusPerTask: 1 },
        { role: 'worker', replicas: 2, gpusPerTask: 1 },
      ],
      processPerNode: false,
    },
  },
  {
    key: 'tf-ps',
    label: 'TensorFlow parameter server',
    help: 'Parameter servers and workers; legacy flags come from the {ps_hosts} {worker_hosts} {job_name} {task_index} placeholders (TF_CONFIG is set too).',
    values: {
      framework: 'tensorflow',
      mode: 'argv',
      command: 'python train.py --ps_hosts={ps_hosts} --worker_hosts={worker_hosts} --job_name={job_name} --task_index={task_index}',
      groups: [
        { role: 'ps', replicas: 1, gpusPerTask: 0 },
        { role: 'worker', replicas: 2, gpusPerTask: 1 },
      ],
      processPerNode: false,
    },
  },
  {
    key: 'mpi',
    label: 'MPI',
    help: 'A launcher (no GPUs) runs mpirun over the workers; {hostfile} and {num_procs} are filled in. Workers only hold GPUs.',
    values: {
      framework: 'mpi',
      mode: 'argv',
      command: 'mpirun -hostfile {hostfile} -np {num_procs} python train.py',
      groups: [
        { role: 'launcher', replicas: 1, gpusPerTask: 0 },
        { role: 'worker', replicas: 2, gpusPerTask: 1 },
      ],
      processPerNode: false,
    },
  },
  {
    key: 'jax',
    label: 'JAX',
    help: 'One process per task; jax.distributed.initialize() from COORDINATOR_ADDRESS, NUM_PROCESSES and PROCESS_ID.',
    values: {
      framework: 'jax',
      mode: 'argv',
      command: 'python train.py',
      groups: [{ role: 'worker', replicas: 2, gpusPerTask: 1 }],
      processPerNode: false,
    },
  },
];

/** The form with a template applied (name, queue and time limit kept). */
export function applyTemplate(v: JobFormValues, t: Template): JobFormValues {
  return {
    ...v,
    ...t.values,
    groups: t.values.groups.map((g) => ({ ...g })),
    // A generic template keeps what was typed.
    command: t.values.command || (t.values.framework === 'generic' ? v.command : ''),
  };
}

/** The name of a job submitted without one, as `rota run` names it. */
export const DEFAULT_JOB_NAME = 'job';

/** The spec for POST /api/v1/jobs (and /jobs/preview); throws an Error with a message for the user. */
export function buildSpec(v: JobFormValues): JobSpec {
  const name = v.name.trim() || DEFAULT_JOB_NAME;
  const text = v.command.trim();
  if (!text) throw new Error('Give the command to run.');
  if (v.groups.length === 0) throw new Error('Add at least one group of tasks.');
  let command: string[];
  if (v.mode === 'shell') command = [text];
  else {
    try {
      command = splitWords(text);
    } catch (e) {
      throw new Error(`Command: ${(e as Error).message}.`);
    }
  }
  const spec: JobSpec = {
    name,
    command,
    groups: v.groups.map((g) => ({
      role: g.role.trim(),
      replicas: Number(g.replicas),
      gpus_per_task: Number(g.gpusPerTask),
    })),
  };
  if (v.framework !== 'generic') spec.framework = v.framework;
  if (v.mode === 'shell') spec.shell = true;
  if (v.framework === 'pytorch' && v.processPerNode) spec.process_per_node = true;
  if (v.queue && v.queue !== 'default') spec.queue = v.queue;
  const limit = v.timeLimit.trim();
  if (limit) spec.time_limit = limit;  // the server checks it against the queue
  return spec;
}

/** Environment variables the frameworks set (highlighted in the preview). */
export const FRAMEWORK_VARS = new Set([
  'TF_CONFIG',
  'MASTER_ADDR',
  'MASTER_PORT',
  'WORLD_SIZE',
  'RANK',
  'LOCAL_RANK',
  'LOCAL_WORLD_SIZE',
  'NODE_RANK',
  'GROUP_RANK',
  'PET_NNODES',
  'PET_NODE_RANK',
  'PET_NPROC_PER_NODE',
  'PET_MASTER_ADDR',
  'PET_MASTER_PORT',
  'TORCHELASTIC_RESTART_COUNT',
  'COORDINATOR_ADDRESS',
  'NUM_PROCESSES',
  'PROCESS_ID',
  'ROTA_MPI_HOSTS',
  'ROTA_HOSTFILE',
  'CUDA_VISIBLE_DEVICES',
]);

/** TF_CONFIG and other JSON values pretty-printed; anything else as is. */
export function prettyValue(key: string, value: string): string {
  if (key === 'TF_CONFIG' || /^[[{]/.test(value)) {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return value;
}

/** POST /api/v1/jobs/preview */
export type { PreviewProcess };
export type Preview = JobPreview;
