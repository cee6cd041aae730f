/**
 * The headless model of the GPUs sidebar ({@link ISchedModel}): it owns the REST client and the
 * event stream, keeps inventory, queue, my jobs and leases, quotas and telemetry history, and
 * tells views what changed through typed signals. No DOM.
 *
 * Freshness: events fold in as they arrive (job, lease, inventory, telemetry). Resources that
 * somebody `watch`es are re-read when the stream (re)opens, after `lagged`/`reclaimed`, and every
 * refresh interval while the stream is down. The queue is also re-read every interval while the
 * stream is up, because other users' job events are not sent to non-admins. Each resource has its
 * own {@link Throttle}: one request per interval whatever asks for it, unless forced.
 */
import { DisposableDelegate, type IDisposable } from '@lumino/disposable';
import { Signal } from '@lumino/signaling';

import { describeError, OFF_RETRY_MS, type SchedClient, schedulerNotAnsweringText, schedulerOff, ServerExtensionMissingError, serverWide } from './client';
import { EventStream, type StreamStatus, Throttle } from './events';
import { getDisplayZone, queuePosition, setZoneLabels, stoppingText, workName } from './format';
import { TelemetryHistory } from './telemetry';
import {
  ACTIVE_STATES,
  allocationGpus,
  applyInventoryChanges,
  type Config,
  connectionChangesOf,
  type IdleEntry,
  type Inventory,
  HELD_CODES,
  inventoryChangesOf,
  isHeld,
  isJob,
  isWaiting,
  type IReconnecting,
  type ISchedEvent,
  type Job,
  type Me,
  type QueueRow,
  type Quotas,
  sampleOf,
  TERMINAL_STATES
} from './types';
import {
  type IHolder,
  type IInventoryUpdate,
  type IJobTransition,
  type ISchedModel,
  type ITelemetryUpdate,
  SCHED_RESOURCES,
  type SchedModelStatus,
  type SchedResource
} from './tokens';

/** Construction options of {@link SchedModel}. */
export interface ISchedModelOptions {
  client: SchedClient;
  /** Seconds between refreshes of watched resources while the stream is down (default 10). */
  refreshInterval?: number;
  /** Telemetry samples kept per GPU (default 600). */
  historyCapacity?: number;
  /** Seconds of telemetry history asked for at start (default 600). */
  historySeconds?: number;
  /** Largest reconnect delay of the event stream, ms (default 30000). */
  maxBackoffMs?: number;
  /** Clock in ms (tests). */
  now?: () => number;
  /** How often the model asks again while the scheduler is off or the server did not answer at start, ms (default
   * {@link OFF_RETRY_MS}). */
  offRetryMs?: number;
}


/** The model. See the module docstring. */
/** One allocation of a lease: a lease granted again (a new attempt) may keep alive again. */
function allocationKey(job: Job): string {
  return `${job.id}:${job.attempts ?? 0}`;
}

/**
 * The queue's waiting rows numbered 1, 2, … in their order (their last known places, then the
 * list's): an event moves one row, and the places of the others moved with it — new user 25, N3:
 * the only pending job read "#2", the first of fourteen "#8", positions of an older queue read
 * beside the list the events keep. A row with no place (above a quota ceiling: it holds none) keeps
 * none; rows holding GPUs keep theirs (not shown). Unchanged rows are the same objects. `fresh`:
 * the row an event just placed (the engine's place of it now): of two rows at one place, it comes first.
 */
export function renumbered(rows: QueueRow[], fresh?: string): QueueRow[] {
  const placed = rows
    .map((row, index) => ({ row, index, at: isWaiting(row.state) ? queuePosition(row) : null }))
    .filter((r): r is { row: QueueRow; index: number; at: number } => r.at !== null)
    .sort((a, b) => a.at - b.at || Number(b.row.id === fresh) - Number(a.row.id === fresh) || a.index - b.index);
  const out = rows.slice();
  placed.forEach(({ row, index }, rank) => {
    if (row.position !== rank + 1) {
      out[index] = { ...row, position: rank + 1 };
    }
  });
  return out;
}

/** Ended work ids the model remembers (newuser29 n9): far more than any inventory read can be behind. */
export const ENDED_KEPT = 2000;

/**
 * Fields a full read adds beside the field they describe, which job events leave out, as
 * `[field, described]`: merging an event keeps them only while what they describe is unchanged.
 * New user 20, N20: the event of a second preemption brought the new `preempted_by` and the
 * merge kept the first preemptor's `preempted_by_name`, so the toast paired one job's id with
 * another's name.
 */
