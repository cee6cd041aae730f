/**
 * Typed client for the jupyter_sched REST API (`{base_url}api/sched/...`).
 *
 * The interfaces mirror the server's JSON wire shapes, which are produced in ONE place on the
 * server: `jupyter_sched/model/codec.py` (`job_to_dict`, `inventory_to_dict`, `quota_to_dict`, ...)
 * and described in `jupyter_sched/extension/openapi.yaml`. Units follow the server: GPUs,
 * milli-GPUs, MiB, seconds, percent; timestamps are ISO 8601 UTC strings.
 *
 * The client talks through a small {@link Transport} so that it runs unchanged in JupyterLab
 * (through `ServerConnection.makeRequest`, which adds the token and XSRF headers) and in unit tests
 * (a transport answering real `Response` objects).
 */

/** Priority classes (DESIGN.md: three, no more). */
export type PriorityClass = 'high' | 'normal' | 'low';

/** Kinds of work. */
export type JobKind = 'training' | 'inference' | 'lease';

/** Lifecycle states of a job or lease. */
export type JobState =
  | 'pending'
  | 'admitted'
  | 'running'
  | 'succeeded'
  | 'failed'
  | 'cancelled'
  | 'preempted'
  | 'lost'
  | 'rejected';

/** States after which nothing more happens to a job. */
export const TERMINAL_STATES: ReadonlySet<string> = new Set([
  'succeeded',
  'failed',
  'cancelled',
  'lost',
  'rejected'
]);

/** States that hold (or are about to hold) GPUs. */
export const ACTIVE_STATES: ReadonlySet<string> = new Set(['admitted', 'running']);

/** `codec.resources_to_dict`. */
export interface IResources {
  gpus: number;
  gpu_milli: number;
  gpu_models: string[];
  min_memory_mib: number;
  mig_profile: string | null;
  nvlink: boolean;
  cpu_millis: number;
  memory_mib: number;
  workers: number;
  node_selector: Record<string, string>;
  tolerations: string[];
}

/** `codec.allocation_to_dict`. */
export interface IAllocation {
  node: string;
  gpu_uuids: string[];
  gpu_milli: number;
  workers: { node: string; gpu_uuids: string[] }[];
}

/** `codec.reason_to_dict`: one primary pending reason with its numbers. */
export interface IPendingReason {
  /** e.g. `ExceedsQuota`, `WaitingForCapacity`, `Fragmented`, `BudgetExhausted`. */
  code: string;
  /** One sentence, numbers included, rendered by the server. */
  message: string;
  /** The numbers (requested, free, quota, used, model, ...). */
  details: Record<string, unknown>;
  /** What would unblock the job. */
  unblock: string;
  /** 1-based queue position, or null. */
  position: number | null;
  /** Estimated start (ISO UTC), or null when unknown. */
  eta: string | null;
  /** Why the ETA is what it is (e.g. "reservation behind job-12"). */
  eta_reason: string;
  /** One entry per GPU model (flavor) tried (case 005). */
  per_flavor: Record<string, unknown>[];
}

/** `codec.job_to_dict`: spec fields flattened next to lifecycle fields. */
export interface IJob {
  id: string;
  name: string;
  user: string;
  team: string;
  kind: JobKind;
  priority: PriorityClass;
  resources: IResources;
  time_limit_s: number | null;
  command: string[];
  script: string | null;
  notebook: string | null;
  working_dir: string | null;
  env: Record<string, string>;
  image: string | null;
  port: number | null;
  kernel_id: string | null;
  profile: string | null;
  checkpointable: boolean;
  state: JobState;
  submitted_at: string | null;
  admitted_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  allocation: IAllocation | null;
  reason: IPendingReason | null;
  exit_code: number | null;
  message: string;
  attempts: number;
  not_before: string | null;
  preempted_by: string | null;
  nominated: IAllocation | null;
  simulated: boolean;
  /** Present in `GET queue` rows: 1-based position among pending work. */
  position?: number | null;
  /** Present when the server attaches live use: mean GPU utilization, %. */
  gpu_util?: number | null;
  /** `GET queue` rows: estimated start (ISO UTC) and why, and whether the row is the caller's. */
  eta?: string | null;
  eta_reason?: string;
  mine?: boolean;
}

