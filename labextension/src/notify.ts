/**
 * Notifications about my work: a job that finished (with "Open logs"), a preemption, and idle
 * warnings for my leases and jobs (with "Keep alive"); each shown once, an idle warning replaced
 * by its next stage and dismissed when activity resumes.
 */
import { Notification } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { CommandRegistry } from '@lumino/commands';

import { CommandIDs } from './commandids';
import { idleNotice, outcome, stateLabel } from './format';
import type { IJobTransition, ISchedModel } from './tokens';
import { type ISchedEvent, TERMINAL_STATES } from './types';

/** Successes within this long of the last one join its notification instead of stacking a new one. */
export const SUCCESS_BATCH_MS = 60_000;

export class SchedNotifier {
  /** Whether finished jobs notify (settings `notifyCompletion`). */
  notifyCompletion = true;
  /** Notices already shown (`kind:id:attempt`). */
  private readonly shown = new Set<string>();
  /** The open idle notification per job or lease id. */
  private readonly idleToasts = new Map<string, string>();
  /** The notification the latest successes share (a sweep of 60 jobs is one line, new user 5). */
  private successes: { toast: string; names: string[]; at: number } | null = null;

  constructor(
    private readonly model: ISchedModel,
    private readonly commands: CommandRegistry,
    private readonly trans: TranslationBundle
  ) {
    model.jobTransition.connect(this.onTransition, this);
    model.event.connect(this.onEvent, this);
    model.jobsChanged.connect(this.onJobs, this);
  }

  dispose(): void {
    this.model.jobTransition.disconnect(this.onTransition, this);
    this.model.event.disconnect(this.onEvent, this);
    this.model.jobsChanged.disconnect(this.onJobs, this);
  }

  /**
   * A warning already out when this page opened (or sent while it was closed) is still shown: the
   * `idle_warning` event is one-off, so a notebook user who opened Lab after it was never told
   * (new user 6, F15). Shown once per warning, as the event's own toast is.
   */
  private onJobs(): void {
    for (const entry of this.model.idle) {
      if (entry.stage === 'warned') {
        this.idle({ job_id: entry.job_id, user: entry.user, kind: entry.kind, stage: 'warn', action: entry.action,
                    deadline: entry.deadline });
      }
    }
  }

  private once(key: string): boolean {
    if (this.shown.has(key)) {
      return false;
    }
    this.shown.add(key);
    return true;
  }

  private onTransition(_: ISchedModel, { previous, job }: IJobTransition): void {
    if (!previous || !this.model.isMine(job)) {
      return;
    }
    const { trans } = this;
    if (job.state === 'preempted') {
      this.preempted(job.id, job.name, preemptorOf(job.preempted_by, job.preempted_by_name), job.attempts ?? 0, '');
      return;
    }
    if (!TERMINAL_STATES.has(job.state) || TERMINAL_STATES.has(previous.state) || job.kind === 'lease' || !this.notifyCompletion) {
      return;
    }
    if (!this.once(`finished:${job.id}:${job.attempts ?? 0}`)) {
      return;
    }
    const how = outcome(job, trans);
    const text = trans.__('%1 %2', job.name, stateLabel(job.state, trans).toLowerCase()) + (how ? `: ${how}` : '');
    const ok = job.state === 'succeeded';
    if (ok && this.joinSuccesses(job.name)) {
      return;
    }
    const toast = (ok ? Notification.success : Notification.warning)(text, {
      autoClose: ok ? 8000 : false,
      actions: [{ label: trans.__('Open logs'), callback: () => void this.commands.execute(CommandIDs.openLogs, { id: job.id }) }]
    });
    if (ok) {
      this.successes = { toast, names: [job.name], at: Date.now() };
    }
  }

  /**
   * A success soon after another joins its notification ("12 jobs succeeded: sweep-1, sweep-2,
   * sweep-3 and 9 more"; My work lists them all) instead of stacking one toast per job. Failures
   * always get their own. False when there is none to join (the first, or after a quiet minute).
   */
  private joinSuccesses(name: string): boolean {
    const last = this.successes;
    const now = Date.now();
    if (!last || now - last.at > SUCCESS_BATCH_MS) {
      return false;
    }
    const names = [...last.names, name];
    const shown = names.length > 3 ? this.trans.__('%1 and %2 more', names.slice(0, 3).join(', '), names.length - 3) : names.join(', ');
    const message = this.trans._n('%1 job succeeded: %2', '%1 jobs succeeded: %2', names.length, shown);
    const updated = Notification.update({ id: last.toast, message, type: 'success', autoClose: 8000, actions: [] });
    if (!updated) {
      return false; // dismissed by the user: start a new one
    }
    this.successes = { toast: last.toast, names, at: now };
    return true;
  }

  private onEvent(_: ISchedModel, event: ISchedEvent): void {
    const data = event.data && typeof event.data === 'object' ? (event.data as Record<string, unknown>) : {};
    if (event.type === 'idle_warning') {
      this.idle(data);
    } else if (event.type === 'preempted') {
      const id = String(data.job_id ?? data.id ?? '');
      if (typeof data.user === 'string' && !this.model.isMine({ user: data.user })) {
        return;
      }
      const job = id ? this.model.find(id) : undefined;
      const by = (data.preempted_by ?? data.by) as string | undefined;
      const byName = (data.preempted_by_name ?? (job?.preempted_by === by ? job?.preempted_by_name : null)) as string | null | undefined;
      const message = typeof data.message === 'string' ? data.message : '';
      const attempts = Number(job?.attempts ?? data.attempts ?? 0);
      const name = String(data.name ?? job?.name ?? id);
      // a lease has no place to keep in the queue: preempted, it ended at once (session 21)
      const ended = typeof data.state === 'string' && TERMINAL_STATES.has(data.state);
      if (typeof data.preempted_by_text === 'string') {
        // the server's words for the preemptor and why (new user 20, N20); "" for an idle reclaim
        this.preempted(id, name, undefined, attempts, data.preempted_by_text ? '' : message, data.preempted_by_text, ended);
      } else {
        this.preempted(id, name, preemptorOf(by, byName), attempts, message, '', ended);
      }
    }
  }

