/**
 * The "GPUs" sidebar panel: sections Inventory, Queue, My work, Quota, Submit and Admin, kept
 * live by the event stream and, while the stream is down, refreshed at most once per view per
 * refresh interval (and only while the panel is visible).
 */
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import {
  describeError,
  type IJob,
  isAdmin,
  type ISchedEvent,
  resubmitBody,
  type SchedClient,
  ServerExtensionMissingError,
  supports,
  TERMINAL_STATES,
  type Transport
} from './api';
import { AdminView } from './admin';
import { h, replaceKeepingFocus } from './dom';
import { EventStream, type StreamStatus, Throttle } from './events';
import { formatGpus, idleNotice } from './format';
import { PanelState, transitionNotice, VIEW_TITLES, VIEWS, type ViewId } from './state';
import { SubmitForm } from './submit';
import { type IViewActions, outcome, renderExtensionMissing, renderInventory, renderMyWork, renderQueue, renderQuota } from './views';

/** User settings (schema/plugin.json). */
export interface IPanelSettings {
  /** Seconds between refreshes of a view while the event stream is down. */
  refreshInterval: number;
  /** Sections open when the panel starts. */
  defaultViews: ViewId[];
  /** Notify when my jobs finish. */
  notifyCompletion: boolean;
}

export const DEFAULT_SETTINGS: IPanelSettings = {
  refreshInterval: 10,
  defaultViews: ['inventory', 'queue', 'mywork', 'submit'],
  notifyCompletion: true
};

/** Construction options. */
export interface IPanelOptions {
  client: SchedClient;
  transport: Transport;
  openLogs: (job: IJob) => void;
  settings: IPanelSettings;
  /** The server's root directory (PageConfig `serverRoot`): file-browser paths are relative to it. */
  serverRoot?: string;
}

interface ISection {
  id: ViewId;
  details: HTMLDetailsElement;
  body: HTMLElement;
  badge: HTMLElement;
  throttle: Throttle;
}

/** The sidebar panel. */
export class SchedPanel extends Widget {
  readonly state = new PanelState();
  private readonly client: SchedClient;
  private readonly sections = new Map<ViewId, ISection>();
  private readonly content: HTMLElement;
  private readonly streamBadge: HTMLElement;
  private stream: EventStream | null = null;
  private pollTimer: number | null = null;
  private tickTimer: number | null = null;
  private submitForm: SubmitForm | null = null;
  private admin: AdminView | null = null;
  private settings: IPanelSettings;
  private started = false;
  private renderQueued = new Set<ViewId>();
  /** Notices already shown (`kind:id:attempt`), so a job event and a preempted event notify once. */
  private notified = new Set<string>();
  /** The open idle notification per job/lease id (replaced by newer stages, dismissed on `clear`). */
  private idleToasts = new Map<string, string>();

  constructor(private readonly options: IPanelOptions) {
    super();
    this.client = options.client;
    this.settings = options.settings;
    this.id = 'jupyter-sched-panel';
    this.addClass('jp-sched-panel');
    this.title.caption = 'GPUs: inventory, queue, my work, quotas';
    this.streamBadge = h('span', { class: 'jp-sched-stream', role: 'status', title: 'Live updates' }, '');
    this.content = h('div', { class: 'jp-sched-content' }, h('p', { class: 'jp-sched-muted' }, 'Connecting to the scheduler…'));
    this.node.append(h('header', { class: 'jp-sched-header' }, h('h2', { class: 'jp-sched-title' }, 'GPUs'), this.streamBadge), this.content);
  }

  /** Apply changed settings (refresh interval, default views). */
  updateSettings(settings: IPanelSettings): void {
    this.settings = settings;
    for (const section of this.sections.values()) {
      section.throttle.intervalMs = this.refreshMs;
    }
    this.restartPolling();
  }

  private get refreshMs(): number {
    return Math.max(1, this.settings.refreshInterval) * 1000;
  }