/** `codec.gpu_to_dict`. */
export interface IGpu {
  uuid: string;
  index: number;
  node: string;
  model: string;
  memory_mib: number;
  pci_bus_id: string;
  mig_enabled: boolean;
  mig_devices: { uuid: string; profile: string; gpu_instance_id: number; memory_mib: number }[];
  nvlink_peers: string[];
  health: string;
  health_reason: string;
  simulated: boolean;
  foreign_memory_mib: number;
  /** Optional live fields the server may attach (telemetry): %, MiB, job/lease holding it. */
  utilization?: number | null;
  memory_used_mib?: number | null;
  job_id?: string | null;
  user?: string | null;
}

/** A node of the inventory. */
export interface INode {
  name: string;
  cpu_millis: number;
  memory_mib: number;
  labels: Record<string, string>;
  taints: { key: string; value: string; effect: string }[];
  ready: boolean;
  unschedulable: boolean;
  gpus: IGpu[];
}

/** NVML status: `available=false` with `error` explains a GPU-less host (case 015). */
export interface INvmlStatus {
  available: boolean;
  error: string;
  device_count: number;
  driver_version: string;
}

/** `codec.inventory_to_dict`. */
export interface IInventory {
  source: string;
  simulated: boolean;
  nodes: INode[];
  gpus: IGpu[];
  nvml: INvmlStatus | null;
  /** Who holds each GPU now, by GPU uuid (admitted and running work of everyone). */
  allocations?: Record<string, { job_id: string; user: string; kind: string; gpu_milli: number }[]>;
}

/** `codec.quota_to_dict`: GPUs. `borrowing_limit: null` means unlimited. */
export interface IQuota {
  team: string;
  user: string | null;
  gpu_model: string;
  guaranteed: number;
  borrowing_limit: number | null;
  /** GPUs in use now under this line, when the server reports usage. */
  used?: number;
}

/** `codec.budget_to_dict`: GPU-hours per period. */
export interface IBudget {
  team: string;
  user: string | null;
  gpu_hours: number;
  period: string;
  /** GPU-hours used this period, when the server reports it. */
  used_gpu_hours?: number;
}

/** `GET quotas`: quota lines, budgets, idle policy and current usage. */
export interface IQuotaSet {
  quotas: IQuota[];
  budgets: IBudget[];
  teams?: { team: string; weight: number; allowed_priorities: string[]; members: string[] }[];
  /** GPUs in use now: `{team, user, gpu_model, gpus}` rows. */
  usage?: { team: string; user: string | null; gpu_model: string; gpus: number }[];
  idle?: Record<string, unknown>;
  [key: string]: unknown;
}

/** `GET me`: identity, my team's quota lines and budgets (with GPU-hours used), what I hold. */
export interface IMe {
  user: string;
  team?: string;
  teams?: string[];
  is_admin?: boolean;
  admin?: boolean;
  quotas?: IQuota[];
  budgets?: IBudget[];
  in_use?: { gpus: number; jobs: number; leases: number };
  pending?: number;
  gpu_hours_7d?: number;
  [key: string]: unknown;
}

/** `GET config`: what the backend supports; the UI hides what is off. */
export interface IConfig {
  [key: string]: unknown;
}

/** `POST dryrun`: would this fit (`fits`), where (`allocation`), and when (`eta`, `reason`); `never` = can never run. */
export interface IDryRun {
  fits?: boolean;
  never?: boolean;
  would_preempt?: string[];
  would_start_now?: boolean;
  feasible?: boolean;
  allocation?: IAllocation | null;
  reason?: IPendingReason | null;
  eta?: string | null;
  message?: string;
  [key: string]: unknown;
}

