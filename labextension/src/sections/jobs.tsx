/**
 * Job lists: the Queue (everyone's pending and running work, with position, reason and ETA) and
 * My work (my jobs and leases with their actions). Rows carry `data-job-id` and flags the
 * context menu's commands read (`data-cancellable`, `data-has-logs`, `data-resubmittable`).
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { CommandIDs } from '../commandids';
import { clockText, clockUTC, drainLine, elapsedText, endedText, endsLine, formatEta, formatGpus, goneLine, unhealthyLine, inCluster, limitEnd, outcome, plannedLimitLine, plannedLine, progressLine, queueLine, queuePosition, restartedText, shownText, stateLabel, stateWord, stoppingText, workName } from '../format';
import { executedCopyPath, executedDownloadUrl, hasExecutedNotebook } from '../executed';
import { keepAliveOffered } from '../keepalive';
import type { ISchedModel, ISchedSection } from '../tokens';
import { ACTIVE_STATES, allocationGpus, holdAction, type IdleEntry, isHeld, isWaiting, type Job, type QueueRow, resourcesOf, TERMINAL_STATES } from '../types';
import { Bar, ErrorNote, ModelView } from './base';
import { ReasonLine } from './glossary';

/** Re-render interval for elapsed times and ETAs, ms. */
const TICK_MS = 5000;

export function StateBadge(props: { state: string; trans: TranslationBundle }): React.ReactElement {
  return <span className={`jp-sched-state jp-sched-state-badge-${props.state}`}>{stateLabel(props.state, props.trans)}</span>;
}

interface IRowProps {
  job: Job;
  model: ISchedModel;
  trans: TranslationBundle;
  children?: React.ReactNode;
}

/** The head and meta lines of a job row; `children` below them. */
export function JobRow({ job, model, trans, children }: IRowProps): React.ReactElement {
  const mine = model.isMine(job);
  const done = TERMINAL_STATES.has(job.state);
  const r = resourcesOf(job);
  return (
    <li
      className={`jp-sched-job jp-sched-job-${job.state}${mine ? ' jp-sched-mine' : ''}`}
      data-job-id={job.id}
      data-state={job.state}
      data-kind={job.kind}
      data-cancellable={mine && !done ? '' : undefined}
      data-has-logs={mine && job.kind !== 'lease' && model.supports('logs') ? '' : undefined}
      data-resubmittable={mine && done && job.kind !== 'lease' ? '' : undefined}
    >
      <div className="jp-sched-job-head">
        {inCluster(job) ? (
          <span className="jp-sched-state jp-sched-state-badge-pending">{trans.__('Pending (in the cluster)')}</span>
        ) : (
          // "Stopping" for the grace of a stop, as the CLI and the magics say it (new user 8, N13: "Running")
          // an ended lease is "Cancelled", as REST, the CLI and the magics say it (new user 17, N23)
          <StateBadge state={stateWord(job)} trans={trans} />
        )}
        {/* one line and an ellipsis, the whole name on hover (new user 25, N9: 190 characters took 10 lines) */}
        {/* the name's hidden characters as escapes, as its owner's (red29 R2; s30: every panel place) */}
        <span className="jp-sched-job-name jp-sched-clamp" title={shownText(workName(job) ? `${workName(job)} (${job.id})` : job.id)}>
          {shownText(workName(job) || job.id)}
        </span>
        <span className={`jp-sched-prio jp-sched-prio-${job.priority}`}>{job.priority}</span>
      </div>
      <div className="jp-sched-job-meta">
        {shownText(`${job.user} · ${formatGpus(r, trans)}`) /* the owner and the GPU models asked for (s30) */}
        {job.kind === 'lease' ? ` · ${trans.__('lease')}` : ''}
        {job.no_preempt ? (
          // set with --no-preempt or the Submit form's "Free GPUs only" (s38): said where it is set, nowhere else
          <span className="jp-sched-nopreempt" title={trans.__('It waits for free GPUs: no running job is preempted or reclaimed for it.')}>
            {` · ${trans.__('free GPUs only')}`}
          </span>
        ) : null}
        {job.simulated && r.gpus ? ` · ${trans.__('simulated GPUs')}` : ''}
      </div>
      {children}
    </li>
  );
}

