/**
 * The panel's names for the wire types of `schema.ts` (generated from openapi.yaml), plus readers
 * for the parts the document still leaves as free objects (a job's `resources`, inventory nodes,
 * GPU extras, telemetry samples, event payloads). The readers check each field at runtime and
 * fall back to a neutral value, so a server that sends less never breaks a view.
 *
 * Shapes follow `jupyter_sched/model/codec.py` and `jupyter_sched/telemetry/wire.py`. Units:
 * GPUs, milli-GPUs, MiB, seconds, percent; timestamps ISO 8601 UTC.
 */
import type { Answer, Schemas } from './client';

export type Job = Schemas['Job'];
export type JobState = Schemas['JobState'];
export type JobKind = Schemas['JobKind'];
export type Priority = Schemas['Priority'];
export type Allocation = NonNullable<Schemas['Allocation']>;
export type PendingReason = NonNullable<Schemas['PendingReason']>;
export type QueueRow = Answer<'getQueue'>[number];
export type Inventory = Schemas['GetInventoryResponse'];
export type Gpu = Schemas['Gpu'];
/** A `GET idle` entry: work idle now, with when its warning and its reclaim are due. */
export type IdleEntry = Schemas['IdleCandidate'];
export type QuotaLine = Schemas['QuotaLine'];
export type Quotas = Schemas['GetQuotasResponse'];
export type Me = Schemas['GetMeResponse'];
export type Config = Schemas['GetConfigResponse'];
export type DryRun = Schemas['DryrunJobResponse'];
export type SubmitRequest = Schemas['SubmitJobRequest'];
export type IdlePolicy = Schemas['IdlePolicy'];
export type IdlePolicyPatch = Schemas['IdlePolicyPatch'];
export type IdlePolicies = Schemas['GetIdlePolicyResponse'];
export type AuditRecord = Answer<'getAudit'>[number];
export type UsageRow = Answer<'getUsage'>[number];
export type UsageReportRow = Answer<'getUsageReport'>[number];
export type Telemetry = Schemas['GetTelemetryResponse'];

/** States after which nothing more happens to a job. */
export const TERMINAL_STATES: ReadonlySet<string> = new Set<JobState>(['succeeded', 'failed', 'cancelled', 'lost', 'rejected']);

/** States that hold (or are about to hold) GPUs. */
export const ACTIVE_STATES: ReadonlySet<string> = new Set<JobState>(['admitted', 'running']);

/** Waiting for GPUs: pending, or preempted and requeued. */
export function isWaiting(state: string): boolean {
  return state === 'pending' || state === 'preempted';
}

/**
 * Reason codes of a job held until someone acts (the core's `scheduling.gates.HELD_CODES`): it has no place
 * among the jobs waiting to start, and the job behind it is #1 (newuser38 n10: a held job kept "#1").
 */
export const HELD_CODES: ReadonlySet<string> = new Set(['Held', 'OwnerRemoved', 'TeamMembership', 'OwnerUnconfirmed', 'QuotaRowUnreadable', 'Reinstalled']);

/** A waiting job held until someone acts: counted apart from those waiting to start (newuser38 n24). */
export function isHeld(job: { state: string; reason?: { code?: string } | null }): boolean {
  return isWaiting(job.state) && !!job.reason?.code && HELD_CODES.has(job.reason.code);
}

/**
 * What the reader may do to a waiting job's hold: `hold` (not held), `release` (a hold its owner put,
 * or any hold when the reader is an admin), or null — an admin's hold (`held.admin`), which only an
 * admin releases (PATCH jobs/{id} answers 403: services/job_update.py). Its owner is offered what the
 * status line offers, ask or cancel (newuser28 N5: the card offered a Release that was refused).
 */
export function holdAction(job: Pick<Job, 'held'>, readerIsAdmin: boolean): 'hold' | 'release' | null {
  if (!job.held) {
    return 'hold';
  }
  return job.held.admin && !readerIsAdmin ? null : 'release';
}

function num(value: unknown, fallback = 0): number {
  return typeof value === 'number' && isFinite(value) ? value : fallback;
}