/** `GET jobs/{id}/logs`. */
export interface ILogChunk {
  text: string;
  offset: number;
  next_offset: number;
  finished: boolean;
}

/** A usage report row (`GET usage`): GPU-hours and cost per user/team/model. */
export interface IUsageRow {
  user?: string | null;
  team?: string | null;
  gpu_model?: string | null;
  gpu_hours?: number;
  gpu_seconds?: number;
  utilized_gpu_hours?: number;
  cost?: number;
  [key: string]: unknown;
}

/** An audit record (`GET audit`). */
export interface IAuditRecord {
  id?: string | number;
  at?: string;
  time?: string;
  actor?: string;
  action?: string;
  kind?: string;
  subject?: string;
  job_id?: string | null;
  message?: string;
  details?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Body of `POST jobs` / `POST dryrun` (validated by `model/validation.spec_from_request`). */
export interface ISubmitBody {
  name?: string;
  gpus: number;
  model?: string;
  priority?: PriorityClass;
  kind?: JobKind;
  script?: string;
  notebook?: string;
  command?: string[];
  working_dir?: string;
  time_limit?: string;
  profile?: string;
  team?: string;
}

/** One server-sent event: `{type, data}` (types: job, lease, inventory, telemetry, idle_warning, preempted). */
export interface ISchedEvent {
  type: string;
  data: Record<string, any>;
}

/** The server's error body `{"error": {code, message, field, hint}}`. */
export interface IErrorBody {
  code: string;
  message: string;
  field?: string | null;
  hint?: string | null;
  /** Structured numbers behind the message (e.g. a `reason` object for 422 answers). */
  details?: Record<string, unknown>;
  [key: string]: unknown;
}

/** An error answer from the scheduler API (4xx/5xx), carrying the server's code/field/hint. */
export class SchedApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: IErrorBody
  ) {
    super(body.message);
    this.name = 'SchedApiError';
  }

  get code(): string {
    return this.body.code;
  }

  get field(): string | null {
    return this.body.field ?? null;
  }

  get hint(): string | null {
    return this.body.hint ?? null;
  }
}

/** The command that enables the server extension; shown when the API answers 404. */
export const ENABLE_FIX = 'jupyter server extension enable jupyter_sched';

/**
 * The server answered 404 for the API root: the jupyter_sched server extension is not loaded.
 * The panel shows this with {@link ENABLE_FIX} instead of a blank view.
 */
export class ServerExtensionMissingError extends Error {
  constructor(readonly url: string) {
    super(
      `The jupyter_sched server extension is not enabled on this server (404 from ${url}). ` +
        `Fix: run "${ENABLE_FIX}" and restart JupyterLab.`
    );
    this.name = 'ServerExtensionMissingError';
  }
}

/** Minimal request interface; the JupyterLab implementation wraps `ServerConnection.makeRequest`. */
export interface Transport {
  /**
   * Send a request to `path` (relative to the server's base URL, e.g. `api/sched/jobs`).
   * Resolves with the response whatever its status; rejects on network failure.
   */
  request(path: string, init?: RequestInit): Promise<Response>;
}

/** Query-string builder that skips undefined/null/empty values. */
export function query(params: Record<string, string | number | boolean | null | undefined>): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') {
      continue;
    }
    parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

/** Pick a list out of an answer that is either a bare list or `{<key>: [...]}`. */
export function listOf<T>(payload: unknown, ...keys: string[]): T[] {
  if (Array.isArray(payload)) {
    return payload as T[];
  }
  if (payload && typeof payload === 'object') {
    for (const key of [...keys, 'items', 'results', 'data']) {
      const value = (payload as Record<string, unknown>)[key];
      if (Array.isArray(value)) {
        return value as T[];
      }
    }
  }
  return [];
}

