/**
 * Plugin tokens of the jupyter_sched frontend, for other plugins (utilization charts, job
 * definitions, run lists, status-bar items) to build on:
 *
 * - {@link ISchedModel}: the headless model — client, event stream, per-resource refresh, state
 *   and typed signals. Consume it with `requires: [ISchedModel]`; call `watch(resource)` while you
 *   show a resource so it stays fresh when the event stream is down.
 * - {@link ISchedSections}: the sidebar's section registry. `add({id, title, rank, create})`
 *   puts a section (a widget, with optional toolbar items) into the GPUs sidebar, the way
 *   JupyterLab's running-sessions panel lets extensions add managers.
 */
import type { TranslationBundle, ITranslator } from '@jupyterlab/translation';
import type { CommandRegistry } from '@lumino/commands';
import { Token } from '@lumino/coreutils';
import type { IDisposable } from '@lumino/disposable';
import type { ISignal } from '@lumino/signaling';
import type { Widget } from '@lumino/widgets';

import type { SchedClient } from './client';
import type { StreamStatus } from './events';
import type { TelemetryHistory } from './telemetry';
import type { Config, IdleEntry, Inventory, InventoryChange, IReconnecting, ISchedEvent, Job, Me, QueueRow, Quotas } from './types';

/** What the model keeps fresh, one request (or two) each. */
export type SchedResource = 'inventory' | 'queue' | 'jobs' | 'quotas';

/** All resources, in refresh order. */
export const SCHED_RESOURCES: readonly SchedResource[] = ['inventory', 'queue', 'jobs', 'quotas'];

/**
 * Where the model stands: `idle` before `start()`, `loading` while config and identity load,
 * `ready`, `missing` (the server extension is not enabled: 404 from api/sched), `failed` (see
 * `startError`).
 */
export type SchedModelStatus = 'idle' | 'loading' | 'ready' | 'missing' | 'failed';

/** A job or lease that changed state: `previous` is undefined the first time the model sees it. */
export interface IJobTransition {
  previous: Job | undefined;
  job: Job;
}

/** An inventory update: `changes` from an inventory event, or null after a full re-read. */
export interface IInventoryUpdate {
  changes: readonly InventoryChange[] | null;
}

/** New telemetry: the GPUs that got samples. */
export interface ITelemetryUpdate {
  gpus: readonly string[];
}

/** Who holds a GPU. */
export interface IHolder {
  id: string;
  /** The job's name; for a GPU shared by several jobs, each with its share (`half 0.5 GPU, half2 0.5 GPU`). */
  name: string;
  /** Its user; for a shared GPU, every user holding a share. */
  user: string;
  kind: string;
  /** The fraction of the GPU one fractional job holds (0.5), when it is the GPU's only holder. */
  share?: number;
  /** How many jobs share this GPU, when more than one does (`name` names each). */
  shared?: number;
}

/** The headless GPU-scheduler model (one per application). */
export interface ISchedModel extends IDisposable {
  /** The typed REST client (requests and answers typed from openapi.yaml). */
  readonly client: SchedClient;
  readonly status: SchedModelStatus;
  /** Why `status` is `missing` or `failed` (one readable line). */
  readonly startError: string | null;
  /** A failed start that passes (the scheduler off, the server not answering) is tried again: every this many
   * seconds; null when it is not (store41). */
  readonly retryStartInS: number | null;
  /** `GET config`; null before start. */
  readonly config: Config | null;
  /** `GET me`; null before start. */
  readonly me: Me | null;
  readonly inventory: Inventory | null;
  /** `GET queue`: pending work in queue order, then running work, of everyone. */
  readonly queue: readonly QueueRow[];
  /** My jobs (not leases), newest first as the server sends them. */
  readonly jobs: readonly Job[];
  /** My leases. */
  readonly leases: readonly Job[];
  readonly quotas: Quotas | null;
  readonly streamStatus: StreamStatus;
  /** The server's retry loops now reconnecting (`connection` events), by loop (`database`, `central`). */
  readonly reconnecting: ReadonlyMap<string, IReconnecting>;
  /** Per-GPU telemetry history (seeded from `GET telemetry`, extended by events). */
  readonly history: TelemetryHistory;
  /** Seconds between refreshes of a watched resource while the stream is down. */
  refreshInterval: number;

  readonly statusChanged: ISignal<ISchedModel, SchedModelStatus>;
  /** My jobs or leases changed. */
  readonly jobsChanged: ISignal<ISchedModel, void>;
  readonly queueChanged: ISignal<ISchedModel, void>;
  readonly inventoryChanged: ISignal<ISchedModel, IInventoryUpdate>;
  /** Quotas or identity (`me`) changed. */
  readonly quotasChanged: ISignal<ISchedModel, void>;
  readonly telemetry: ISignal<ISchedModel, ITelemetryUpdate>;
  readonly streamStatusChanged: ISignal<ISchedModel, StreamStatus>;
  /** A server retry loop started or stopped reconnecting ({@link reconnecting} changed). */
  readonly reconnectingChanged: ISignal<ISchedModel, void>;
  /** A resource's last refresh failed (message) or recovered (null). */
  readonly errorChanged: ISignal<ISchedModel, { resource: SchedResource; error: string | null }>;
  /**
   * The server does not answer, or is stopping, for the resources being read (`the server is not
   * answering (restarting?) — showing what it said at 19:15:34 UTC; retrying`); null while it answers.
   * Said once for the panel, not as each resource's `error()` (newuser26 n12).
   */
  readonly serverDown: string | null;
  readonly serverDownChanged: ISignal<ISchedModel, string | null>;
  /**
   * Whether what is shown is live: the event stream open, no retry loop reconnecting, every read answered (the
   * header's LIVE; newuser33 N3).
   */
  readonly live: boolean;
  /** When the scheduler last answered the panel (a read or an event); null: not yet. */
  readonly lastAnswerAt: Date | null;
  /** A job or lease of mine changed state. */
  readonly jobTransition: ISignal<ISchedModel, IJobTransition>;
  /** Every server event, after the model folded it in (idle warnings, preemptions, ...). */
  readonly event: ISignal<ISchedModel, ISchedEvent>;
  /**
   * The user asked to re-read everything ({@link refreshAll}, the panel's Refresh): views that read
   * their own answers rather than a watched resource (the Admin cards) read them again.
   */
  readonly refreshedAll: ISignal<ISchedModel, void>;