/**
 * A running job's own progress report (`jupyter_sched.report_progress`): a bar and its words, the CLI's
 * and the magics' (`42 % done, reported 02:10 UTC (3m ago)`, {@link progressLine}), the words being
 * the bar's label. Nothing for a job that never reported.
 */
export function ProgressLine({ job, now, trans }: { job: Job; now: Date; trans: TranslationBundle }): React.ReactElement | null {
  const line = progressLine(job, now, trans);
  const fraction = job.progress?.fraction;
  if (!line || typeof fraction !== 'number' || !isFinite(fraction)) {
    return null;
  }
  const id = `jp-sched-progress-${job.id}`;
  return (
    <div className="jp-sched-job-progress">
      <progress className="jp-sched-progress" value={Math.max(0, Math.min(1, fraction))} max={1} aria-labelledby={id} />
      <span className="jp-sched-progress-text" id={id}>
        {line}
      </span>
    </div>
  );
}

/**
 * When running work ends at the latest, as the CLI's queue and jobs lines say it ({@link endsLine}):
 * `ends by 05:22 UTC (in 9m28s), its 10m time limit`; a lease, how its GPUs are given back (new user
 * 22, N5). Nothing for work that waits, has ended or is stopping.
 */
export function EndsLine({ job, now }: { job: Job; now: Date }): React.ReactElement | null {
  const line = endsLine(job, now);
  return line ? <div className="jp-sched-job-ends">{shownText(line)}</div> : null;
}

/**
 * My running work's idle line ({@link idleLine}, from `GET idle`): when it is reclaimed if it stays
 * idle, from its first idle sample — the time a job waiting for its GPUs is given as its ETA (new user
 * 22, N6: the Queue card of an idle lease said nothing of it). Nothing while it is in use.
 */
function IdleNote({ job, model, now, trans }: { job: Job; model: ISchedModel; now: Date; trans: TranslationBundle }): React.ReactElement | null {
  const entry = TERMINAL_STATES.has(job.state) || isWaiting(job.state) ? undefined : model.idleOf(job.id);
  const kept = job.kind === 'lease' ? model.keptAlive(job) : null;
  const line = entry ? idleLine(entry, now, trans, !!kept, limitEnd(job)) : '';
  if (!entry || !line) {
    return null;
  }
  return (
    <div className={`jp-sched-job-idle jp-sched-job-idle-${entry.stage}`} role={entry.stage === 'warned' ? 'alert' : undefined}>
      {shownText(line)}
    </div>
  );
}

/** The Queue section body. */
/** Pending rows a list shows at first, as the CLI's queue does (new user 6, F22: 990 pending cards
 * took 8 s to appear); "Show more" adds as many again. */
export const PENDING_SHOWN = 50;

/** The "N more … not shown · Show K more" line under a capped list. */
function MoreLine(props: { hidden: number; step: number; what: string; hint: string; onMore: () => void; trans: TranslationBundle }): React.ReactElement {
  const { hidden, step, what, hint, onMore, trans } = props;
  return (
    <p className="jp-sched-muted jp-sched-more">
      {what}{' '}
      <button type="button" className="jp-sched-button" onClick={onMore}>
        {trans.__('Show %1 more', Math.min(hidden, step))}
      </button>{' '}
      {hint}
    </p>
  );
}

export class QueueView extends ModelView {
  private pendingLimit = PENDING_SHOWN;

  constructor(ctx: ISchedSection.IContext) {
    super(ctx, {
      resources: ['queue'],
      // serverDownChanged: its clocks are said as of the last answer while the scheduler does not answer (base.now)
      signals: [ctx.model.queueChanged, ctx.model.errorChanged, ctx.model.quotasChanged, ctx.model.serverDownChanged],
      tickMs: TICK_MS,
      focusable: true
    });
    this.addClass('jp-sched-queue');
  }

  get mineOnly(): boolean {
    return this.ctx.state.get('mineOnly', false);
  }