  /** Load config and identity, build the sections, open the event stream. */
  async start(): Promise<void> {
    if (this.started) {
      return;
    }
    try {
      const [config, me] = await Promise.all([this.client.config(), this.client.me()]);
      this.state.config = config;
      this.state.me = me;
    } catch (err) {
      if (err instanceof ServerExtensionMissingError) {
        this.content.replaceChildren(renderExtensionMissing(err.url, () => void this.start()));
      } else {
        this.content.replaceChildren(
          h(
            'div',
            { class: 'jp-sched-missing', role: 'alert' },
            h('strong', {}, 'Scheduler unavailable'),
            h('p', {}, describeError(err)),
            h('button', { class: 'jp-sched-button', onclick: () => void this.start() }, 'Retry')
          )
        );
      }
      return;
    }
    this.started = true;
    this.buildSections();
    this.stream = new EventStream({
      transport: this.options.transport,
      onEvent: event => this.onEvent(event as ISchedEvent),
      onStatus: status => this.onStreamStatus(status)
    });
    this.stream.start();
    this.restartPolling();
    // elapsed times and ETAs move with the clock: re-render (no requests) every few seconds
    this.tickTimer = window.setInterval(() => {
      if (this.isVisible) {
        this.render('queue');
        this.render('mywork');
      }
    }, 5000);
    for (const id of VIEWS) {
      this.requestRefresh(id);
    }
  }

  dispose(): void {
    this.stream?.dispose();
    if (this.pollTimer !== null) {
      window.clearInterval(this.pollTimer);
    }
    if (this.tickTimer !== null) {
      window.clearInterval(this.tickTimer);
    }
    for (const section of this.sections.values()) {
      section.throttle.dispose();
    }
    super.dispose();
  }

  /** Open the Submit section with `path` filled in (file browser command, notebook button). */
  prefillSubmit(path: string): void {
    const section = this.sections.get('submit');
    if (!section || !this.submitForm) {
      return;
    }
    section.details.open = true;
    this.submitForm.prefill(path);
    section.details.scrollIntoView({ block: 'nearest' });
  }

  /** Open one section and scroll it into view. */
  showSection(id: ViewId): void {
    const section = this.sections.get(id);
    if (section) {
      section.details.open = true;
      section.details.scrollIntoView({ block: 'nearest' });
    }
  }

  private visibleViews(): ViewId[] {
    return VIEWS.filter(id => this.sections.has(id));
  }

  private buildSections(): void {
    const config = this.state.config;
    const shown: ViewId[] = VIEWS.filter(id => {
      if (id === 'admin') {
        return isAdmin(this.state.me);
      }
      if (id === 'quota') {
        return supports(config, 'quotas');
      }
      if (id === 'submit') {
        return supports(config, 'submit');
      }
      return supports(config, id);
    });
    this.content.replaceChildren();
    for (const id of shown) {
      const badge = h('span', { class: 'jp-sched-badge' });
      const body = h('div', { class: 'jp-sched-section-body' });
      const details = h(
        'details',
        { class: `jp-sched-section jp-sched-section-${id}`, 'data-view': id },
        h('summary', { class: 'jp-sched-summary' }, VIEW_TITLES[id], ' ', badge),
        body
      ) as HTMLDetailsElement;
      details.open = this.settings.defaultViews.includes(id) || (id === 'admin' && this.settings.defaultViews.includes('admin'));
      details.addEventListener('toggle', () => {
        if (details.open) {
          if (id === 'admin') {
            this.admin?.ensureLoaded();
          }
          this.requestRefresh(id);
          this.render(id);
        }
      });
      const throttle = new Throttle(() => this.fetch(id), this.refreshMs);
      this.sections.set(id, { id, details, body, badge, throttle });
      this.content.appendChild(details);
    }
    const submit = this.sections.get('submit');
    if (submit) {
      this.submitForm = new SubmitForm(this.client, this.state, {
        submitted: job => {
          this.state.upsert(job);
          this.renderAll();
          this.requestRefresh('queue');
          const mywork = this.sections.get('mywork');
          if (mywork) {
            mywork.details.open = true;
          }
        }
      }, this.options.serverRoot ?? '');
      submit.body.appendChild(this.submitForm.node);
    }
    const admin = this.sections.get('admin');
    if (admin) {
      this.admin = new AdminView(this.client, this.state, () => this.requestRefresh('quota'));
      admin.body.appendChild(this.admin.node);
      if (admin.details.open) {
        this.admin.ensureLoaded();
      }
    }
    this.renderAll();
  }

