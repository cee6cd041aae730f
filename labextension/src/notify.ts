/**
 * Notifications about my work: a job that ended (with "Open logs" when it ran), a preemption, and
 * idle warnings for my leases and jobs (with "Keep alive"); each shown once, an idle warning
 * replaced by its next stage and dismissed when activity resumes.
 *
 * Bursts fold (new user 22, N7: one `cancel --mine` of 299 pending jobs put 299 toasts up, each
 * with an "Open logs" that opened nothing): like news within a minute shares one toast
 * ({@link ToastFolder}: "12 jobs failed: a, b, c and 9 more"); my own cancel says nothing for one
 * job and one summary for many ("299 of your pending jobs were cancelled (by you, 05:18 UTC)"). A
 * bulk cancel's number is the server's (its `{user, cancelled, by, pending}` event), never a count
 * of the ends this page happened to see (s29: "57 of your pending jobs" for 60 under load: three
 * were new to the page when the re-read ended them, so no end was seen);
 * only a toast that needs action (an idle warning with Keep alive) stays until dismissed, the rest
 * close after {@link NEWS_MS} or {@link ALERT_MS} (the bell keeps them all).
 */
import { Notification } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { CommandRegistry } from '@lumino/commands';

import { CommandIDs } from './commandids';
import { clockUTC, idleAfterEnd, idleDeadlineText, idleNotice, outcome, preemptorOf, stateLabel } from './format';
import { ALERT_MS, BURST_MS, type IToast, namesList, NEWS_MS, ToastFolder } from './toasts';
import type { IJobTransition, ISchedModel } from './tokens';
import { ACTIVE_STATES, type ISchedEvent, type Job, TERMINAL_STATES } from './types';

/** Successes within this long of the last one join its notification (kept for older imports). */
export const SUCCESS_BATCH_MS = BURST_MS;

/** One notice of a group: the work it is about, and its own toast's words when it is alone. */
interface INotice {
  id: string;
  name: string;
  /** Its toast's message when it is the only one of its group. */
  text: string;
  /** It ran (has a log to open): started, or admitted before (new user 22, N7). */
  ran: boolean;
  /** It is a lease (no logs; Keep alive). */
  lease: boolean;
  /** When it was noticed (ms since the epoch). */
  at: number;
  /** It was waiting (pending or preempted) when it ended. */
  waiting?: boolean;
  /**
   * How many jobs it stands for in its group's number (default 1): a bulk cancel's summary says the
   * server's count; each of its jobs' ends, already in that count, adds 0 (and its name).
   */
  count?: number;
  /** An idle warning's event data. */
  idle?: Record<string, unknown>;
}

/** Whether `job` ever ran: a log to open (never for one cancelled while pending, new user 22, N7). */
export function ranOnce(job: Pick<Job, 'started_at' | 'attempts'>): boolean {
  return !!job.started_at || (job.attempts ?? 0) > 0;
}

export class SchedNotifier {
  /** Whether finished jobs notify (settings `notifyCompletion`). */
  notifyCompletion = true;
  /** Notices already shown (`kind:id:attempt`). */
  private readonly shown = new Set<string>();
  /** The toasts, one per burst of like news. */
  private readonly toasts = new ToastFolder<INotice>();
  /**
   * A bulk cancel of more than the server's per-job events (`{user, cancelled: n, by}`): the
   * re-read that follows ends n of my jobs with no event each, and they are that cancel's.
   */
  private bulk: { by: string; left: number; at: number; key: string } | null = null;
  /**
   * My cancelled jobs whose end no event explained (no `cancelled_by`, no stop), kept for
   * {@link BURST_MS}: a bulk cancel's summary event that arrives after the re-read that ended them
   * claims them (their toast then says only the summary).
   */
  private unexplained: { notice: INotice; key: string }[] = [];

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