  set mineOnly(value: boolean) {
    this.ctx.state.set('mineOnly', value);
    this.update();
  }

  /** "2 pending · 1 running" for the title bar. */
  static badge(model: ISchedModel, trans: TranslationBundle): string {
    if (!model.loaded('queue')) {
      // a collapsed section has not read the queue: no "0 running" beside "1 active" (new user 5)
      return '';
    }
    const pending = model.queue.filter(j => isWaiting(j.state)).length;
    // held ones are said apart: they never start until someone acts (newuser38 n24: "1 pending" of a job held for good)
    const held = model.queue.filter(isHeld).length;
    return held
      ? trans.__('%1 pending (%2 held) · %3 running', pending, held, model.queue.length - pending)
      : trans.__('%1 pending · %2 running', pending, model.queue.length - pending);
  }

  protected renderView(): React.ReactElement {
    const { model, trans } = this;
    const now = this.now();
    const rows = model.queue.filter(j => !this.mineOnly || model.isMine(j));
    const pending = rows.filter(j => isWaiting(j.state)).sort((a, b) => (queuePosition(a) ?? 1e9) - (queuePosition(b) ?? 1e9));
    const running = rows.filter(j => !isWaiting(j.state));
    const heldCount = pending.filter(isHeld).length; // said apart (newuser38 n24)
    // the first ones, and mine further back (where I stand matters more than who is between)
    const shownPending = pending.filter((j, i) => i < this.pendingLimit || model.isMine(j)).slice(0, this.pendingLimit + PENDING_SHOWN);
    const hiddenPending = pending.length - shownPending.length;
    const list = (items: QueueRow[], label: string) => (
      <ul className="jp-sched-list" aria-label={label}>
        {items.map(job => (
          <JobRow key={job.id} job={job} model={model} trans={trans}>
            {/* running on GPUs the inventory no longer lists, as the CLI and the magics say it (hubadmin 22, H3) */}
            <ReasonLine trans={trans} text={shownText([queueLine(job, now, trans, model.me?.user ?? null, model.isMine(job) && holdAction(job, !!model.me?.is_admin) === 'release' ? 'myWork' : null), restartedText(job, trans), goneLine(job, trans), unhealthyLine(job), drainLine(job), plannedLine(job, now), plannedLimitLine(job)].filter(Boolean).join(' · '))} />
            {!isWaiting(job.state) ? (
              <div className="jp-sched-job-meta">
                <span className="jp-sched-elapsed">{elapsedText(job, now, trans)}</span>
              </div>
            ) : null}
            <EndsLine job={job} now={now} />
            {!isWaiting(job.state) ? <ProgressLine job={job} now={now} trans={trans} /> : null}
            {model.isMine(job) ? <IdleNote job={job} model={model} now={now} trans={trans} /> : null}
          </JobRow>
        ))}
      </ul>
    );
    return (
      <div>
        <ErrorNote error={model.error('queue')} />
        {/* in the body, not the title bar: there it cut the counts beside it, "QUEUE 167 PENDING · 0 RUNNI…" (newuser34 n4) */}
        <div className="jp-sched-queue-filters">
          <button
            type="button"
            className="jp-sched-toggle jp-sched-mine-only"
            aria-pressed={String(this.mineOnly) as 'true' | 'false'}
            title={trans.__('Show only my jobs in the queue')}
            onClick={() => (this.mineOnly = !this.mineOnly)}
          >
            {trans.__('Mine only')}
          </button>
        </div>
        <h4 className="jp-sched-subhead">
          {heldCount ? trans.__('Pending (%1, %2 held)', pending.length, heldCount) : trans.__('Pending (%1)', pending.length)}
        </h4>
        {pending.length ? list(shownPending, trans.__('Pending work')) : <p className="jp-sched-muted">{trans.__('Nothing waiting.')}</p>}
        {hiddenPending > 0 ? (
          <MoreLine
            hidden={hiddenPending}
            step={PENDING_SHOWN}
            trans={trans}
            what={trans._n('%1 more pending not shown', '%1 more pending not shown', hiddenPending)}
            hint={trans.__('(`jupyter-sched queue --all` in a terminal lists every one)')}
            onMore={() => {
              this.pendingLimit += PENDING_SHOWN;
              this.update();
            }}
          />
        ) : null}
        <h4 className="jp-sched-subhead">{trans.__('Running (%1)', running.length)}</h4>
        {running.length ? list(running, trans.__('Running work')) : <p className="jp-sched-muted">{trans.__('Nothing running.')}</p>}
      </div>
    );
  }
}