export const DESCRIBED_BY: ReadonlyArray<readonly [string, string]> = [
  ['preempted_by_name', 'preempted_by'],
  // a progress report is of one run: a job event of its requeue or its next start (which carries no report) ends it
  ['progress', 'started_at'],
  // a planned preemption is of one run too (new user 21, N5): after its requeue and next start, not said again
  ['preemption_planned', 'started_at'],
  // a projected end is of one run and one cycle: after a requeue and next start, not said again (new user 22, N10)
  ['projected_end', 'started_at'],
  // GPUs gone from the inventory under one run (hubadmin 22, H3): its next start is on other GPUs
  ['gone_gpus', 'started_at'],
  // a GPU unhealthy under one run (hubadmin24 B14): its next start is on healthy GPUs
  ['unhealthy_gpus', 'started_at'],
  // its node's drain is of one run (hubadmin26 B1): requeued, its next start is on another node
  ['drain', 'started_at'],
  // the limit a job that gave none is planned with (newuser28 N8): not once it is given one or started
  ['planned_time_limit', 'time_limit_s'],
  ['planned_time_limit', 'started_at']
];

export class SchedModel implements ISchedModel {
  readonly client: SchedClient;
  readonly history: TelemetryHistory;

  readonly statusChanged: Signal<ISchedModel, SchedModelStatus> = new Signal(this);
  readonly jobsChanged: Signal<ISchedModel, void> = new Signal(this);
  readonly queueChanged: Signal<ISchedModel, void> = new Signal(this);
  readonly inventoryChanged: Signal<ISchedModel, IInventoryUpdate> = new Signal(this);
  readonly quotasChanged: Signal<ISchedModel, void> = new Signal(this);
  readonly telemetry: Signal<ISchedModel, ITelemetryUpdate> = new Signal(this);
  readonly streamStatusChanged: Signal<ISchedModel, StreamStatus> = new Signal(this);
  readonly reconnectingChanged: Signal<ISchedModel, void> = new Signal(this);
  readonly errorChanged: Signal<ISchedModel, { resource: SchedResource; error: string | null }> = new Signal(this);
  readonly jobTransition: Signal<ISchedModel, IJobTransition> = new Signal(this);
  readonly event: Signal<ISchedModel, ISchedEvent> = new Signal(this);
  readonly refreshedAll: Signal<ISchedModel, void> = new Signal(this);
  readonly serverDownChanged: Signal<ISchedModel, string | null> = new Signal(this);

  private _status: SchedModelStatus = 'idle';
  private _startError: string | null = null;
  private _config: Config | null = null;
  private _me: Me | null = null;
  private _inventory: Inventory | null = null;
  private _queue: QueueRow[] = [];
  /** Resources read from the server at least once ({@link loaded}). */
  private readonly loadedResources = new Set<SchedResource>();
  private _jobs: Job[] = [];
  private _leases: Job[] = [];
  /**
   * Ids of work seen ended (a terminal state, streamed or read), newest last, at most {@link ENDED_KEPT}: such work
   * holds no GPU again, whatever an inventory read from before its end says (newuser29 n9: another user's job that
   * ended left the queue and every list, so the inventory card kept naming it, by id, until the next inventory read).
   */
  private _ended = new Set<string>();
  private _idle: IdleEntry[] = [];
  /** Lease allocations (`id:attempts`) whose one keep-alive was used → its `keepalive_until` ('' unknown). */
  private _keptAlive = new Map<string, string>();
  private _quotas: Quotas | null = null;
  private readonly _reconnecting = new Map<string, IReconnecting>();
  private readonly errors = new Map<SchedResource, string>();
  /**
   * Resources whose last read met a server that does not answer or stops, and `loop:central` while the user server's
   * link to the hub's central service reconnects → what to say ({@link serverDown}).
   */
  private readonly down = new Map<string, string>();
  /** When the last event other than `connection` came (the scheduler spoke); null: none yet. */
  private lastEventAt: Date | null = null;
  private _serverDown: string | null = null;
  private readonly watchers = new Map<SchedResource, number>();
  private readonly throttles = new Map<SchedResource, Throttle>();
  private stream: EventStream | null = null;
  /** Whether a read answered during this outage of the stream has already reconnected it ({@link kickStream}). */
  private streamKicked = false;
  private pollTimer: ReturnType<typeof setInterval> | null = null;
  private starting: Promise<void> | null = null;
  private streamWasOpen = false;
  /** Whether the zone's names were asked while the server did not answer: asked again when it does. */
  private zoneLabelsOwed = false;
  /** {@link refreshMe}: a read of `me` in flight, and whether another was asked for meanwhile. */
  private meReading = false;
  private meAgain = false;
  private _refreshInterval: number;
  /** The start failed for a reason that passes (the scheduler off, the server not answering): the next try. */
  private startRetry: ReturnType<typeof setTimeout> | null = null;
  /** When a read was last answered 503 `scheduler_off` (ms; null: it runs): polls wait {@link offRetryMs} then. */
  private offAt: number | null = null;
  private _disposed = false;
  private readonly now: () => number;

  constructor(private readonly options: ISchedModelOptions) {
    this.client = options.client;
    this.now = options.now ?? (() => Date.now());
    this._refreshInterval = Math.max(1, options.refreshInterval ?? 10);
    this.history = new TelemetryHistory(options.historyCapacity ?? 600);
    for (const resource of SCHED_RESOURCES) {
      this.throttles.set(resource, new Throttle(() => this.load(resource), this.refreshMs));
    }
  }

