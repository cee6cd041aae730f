/**
 * The panel's client-side state: the last answers of the API plus live telemetry history, and the
 * rules that fold server-sent events into it. Pure data handling, no DOM (unit-testable).
 */
import { ACTIVE_STATES, type IConfig, type IInventory, type IJob, type IMe, type IQuotaSet, TERMINAL_STATES } from './api';

/** The panel's sections, in display order. */
export const VIEWS = ['inventory', 'queue', 'mywork', 'quota', 'submit', 'admin'] as const;
export type ViewId = (typeof VIEWS)[number];

/** Section titles. */
export const VIEW_TITLES: Record<ViewId, string> = {
  inventory: 'Inventory',
  queue: 'Queue',
  mywork: 'My work',
  quota: 'Quota',
  submit: 'Submit',
  admin: 'Admin'
};

/** Samples kept per GPU for the sparkline. */
export const SPARK_POINTS = 30;

/** Who holds a GPU. */
export interface IHolder {
  id: string;
  name: string;
  user: string;
  kind: string;
}

/** Live use of one GPU: utilization history (%), memory used (MiB). */
export interface IGpuLive {
  util: number[];
  memoryUsedMib: number | null;
  /** Why utilization is unknown (e.g. a MIG device without profiling metrics), shown instead of 0 %. */
  note: string | null;
}

/** Everything the sections render from. */
export class PanelState {
  config: IConfig | null = null;
  me: IMe | null = null;
  inventory: IInventory | null = null;
  queue: IJob[] = [];
  myJobs: IJob[] = [];
  leases: IJob[] = [];
  quotas: IQuotaSet | null = null;
  live = new Map<string, IGpuLive>();
  errors: Partial<Record<ViewId, string>> = {};
  mineOnly = false;

  /**
   * Who holds each GPU uuid: the inventory's `allocations`, refined by the jobs this panel knows
   * (queue rows, my jobs and leases), which carry names and are updated live by events.
   */
  holders(): Map<string, IHolder> {
    const out = new Map<string, IHolder>();
    for (const [uuid, rows] of Object.entries(this.inventory?.allocations ?? {})) {
      if (rows.length) {
        const r = rows[0];
        out.set(uuid, { id: r.job_id, name: r.job_id, user: r.user, kind: r.kind });
      }
    }
    const ended = new Set([...this.queue, ...this.myJobs, ...this.leases].filter(j => !ACTIVE_STATES.has(j.state)).map(j => j.id));
    for (const [uuid, holder] of [...out]) {
      if (ended.has(holder.id)) {
        out.delete(uuid);
      }
    }
    for (const job of [...this.queue, ...this.myJobs, ...this.leases]) {
      if (!ACTIVE_STATES.has(job.state) || !job.allocation) {
        continue;
      }
      const holder = { id: job.id, name: job.name || job.id, user: job.user, kind: job.kind };
      for (const uuid of job.allocation.gpu_uuids) {
        out.set(uuid, holder);
      }
      for (const worker of job.allocation.workers ?? []) {
        for (const uuid of worker.gpu_uuids) {
          out.set(uuid, holder);
        }
      }
    }
    return out;
  }

  /** Mean utilization (%) over a job's allocated GPUs from live telemetry, or null. */
  jobUtilization(job: IJob): number | null {
    if (typeof job.gpu_util === 'number') {
      return job.gpu_util;
    }
    const uuids = job.allocation?.gpu_uuids ?? [];
    const values = uuids
      .map(u => this.live.get(u)?.util)
      .filter((u): u is number[] => !!u && u.length > 0)
      .map(u => u[u.length - 1]);
    return values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
  }