  private restartPolling(): void {
    if (this.pollTimer !== null) {
      window.clearInterval(this.pollTimer);
      this.pollTimer = null;
    }
    if (!this.started) {
      return;
    }
    // Fallback polling: only while the stream is down and the panel is visible; each view's
    // Throttle keeps it to one request per refresh interval whatever asks for it.
    this.pollTimer = window.setInterval(() => {
      if (this.stream?.status !== 'open' && this.isVisible) {
        for (const id of this.visibleViews()) {
          this.requestRefresh(id);
        }
      }
    }, this.refreshMs);
  }

  /** Ask for fresh data for a view (throttled; skipped for closed sections). */
  requestRefresh(id: ViewId): void {
    const section = this.sections.get(id);
    if (!section || (!section.details.open && id !== 'mywork' && id !== 'inventory')) {
      return;
    }
    section.throttle.request();
  }

  private async fetch(id: ViewId): Promise<void> {
    const state = this.state;
    try {
      switch (id) {
        case 'inventory':
          state.absorbInventory(await this.client.inventory());
          this.submitForm?.refreshOptions();
          break;
        case 'queue':
          state.queue = await this.client.queue();
          break;
        case 'mywork': {
          const [jobs, leases] = await Promise.all([
            this.client.jobs(),
            supports(state.config, 'leases') ? this.client.leases() : Promise.resolve([])
          ]);
          state.myJobs = jobs.filter(j => j.kind !== 'lease');
          state.leases = leases;
          break;
        }
        case 'quota': {
          const [quotas, me] = await Promise.all([this.client.quotas(), this.client.me()]);
          state.quotas = quotas;
          state.me = me;
          break;
        }
        default:
          return;
      }
      delete state.errors[id];
    } catch (err) {
      state.errors[id] = describeError(err);
    }
    this.render(id);
    if (id === 'queue' || id === 'mywork') {
      this.render('inventory');
      this.render('quota');
    }
  }

  private renderAll(): void {
    for (const id of VIEWS) {
      this.render(id);
    }
  }

  /** Re-render one section on the next animation frame (merged). */
  render(id: ViewId): void {
    if (this.renderQueued.has(id)) {
      return;
    }
    this.renderQueued.add(id);
    requestAnimationFrame(() => {
      this.renderQueued.delete(id);
      this.renderNow(id);
    });
  }

  private renderNow(id: ViewId): void {
    const section = this.sections.get(id);
    if (!section) {
      return;
    }
    const state = this.state;
    const now = new Date();
    const error = state.errors[id] ? h('p', { class: 'jp-sched-feedback jp-sched-feedback-error', role: 'alert' }, state.errors[id]) : null;
    const actions = this.actions();
    switch (id) {
      case 'inventory': {
        const gpus = state.inventory?.gpus ?? [];
        const busy = state.holders().size;
        section.badge.textContent = state.inventory ? `${gpus.length - Math.min(busy, gpus.length)}/${gpus.length} free` : '';
        if (section.details.open) {
          replaceKeepingFocus(section.body, error, ...renderInventory(state));
        }
        break;
      }
      case 'queue': {
        const pending = state.queue.filter(j => j.state === 'pending').length;
        section.badge.textContent = `${pending} pending · ${state.queue.length - pending} running`;
        if (section.details.open) {
          replaceKeepingFocus(section.body, error, ...renderQueue(state, actions, now));
        }
        break;
      }
      case 'mywork': {
        const active = [...state.myJobs, ...state.leases].filter(j => !TERMINAL_STATES.has(j.state)).length;
        section.badge.textContent = active ? `${active} active` : '';
        if (section.details.open) {
          replaceKeepingFocus(section.body, error, ...renderMyWork(state, actions, now));
        }
        break;
      }
      case 'quota':
        if (section.details.open) {
          replaceKeepingFocus(section.body, error, ...renderQuota(state));
        }
        break;
      default:
        break;
    }
  }