  /**
   * The Preempted toast: `Preempted: lowml by norm1 (j-…), a higher-priority normal job of team ml.
   * It was requeued …`. `how` is the server's `preempted_by_text` (preemptor and why, one clause);
   * without it `by` (`preemptorOf`) and the event's `message`, each ended by a full stop. `ended`:
   * the work ended rather than waiting again (a lease, which has no place in the queue to keep).
   */
  private preempted(id: string, name: string, by: string | undefined, attempts: number, message: string, how = '', ended = false): void {
    if (!this.once(`preempted:${id}:${attempts}`)) {
      return;
    }
    const { trans } = this;
    const job = this.model.find(id);
    const said = message.trim();
    const head = how
      ? trans.__('Preempted: %1 %2.', name, how)
      : by?.endsWith(')')
        ? trans.__('Preempted: %1 by %2.', name, by)
        : by
          ? trans.__('Preempted: %1 (by %2).', name, by)
          : trans.__('Preempted: %1.', name);
    const why = said ? ` ${said}${/[.!?]$/.test(said) ? '' : '.'}` : '';
    const tail = ended
      ? trans.__('It has ended and its GPUs went to that work; %gpu request asks for GPUs again.')
      : trans.__('It was requeued and keeps its place by submit time.');
    const short = ended ? trans.__('It has ended; %gpu request asks for GPUs again.') : trans.__('Requeued; it keeps its place.');
    const text = fitToast([`${head}${why} ${tail}`, `${head} ${tail}`, `${head} ${short}`], short);
    Notification.warning(text, {
      autoClose: false,
      actions: job && job.kind !== 'lease' ? [{ label: trans.__('Open logs'), callback: () => void this.commands.execute(CommandIDs.openLogs, { id }) }] : []
    });
  }

  private idle(data: Record<string, unknown>): void {
    if (typeof data.user === 'string' && !this.model.isMine({ user: data.user })) {
      return;
    }
    const { trans } = this;
    const id = String(data.lease_id ?? data.job_id ?? data.id ?? '');
    const known = id ? this.model.find(id) : undefined;
    const name = String(data.name ?? known?.name ?? (id || trans.__('your allocation')));
    const previous = id ? this.idleToasts.get(id) : undefined;
    const text = idleNotice(data, name, new Date(), trans);
    if (text === null) {
      if (previous) {
        Notification.dismiss(previous);
        this.idleToasts.delete(id);
      }
      return;
    }
    // the action is part of it: a revoked kernel lease's reclaim is followed by its shutdown or hold (session 20)
    if (!this.once(`idle:${id}:${data.stage ?? 'warn'}:${data.action ?? ''}:${data.deadline ?? data.reason ?? ''}`)) {
      return;
    }
    if (previous) {
      Notification.dismiss(previous);
    }
    const kind = String(data.kind ?? (data.lease_id ? 'lease' : (known?.kind ?? 'job')));
    const actions: Notification.IAction[] = [];
    if (id && kind === 'lease' && data.stage !== 'reclaim' && !(known && this.model.keptAlive(known))) {
      actions.push({
        label: trans.__('Keep alive'),
        caption: trans.__('Tell the scheduler this lease is in use'),
        callback: () => void this.commands.execute(CommandIDs.keepalive, { id }),
        displayType: 'accent'
      });
    }
    if (known && known.kind !== 'lease') {
      actions.push({ label: trans.__('Open logs'), callback: () => void this.commands.execute(CommandIDs.openLogs, { id }) });
    }
    const toast = Notification.warning(text, { autoClose: false, actions });
    if (id) {
      this.idleToasts.set(id, toast);
    }
  }
}

/** Characters a JupyterLab toast shows; it cuts a longer message mid-word (new user 21, N9). */
export const TOAST_CHARS = 140;

/**
 * The first of `texts` (longest and fullest first) that fits a toast ({@link TOAST_CHARS}); else the
 * last one's head cut at a word with "…" before `tail`, so what the toast ends with is whole (new user
 * 21, N9: the Preempted toast ended "… keeps its place by submit t…").
 */
export function fitToast(texts: string[], tail: string): string {
  const fits = texts.find(text => text.length <= TOAST_CHARS);
  if (fits !== undefined) {
    return fits;
  }
  const last = texts[texts.length - 1] ?? '';
  const head = last.endsWith(tail) ? last.slice(0, last.length - tail.length).trimEnd() : last;
  const room = Math.max(0, TOAST_CHARS - tail.length - 2);
  const cut = head.slice(0, room);
  const word = cut.lastIndexOf(' ');
  return `${(word > room / 2 ? cut.slice(0, word) : cut).replace(/[\s,.;:]+$/, '')}… ${tail}`;
}

/**
 * The job that preempted another, as reasons name jobs: `mal3 (j-…)` when its name is known
 * (`preempted_by_name`), else its id (the server's `wording.jobs.preemptor`).
 */
export function preemptorOf(id: string | null | undefined, name: string | null | undefined): string | undefined {
  if (!id) {
    return undefined;
  }
  const named = (name ?? '').trim().slice(0, 80);
  return named && named !== id ? `${named} (${id})` : id;
}