  get status(): SchedModelStatus {
    return this._status;
  }

  get startError(): string | null {
    return this._startError;
  }

  get retryStartInS(): number | null {
    return this.startRetry === null ? null : Math.round(this.offRetryMs / 1000);
  }

  private get offRetryMs(): number {
    return this.options.offRetryMs ?? OFF_RETRY_MS;
  }

  get config(): Config | null {
    return this._config;
  }

  get me(): Me | null {
    return this._me;
  }

  get reconnecting(): ReadonlyMap<string, IReconnecting> {
    return this._reconnecting;
  }

  get inventory(): Inventory | null {
    return this._inventory;
  }

  get queue(): readonly QueueRow[] {
    return this._queue;
  }

  get jobs(): readonly Job[] {
    return this._jobs;
  }

  get leases(): readonly Job[] {
    return this._leases;
  }

  get idle(): readonly IdleEntry[] {
    return this._idle;
  }

  idleOf(id: string): IdleEntry | undefined {
    return this._idle.find(e => e.job_id === id);
  }

  keptAlive(job: Job): { until: string } | null {
    const until = this._keptAlive.get(allocationKey(job));
    return until === undefined ? null : { until };
  }

  noteKeepalive(id: string, until: string | null): void {
    const job = this.find(id);
    if (!job) {
      return;
    }
    this._keptAlive.set(allocationKey(job), until ?? '');
    this.jobsChanged.emit();
  }

  get quotas(): Quotas | null {
    return this._quotas;
  }