  /**
   * Fold a job/lease object from an event or an answer into the lists. Returns the previous
   * version (undefined when new). Partial objects (`{id, state}`) merge into a known job.
   */
  upsert(job: Partial<IJob> & { id: string }): IJob | undefined {
    const previous =
      this.myJobs.find(j => j.id === job.id) ?? this.leases.find(j => j.id === job.id) ?? this.queue.find(j => j.id === job.id);
    const merged = { ...(previous ?? {}), ...job } as IJob;
    if (!merged.state) {
      return previous;
    }
    const mine = !!this.me && merged.user === this.me.user;
    const replaceIn = (list: IJob[], keep: boolean): IJob[] => {
      const rest = list.filter(j => j.id !== merged.id);
      if (!keep) {
        return rest;
      }
      const index = list.findIndex(j => j.id === merged.id);
      if (index < 0) {
        return [merged, ...rest];
      }
      const copy = list.slice();
      copy[index] = merged;
      return copy;
    };
    if (merged.kind === 'lease') {
      this.leases = replaceIn(this.leases, mine || this.leases.some(j => j.id === merged.id));
    } else {
      this.myJobs = replaceIn(this.myJobs, mine || this.myJobs.some(j => j.id === merged.id));
    }
    const queued = merged.state === 'pending' || merged.state === 'preempted' || ACTIVE_STATES.has(merged.state);
    this.queue = replaceIn(this.queue, queued);
    return previous;
  }

  /**
   * Fold a telemetry event in. Accepts one sample or a list (`samples`/`gpus`), each with a GPU
   * uuid (`gpu_uuid`/`uuid`/`gpu`), utilization in % (`utilization_pct` as in
   * `telemetry/wire.sample_to_dict`, or `utilization`/`util`/`gpu_util`), memory used in MiB
   * (`memory_used_mib`) and an optional `note` saying why utilization is unknown.
   */
  addTelemetry(data: Record<string, any>): number {
    const samples: Record<string, any>[] = Array.isArray(data.samples)
      ? data.samples
      : Array.isArray(data.gpus)
        ? data.gpus
        : Array.isArray(data)
          ? (data as Record<string, any>[])
          : [data];
    let count = 0;
    for (const sample of samples) {
      const uuid = sample.gpu_uuid ?? sample.uuid ?? sample.gpu;
      if (typeof uuid !== 'string') {
        continue;
      }
      const util = [sample.utilization_pct, sample.utilization, sample.util, sample.gpu_util, sample.utilization_gpu].find(v => typeof v === 'number');
      const mem = [sample.memory_used_mib, sample.mem_used_mib].find(v => typeof v === 'number');
      const entry = this.live.get(uuid) ?? { util: [], memoryUsedMib: null, note: null };
      entry.note = typeof util !== 'number' && typeof sample.note === 'string' && sample.note ? sample.note : null;
      if (typeof util === 'number') {
        entry.util = [...entry.util, util].slice(-SPARK_POINTS);
      }
      if (typeof mem === 'number') {
        entry.memoryUsedMib = mem;
      }
      this.live.set(uuid, entry);
      count++;
    }
    return count;
  }

  /** Take live fields that an inventory answer carries on its GPUs into the history. */
  absorbInventory(inventory: IInventory): void {
    this.inventory = inventory;
    const samples = inventory.gpus
      .filter(g => typeof g.utilization === 'number' || typeof g.memory_used_mib === 'number')
      .map(g => ({ uuid: g.uuid, utilization: g.utilization, memory_used_mib: g.memory_used_mib }));
    if (samples.length) {
      this.addTelemetry({ samples });
    }
  }
}

/** Whether a job transition should notify its owner: finished (any terminal state) or preempted. */
export function transitionNotice(previous: IJob | undefined, job: IJob): 'finished' | 'preempted' | null {
  if (previous && previous.state === job.state) {
    return null;
  }
  if (job.state === 'preempted') {
    return 'preempted';
  }
  if (TERMINAL_STATES.has(job.state) && (!previous || !TERMINAL_STATES.has(previous.state))) {
    return previous ? 'finished' : null;
  }
  return null;
}