/** Finished jobs and leases My work lists at first (new user 6: ~500 cancelled cards after a bulk
 * cancel pushed every other section out of reach); "Show more" adds as many again. */
export const FINISHED_SHOWN = 20;

/** Whether a job has (or may get) a log: not work that ended before it ever started (new user 6:
 * a job cancelled while pending had a Logs button, with no log behind it). */
export function hasLog(job: Job): boolean {
  return !(TERMINAL_STATES.has(job.state) && !job.started_at && (job.state === 'cancelled' || job.state === 'rejected'));
}

/**
 * A My work card's idle line, from the `GET idle` entry: `Idle since 15:22 UTC: its GPUs are
 * released at 15:52 UTC (in 9m30s) unless it is used — Keep alive keeps them.` once warned;
 * before the warning the same times, quieter (new user 6, F15: the lease card said nothing while
 * the CLI said its GPUs were about to go).
 */
export function idleLine(entry: IdleEntry, now: Date, trans: TranslationBundle, keptAlive = false, endsAt: Date | null = null): string {
  // as the CLI's and the magics' idle note says them (wording.jobs.idle_note: clock_text), another day's with its date
  const clock = (iso: string) => (isNaN(new Date(iso).getTime()) ? iso : clockText(new Date(iso), now));
  // its time limit ends it first: the idle times would come after its own end (new user 11, N23)
  const after = (iso: string | null | undefined) => !!(endsAt && iso && new Date(iso).getTime() >= endsAt.getTime());
  // the CLI's rule (wording.jobs.idle_note), one for both (new user 23, N2: the panel said a running job
  // "is reported as idle at 08:41" — after its 08:40 time-limit end — while the CLI said nothing): work
  // only reported when idle (notify) says nothing before it is reported; nothing is said of an idle
  // deadline at or after the time-limit end (the deadline, not the warning time); a reclaim is said only
  // for notify (the work runs on), the others end it
  if ((entry.stage === 'idle' && entry.action === 'notify') || (entry.stage === 'reclaimed' && entry.action !== 'notify')) {
    return '';
  }
  if (entry.stage !== 'reclaimed' && after(entry.deadline)) {
    return '';
  }
  const what: Record<string, string> = {
    release: trans.__('its GPUs are released'),
    requeue: trans.__('it is requeued (its GPUs freed)'),
    stop: trans.__('it is stopped'),
    notify: trans.__('it is reported as idle')
  };
  const outcome = what[entry.action] ?? what.release;
  // a lease that used its one keep-alive is not told to press it again
  const keep = entry.kind === 'lease' && !keptAlive ? trans.__('Keep alive keeps them') : trans.__('using its GPUs keeps them');
  if (entry.stage === 'warned') {
    return trans.__('Idle since %1: %2 at %3 (%4) unless it is used — %5.', clock(entry.idle_since), outcome,
                    clock(entry.deadline), formatEta(entry.deadline, now, trans), keep);
  }
  if (entry.stage === 'reclaimed') {
    return trans.__('Idle since %1: reported as idle at %2.', clock(entry.idle_since), clock(entry.deadline));
  }
  // ahead, not done: "warned at 14:36" read as if it had happened (new user 11, N23)
  return trans.__('Idle since %1: if it stays idle, it is warned at %2 and %3 at %4.', clock(entry.idle_since),
                  clock(entry.warn_at), outcome, clock(entry.deadline));
}

/** When work holding GPUs ends by its time limit (format.ts, shared with the idle toast). */
export { limitEnd };