function str(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value : fallback;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** `codec.resources_to_dict`, the fields the panel shows. */
export interface IResources {
  gpus: number;
  gpu_milli: number;
  gpu_models: string[];
  mig_profile: string | null;
  min_memory_mib: number;
  cpu_millis: number;
  memory_mib: number;
  workers: number;
  nvlink: boolean;
  /** A heterogeneous gang's worker groups, in order (empty for every other job). */
  groups: IWorkerGroup[];
}

/** One group of a heterogeneous gang: `workers` workers of `gpus` GPUs each. */
export interface IWorkerGroup {
  name: string;
  gpus: number;
  workers: number;
}

/** A job's resources (missing fields: 0 GPUs, whole-GPU milli, 1 worker). */
export function resourcesOf(job: { resources?: unknown }): IResources {
  const r = record(job.resources);
  return {
    gpus: num(r.gpus),
    gpu_milli: num(r.gpu_milli, 1000),
    gpu_models: strings(r.gpu_models),
    mig_profile: typeof r.mig_profile === 'string' && r.mig_profile ? r.mig_profile : null,
    min_memory_mib: num(r.min_memory_mib),
    cpu_millis: num(r.cpu_millis),
    memory_mib: num(r.memory_mib),
    workers: Math.max(1, num(r.workers, 1)),
    nvlink: r.nvlink === true,
    groups: (Array.isArray(r.groups) ? r.groups : []).map(g => {
      const group = record(g);
      return { name: str(group.name), gpus: num(group.gpus), workers: Math.max(1, num(group.workers, 1)) };
    })
  };
}

/** Every GPU uuid of an allocation (primary and workers). */
export function allocationGpus(allocation: Schemas['Allocation'] | undefined): string[] {
  if (!allocation) {
    return [];
  }
  const out = [...(allocation.gpu_uuids ?? [])];
  for (const worker of allocation.workers ?? []) {
    out.push(...(worker.gpu_uuids ?? []));
  }
  return out;
}

/** A GPU's fields beyond the document's required ones. */
export interface IGpuInfo {
  uuid: string;
  index: number;
  node: string;
  model: string;
  memoryMib: number;
  simulated: boolean;
  healthy: boolean;
  health: string;
  healthReason: string;
  /** When it became unhealthy (ISO UTC), or ''. */
  healthSince: string;
  migDevices: number;
  foreignMemoryMib: number;
}

export function gpuInfo(gpu: Gpu): IGpuInfo {
  const extra = gpu as Record<string, unknown>;
  const health = str(gpu.health, 'healthy');
  return {
    uuid: gpu.uuid,
    index: gpu.index,
    node: gpu.node,
    model: gpu.model,
    memoryMib: gpu.memory_mib,
    simulated: gpu.simulated,
    healthy: health === 'healthy',
    health,
    healthReason: str(extra.health_reason),
    healthSince: str(extra.health_since),
    migDevices: extra.mig_enabled === true && Array.isArray(extra.mig_devices) ? extra.mig_devices.length : 0,
    foreignMemoryMib: num(extra.foreign_memory_mib)
  };
}

/** An inventory node (the document gives nodes as free objects). */
export interface INodeInfo {
  name: string;
  ready: boolean;
  unschedulable: boolean;
  /** An admin's maintenance cordon in one sentence (`cordon.text`: reason, who, when; hubadmin24); '' when none. */
  cordonText: string;
  gpus: Gpu[];
}

export function nodeInfo(node: Record<string, unknown>): INodeInfo {
  return {
    name: str(node.name, '?'),
    ready: node.ready !== false,
    unschedulable: node.unschedulable === true,
    cordonText: str(record(node.cordon).text, ''),
    gpus: Array.isArray(node.gpus) ? (node.gpus.filter(isGpu) as Gpu[]) : []
  };
}

/** Whether `value` has the document's required GPU fields. */
export function isGpu(value: unknown): value is Gpu {
  const g = record(value);
  return typeof g.uuid === 'string' && typeof g.index === 'number' && typeof g.node === 'string' && typeof g.model === 'string';
}

/** Whether `value` looks like a job or lease object (`codec.job_to_dict`). */
export function isJob(value: unknown): value is Job {
  const j = record(value);
  return typeof j.id === 'string' && typeof j.state === 'string' && typeof j.user === 'string';
}

/** One telemetry sample (`telemetry/wire.sample_to_dict`), the fields the panel keeps. */
export interface ISample {
  gpuUuid: string;
  /** Milliseconds since the epoch. */
  t: number;
  /** GPU utilization, %; null when unknown (then `note` says why). */
  util: number | null;
  /** Activity used by idle detection, %; null when unknown. */
  activity: number | null;
  memoryUsedMib: number | null;
  memoryTotalMib: number | null;
  note: string;
}

/**
 * Read a sample. Accepts the wire names (`gpu_uuid`, `utilization_pct`, `activity_pct`,
 * `memory_used_mib`, `timestamp`) and the older live fields a GPU may carry (`uuid`,
 * `utilization`). Returns null without a GPU uuid. `now` stands in for a missing timestamp.
 */
export function sampleOf(value: unknown, now: number): ISample | null {
  const s = record(value);
  const uuid = str(s.gpu_uuid) || str(s.uuid);
  if (!uuid) {
    return null;
  }
  const t = typeof s.timestamp === 'string' ? Date.parse(s.timestamp) : NaN;
  const util = [s.utilization_pct, s.utilization].find(v => typeof v === 'number' && isFinite(v));
  const activity = s.activity_pct;
  const used = s.memory_used_mib;
  const total = s.memory_total_mib;
  return {
    gpuUuid: uuid,
    t: isNaN(t) ? now : t,
    util: typeof util === 'number' ? util : null,
    activity: typeof activity === 'number' && isFinite(activity) ? activity : null,
    memoryUsedMib: typeof used === 'number' && isFinite(used) ? used : null,
    memoryTotalMib: typeof total === 'number' && isFinite(total) ? total : null,
    note: str(s.note)
  };
}

/** One server-sent event: `{type, data}` (job, lease, inventory, telemetry, idle_warning, preempted, progress, reclaimed, lagged). */
export interface ISchedEvent {
  type: string;
  data: unknown;
}

/**
 * A retry loop of the server while its peer is unreachable (`jupyter_sched/backoff.py`
 * `Reconnecting.to_dict`), carried by `connection` events as `{<loop>: IReconnecting | null}`
 * (`database`: the engine's store; `central`: a user server's hub central service); null means
 * that loop is connected again.
 */
export interface IReconnecting {
  target: string;
  attempt: number;
  next_in_s: number;
  error: string;
  /** One sentence: `reconnecting to <target> (attempt n, next in s): <error>`. */
  message: string;
  /** When the panel received this state (ms, its clock): `next_in_s` counts from then ({@link reconnectingText}). */
  receivedAt?: number;
}

/**
 * The loop's sentence as of `now` (ms): the server's words with its wait counted down from when it was received
 * — `reconnecting to the central service (attempt 3, next in 2 s): timed out`, then `(attempt 3, trying again now)`
 * once the wait is over and until the next attempt's state comes. Newuser33 N3: "attempt 1, next in 1 s" stood 90 s.
 */
export function reconnectingText(state: IReconnecting, now: number): string {
  const waited = state.receivedAt === undefined ? 0 : Math.max(0, now - state.receivedAt) / 1000;
  const left = Math.ceil(state.next_in_s - waited);
  const when = left > 0 ? `next in ${left} s` : 'trying again now';
  return state.message.replace(/\(attempt (\d+), next in [\d.]+ s\)/, (_, attempt: string) => `(attempt ${attempt}, ${when})`);
}

/** The `connection` event's loops: those reconnecting, and those connected again (null). */
export function connectionChangesOf(data: unknown): Map<string, IReconnecting | null> {
  const out = new Map<string, IReconnecting | null>();
  if (!data || typeof data !== 'object') {
    return out;
  }
  for (const [loop, value] of Object.entries(data as Record<string, unknown>)) {
    if (value === null) {
      out.set(loop, null);
    } else if (value && typeof value === 'object' && typeof (value as IReconnecting).message === 'string') {
      const v = value as IReconnecting;
      out.set(loop, {
        target: String(v.target ?? loop),
        attempt: Number(v.attempt ?? 0),
        next_in_s: Number(v.next_in_s ?? 0),
        error: String(v.error ?? ''),
        message: v.message
      });
    }
  }
  return out;
}

/**
 * One entry of an `inventory` event's `changes` (`jupyter_sched/inventory/changes.py`):
 * a GPU that appeared or changed (`gpu`: the GPU object), a GPU that went away (`gpu_uuid`),
 * a node that appeared or changed (`node`: the node object without GPUs), a node that went away.
 */
export type InventoryChange =
  | { kind: 'gpu'; gpu: Gpu; what: string }
  | { kind: 'gpu_removed'; gpu_uuid: string; node: string; what: string }
  | { kind: 'node'; node: Record<string, unknown>; what: string }
  | { kind: 'node_removed'; node: string; what: string };

/** Read the `changes` of an inventory event; entries that do not parse are left out. */
export function inventoryChangesOf(data: unknown): InventoryChange[] | null {
  const changes = record(data).changes;
  if (!Array.isArray(changes)) {
    return null;
  }
  const out: InventoryChange[] = [];
  for (const raw of changes) {
    const c = record(raw);
    const what = str(c.what);
    if (c.kind === 'gpu' && isGpu(c.gpu)) {
      out.push({ kind: 'gpu', gpu: c.gpu, what });
    } else if (c.kind === 'gpu_removed' && typeof c.gpu_uuid === 'string') {
      out.push({ kind: 'gpu_removed', gpu_uuid: c.gpu_uuid, node: str(c.node), what });
    } else if (c.kind === 'node' && typeof record(c.node).name === 'string') {
      out.push({ kind: 'node', node: record(c.node), what });
    } else if (c.kind === 'node_removed' && typeof c.node === 'string') {
      out.push({ kind: 'node_removed', node: c.node, what });
    }
  }
  return out;
}

/** Apply inventory changes to an inventory answer; returns a new object (the old one is not touched). */
export function applyInventoryChanges(inventory: Inventory, changes: readonly InventoryChange[]): Inventory {
  type WorkNode = Record<string, unknown> & { name: string; gpus: Gpu[] };
  const nodes: WorkNode[] = inventory.nodes.map(n => ({ ...n, name: str(n.name, '?'), gpus: nodeInfo(n).gpus }));
  const nodeNamed = (name: string): WorkNode | undefined => nodes.find(n => n.name === name);
  for (const change of changes) {
    switch (change.kind) {
      case 'node': {
        const name = str(change.node.name);
        const existing = nodeNamed(name);
        if (existing) {
          Object.assign(existing, change.node, { name, gpus: existing.gpus });
        } else {
          nodes.push({ ...change.node, name, gpus: [] });
        }
        break;
      }
      case 'node_removed': {
        const index = nodes.findIndex(n => n.name === change.node);
        if (index >= 0) {
          nodes.splice(index, 1);
        }
        break;
      }
      case 'gpu': {
        for (const n of nodes) {
          n.gpus = n.gpus.filter(g => g.uuid !== change.gpu.uuid);
        }
        let owner = nodeNamed(change.gpu.node);
        if (!owner) {
          owner = { name: change.gpu.node, gpus: [] };
          nodes.push(owner);
        }
        owner.gpus = [...owner.gpus, change.gpu].sort((a, b) => a.index - b.index);
        break;
      }
      case 'gpu_removed':
        for (const n of nodes) {
          n.gpus = n.gpus.filter(g => g.uuid !== change.gpu_uuid);
        }
        break;
    }
  }
  const gpus = nodes.flatMap(n => n.gpus);
  return { ...inventory, nodes, gpus, simulated: gpus.some(g => g.simulated) };
}
