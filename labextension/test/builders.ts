/** Builders for unit tests: wire-shaped objects as `jupyter_sched/model/codec.py` writes them. */
import type { IJob, IPendingReason, IResources } from '../src/api';

export function makeResources(overrides: Partial<IResources> = {}): IResources {
  return {
    gpus: 1,
    gpu_milli: 1000,
    gpu_models: [],
    min_memory_mib: 0,
    mig_profile: null,
    nvlink: false,
    cpu_millis: 0,
    memory_mib: 0,
    workers: 1,
    node_selector: {},
    tolerations: [],
    ...overrides
  };
}

export function makeReason(overrides: Partial<IPendingReason> = {}): IPendingReason {
  return {
    code: 'WaitingForCapacity',
    message: '',
    details: {},
    unblock: '',
    position: null,
    eta: null,
    eta_reason: '',
    per_flavor: [],
    ...overrides
  };
}

export function makeJob(overrides: Partial<IJob> = {}): IJob {
  return {
    id: 'job-1',
    name: 'train',
    user: 'alice',
    team: 'team-ml',
    kind: 'training',
    priority: 'normal',
    resources: makeResources(),
    time_limit_s: null,
    command: [],
    script: 'train.py',
    notebook: null,
    working_dir: null,
    env: {},
    image: null,
    port: null,
    kernel_id: null,
    profile: null,
    checkpointable: false,
    state: 'pending',
    submitted_at: '2026-11-29T10:00:00Z',
    admitted_at: null,
    started_at: null,
    finished_at: null,
    allocation: null,
    reason: null,
    exit_code: null,
    message: '',
    attempts: 0,
    not_before: null,
    preempted_by: null,
    nominated: null,
    simulated: true,
    ...overrides
  };
}

/** A transport double speaking the real HTTP answer format (`Response` objects), recording calls. */
export function recordingTransport(answer: (path: string, init: RequestInit) => Response) {
  const calls: { path: string; method: string; body: unknown }[] = [];
  return {
    calls,
    transport: {
      request: async (path: string, init: RequestInit = {}) => {
        calls.push({ path, method: init.method ?? 'GET', body: init.body ? JSON.parse(String(init.body)) : undefined });
        return answer(path, init);
      }
    }
  };
}

export function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}