/** Whether `me` says the user is an admin. */
export function isAdmin(me: IMe | null | undefined): boolean {
  return !!me && (me.is_admin === true || me.admin === true);
}

/**
 * Whether `GET config` says a feature is supported. A feature is on unless the config names it
 * off, in any of the shapes `{features: {name: bool}}`, `{name: bool}`, `{unsupported: [name]}`
 * or `{supports: {name: bool}}`.
 */
export function supports(config: IConfig | null | undefined, feature: string): boolean {
  if (!config) {
    return true;
  }
  const unsupported = config['unsupported'];
  if (Array.isArray(unsupported) && unsupported.includes(feature)) {
    return false;
  }
  for (const key of ['features', 'supports', 'supported']) {
    const table = config[key];
    if (table && typeof table === 'object' && !Array.isArray(table)) {
      const value = (table as Record<string, unknown>)[feature];
      if (value === false) {
        return false;
      }
    }
    if (Array.isArray(table) && table.length && !table.includes(feature)) {
      return false;
    }
  }
  return config[feature] !== false;
}

/** The API root, relative to the server base URL. */
export const API_ROOT = 'api/sched';

/** Typed client of the scheduler REST API. One method per route. */
export class SchedClient {
  constructor(private readonly transport: Transport) {}

  /** Low-level call: JSON in, JSON out; maps error bodies to {@link SchedApiError}. */
  async call<T>(method: string, route: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const path = `${API_ROOT}/${route}`;
    const init: RequestInit = signal ? { method, signal } : { method };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { 'Content-Type': 'application/json' };
    }
    const response = await this.transport.request(path, init);
    const text = await response.text();
    let payload: unknown = null;
    if (text) {
      try {
        payload = JSON.parse(text);
      } catch {
        payload = null;
      }
    }
    if (response.ok) {
      return payload as T;
    }
    const error = payload && typeof payload === 'object' ? (payload as { error?: IErrorBody }).error : undefined;
    if (response.status === 404 && !error) {
      // Jupyter's own 404 page, not ours: no route under api/sched at all.
      throw new ServerExtensionMissingError(path);
    }
    throw new SchedApiError(
      response.status,
      error ?? {
        code: `HTTP${response.status}`,
        message: `${method} ${path} failed: ${response.status} ${response.statusText || text.slice(0, 200)}`
      }
    );
  }

  config(): Promise<IConfig> {
    return this.call('GET', 'config');
  }

  me(): Promise<IMe> {
    return this.call('GET', 'me');
  }

  inventory(): Promise<IInventory> {
    return this.call('GET', 'inventory');
  }

  async jobs(filter: { user?: string; state?: string; kind?: string } = {}): Promise<IJob[]> {
    return listOf<IJob>(await this.call('GET', `jobs${query(filter)}`), 'jobs');
  }

  job(id: string): Promise<IJob> {
    return this.call('GET', `jobs/${encodeURIComponent(id)}`);
  }

  submit(body: ISubmitBody): Promise<IJob> {
    return this.call('POST', 'jobs', body);
  }

  cancel(id: string): Promise<IJob> {
    return this.call('DELETE', `jobs/${encodeURIComponent(id)}`);
  }

  /**
   * A slice of a job's log from byte `offset`. With `follow`, the server long-polls (up to 25 s)
   * until new text exists or the job finished; loop with `offset = next_offset`.
   */
  logs(id: string, offset = 0, options: { limit?: number; follow?: boolean; signal?: AbortSignal } = {}): Promise<ILogChunk> {
    const q = query({ offset, limit: options.limit ?? 65536, follow: options.follow ? 'true' : undefined });
    return this.call('GET', `jobs/${encodeURIComponent(id)}/logs${q}`, undefined, options.signal);
  }

  dryrun(body: ISubmitBody): Promise<IDryRun> {
    return this.call('POST', 'dryrun', body);
  }

  async leases(): Promise<IJob[]> {
    return listOf<IJob>(await this.call('GET', 'leases'), 'leases');
  }

  releaseLease(id: string): Promise<IJob> {
    return this.call('DELETE', `leases/${encodeURIComponent(id)}`);
  }

  keepalive(id: string): Promise<unknown> {
    return this.call('POST', `leases/${encodeURIComponent(id)}/keepalive`, {});
  }

  async queue(): Promise<IJob[]> {
    return listOf<IJob>(await this.call('GET', 'queue'), 'queue', 'jobs');
  }

  quotas(): Promise<IQuotaSet> {
    return this.call('GET', 'quotas');
  }

  setQuotas(body: Partial<IQuotaSet>): Promise<IQuotaSet> {
    return this.call('PUT', 'quotas', body);
  }

  async profiles(): Promise<Record<string, unknown>[]> {
    return listOf(await this.call('GET', 'profiles'), 'profiles');
  }

  /** GPU-hours rolled up `by` (user, team, gpu_model, job_id, kind; comma-separated). */
  async usage(params: { all?: boolean; by?: string; since?: string; until?: string } = {}): Promise<IUsageRow[]> {
    return listOf<IUsageRow>(await this.call('GET', `usage${query(params)}`), 'usage', 'rows');
  }

  async audit(params: { limit?: number; since?: string; until?: string; user?: string; job_id?: string; action?: string } = {}): Promise<IAuditRecord[]> {
    return listOf<IAuditRecord>(await this.call('GET', `audit${query(params)}`), 'audit', 'records');
  }

  telemetry(params: { gpu?: string; job?: string } = {}): Promise<unknown> {
    return this.call('GET', `telemetry${query(params)}`);
  }
}