  private openLogs(id: string): Notification.IAction {
    return { label: this.trans.__('Open logs'), callback: () => void this.commands.execute(CommandIDs.openLogs, { id }) };
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
    const notice: INotice = {
      id: job.id, name: job.name, ran: ranOnce(job) || ACTIVE_STATES.has(previous.state), lease: false, at: Date.now(), waiting: previous.state === 'pending' || previous.state === 'preempted',
      text: trans.__('%1 %2', job.name, stateLabel(job.state, trans).toLowerCase()) + (how ? `: ${how}` : '')
    };
    const { by, inBulk } = job.state === 'cancelled' ? this.canceller(previous, job) : { by: null, inBulk: false };
    if (inBulk) {
      notice.count = 0; // the bulk cancel's summary counted it
    }
    const key = this.cancelKey(job.state, by);
    if (job.state === 'cancelled' && by === null) {
      const now = Date.now();
      this.unexplained = [...this.unexplained.filter(u => now - u.notice.at <= BURST_MS), { notice, key }];
    }
    this.toasts.add(key, notice, this.render(job.state, by));
  }

  /** The toast group of an end in `state` (cancelled `by`: mine, another's, unsaid). */
  private cancelKey(state: string, by: string | null): string {
    if (state !== 'cancelled') {
      return `ended:${state}`;
    }
    // what I did a moment ago: nothing for one, one summary for many (new user 22, N7)
    return by !== null && by === this.model.me?.user ? 'cancel:self' : `cancel:by:${by ?? ''}`;
  }

  /** The render of {@link cancelKey}'s group. */
  private render(state: string, by: string | null): (items: readonly INotice[]) => IToast | null {
    if (state === 'cancelled' && by !== null && by === this.model.me?.user) {
      return items => this.ownCancels(items);
    }
    return items => this.ended(state, by, items);
  }

  /**
   * A bulk cancel of more than the server's per-job events (`{user, cancelled: n, by, pending}`):
   * its summary says n at once, the server's number; the ends the re-read then brings (or brought
   * already: {@link unexplained}) join it without changing it.
   */
  private bulkCancel(by: string, n: number, pending: number | null): void {
    const key = this.cancelKey('cancelled', by);
    const now = Date.now();
    this.bulk = { by, left: n, at: now, key };
    if (!this.notifyCompletion) {
      return;
    }
    const all = pending !== null && pending >= n; // each was taken off the queue before it ever ran
    const summary: INotice = { id: `bulk-cancel:${by}:${now}`, name: '', text: '', ran: !all, lease: false, at: now, waiting: all, count: n };
    this.toasts.add(key, summary, this.render('cancelled', by));
    // ends a re-read brought before this event, with no cause said: this cancel's
    const claimed = this.unexplained.filter(u => now - u.notice.at <= BURST_MS).slice(0, n);
    this.unexplained = this.unexplained.filter(u => !claimed.includes(u));
    for (const { notice } of claimed) {
      this.toasts.remove(notice.id);
      this.bulk.left -= 1;
      this.toasts.add(key, { ...notice, count: 0 }, this.render('cancelled', by));
    }
  }

  /**
   * Who cancelled `job` (which has just ended cancelled), and whether it is one of a bulk cancel's
   * (its summary counted it): the cancel's own event says who (`cancelled_by`); else the stop it was
   * in the grace of (`stop_requested.by`) — a bulk cancel's, however long its grace, while that
   * cancel has jobs left to end; else a bulk cancel's summary event just before the re-read; null
   * when nothing says.
   */
  private canceller(previous: Job, job: Job): { by: string | null; inBulk: boolean } {
    const said = (job as { cancelled_by?: unknown }).cancelled_by;
    if (typeof said === 'string' && said) {
      return { by: said, inBulk: false };
    }
    const stop = previous.stop_requested;
    const stopBy = stop?.intent === 'cancel' && stop.by ? stop.by : null;
    const bulk = this.bulk;
    if (bulk && bulk.left > 0 && (stopBy !== null ? stopBy === bulk.by : Date.now() - bulk.at <= BURST_MS)) {
      bulk.left -= 1;
      return { by: bulk.by, inBulk: true };
    }
    return { by: stopBy, inBulk: false };
  }