/** The title of a used Keep alive button: until when it keeps the GPUs, and that it was the one keep-alive. */
export function keptTitle(until: string, trans: TranslationBundle): string {
  return until
    ? trans.__('Kept alive until %1, its one keep-alive for this allocation; after that, using the GPUs keeps them', clockUTC(until))
    : trans.__('Its one keep-alive for this allocation was used; using the GPUs keeps them');
}

/** The My work section body. */
export class MyWorkView extends ModelView {
  private finishedLimit = FINISHED_SHOWN;
  private waitingLimit = PENDING_SHOWN;

  constructor(ctx: ISchedSection.IContext) {
    super(ctx, {
      // the inventory too: a GPU is named by its index ("GPU #0"), known only from it (new user 5:
      // with Inventory collapsed a lease read "GPU GPU-sim-vm-0")
      // the queue too: its re-reads read `me` while my work holds GPUs, whose waiting_on_you the list's head says
      // (newuser31 n14: "1 job of another user (n31a) waits for GPUs you hold")
      resources: ['jobs', 'inventory', 'queue'],
      signals: [ctx.model.jobsChanged, ctx.model.telemetry, ctx.model.errorChanged, ctx.model.inventoryChanged,
        ctx.model.quotasChanged, ctx.model.serverDownChanged],
      tickMs: TICK_MS,
      focusable: true
    });
    this.addClass('jp-sched-mywork');
  }

  static badge(model: ISchedModel, trans: TranslationBundle): string {
    const mine = [...model.jobs, ...model.leases].filter(j => !TERMINAL_STATES.has(j.state));
    const held = mine.filter(isHeld).length; // never start until someone acts: said apart (newuser38 n24)
    if (!mine.length) {
      return '';
    }
    return held ? trans.__('%1 active (%2 held)', mine.length, held) : trans._n('%1 active', '%1 active', mine.length);
  }

  private run(command: string, job: Job): void {
    void this.ctx.commands.execute(command, { id: job.id });
  }