  /** Load config and identity, open the event stream, load what is watched. Idempotent. */
  start(): Promise<void>;
  /** Keep `resource` fresh while the handle lives (polling when the stream is down). */
  watch(resource: SchedResource): IDisposable;
  /** Re-read a resource (at most once per refresh interval unless `force`). */
  refresh(resource: SchedResource, options?: { force?: boolean }): void;
  /** Re-read every watched resource now and reconnect the stream if it is down. */
  refreshAll(): void;
  /** The last refresh error of a resource, or null. */
  error(resource: SchedResource): string | null;
  /** Whether `resource` was read from the server at least once (a count shown before that would be a 0 nobody measured). */
  loaded(resource: SchedResource): boolean;
  /** Fold a job or lease (from an answer or an event) into the lists. */
  upsert(job: Job): void;
  /** Whether the server says a feature is on (`GET config` features; unknown = on). */
  supports(feature: string): boolean;
  /** Whether a job or lease belongs to the caller. */
  isMine(job: { user?: string; mine?: boolean }): boolean;
  /** Who holds each GPU uuid now. */
  holders(): Map<string, IHolder>;
  /**
   * Mean live utilization (%) over a job's GPUs, or null. Only for work that holds GPUs now: a
   * finished job's GPUs belong to someone else.
   */
  jobUtilization(job: Job): number | null;
  /** Find a job or lease of mine (or a queue row) by id. */
  find(id: string): Job | undefined;
  /**
   * My work that is idle now (`GET idle`, read with my jobs): its idle start, warning and
   * deadline; undefined when it is not idle. What a page opened after the one-off warning event
   * still shows (new user 6, F15: only the CLI said a lease was about to lose its GPUs).
   */
  idleOf(id: string): IdleEntry | undefined;
  /** Every idle entry of mine, least time left first. */
  readonly idle: readonly IdleEntry[];
  /**
   * Whether this allocation of a lease used its one keep-alive (from this page): `{ until }` (an
   * ISO time, or '' when the server did not say), or null. A lease granted again may keep alive again.
   */
  keptAlive(job: Job): { until: string } | null;
  /** Record that lease `id`'s current allocation used its keep-alive (the answer's `keepalive_until`). */
  noteKeepalive(id: string, until: string | null): void;
}

export const ISchedModel = new Token<ISchedModel>(
  '@jupyter-sched/labextension:ISchedModel',
  'The GPU scheduler model: REST client, live event stream, inventory, queue, my jobs and leases, quotas and telemetry history, with signals.'
);

/** Persisted UI state of one section (filters, toggles), kept in the state database. */
export interface ISectionState {
  get<T extends string | number | boolean>(key: string, fallback: T): T;
  set(key: string, value: string | number | boolean): void;
}

/** A section of the GPUs sidebar. */
export interface ISchedSection {
  /** Stable id (settings `sectionOrder`, saved collapsed state). */
  id: string;
  /** Title shown in the accordion (translated by the provider). */
  title: string;
  /** Default position: lower first (built-ins use 100, 200, ... 600). */
  rank?: number;
  /** Shown only when this says so (evaluated when identity or config change). */
  isAvailable?(model: ISchedModel): boolean;
  /** Build the section's content. Called once, when the section is first shown. */
  create(context: ISchedSection.IContext): ISchedSection.IContent;
}

export namespace ISchedSection {
  export interface IContext {
    model: ISchedModel;
    translator: ITranslator;
    trans: TranslationBundle;
    commands: CommandRegistry;
    /** This section's persisted UI state. */
    state: ISectionState;
  }

  export interface IContent {
    widget: Widget;
    /** Toolbar items shown in the section's title bar. */
    toolbar?: ReadonlyArray<{ name: string; widget: Widget }>;
    /** A short summary for the title bar ("3/4 free"), recomputed when the model changes. */
    badge?: () => string;
  }
}

/** The registry of sidebar sections. */
export interface ISchedSections {
  /** Add a section; disposing the handle removes it. */
  add(section: ISchedSection): IDisposable;
  items(): readonly ISchedSection[];
  readonly added: ISignal<ISchedSections, ISchedSection>;
  readonly removed: ISignal<ISchedSections, ISchedSection>;
}

export const ISchedSections = new Token<ISchedSections>(
  '@jupyter-sched/labextension:ISchedSections',
  'Sections of the GPUs sidebar: add a widget (with toolbar items) as a collapsible section.'
);