  /** My own cancels: no toast for one; for many, one that says how many and when (new user 22, N7). */
  private ownCancels(items: readonly INotice[]): IToast | null {
    const n = total(items);
    if (n < 2) {
      return null;
    }
    const { trans } = this;
    const counted = items.filter(i => (i.count ?? 1) > 0);
    const at = clockUTC(new Date(counted[0].at).toISOString());
    const message = counted.every(i => i.waiting && !i.ran)
      ? trans.__('%1 of your pending jobs were cancelled (by you, %2).', n, at)
      : trans.__('%1 of your jobs were cancelled (by you, %2).', n, at);
    return { type: 'info', message, autoClose: NEWS_MS, actions: [] };
  }

  /**
   * Jobs of mine that ended in `state` (cancelled `by` someone else, or by nobody said): one says
   * its own words, with "Open logs" when it ran; many say how many and their first names
   * ("12 jobs failed: a, b, c and 9 more"; My work lists them all).
   */
  private ended(state: string, by: string | null, items: readonly INotice[]): IToast | null {
    const { trans } = this;
    const ok = state === 'succeeded';
    const type = ok ? 'success' : 'warning';
    const autoClose = ok ? NEWS_MS : ALERT_MS;
    const n = total(items);
    const counted = items.filter(i => (i.count ?? 1) > 0);
    if (n === 0) {
      return null; // only ends a bulk cancel's summary (an earlier toast) already said
    }
    if (n === 1 && counted.length === 1 && counted[0].name) {
      const [one] = counted;
      return { type, message: one.text, autoClose, actions: one.ran ? [this.openLogs(one.id)] : [] };
    }
    // a bulk cancel's summary has no name: the names are its jobs' that this page saw end, the rest "more"
    const named = items.map(i => i.name).filter(Boolean);
    const first = named.slice(0, 3);
    const names = first.length < n ? trans.__('%1 and %2 more', first.join(', '), n - first.length) : first.join(', ');
    let message: string;
    if (ok) {
      message = trans._n('%1 job succeeded: %2', '%1 jobs succeeded: %2', n, names);
    } else if (state === 'cancelled') {
      const at = clockUTC(new Date(counted[0].at).toISOString());
      if (!first.length) {
        message = by ? trans.__('%1 of your jobs were cancelled by %2 (%3).', n, by, at) : trans.__('%1 of your jobs were cancelled (%2).', n, at);
      } else {
        message = by
          ? trans.__('%1 of your jobs were cancelled by %2 (%3): %4', n, by, at, names)
          : trans.__('%1 of your jobs were cancelled (%2): %3', n, at, names);
      }
    } else {
      message = trans.__('%1 jobs %2: %3', n, stateLabel(state, trans).toLowerCase(), names);
    }
    return { type, message: fitToast([message], '').trimEnd(), autoClose, actions: [] };
  }