  protected renderView(): React.ReactElement {
    const { model, trans } = this;
    const now = this.now();
    // active work first (a cancelled lease above the running one hid it, new user 4), then newest first
    const ended = (j: Job): number => (TERMINAL_STATES.has(j.state) ? 1 : 0);
    const sorted = [...model.leases, ...model.jobs].sort(
      (a, b) => ended(a) - ended(b) || (b.submitted_at ?? '').localeCompare(a.submitted_at ?? '')
    );
    const activeCount = sorted.filter(j => !ended(j)).length;
    // every job holding GPUs; the first waiting ones (new user 6, F22: 990 pending cards); the newest finished
    let waitingSeen = 0;
    const all = sorted.slice(0, activeCount + this.finishedLimit).filter(
      j => ended(j) || !isWaiting(j.state) || waitingSeen++ < this.waitingLimit
    );
    const hiddenWaiting = Math.max(0, waitingSeen - this.waitingLimit);
    const hidden = sorted.length - all.length - hiddenWaiting;
    const gpuIndex = new Map((model.inventory?.gpus ?? []).map(g => [g.uuid, `#${g.index}`]));
    // a planned preemption as the queue, re-read every interval, says it: My work is re-read on my own
    // jobs' events only, and a plan comes and goes with another user's job (new user 21, N5)
    const queued = new Map(model.queue.map(q => [q.id, q]));
    if (!all.length) {
      return (
        <div>
          <ErrorNote error={model.error('jobs')} />
          <p className="jp-sched-muted">{trans.__('No jobs or leases yet. Use Submit below, %gpu or %%schedule in a notebook.')}</p>
        </div>
      );
    }
    const waitingOnMe = model.me?.waiting_on_you?.text; // the server's words, as `status` says them (n14)
    return (
      <div>
        <ErrorNote error={model.error('jobs')} />
        {waitingOnMe ? <p className="jp-sched-muted jp-sched-waiting-on-you">{shownText(waitingOnMe)}</p> : null}
        {/* my held jobs by kind of hold, with what to do: the server's words, as `status` says them (newuser38 n24) */}
        {(model.me?.held ?? []).map(g => (
          <p className="jp-sched-muted jp-sched-held-work" key={`${g.code}-${g.what}`}>
            {shownText(trans._n('%1 held: %2 — %3', '%1 held: %2 — %3', g.jobs, g.what, g.fix))}
          </p>
        ))}
        <ul className="jp-sched-list" aria-label={trans.__('My jobs and leases')}>
          {all.map(job => {
            const util = model.jobUtilization(job);
            const done = TERMINAL_STATES.has(job.state);
            const name = shownText(workName(job) || job.id); // in the buttons' labels
            const lease = job.kind === 'lease';
            const kept = lease ? model.keptAlive(job) : null;
            const gpus = allocationGpus(job.allocation);
            // the limit it is planned with and stopped at, giving none (newuser28 N8): "time limit 30m (queue default; none given)"
            const planned = [plannedLine(queued.get(job.id) ?? job, now), plannedLimitLine(queued.get(job.id) ?? job)].filter(Boolean).join(' · ');
            // GPUs gone from the inventory under it (hubadmin 22, H3): the queue's copy is re-read every interval
            const gone = done ? '' : goneLine(queued.get(job.id) ?? job, trans);
            // a GPU unhealthy under it, the server's sentence (hubadmin24 B14): one line, as `status JOB` says it
            const sick = done ? '' : unhealthyLine(queued.get(job.id) ?? job);
            const detail = isWaiting(job.state) || inCluster(job)
              ? queueLine(job, now, trans, model.me?.user ?? null, !lease && isWaiting(job.state) && holdAction(job, !!model.me?.is_admin) === 'release' ? 'here' : null)
              : done
                ? outcome(job, trans, model.me?.user ?? null) // "released by you" (new user 23, N17)
                : ACTIVE_STATES.has(job.state) && job.allocation
                  ? gpus.length
                    ? trans._n('on %2 · GPU %3', 'on %2 · GPUs %3', gpus.length, job.allocation.node ?? '?', gpus.map(u => gpuIndex.get(u) ?? u).join(', '))
                    : trans.__('on %1 (no GPUs)', job.allocation.node ?? '?') // was "on vm · GPUs" and an empty list (new user 5)
                  : '';
            // start 2 of work preempted and started again, as `jupyter-sched jobs` says it (newuser41 n6)
            const restarted = done ? '' : restartedText(job, trans);
            return (
              <JobRow key={job.id} job={job} model={model} trans={trans}>
                <div className="jp-sched-job-meta">
                  <span className="jp-sched-elapsed">
                    {endedText(job, now, trans) || elapsedText(job, now, trans)}
                  </span>
                  {util !== null ? ` · ${trans.__('GPU use %1%', Math.round(util))}` : ''}
                </div>
                {util !== null ? <Bar fraction={util / 100} className="jp-sched-bar-util" /> : null}
                <ProgressLine job={job} now={now} trans={trans} />
                {detail || stoppingText(job) || restarted || gone || planned ? (
                  <ReasonLine trans={trans} text={shownText([stoppingText(job), detail, restarted, gone, planned].filter(Boolean).join(' · '))} />
                ) : null}
                {sick ? <div className="jp-sched-reason jp-sched-unhealthy" role="status">{shownText(sick)}</div> : null}
                {!done && drainLine(queued.get(job.id) ?? job) ? (
                  <div className="jp-sched-reason jp-sched-unhealthy" role="status">{shownText(drainLine(queued.get(job.id) ?? job))}</div>
                ) : null}
                <EndsLine job={job} now={now} />
                {!done ? <IdleNote job={job} model={model} now={now} trans={trans} /> : null}
                <div className="jp-sched-actions">
                  {!lease && model.supports('logs') && hasLog(job) ? (
                    <button type="button" className="jp-sched-button" aria-label={trans.__('Open logs of %1', name)} onClick={() => this.run(CommandIDs.openLogs, job)}>
                      {trans.__('Logs')}
                    </button>
                  ) : null}
                  {hasExecutedNotebook(job) ? (
                    // a notebook job's executed notebook, as a definition's run has it (newuser39 N1)
                    <>
                      <button type="button" className="jp-sched-button jp-sched-open-notebook" aria-label={trans.__('Open the executed notebook of %1', name)} title={trans.__('Its outputs and errors, saved in your files as %1 and opened with no kernel (the same copy on every click)', executedCopyPath(job.id, job.notebook))} onClick={() => this.run(CommandIDs.openNotebook, job)}>
                        {trans.__('Open notebook')}
                      </button>
                      <a className="jp-sched-button jp-sched-download-notebook" href={executedDownloadUrl(job.id)} download="" aria-label={trans.__('Download the executed notebook of %1', name)}>
                        {trans.__('Download')}
                      </a>
                    </>
                  ) : null}
                  {keepAliveOffered(job) ? (
                    kept ? (
                      // once per allocation: said on the button, which is not offered again (new user 6, F23 remainder)
                      <button type="button" className="jp-sched-button" disabled aria-disabled="true" title={keptTitle(kept.until, trans)} aria-label={trans.__('Lease %1 was kept alive: once per allocation', name)}>
                        {trans.__('Kept alive')}
                      </button>
                    ) : (
                      <button type="button" className="jp-sched-button" aria-label={trans.__('Keep lease %1 alive', name)} title={trans.__('Keep its GPUs while idle, up to the admin\'s limit: once per allocation')} onClick={() => this.run(CommandIDs.keepalive, job)}>
                        {trans.__('Keep alive')}
                      </button>
                    )
                  ) : null}
                  {!lease && isWaiting(job.state) && holdAction(job, !!model.me?.is_admin) ? (
                    // hold / release a pending job (hubadmin25 B18); its reason says who held it, its ETA "unknown: held";
                    // an admin's hold is not its owner's to release: no button (newuser28 N5), the line says ask or cancel
                    <button
                      type="button"
                      className="jp-sched-button"
                      aria-label={job.held ? trans.__('Release job %1', name) : trans.__('Hold job %1', name)}
                      title={job.held ? trans.__('Let it queue again from now, behind work submitted while it was held') : trans.__('Keep it queued but never started until you release it')}
                      onClick={() => this.run(CommandIDs.hold, job)}
                    >
                      {job.held ? trans.__('Release') : trans.__('Hold')}
                    </button>
                  ) : null}
                  {!done ? (
                    <button
                      type="button"
                      className="jp-sched-button jp-sched-danger"
                      aria-label={lease ? trans.__('Release lease %1', name) : trans.__('Cancel job %1', name)}
                      onClick={() => this.run(CommandIDs.cancel, job)}
                    >
                      {lease ? trans.__('Release') : trans.__('Cancel')}
                    </button>
                  ) : !lease ? (
                    <button type="button" className="jp-sched-button" aria-label={trans.__('Resubmit %1', name)} onClick={() => this.run(CommandIDs.resubmit, job)}>
                      {trans.__('Resubmit')}
                    </button>
                  ) : null}
                </div>
              </JobRow>
            );
          })}
        </ul>
        {hiddenWaiting > 0 ? (
          <MoreLine
            hidden={hiddenWaiting}
            step={PENDING_SHOWN}
            trans={trans}
            what={trans._n('%1 more waiting not shown', '%1 more waiting not shown', hiddenWaiting)}
            hint={trans.__('(`jupyter-sched queue --mine` in a terminal lists them)')}
            onMore={() => {
              this.waitingLimit += PENDING_SHOWN;
              this.update();
            }}
          />
        ) : null}
        {hidden > 0 ? (
          <p className="jp-sched-muted jp-sched-more jp-sched-more-finished">
            {trans._n('%1 older finished job or lease not shown', '%1 older finished jobs and leases not shown', hidden)}
            {' '}
            <button
              type="button"
              className="jp-sched-button"
              onClick={() => {
                this.finishedLimit += FINISHED_SHOWN;
                this.update();
              }}
            >
              {trans.__('Show %1 more', Math.min(hidden, FINISHED_SHOWN))}
            </button>
            {' '}
            {trans.__('(`jupyter-sched jobs --limit N` in a terminal lists them all)')}
          </p>
        ) : null}
      </div>
    );
  }
}
