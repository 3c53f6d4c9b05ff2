// The submit form's values and the job spec they make. Framework templates
// (later) are just other initial JobFormValues.
import type { JobSpec } from '../api/types';
import { splitWords } from './format';

export interface JobFormValues {
  name: string;
  /** 'shell': one string for /bin/sh -c; 'argv': words split like a shell does. */
  mode: 'shell' | 'argv';
  command: string;
  workers: number;
  gpusPerTask: number;
  queue: string;
}

export const defaultJobForm = (): JobFormValues => ({
  name: '',
  mode: 'shell',
  command: '',
  workers: 1,
  gpusPerTask: 1,
  queue: 'default',
});

/** The spec for POST /api/v1/jobs; throws an Error with a message for the user. */
export function buildSpec(v: JobFormValues): JobSpec {
  const name = v.name.trim();
  if (!name) throw new Error('Give the job a name.');
  const text = v.command.trim();
  if (!text) throw new Error('Give the command to run.');
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
    groups: [{ role: 'worker', replicas: Number(v.workers), gpus_per_task: Number(v.gpusPerTask) }],
  };
  if (v.mode === 'shell') spec.shell = true;
  if (v.queue && v.queue !== 'default') spec.queue = v.queue;
  return spec;
}