/** The request body that submits `job` again (same spec; the server assigns a new id). */
export function resubmitBody(job: IJob): ISubmitBody & Record<string, unknown> {
  const r = job.resources;
  const body: ISubmitBody & Record<string, unknown> = {
    name: job.name,
    kind: job.kind,
    priority: job.priority,
    team: job.team,
    gpus: r.gpu_milli < 1000 && r.gpus === 1 ? r.gpu_milli / 1000 : r.gpus
  };
  if (r.gpu_models.length) {
    body.gpu_models = r.gpu_models;
  }
  for (const key of ['min_memory_mib', 'cpu_millis', 'memory_mib'] as const) {
    if (r[key]) {
      body[key] = r[key];
    }
  }
  if (r.workers > 1) {
    body.workers = r.workers;
  }
  if (r.mig_profile) {
    body.mig_profile = r.mig_profile;
  }
  if (r.nvlink) {
    body.nvlink = true;
  }
  if (job.script) {
    body.script = job.script;
    if (job.command.length) {
      body.args = job.command;
    }
  } else if (job.notebook) {
    body.notebook = job.notebook;
  } else {
    body.command = job.command;
  }
  if (job.working_dir) {
    body.working_dir = job.working_dir;
  }
  if (job.time_limit_s) {
    body.time_limit_s = job.time_limit_s;
  }
  if (job.env && Object.keys(job.env).length) {
    body.env = job.env;
  }
  if (job.profile) {
    body.profile = job.profile;
  }
  return body;
}

/**
 * One readable line for any error: the server's message, the field at fault and the hint
 * (`gpus must be >= 0 (got -1) [gpus] — use 0 for CPU-only work`). Network failures and
 * {@link ServerExtensionMissingError} keep their own message.
 */
export function describeError(err: unknown): string {
  if (err instanceof SchedApiError) {
    const parts = [err.message];
    if (err.field) {
      parts.push(`[${err.field}]`);
    }
    let text = parts.join(' ');
    if (err.hint) {
      text += ` — ${err.hint}`;
    }
    return text;
  }
  if (err instanceof Error) {
    return err.message;
  }
  return String(err);
}