  private onEvent(_: ISchedModel, event: ISchedEvent): void {
    const data = event.data && typeof event.data === 'object' ? (event.data as Record<string, unknown>) : {};
    if (event.type === 'job' && typeof data.cancelled === 'number' && typeof data.by === 'string' && !('id' in data)) {
      // a bulk cancel's one event per owner (cancelling.PER_JOB_EVENTS): its jobs end in the re-read
      if (typeof data.user !== 'string' || this.model.isMine({ user: data.user })) {
        this.bulkCancel(data.by, data.cancelled, typeof data.pending === 'number' ? data.pending : null);
      }
    } else if (event.type === 'idle_warning') {
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
   * Several by the same preemptor within a minute share one toast ("Preempted: 8 of your jobs
   * (a, b, c and 5 more) by big (j-…). Requeued; they keep their places.").
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
    const lease = !job || job.kind === 'lease';
    const notice: INotice = { id, name, text, ran: true, lease, at: Date.now() };
    const whom = how || (by ? trans.__('by %1', by) : '');
    this.toasts.add(`preempted:${whom}:${ended}`, notice, items => {
      if (items.length === 1) {
        return { type: 'warning', message: items[0].text, autoClose: ALERT_MS, actions: items[0].lease ? [] : [this.openLogs(id)] };
      }
      const n = items.length;
      const what = items.every(i => i.lease) ? trans.__('%1 of your leases', n) : trans.__('%1 of your jobs', n);
      const names = namesList(items.map(i => i.name), (shown, rest) => trans.__('%1 and %2 more', shown, rest), 2);
      const plural = ended ? trans.__('They have ended; %gpu request asks for GPUs again.') : trans.__('Requeued; they keep their places.');
      const headN = trans.__('Preempted: %1 (%2)', what, names) + (whom ? ` ${whom}.` : '.');
      const bare = trans.__('Preempted: %1', what) + (whom ? ` ${whom}.` : '.');
      return { type: 'warning', message: fitToast([`${headN} ${plural}`, `${bare} ${plural}`], plural), autoClose: ALERT_MS, actions: [] };
    });
  }

  private idle(data: Record<string, unknown>): void {
    if (typeof data.user === 'string' && !this.model.isMine({ user: data.user })) {
      return;
    }
    const { trans } = this;
    const id = String(data.lease_id ?? data.job_id ?? data.id ?? '');
    const known = id ? this.model.find(id) : undefined;
    if (data.stage !== 'reclaim' && data.stage !== 'clear' && idleAfterEnd(data.deadline, known)) {
      return; // its time limit ends it first: the cards say nothing of it, nor does the toast (new user 24, N2)
    }
    const name = String(data.name ?? known?.name ?? (id || trans.__('your allocation')));
    const text = idleNotice(data, name, new Date(), trans);
    if (text === null) {
      this.toasts.remove(id);
      return;
    }
    // the action is part of it: a revoked kernel lease's reclaim is followed by its shutdown or hold (session 20)
    if (!this.once(`idle:${id}:${data.stage ?? 'warn'}:${data.action ?? ''}:${data.deadline ?? data.reason ?? ''}`)) {
      return;
    }
    this.toasts.remove(id); // its earlier stage's toast says it no more
    const kind = String(data.kind ?? (data.lease_id ? 'lease' : (known?.kind ?? 'job')));
    const lease = kind === 'lease';
    const keep = !!id && lease && data.stage !== 'reclaim' && !(known && this.model.keptAlive(known));
    const notice: INotice = { id, name, text, ran: !!known && known.kind !== 'lease', lease: keep, at: Date.now(), idle: data };
    const stage = String(data.stage ?? 'warn');
    const key = `idle:${stage}:${String(data.action ?? '')}:${data.draining ? 'draining' : ''}:${lease ? 'lease' : 'job'}`;
    this.toasts.add(key, notice, items => this.idleToast(items, lease));
  }

  /**
   * The idle toast of `items` (one stage and action): one says {@link idleNotice}'s words; several
   * say how many and when the first deadline falls. It stays until dismissed only while Keep alive
   * can still save every lease in it (it needs action); otherwise it closes after {@link ALERT_MS}.
   */
  private idleToast(items: readonly INotice[], lease: boolean): IToast {
    const { trans } = this;
    const keepable = items.filter(i => i.lease).map(i => i.id);
    const actions: Notification.IAction[] = [];
    const needsAction = keepable.length === items.length;
    if (needsAction) {
      actions.push({
        label: trans.__('Keep alive'),
        caption: items.length > 1 ? trans.__('Tell the scheduler these leases are in use') : trans.__('Tell the scheduler this lease is in use'),
        callback: () => {
          for (const id of keepable) {
            void this.commands.execute(CommandIDs.keepalive, { id });
          }
        },
        displayType: 'accent'
      });
    }
    if (items.length === 1) {
      if (items[0].ran) {
        actions.push(this.openLogs(items[0].id));
      }
      return { type: 'warning', message: items[0].text, autoClose: needsAction ? false : ALERT_MS, actions };
    }
    const message = idleBurstNotice(items.map(i => ({ name: i.name, data: i.idle ?? {} })), lease, new Date(), trans);
    return { type: 'warning', message, autoClose: needsAction ? false : ALERT_MS, actions };
  }
}

/**
 * The toast text of several idle warnings of one stage and action ({@link idleNotice}'s words for
 * many): `Idle GPUs: 3 of your leases are idle (a, b and 1 more); their GPUs will be released in
 * 9m50s unless they are used or kept alive.` — `when` from the earliest deadline. Fits a toast.
 */
export function idleBurstNotice(items: readonly { name: string; data: Record<string, unknown> }[], lease: boolean, now: Date, trans: TranslationBundle): string {
  const first = items[0]?.data ?? {};
  const n = items.length;
  const what = lease ? trans.__('%1 of your leases', n) : trans.__('%1 of your jobs', n);
  const names = namesList(items.map(i => i.name), (shown, rest) => trans.__('%1 and %2 more', shown, rest), 2);
  const action = ['notify', 'release', 'requeue', 'stop', 'shutdown', 'hold'].includes(String(first.action)) ? String(first.action) : 'release';
  let texts: string[];
  if (first.stage === 'reclaim') {
    const done = (who: string): Record<string, string> => ({
      notify: trans.__('Idle GPUs reported: %1 are idle; nothing was freed, they keep their GPUs.', who),
      release: first.draining
        ? trans.__('Idle GPUs reclaimed: the GPUs of %1 were revoked; they are freed once their kernels let go of them.', who)
        : trans.__('Idle GPUs reclaimed: the GPUs of %1 were released.', who),
      requeue: trans.__('Idle GPUs reclaimed: %1 were stopped and put back in the queue; their GPUs were freed.', who),
      stop: trans.__('Idle GPUs reclaimed: %1 were stopped; their GPUs were freed.', who),
      shutdown: trans.__('Idle GPUs reclaimed: the kernels of %1, still holding them, were shut down; they are freed once they exit.', who),
      hold: trans.__('Idle GPUs reclaimed: the kernels of %1 still hold them; they stay out of use until they restart or exit.', who)
    });
    texts = [done(`${what} (${names})`)[action], done(what)[action]];
  } else {
    const deadlines = items.map(i => i.data.deadline).filter((d): d is string => typeof d === 'string').sort();
    const when = idleDeadlineText(deadlines[0], now, trans); // a clock: the toast stays on screen (new user 23, N15)
    const unless = lease ? trans.__('unless they are used or kept alive') : trans.__('unless they are used');
    const ahead: Record<string, string> = {
      notify: trans.__('they will be reported as idle %1 %2 (their GPUs are not taken).', when, unless),
      release: trans.__('their GPUs will be released %1 %2.', when, unless),
      requeue: trans.__('they will be stopped and put back in the queue %1 %2.', when, unless),
      stop: trans.__('they will be stopped %1 %2.', when, unless)
    };
    const then = ahead[action] ?? ahead.release;
    texts = [trans.__('Idle GPUs: %1 are idle (%2); %3', what, names, then), trans.__('Idle GPUs: %1 are idle; %2', what, then)];
  }
  return fitToast(texts, '').trimEnd();
}

/** How many jobs `items` stand for (each {@link INotice.count}, 1 by default). */
function total(items: readonly { count?: number }[]): number {
  return items.reduce((sum, item) => sum + (item.count ?? 1), 0);
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

export { preemptorOf } from './format'; // its home is format.ts: the cards say it too (newuser41 n6)