  private actions(): IViewActions {
    return {
      cancel: job => void this.cancel(job),
      openLogs: job => this.options.openLogs(job),
      resubmit: job => void this.resubmit(job),
      keepalive: job => void this.keepalive(job.id),
      setMineOnly: value => {
        this.state.mineOnly = value;
        this.render('queue');
      }
    };
  }

  private async cancel(job: IJob): Promise<void> {
    const what = job.kind === 'lease' ? 'Release lease' : 'Cancel job';
    const result = await showDialog({
      title: `${what} ${job.name}?`,
      body:
        `${job.name} (${job.id}) holds ${formatGpus(job.resources)} and is ${job.state}. ` +
        (job.kind === 'lease' ? 'The kernel keeps running but loses its GPUs.' : 'Running work is stopped (SIGTERM, then SIGKILL after the grace period).'),
      buttons: [Dialog.cancelButton({ label: 'Keep it' }), Dialog.warnButton({ label: what })]
    });
    if (!result.button.accept) {
      return;
    }
    try {
      const updated = job.kind === 'lease' ? await this.client.releaseLease(job.id) : await this.client.cancel(job.id);
      if (updated && typeof updated === 'object' && 'id' in updated) {
        this.state.upsert(updated);
      }
      this.renderAll();
    } catch (err) {
      Notification.error(`Could not cancel ${job.name}: ${describeError(err)}`, { autoClose: 8000 });
    }
  }

  private async resubmit(job: IJob): Promise<void> {
    try {
      const fresh = await this.client.submit(resubmitBody(job));
      this.state.upsert(fresh);
      this.renderAll();
      Notification.info(`Resubmitted ${job.name} as ${fresh.id}.`, { autoClose: 4000 });
    } catch (err) {
      Notification.error(`Could not resubmit ${job.name}: ${describeError(err)}`, { autoClose: 8000 });
    }
  }

  private async keepalive(leaseId: string): Promise<void> {
    try {
      await this.client.keepalive(leaseId);
      Notification.success('Lease kept alive: the idle timer restarted.', { autoClose: 4000 });
    } catch (err) {
      Notification.error(`Keep-alive failed: ${describeError(err)}`, { autoClose: 8000 });
    }
  }

  private onStreamStatus(status: StreamStatus): void {
    this.streamBadge.dataset.status = status;
    this.streamBadge.textContent = status === 'open' ? '● live' : status === 'connecting' ? '○ connecting' : '○ reconnecting';
    this.streamBadge.title =
      status === 'open' ? 'Live updates from the event stream' : `Event stream ${status}; refreshing every ${this.settings.refreshInterval} s`;
    if (status === 'open') {
      // catch up on whatever happened while disconnected (throttled per view)
      for (const id of this.visibleViews()) {
        this.requestRefresh(id);
      }
    }
  }

  /** Fold one server event into the state, re-render, and notify where it concerns me. */
  onEvent(event: ISchedEvent): void {
    const data = event.data ?? {};
    switch (event.type) {
      case 'job':
      case 'lease': {
        const job = (data.job ?? data.lease ?? data) as IJob;
        if (!job || typeof job.id !== 'string') {
          this.requestRefresh('mywork');
          this.requestRefresh('queue');
          return;
        }
        const previous = this.state.upsert(job);
        const current = this.state.myJobs.find(j => j.id === job.id) ?? this.state.leases.find(j => j.id === job.id) ?? job;
        this.notifyTransition(previous, current);
        this.renderAll();
        // positions, reasons and ETAs of the others move too
        this.requestRefresh('queue');
        this.requestRefresh('quota');
        break;
      }
      case 'inventory':
        if (Array.isArray(data.gpus) && Array.isArray(data.nodes)) {
          this.state.absorbInventory(data as never);
          this.submitForm?.refreshOptions();
          this.render('inventory');
        } else {
          this.requestRefresh('inventory');
        }
        break;
      case 'telemetry':
        if (this.state.addTelemetry(data)) {
          this.render('inventory');
          this.render('mywork');
        }
        break;
      case 'idle_warning':
        this.notifyIdle(data);
        this.requestRefresh('mywork');
        break;
      case 'reclaimed':
        this.requestRefresh('mywork');
        this.requestRefresh('queue');
        this.requestRefresh('inventory');
        break;
      case 'lagged':
        // the server dropped events for this client: re-read everything (throttled)
        for (const id of this.visibleViews()) {
          this.requestRefresh(id);
        }
        break;
      case 'preempted':
        this.notifyPreempted(data);
        this.requestRefresh('mywork');
        this.requestRefresh('queue');
        break;
      default:
        break;
    }
  }