  get streamStatus(): StreamStatus {
    return this.stream?.status ?? 'down';
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  get refreshInterval(): number {
    return this._refreshInterval;
  }

  set refreshInterval(seconds: number) {
    this._refreshInterval = Math.max(1, isFinite(seconds) ? seconds : 10);
    for (const throttle of this.throttles.values()) {
      throttle.intervalMs = this.refreshMs;
    }
    if (this.pollTimer !== null) {
      this.startPolling();
    }
  }

  private get refreshMs(): number {
    return this._refreshInterval * 1000;
  }

  private setStatus(status: SchedModelStatus, error: string | null = null): void {
    const said = error !== this._startError; // a failed start that fails again otherwise (off → not answering) is said
    this._startError = error;
    if (status !== this._status || (said && status === 'failed')) {
      this._status = status;
      this.statusChanged.emit(status);
    }
  }

  start(): Promise<void> {
    if (this._status === 'ready') {
      return Promise.resolve();
    }
    if (!this.starting) {
      this.starting = this.doStart().finally(() => {
        this.starting = null;
      });
    }
    return this.starting;
  }

  /**
   * The names of the panel's zone's offsets (`CET`, `CEST`), asked once: its clocks then name their zone as the CLI
   * does (newuser35 n12). A server without the route, or a refusal, leaves `UTC+1`: nothing said, nothing retried.
   * A server that did not answer (down, restarting, the hub's central service unreachable) is asked again once it
   * answers a read or the event stream opens again ({@link askZoneLabelsIfOwed}; s36-edges: the names stayed `UTC+1`
   * until a page reload).
   */
  private async loadZoneLabels(): Promise<void> {
    const zone = getDisplayZone();
    this.zoneLabelsOwed = false;
    try {
      const answer = await this.client.zoneLabels(zone);
      if (!this._disposed) {
        setZoneLabels(zone, answer.labels); // said from the views' next render (their clocks tick with them)
      }
    } catch (err) {
      // an older server (404) or a refusal: the offsets' own names stand; no answer at all: asked again when it answers
      this.zoneLabelsOwed = serverWide(err);
    }
  }

  /** Ask for the zone's names again when the last ask met no answer (the server is answering again now). */
  private askZoneLabelsIfOwed(): void {
    if (this.zoneLabelsOwed && !this._disposed && this._status === 'ready') {
      void this.loadZoneLabels();
    }
  }

  private async doStart(): Promise<void> {
    if (this.startRetry !== null) {
      clearTimeout(this.startRetry);
      this.startRetry = null;
    }
    if (this._status !== 'failed') {
      this.setStatus('loading'); // a retry of a failed start keeps saying why until it is answered (no flicker)
    }
    try {
      const [config, me] = await Promise.all([this.client.config(), this.client.me()]);
      this._config = config;
      this._me = me;
    } catch (err) {
      // the scheduler off (503 scheduler_off: message + fix) or a server that did not answer (a restart) pass:
      // asked again every offRetryMs, so the panel comes back by itself once it runs (store41)
      if (!this._disposed && (schedulerOff(err) || serverWide(err))) {
        this.startRetry = setTimeout(() => void this.start(), this.offRetryMs);
      }
      this.setStatus(err instanceof ServerExtensionMissingError ? 'missing' : 'failed', describeError(err));
      return;
    }
    if (this._disposed) {
      return;
    }
    this.setStatus('ready');
    this.quotasChanged.emit();
    void this.loadZoneLabels();
    this.stream = new EventStream({
      transport: this.client.transport,
      onEvent: event => this.onEvent(event),
      onStatus: status => this.onStreamStatus(status),
      maxBackoffMs: this.options.maxBackoffMs
    });
    this.stream.start();
    this.startPolling();
    for (const resource of SCHED_RESOURCES) {
      if (this.isWatched(resource)) {
        this.refresh(resource);
      }
    }
    void this.seedTelemetry();
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this.stream?.dispose();
    if (this.startRetry !== null) {
      clearTimeout(this.startRetry);
    }
    if (this.pollTimer !== null) {
      clearInterval(this.pollTimer);
    }
    for (const throttle of this.throttles.values()) {
      throttle.dispose();
    }
    Signal.clearData(this);
  }

  watch(resource: SchedResource): IDisposable {
    this.watchers.set(resource, (this.watchers.get(resource) ?? 0) + 1);
    if (this._status === 'ready') {
      this.refresh(resource);
    }
    let done = false;
    return new DisposableDelegate(() => {
      if (!done) {
        done = true;
        this.watchers.set(resource, Math.max(0, (this.watchers.get(resource) ?? 1) - 1));
        if (!this.isWatched(resource)) {
          this.setDown(resource, null); // no longer read: it cannot clear the panel's line itself
        }
      }
    });
  }

  private isWatched(resource: SchedResource): boolean {
    return (this.watchers.get(resource) ?? 0) > 0;
  }

  refresh(resource: SchedResource, options: { force?: boolean } = {}): void {
    if (this._status !== 'ready' || this._disposed) {
      return;
    }
    if (options.force) {
      void this.load(resource);
    } else {
      this.throttles.get(resource)?.request();
    }
  }

  refreshAll(): void {
    if (this._status === 'missing' || this._status === 'failed') {
      void this.start();
      return;
    }
    if (this.stream && this.stream.status === 'down') {
      this.stream.reconnect();
    }
    for (const resource of SCHED_RESOURCES) {
      if (this.isWatched(resource)) {
        this.refresh(resource, { force: true });
      }
    }
    // `me` too, whatever is watched: the Submit form's teams and per-team priorities come from it (new
    // user 23, N9: a priority the team had lost was still offered after Refresh, until a page reload)
    this.refreshMe();
    this.refreshedAll.emit(); // the Admin cards read their own answers (newuser22 N14: Usage stayed as first read)
  }

  error(resource: SchedResource): string | null {
    return this.errors.get(resource) ?? null;
  }

  get serverDown(): string | null {
    return this._serverDown;
  }

  /** When the scheduler last answered this panel (a read, or an event); null: not yet. */
  get lastAnswerAt(): Date | null {
    const read = this.client.lastAnswerAt;
    const heard = this.lastEventAt;
    return read && heard ? (read > heard ? read : heard) : (read ?? heard);
  }

  /**
   * Whether what the panel shows is live: the event stream open, no server retry loop reconnecting (the hub's central
   * service, the database) and every read answered. Newuser33 N3: with the central service hung, the header said LIVE.
   */
  get live(): boolean {
    return this.streamStatus === 'open' && this._reconnecting.size === 0 && this._serverDown === null;
  }

  /** Whether `resource`'s last read met a server that does not answer (`said`) or not (null); one panel-wide line. */
  private setDown(resource: string, said: string | null): void {
    if (said === null) {
      this.down.delete(resource);
    } else if (!this.down.has(resource)) {
      this.down.set(resource, said);
    }
    const now = this.down.size ? [...this.down.values()][0] : null; // the first resource that failed says it
    if (now !== this._serverDown) {
      this._serverDown = now;
      this.serverDownChanged.emit(now);
    }
  }

  loaded(resource: SchedResource): boolean {
    return this.loadedResources.has(resource);
  }

  supports(feature: string): boolean {
    const features = this._config?.features;
    return !features || features[feature] !== false;
  }

  isMine(job: { user?: string; mine?: boolean }): boolean {
    if (typeof job.mine === 'boolean') {
      return job.mine;
    }
    return !!this._me && job.user === this._me.user;
  }

  find(id: string): Job | undefined {
    return this._jobs.find(j => j.id === id) ?? this._leases.find(j => j.id === id) ?? this._queue.find(j => j.id === id);
  }

  private startPolling(): void {
    if (this.pollTimer !== null) {
      clearInterval(this.pollTimer);
    }
    this.pollTimer = setInterval(() => this.poll(), this.refreshMs);
  }

  /** One polling round: everything watched while the stream is down, the queue while it is up. */
  private poll(): void {
    if (this.offAt !== null && this.now() - this.offAt < this.offRetryMs) {
      return; // the scheduler is off: nothing changes until the server is restarted (store41)
    }
    const down = this.streamStatus !== 'open';
    for (const resource of SCHED_RESOURCES) {
      if (this.isWatched(resource) && (down || resource === 'queue')) {
        this.refresh(resource);
      }
    }
  }

  private setError(resource: SchedResource, error: string | null): void {
    const before = this.errors.get(resource) ?? null;
    if (error === null) {
      this.errors.delete(resource);
    } else {
      this.errors.set(resource, error);
    }
    if (before !== error) {
      this.errorChanged.emit({ resource, error });
    }
  }

  /** Read one resource from the server and fold it in. */
  private async load(resource: SchedResource): Promise<void> {
    try {
      switch (resource) {
        case 'inventory': {
          // GET config with it (an ETag answer while unchanged): jupyter_sched reinstalled under the running server is
          // said in the header beside the free GPUs, before any job waits on it (newuser38 n12: LIVE, 4/4 free)
          const [inventory, config] = await Promise.all([this.client.inventory(), this.client.config().catch(() => null)]);
          if (config !== null && !this._disposed) {
            this._config = config;
          }
          this.setInventory(inventory);
          break;
        }
        case 'queue': {
          this._queue = await this.client.queue();
          // loaded before it is said: the Queue's badge reads `loaded('queue')` on this signal, and an empty queue
          // left it blank ("QUEUE" alone) until some other signal came (seen with s35's n4 screenshots)
          this.loadedResources.add(resource);
          this.queueChanged.emit();
          // my running work's idle times, for the Queue card's idle line (new user 22, N6): read after the
          // queue, only while some of mine holds GPUs (My work reads them with its own list)
          const holding = this._queue.some(q => this.isMine(q) && ACTIVE_STATES.has(q.state));
          // and while some of mine is held, whose kind and fix My work's head says (newuser38 n24)
          const held = this._queue.some(q => this.isMine(q) && isHeld(q));
          if (holding || held || this._me?.waiting_on_you || this._me?.held?.length) {
            // who waits for the GPUs my work holds moves with other users' queues, whose events I am not sent:
            // `me` is read with the queue while I hold some (newuser31 n14), and once more when I no longer do
            this.refreshMe();
          }
          if (holding && this.supports('idle')) {
            const idle = await this.client.request('getIdle').catch(() => null);
            if (idle !== null && !this._disposed) {
              this._idle = idle.filter(e => this.isMine({ user: e.user }));
              this.queueChanged.emit();
            }
          }
          break;
        }
        case 'jobs': {
          const [jobs, leases, idle] = await Promise.all([
            this.client.jobs(),
            this.supports('leases') ? this.client.leases() : Promise.resolve([] as Job[]),
            // which of them is idle, and when it is warned and reclaimed (an older server without
            // the route, or a refusal, leaves it unsaid rather than failing the list)
            this.client.request('getIdle').catch(() => null)
          ]);
          if (idle !== null) {
            this._idle = idle.filter(e => this.isMine({ user: e.user }));
          }
          this.setMine(
            jobs.filter(j => j.kind !== 'lease'),
            leases
          );
          break;
        }
        case 'quotas': {
          const [quotas, me] = await Promise.all([this.client.quotas(), this.client.me()]);
          this._quotas = quotas;
          this._me = me;
          this.quotasChanged.emit();
          break;
        }
      }
      this.loadedResources.add(resource);
      this.offAt = null;
      this.setError(resource, null);
      this.setDown(resource, null);
      this.askZoneLabelsIfOwed(); // the server answers again
      this.kickStream();
    } catch (err) {
      if (schedulerOff(err)) {
        // every read answers it alike: its cause and fix said once, under the header; polled slowly (store41)
        this.offAt = this.now();
        this.setError(resource, null);
        this.setDown(resource, describeError(err));
      } else if (serverWide(err)) {
        // the same for every resource: said once, under the panel's header (newuser26 n12), not per section
        this.setError(resource, null);
        this.setDown(resource, describeError(err, { retrying: true })); // the last answer stays shown (N13)
      } else {
        this.setError(resource, describeError(err, { retrying: true }));
        this.setDown(resource, null);
      }
    }
  }

  private setInventory(inventory: Inventory): void {
    this._inventory = inventory;
    const now = this.now();
    const live = inventory.gpus.filter(g => typeof g.utilization === 'number' || typeof g.memory_used_mib === 'number');
    const touched = this.history.addAll(live.map(g => sampleOf(g, now)).filter(s => s !== null));
    this.inventoryChanged.emit({ changes: null });
    if (touched.length) {
      this.telemetry.emit({ gpus: touched });
    }
  }

  /** Replace my jobs and leases from a full read, announcing state changes. */
  private setMine(jobs: Job[], leases: Job[]): void {
    const before = new Map([...this._jobs, ...this._leases].map(j => [j.id, j]));
    this._jobs = jobs;
    this._leases = leases;
    this.jobsChanged.emit();
    for (const job of [...jobs, ...leases]) {
      const previous = before.get(job.id);
      if (previous && previous.state !== job.state) {
        this.jobTransition.emit({ previous, job });
      }
    }
  }

  /** Remember `id` as ended (see {@link _ended}), forgetting the oldest past {@link ENDED_KEPT}. */
  private noteEnded(id: string): void {
    this._ended.delete(id);
    this._ended.add(id);
    if (this._ended.size > ENDED_KEPT) {
      const oldest = this._ended.values().next().value;
      if (oldest !== undefined) {
        this._ended.delete(oldest);
      }
    }
  }

  upsert(job: Job): void {
    const previous = this.find(job.id);
    const merged: Job = { ...(previous ?? {}), ...job };
    for (const [field, basis] of DESCRIBED_BY) {
      if (previous && !(field in job) && (previous as Record<string, unknown>)[basis] !== (merged as Record<string, unknown>)[basis]) {
        // what a full read said of the old value is not true of the new one (new user 20, N20)
        delete (merged as Record<string, unknown>)[field];
      }
    }
    if (TERMINAL_STATES.has(merged.state)) {
      this.noteEnded(merged.id);
      // an ended job is in no stop's grace: the stop_requested of the cancel's own event must not
      // outlive it (new user 17, N21: My work said "Stopping … · cancelled by root" after the end)
      delete (merged as { stop_requested?: unknown }).stop_requested;
    }
    const mine = this.isMine(merged) || this._jobs.some(j => j.id === job.id) || this._leases.some(j => j.id === job.id);
    if (mine) {
      const list = merged.kind === 'lease' ? this._leases : this._jobs;
      const index = list.findIndex(j => j.id === merged.id);
      const next = list.slice();
      if (index >= 0) {
        next[index] = merged;
      } else {
        next.unshift(merged);
      }
      if (merged.kind === 'lease') {
        this._leases = next;
      } else {
        this._jobs = next;
      }
      this.jobsChanged.emit();
    }
    const queued = isWaiting(merged.state) || ACTIVE_STATES.has(merged.state);
    const inQueue = this._queue.findIndex(j => j.id === merged.id);
    if (queued || inQueue >= 0) {
      const rest = this._queue.filter(j => j.id !== merged.id);
      if (queued) {
        const row: QueueRow = { mine: this.isMine(merged), position: null, ...(inQueue >= 0 ? this._queue[inQueue] : {}), ...merged };
        if (typeof merged.reason?.position === 'number') {
          row.position = merged.reason.position; // the engine's place of it now, not the last queue read's
        } else if (merged.reason && HELD_CODES.has(merged.reason.code)) {
          row.position = null; // held: no place among the jobs waiting to start (newuser38 n10)
        }
        if (inQueue >= 0) {
          rest.splice(inQueue, 0, row);
        } else {
          rest.push(row);
        }
      }
      this._queue = renumbered(rest, typeof merged.reason?.position === 'number' ? merged.id : undefined);
      this.queueChanged.emit();
    }
    if (mine && previous?.state !== merged.state) {
      this.jobTransition.emit({ previous, job: merged });
    }
    if (mine && (previous?.state !== merged.state || stoppingText(previous ?? {}) !== stoppingText(merged))) {
      // what I hold moved with it: `me` is read now, with the item, not a refresh interval later
      // (new user 17, N21: the Quota title said "1 in use" beside an all-free inventory)
      this.refreshMe();
    }
  }

  /**
   * Read `me` now (the Quota title and summary): one read in flight at a time, and one more after
   * it when asked again meanwhile — fifty of my jobs ending at once read it twice, not fifty times.
   */
  private refreshMe(): void {
    if (this._status !== 'ready' || this._disposed) {
      return;
    }
    if (this.meReading) {
      this.meAgain = true;
      return;
    }
    this.meReading = true;
    void (async () => {
      do {
        this.meAgain = false;
        try {
          this._me = await this.client.me();
          this.quotasChanged.emit();
        } catch {
          // the next refresh of the quotas reads it again
        }
      } while (this.meAgain && !this._disposed);
      this.meReading = false;
    })();
  }

  /**
   * A read was answered while the event stream is down: connect it again now rather than at the end of its backoff
   * (up to 30 s), once per outage — newuser40 n3: after a server restart the data came back and the header still
   * said RECONNECTING for ~30 s. A stream that fails again goes on with its own (reset) backoff.
   */
  private kickStream(): void {
    if (this.stream && this.stream.status === 'down' && !this.streamKicked) {
      this.streamKicked = true;
      this.stream.reconnect();
    }
  }

  private onStreamStatus(status: StreamStatus): void {
    this.streamStatusChanged.emit(status);
    if (status === 'open') {
      this.streamKicked = false; // the next outage may kick it again
      this.askZoneLabelsIfOwed(); // the server answers again
      if (this.streamWasOpen) {
        // catch up on whatever happened while disconnected (throttled per resource)
        this.refreshWatched();
      }
      // the first opening needs no catch-up: the stream was connecting before the first reads
      this.streamWasOpen = true;
    }
  }

  private refreshWatched(): void {
    for (const resource of SCHED_RESOURCES) {
      if (this.isWatched(resource)) {
        this.refresh(resource);
      }
    }
  }

  /**
   * A streamed job with `mine` as I read it: the job's owner against who I am. The event's own
   * `mine` is its sender's view (verify 22, V2: an admin's DELETE jobs/{id} carried `mine: false`
   * to the owner, whose panel then took the job for another's and showed no toast); with `me`
   * not read yet the flag is dropped, and a row already known keeps its own.
   */
  private readersOwn(job: Job): Job {
    const { mine: _sent, ...rest } = job;
    return this._me && typeof job.user === 'string' ? { ...rest, mine: job.user === this._me.user } : (rest as Job);
  }

  /** Fold one server event into the state, then re-emit it on {@link event}. */
  onEvent(event: ISchedEvent): void {
    const data = event.data;
    if (event.type !== 'connection') {
      this.lastEventAt = new Date(this.now());
    }
    switch (event.type) {
      case 'job':
      case 'lease': {
        const nested = data && typeof data === 'object' ? ((data as Record<string, unknown>).job ?? (data as Record<string, unknown>).lease) : undefined;
        const job = isJob(nested) ? nested : isJob(data) ? data : null;
        if (job) {
          this.upsert(this.readersOwn(job));
          // positions, reasons and ETAs of the others move too; my usage against quota too
          this.refresh('queue');
          if (this.isWatched('quotas')) {
            this.refresh('quotas');
          }
        } else {
          this.refresh('jobs');
          this.refresh('queue');
        }
        break;
      }
      case 'inventory': {
        const changes = inventoryChangesOf(data);
        if (changes && this._inventory) {
          this._inventory = applyInventoryChanges(this._inventory, changes);
          this.inventoryChanged.emit({ changes });
        } else {
          this.refresh('inventory', { force: true });
        }
        break;
      }
      case 'telemetry': {
        const raw = data && typeof data === 'object' ? (data as Record<string, unknown>) : {};
        const list = Array.isArray(raw.gpus) ? raw.gpus : Array.isArray(raw.samples) ? raw.samples : [raw];
        const now = this.now();
        const touched = this.history.addAll(list.map(s => sampleOf(s, now)).filter(s => s !== null));
        if (touched.length) {
          this.telemetry.emit({ gpus: touched });
        }
        break;
      }
      case 'reclaimed':
        this.refresh('jobs', { force: true });
        this.refresh('queue');
        this.refresh('inventory');
        break;
      case 'idle_warning':
        this.foldIdle(data);
        this.refresh('jobs');
        this.refresh('queue');
        break;
      case 'preempted':
        this.refresh('jobs');
        this.refresh('queue');
        break;
      case 'progress': {
        // a running job of mine reported how far it is: its row says so at once (no re-read; session 21)
        const raw = data && typeof data === 'object' ? (data as Record<string, unknown>) : {};
        const known = typeof raw.id === 'string' ? this.find(raw.id) : undefined;
        if (known && raw.progress && typeof raw.progress === 'object') {
          this.upsert({ ...known, progress: raw.progress as Job['progress'] });
        }
        break;
      }
      case 'lagged':
        // the server dropped events for this client: re-read what is shown
        this.refreshWatched();
        break;
      case 'connection': {
        // a server retry loop (the database, the hub's central service) reconnects, or is back
        const changes = connectionChangesOf(data);
        let back = false;
        for (const [loop, state] of changes) {
          if (state) {
            this._reconnecting.set(loop, { ...state, receivedAt: this.now() });
          } else {
            back = this._reconnecting.delete(loop) || back;
          }
          if (loop === 'central') {
            // the user's server answers, the scheduler behind it does not: what is shown is as of its last answer (N3)
            this.setDown('loop:central', state ? schedulerNotAnsweringText(this.lastAnswerAt) : null);
          }
        }
        if (changes.size) {
          this.reconnectingChanged.emit();
        }
        if (back) {
          // what changed while it was away (the reads that failed meanwhile count for nothing)
          for (const resource of SCHED_RESOURCES) {
            if (this.isWatched(resource)) {
              this.refresh(resource, { force: true });
            }
          }
        }
        break;
      }
      default:
        break;
    }
    this.event.emit(event);
  }

  /**
   * An idle step of my work (`idle_warning` event: `stage` warn / reclaim / clear, `deadline`) moves
   * its `GET idle` entry at once, so the My work idle line says what the toast says; the re-read
   * that follows (throttled) brings the server's full entry. New user 20, N16: the line said "if
   * it stays idle, it is warned at …" after the warning's toast.
   */
  private foldIdle(data: unknown): void {
    const raw = data && typeof data === 'object' ? (data as Record<string, unknown>) : {};
    const id = String(raw.lease_id ?? raw.job_id ?? raw.id ?? '');
    const index = this._idle.findIndex(e => e.job_id === id);
    if (!id || index < 0 || (typeof raw.user === 'string' && !this.isMine({ user: raw.user }))) {
      return;
    }
    const next = this._idle.slice();
    if (raw.stage === 'clear') {
      next.splice(index, 1);
    } else {
      const stage = raw.stage === 'reclaim' ? 'reclaimed' : raw.stage === 'warn' ? 'warned' : null;
      if (stage === null) {
        return;
      }
      next[index] = { ...next[index], stage, ...(typeof raw.deadline === 'string' ? { deadline: raw.deadline } : {}) };
    }
    this._idle = next;
    this.jobsChanged.emit();
  }

  /** Fill the telemetry history with the server's recent samples (best effort). */
  private async seedTelemetry(): Promise<void> {
    if (!this.supports('telemetry')) {
      return;
    }
    const seconds = this.options.historySeconds ?? 600;
    try {
      const answer = await this.client.telemetry({
        since: new Date(this.now() - seconds * 1000).toISOString(),
        limit: Math.max(1, Math.min(3600, this.history.capacity))
      });
      const now = this.now();
      const samples = answer.gpus.flatMap(g => [...g.recent, ...(g.current ? [g.current] : [])]);
      const touched = this.history.addAll(samples.map(s => sampleOf(s, now)).filter(s => s !== null));
      if (touched.length) {
        this.telemetry.emit({ gpus: touched });
      }
    } catch (err) {
      console.warn('jupyter_sched: telemetry history unavailable:', describeError(err));
    }
  }

  holders(): Map<string, IHolder> {
    // every job holding each GPU: a shared GPU holds several fractional jobs, and each is named
    // (new user 6, F2 remainder: one of two 0.5-GPU jobs on a GPU was not shown at all)
    const byGpu = new Map<string, Map<string, IHolder & { milli: number }>>();
    const put = (uuid: string, holder: IHolder & { milli: number }): void => {
      const held = byGpu.get(uuid) ?? new Map<string, IHolder & { milli: number }>();
      held.set(holder.id, holder);
      byGpu.set(uuid, held);
    };
    for (const [uuid, rows] of Object.entries(this._inventory?.allocations ?? {})) {
      for (const r of rows) {
        if (r?.job_id) {
          put(uuid, { id: r.job_id, name: r.job_id, user: r.user ?? '', kind: r.kind ?? 'training', milli: r.gpu_milli ?? 1000 });
        }
      }
    }
    const known = [...this._queue, ...this._jobs, ...this._leases];
    const ended = new Set([...known.filter(j => !ACTIVE_STATES.has(j.state)).map(j => j.id), ...this._ended]);
    for (const held of byGpu.values()) {
      for (const id of [...held.keys()]) {
        if (ended.has(id)) {
          held.delete(id);
        }
      }
    }
    const listed = new Map<string, number>(); // GPU → the shares the job lists (newer than the inventory) hold on it
    for (const job of known) {
      if (!ACTIVE_STATES.has(job.state)) {
        continue;
      }
      const milli = job.allocation?.gpu_milli ?? job.resources?.gpu_milli ?? 1000;
      for (const uuid of allocationGpus(job.allocation)) {
        put(uuid, { id: job.id, name: workName(job) || job.id, user: job.user, kind: job.kind, milli });
        listed.set(uuid, (listed.get(uuid) ?? 0) + milli);
      }
    }
    // a GPU holds at most one whole GPU of work: where the jobs listed live fill it, a holder only the inventory
    // names is the one that just ended there — its answer polled before the end (newuser28 n10: during quick
    // turnover the card named the ended job, by id, beside its successor on one whole GPU)
    for (const [uuid, held] of byGpu) {
      const live = listed.get(uuid) ?? 0;
      let total = [...held.values()].reduce((sum, h) => sum + h.milli, 0);
      for (const id of [...held.keys()]) {
        if (total > 1000 && live > 0 && !known.some(j => j.id === id)) {
          total -= held.get(id)?.milli ?? 0;
          held.delete(id);
        }
      }
    }
    const out = new Map<string, IHolder>();
    for (const [uuid, held] of byGpu) {
      const all = [...held.values()];
      if (all.length === 1) {
        const { milli, ...one } = all[0];
        out.set(uuid, milli > 0 && milli < 1000 ? { ...one, share: milli / 1000 } : one);
      } else if (all.length > 1) {
        out.set(uuid, {
          id: all[0].id,
          name: all.map(h => `${h.name} ${h.milli / 1000} GPU`).join(', '),
          user: [...new Set(all.map(h => h.user))].join(', '),
          kind: all[0].kind,
          shared: all.length
        });
      }
    }
    return out;
  }

  jobUtilization(job: Job): number | null {
    if (!ACTIVE_STATES.has(job.state)) {
      return null;
    }
    const values = allocationGpus(job.allocation)
      .map(uuid => this.history.latest(uuid)?.util)
      .filter((u): u is number => typeof u === 'number');
    return values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
  }
}
