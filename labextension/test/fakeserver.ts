/**
 * A scheduler API double for unit tests, speaking the real wire format: `Response` objects with
 * the JSON bodies `jupyter_sched/model/codec.py` writes, and a Server-Sent Events stream
 * (`event: <type>` / `data: <json>`) that tests push events into. It sits where the browser's
 * network would (the {@link Transport}); everything above it is the real code.
 */
import type { Transport } from '../src/client';
import type { Config, Gpu, Inventory, Job, Me, QueueRow, Quotas } from '../src/types';

export function makeJob(overrides: Partial<Job> = {}): Job {
  return {
    id: 'job-1',
    name: 'train',
    user: 'alice',
    team: 'team-ml',
    kind: 'training',
    priority: 'normal',
    resources: { gpus: 1, gpu_milli: 1000, gpu_models: [], workers: 1 },
    time_limit_s: null,
    command: [],
    script: 'train.py',
    notebook: null,
    working_dir: null,
    env: {},
    kernel_id: null,
    profile: null,
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
    simulated: true,
    ...overrides
  };
}

export function makeGpu(index: number, overrides: Partial<Gpu> = {}): Gpu {
  return {
    uuid: `GPU-sim-node-a-${index}`,
    index,
    node: 'node-a',
    model: 'Simulated GPU 80GB',
    memory_mib: 81920,
    health: 'healthy',
    health_reason: '',
    simulated: true,
    mig_enabled: false,
    mig_devices: [],
    ...overrides
  };
}

export function makeInventory(count = 4, overrides: Partial<Inventory> = {}): Inventory {
  const gpus = Array.from({ length: count }, (_, i) => makeGpu(i));
  return {
    source: 'simulated',
    simulated: true,
    nodes: count ? [{ name: 'node-a', ready: true, unschedulable: false, labels: {}, taints: [], gpus }] : [],
    gpus,
    nvml: { available: false, error: 'NVML shared library not found', device_count: 0, driver_version: '' },
    allocations: {},
    ...overrides
  };
}

export function queueRow(job: Partial<Job>, extra: Partial<QueueRow> = {}): QueueRow {
  return { ...makeJob(job), mine: (job.user ?? 'alice') === 'alice', position: null, ...extra };
}

export function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

/** One open event stream. */
export class StreamHandle {
  closed = false;
  private readonly encoder = new TextEncoder();
  constructor(private readonly controller: ReadableStreamDefaultController<Uint8Array>) {}

  /** Send one event as the server writes it. */
  push(type: string, data: unknown): void {
    this.controller.enqueue(this.encoder.encode(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`));
  }

  /** Send raw text (partial lines, comments). */
  raw(text: string): void {
    this.controller.enqueue(this.encoder.encode(text));
  }

  /** The server ends the stream (restart, proxy timeout). */
  close(): void {
    if (!this.closed) {
      this.closed = true;
      this.controller.close();
    }
  }
}

/** The API double. Fields are what the next answers contain; `calls` records every request. */
export class FakeSchedServer {
  config: Config = {
    version: '0.1.0',
    api: 'v1',
    features: { leases: true, dryrun: true, telemetry: true, audit: true, usage: true },
    priorities: ['high', 'normal', 'low']
  };
  me: Me = { user: 'alice', is_admin: false, team: 'team-ml', quotas: [], in_use: { gpus: 0, jobs: 0, leases: 0 }, pending: 0 };
  inventory: Inventory = makeInventory();
  queue: QueueRow[] = [];
  jobs: Job[] = [];
  leases: Job[] = [];
  quotas: Quotas = { quotas: [{ team: 'team-ml', user: null, gpu_model: '*', guaranteed: 2, borrowing_limit: 1 }], budgets: [], teams: [], user_teams: {} };
  telemetry: unknown = { enabled: true, simulated: true, gpus: [] };
  /** Status code `GET events` answers (200 opens a stream). */
  eventsStatus = 200;
  /** Answer every route except `events` with this status and error body (null: normal answers). */
  failWith: { status: number; code: string; message: string; hint?: string; reference?: string } | null = null;
  /** Extra routes: `"METHOD path"` (path without `api/sched/` and query) → answer. */
  routes = new Map<string, (body: unknown, query: URLSearchParams) => Response>();
  readonly calls: { method: string; path: string; body: unknown }[] = [];
  readonly streams: StreamHandle[] = [];

  get stream(): StreamHandle {
    const open = this.streams.filter(s => !s.closed);
    if (!open.length) {
      throw new Error('no open event stream');
    }
    return open[open.length - 1];
  }

  /** Requests to `path` (exact, without query) so far. */
  count(method: string, path: string): number {
    return this.calls.filter(c => c.method === method && c.path.split('?')[0] === `api/sched/${path}`).length;
  }

  readonly transport: Transport = {
    request: async (path: string, init: RequestInit = {}) => {
      const method = init.method ?? 'GET';
      const body = typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
      this.calls.push({ method, path, body });
      const [route, search] = path.replace(/^api\/sched\//, '').split('?');
      if (route === 'events') {
        return this.events(init.signal ?? undefined);
      }
      const custom = this.routes.get(`${method} ${route}`);
      if (custom) {
        return custom(body, new URLSearchParams(search ?? ''));
      }
      if (this.failWith) {
        const { status, code, message, hint, reference } = this.failWith;
        return json(status, { error: { code, message, field: null, hint: hint ?? null, ...(reference ? { reference } : {}) } });
      }
      switch (`${method} ${route}`) {
        case 'GET config':
          return json(200, this.config);
        case 'GET me':
          return json(200, this.me);
        case 'GET inventory':
          return json(200, this.inventory);
        case 'GET queue':
          return json(200, this.queue);
        case 'GET jobs':
          return json(200, this.jobs);
        case 'GET leases':
          return json(200, this.leases);
        case 'GET quotas':
          return json(200, this.quotas);
        case 'GET telemetry':
          return json(200, this.telemetry);
        default:
          return json(404, { error: { code: 'not_found', message: `no route ${method} ${route}`, field: null, hint: null } });
      }
    }
  };

  private events(signal: AbortSignal | undefined): Response {
    if (this.eventsStatus !== 200) {
      return new Response('', { status: this.eventsStatus });
    }
    let handle: StreamHandle | null = null;
    let stream: ReadableStreamDefaultController<Uint8Array> | null = null;
    const body = new ReadableStream<Uint8Array>({
      start: controller => {
        stream = controller;
        handle = new StreamHandle(controller);
        this.streams.push(handle);
      },
      cancel: () => {
        if (handle) {
          handle.closed = true;
        }
      }
    });
    signal?.addEventListener('abort', () => {
      if (handle && !handle.closed) {
        handle.closed = true;
        stream?.error(new DOMException('The request was aborted', 'AbortError'));
      }
    });
    return new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
  }
}

/** Let pending promise callbacks (fetch bodies, stream reads) run. */
export async function settle(rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await new Promise<void>(resolve => queueMicrotask(resolve));
    await Promise.resolve();
  }
}