  private isMine(job: { user?: string }): boolean {
    return !!this.state.me && job.user === this.state.me.user;
  }

  private notifyTransition(previous: IJob | undefined, job: IJob): void {
    if (!this.isMine(job)) {
      return;
    }
    const notice = transitionNotice(previous, job);
    if (notice === 'preempted') {
      this.notifyPreempted({ ...job, job_id: job.id });
    } else if (notice === 'finished' && this.settings.notifyCompletion && job.kind !== 'lease' && this.firstNotice(`finished:${job.id}:${job.attempts}`)) {
      const ok = job.state === 'succeeded';
      const how = outcome(job);
      const text = `${job.name} ${job.state}${how ? `: ${how}` : ''}`;
      (ok ? Notification.success : Notification.warning)(text, {
        autoClose: ok ? 8000 : false,
        actions: [{ label: 'Open logs', callback: () => this.options.openLogs(job) }]
      });
    }
  }

  /** True the first time `key` is seen. */
  private firstNotice(key: string): boolean {
    if (this.notified.has(key)) {
      return false;
    }
    this.notified.add(key);
    return true;
  }

  private notifyIdle(data: Record<string, any>): void {
    if (typeof data.user === 'string' && !this.isMine(data)) {
      return;
    }
    const id: string | undefined = data.lease_id ?? data.job_id ?? data.id;
    const known = id ? (this.state.leases.find(j => j.id === id) ?? this.state.myJobs.find(j => j.id === id)) : undefined;
    const name: string = data.name ?? known?.name ?? id ?? 'your allocation';
    const previous = id ? this.idleToasts.get(id) : undefined;
    const text = idleNotice(data, name);
    if (text === null) {
      // activity resumed: the warning no longer applies
      if (previous && id) {
        Notification.dismiss(previous);
        this.idleToasts.delete(id);
      }
      return;
    }
    if (!this.firstNotice(`idle:${id}:${data.stage ?? 'warn'}:${data.deadline ?? data.reason ?? ''}`)) {
      return;
    }
    if (previous) {
      Notification.dismiss(previous);
    }
    const kind: string = data.kind ?? (data.lease_id ? 'lease' : 'job');
    const actions: Notification.IAction[] = [];
    if (id && kind === 'lease' && data.stage !== 'reclaim') {
      actions.push({ label: 'Keep alive', caption: 'Tell the scheduler this lease is in use', callback: () => void this.keepalive(id), displayType: 'accent' });
    }
    if (known && known.kind !== 'lease') {
      actions.push({ label: 'Open logs', callback: () => this.options.openLogs(known) });
    }
    const toast = Notification.warning(text, { autoClose: false, actions });
    if (id) {
      this.idleToasts.set(id, toast);
    }
  }

  private notifyPreempted(data: Record<string, any>): void {
    if (typeof data.user === 'string' && !this.isMine(data)) {
      return;
    }
    const id: string | undefined = data.job_id ?? data.id;
    const job = id ? (this.state.myJobs.find(j => j.id === id) ?? this.state.leases.find(j => j.id === id)) : undefined;
    if (!this.firstNotice(`preempted:${id}:${job?.attempts ?? data.attempts ?? ''}`)) {
      return;
    }
    const name = data.name ?? job?.name ?? id ?? 'A job';
    const by = data.preempted_by ?? data.by;
    const reason = typeof data.message === 'string' && data.message ? ` ${data.message}` : '';
    const actions = job && job.kind !== 'lease' ? [{ label: 'Open logs', callback: () => this.options.openLogs(job) }] : [];
    Notification.warning(`Preempted: ${name}${by ? ` (by ${by})` : ''}.${reason} It was requeued and keeps its place by submit time.`, {
      autoClose: false,
      actions
    });
  }
}
