/**
 * "Scheduled notebooks": job definitions in JupyterLab (issue 19).
 *
 * A definition is a notebook (or script) with its GPU request, parameters and a cron schedule in a
 * time zone; each firing runs it as an ordinary job. This view lists my definitions (schedule in
 * words, next run, the last run's state), creates one (with a live preview of the next firings),
 * pauses, resumes, runs now and deletes, and shows each definition's runs with their state and
 * reason — for a failed notebook run the reason names the failing cell and exception, and its
 * executed notebook opens in JupyterLab (saved under `scheduled-runs/<job id>/` through the
 * contents API) or downloads.
 *
 * It builds on the panel's model ({@link ISchedModel}: typed client, event stream) and shows as a
 * section of the GPUs sidebar when {@link ISchedSections} is there, and in the main area through
 * the command `jupyter-sched:definitions`. Where jupyter-scheduler is installed, its "Notebook Jobs"
 * UI edits the same definitions (this server is its backend).
 */
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Dialog, ICommandPalette, MainAreaWidget, showDialog } from '@jupyterlab/apputils';
import { PageConfig, URLExt } from '@jupyterlab/coreutils';
import type { IDisposable } from '@lumino/disposable';
import { Widget } from '@lumino/widgets';

import { SchedApiError, type Schemas } from './client';
import {
  clocksSaidBy, compactDuration, formMessage, NULL_TRANS, reasonSentence, serverText, setZoneLabels, shownText, YEAR_SHOWN_AFTER_DAYS, zoneLabelsKnown,
  zoneText
} from './format';
import { h, replaceKeepingFocus } from './dom';
import { contentsFiles, executedCopyPath, executedDownloadUrl, hasExecutedNotebook, type INotebookFiles, openExecutedNotebook } from './executed';
import { ISchedModel, ISchedSections } from './tokens';
import { parseParameterWords } from './parameters';
import { exactDuration, offeredPriorities, offeredTeams, requestNotes } from './sections/submit';
import type { Me, PendingReason } from './types';

type Definition = Schemas['Definition'];

/** Where a running run's "Open notebook" will be: its executed notebook is written as the run ends. */
export const EXECUTED_LATER = 'running — its notebook opens here when it ends';
type DefinitionRun = Schemas['DefinitionRun'];

export const DEFINITIONS_COMMAND = 'jupyter-sched:definitions';
const PREVIEW_DELAY_MS = 400;

/** `region=eu` lines → `{region: "eu"}`; values that parse as JSON (`3`, `true`, `[1]`) are kept typed. */
export function parseParameters(text: string): Record<string, unknown> {
  return parseParameterWords(text.split('\n').map(line => line.trim()).filter(line => line));
}

/**
 * A UTC ISO time in the definition's time zone as every clock is written ({@link clockText}, the
 * Python `clock_text(..., zone=)`): `12:00 CEST` on `now`'s day there, else `Jun 2 12:00 CEST`, with
 * the year more than {@link YEAR_SHOWN_AFTER_DAYS} days away — the CLI's and the magics' words (new
 * user 20, N27: the panel and %schedule define said `2025-06-02 12:00 …`, the CLI `Jun 2 12:00 …`).
 * The zone's name is the server's `label` for that time, as the CLI and the magics say it ({@link zoneText}:
 * `IST`, `CET`, `UTC+4`) — without one, the server's name of the zone's offset then where it sent the zone's names
 * (`GET zone-labels?zone=`, which the Scheduled notebooks view asks for each definition's zone), else the offset.
 * `seconds`: `12:00:05 JST`, for a clock the server said to the second (s40-views: the panel cut them).
 */
export function localTime(
  iso: string | null | undefined, timeZone: string, label: string | null | undefined, now: Date = new Date(), seconds = false
): string {
  if (!iso) {
    return '';
  }
  const at = new Date(iso);
  if (isNaN(at.getTime())) {
    return iso;
  }
  try {
    const parts = (when: Date): Record<string, string> =>
      Object.fromEntries(
        new Intl.DateTimeFormat('en-US', {
          timeZone, year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23'
        }).formatToParts(when).map(p => [p.type, p.value])
      );
    const when = parts(at);
    const today = parts(now);
    const hhmm = `${when.hour}:${when.minute}${seconds ? `:${when.second}` : ''} ${zoneText(label, at, timeZone)}`;
    if (when.year === today.year && when.month === today.month && when.day === today.day) {
      return hhmm;
    }
    const far = Math.abs(at.getTime() - now.getTime()) > YEAR_SHOWN_AFTER_DAYS * 86400 * 1000;
    return far ? `${when.month} ${when.day} ${when.year} ${hhmm}` : `${when.month} ${when.day} ${hhmm}`;
  } catch {
    return iso; // a zone this browser does not know
  }
}

/**
 * A server sentence of a definition's (a run's reason or message, Run now's pending reason, a skip's why) with every
 * clock in it in the definition's zone ({@link localTime}), as the rest of its output says them — the CLI's
 * `in_its_zone` (newuser38 n20; n30: a run's row said `Dec 7 12:00 CET` beside its reason's `ETA 11:30 UTC`). `named`:
 * a time the server named the zone at (a run's `scheduled_for`, `scheduled_zone`), whose name is said of every clock
 * at the same offset; else the server's name of the zone's offset where it sent them ({@link localTime}), else the
 * offset (`UTC+1`). A clock the server said to the second keeps its seconds (`12:00:05 JST`), as the CLI's does.
 */
export function inItsZone(
  text: string, timeZone: string | null | undefined, named: { at?: string | null; label?: string | null } = {}, now: Date = new Date()
): string {
  const zone = timeZone && zoneText(null, now, timeZone) ? timeZone : 'UTC'; // one this browser does not know: UTC
  const known = named.at && named.label ? new Date(named.at) : null;
  const label = (at: Date) => (known && !isNaN(known.getTime()) && zoneText(null, at, zone) === zoneText(null, known, zone) ? named.label : undefined);
  return clocksSaidBy(text, (at, seconds) => localTime(at.toISOString(), zone, label(at), now, seconds), now);
}

/**
 * One line for a run: its job's reason when it waits or failed, else its message — with `timeZone` (its definition's),
 * every clock in it in that zone ({@link inItsZone}).
 */
export function runReason(run: DefinitionRun, timeZone?: string | null, now: Date = new Date()): string {
  const job = run.job;
  if (!job) {
    return 'its job was removed';
  }
  // the shared renderer's sentence (text.summary), as the queue and the CLI say it — not the core's
  // message, which read "of a Simulated GPU 80GB GPU … reserved from 2026-12-04T05:50:54.496979+00:00"
  // (new user 15, N6)
  const said = job.state === 'pending' || job.state === 'preempted' ? reasonSentence(job.reason as PendingReason | null) : '';
  const text = said || (job.message ?? '');
  return timeZone === undefined ? text : inItsZone(text, timeZone, { at: run.scheduled_for, label: run.scheduled_zone }, now);
}

/**
 * Why a run exists, in the words the server sends (`trigger_text`: `scheduled`, `run now` or `catch-up`;
 * jupyter_sched/wording/definitions.py TRIGGER_WORDS), which the CLI and the magics print too (new user 23,
 * N7: the panel said `scheduled` / `run now`, the CLI `schedule` / `manual`). An older server sends none:
 * its wire value then, as sent.
 */
export function triggerText(run: DefinitionRun): string {
  return run.trigger_text || run.trigger;
}

/**
 * What the one run after an outage stands for, as the CLI and the magics say it
 * (jupyter_sched/wording/definitions.py catch_up_text): `catch-up, 5s late: 1 earlier firing (06:08 UTC)
 * got no run while no server was running`; "" for a run that is no catch-up (hub admin 22: two runs after
 * a 90 s outage both said only "scheduled").
 */
export function catchUpText(run: DefinitionRun, timeZone: string, now: Date = new Date()): string {
  if (!run.catch_up) {
    return '';
  }
  const late = run.late_s;
  const said = 'catch-up' + (typeof late === 'number' && late >= 1 ? `, ${compactDuration(late)} late` : '');
  const missed = run.missed ?? 0;
  if (missed <= 0) {
    return `${said}: no server was running at its time`;
  }
  const count = missed >= MISSED_SHOWN_CAP ? `${missed} or more earlier firings` : `${missed} earlier firing${missed === 1 ? '' : 's'}`;
  const first = localTime(run.missed_from, timeZone, run.scheduled_zone, now);
  const last = localTime(run.missed_to, timeZone, run.scheduled_zone, now);
  const span = first === last || !last ? first : `${first} to ${last}`;
  return `${said}: ${count} (${span}) got no run while no server was running`;
}

/** How each cause of skipped firings is changed, as jupyter_sched/wording/definitions.py _SKIP_FIX says it. */
const SKIP_FIX: Record<string, string> = {
  waiting: 'by default a firing is skipped while the previous run still waits, so runs do not pile up behind it (--overlap allow queues a run for each firing)',
  unfinished: 'its overlap is skip_unfinished: a firing is skipped until the previous run ends (--overlap skip_waiting lets one queue while the previous run runs)',
  budget: 'a run waiting on a spent GPU-hour budget holds the next firings whatever the overlap policy'
};

/**
 * A definition's firings skipped since its last scheduled run, with why, as the CLI and the magics say it
 * (jupyter_sched/wording/definitions.py skipped_text): `skipped 2 firings (10:02 UTC to 10:03 UTC) since its
 * last scheduled run: its run j-… still waits: …; by default …`; "" when none (new user 34, n1: runs piled
 * up behind a long queue and nothing said so).
 */
export function skippedText(d: Pick<Definition, 'skipped' | 'timezone'>, now: Date = new Date()): string {
  const skipped = d.skipped;
  if (!skipped || !(skipped.count > 0)) {
    return '';
  }
  const first = localTime(skipped.first, d.timezone, undefined, now);
  const last = localTime(skipped.last, d.timezone, undefined, now);
  const span = skipped.count === 1 || first === last ? first : `${first} to ${last}`;
  const fix = SKIP_FIX[skipped.cause] ?? '';
  return `skipped ${skipped.count} firing${skipped.count === 1 ? '' : 's'} (${span}) since its last scheduled run` +
    (skipped.why ? `: ${inItsZone(skipped.why, d.timezone, {}, now)}` : '') + (fix ? `; ${fix}` : '');
}

/** The most missed firings a run counts (jupyter_sched.definitions.schedule.MAX_FIRINGS_PER_CALL). */
const MISSED_SHOWN_CAP = 1000;

/** What an empty "Notebook or script" field is told, before anything is sent (new user 16, N4; newuser38 n22). */
export const REQUIRED_PATH = 'Notebook or script: required — give the notebook or script to run (a path from the file ' +
  'browser, from the server root, e.g. reports/daily.ipynb)';

/**
 * What the form says of its "GPUs per run" before anything is sent, or null when it is a number of GPUs: the
 * Submit form's words (newuser38 n22: -1 was stopped only by the browser's own bubble, and an emptied field was
 * sent as 0 GPUs without a word).
 */
export function gpusPerRunProblem(text: string): string | null {
  const gpus = Number(text);
  if (text.trim() === '' || !isFinite(gpus)) {
    return `GPUs per run must be a number (got "${text}"). Use a whole number such as 1 or 4, a fraction below 1 such ` +
      'as 0.5, or 0 for CPU-only runs.';
  }
  if (gpus < 0) {
    return `GPUs per run must be >= 0 (got ${text.trim()}). Use 0 for CPU-only runs or a positive number of GPUs.`;
  }
  return null;
}

/** The form's label of each field a refusal may name (the API speaks JSON names). */
const DEFINITION_LABELS: Record<string, string> = {
  name: 'Name',
  notebook: 'Notebook or script',
  script: 'Notebook or script',
  schedule: 'Cron schedule',
  timezone: 'Time zone',
  gpus: 'GPUs per run',
  time_limit: 'Time limit',
  time_limit_s: 'Time limit',
  parameters: 'Parameters',
  model: 'GPU model',
  gpu_models: 'GPU model',
  priority: 'Priority',
  team: 'Team',
  queue: 'Team'
};

/**
 * A refusal in the form's words: the field by its label, said once (new user 6, F13: "schedule:
 * invalid cron expression…" under a field labelled "Cron schedule"), then the hint.
 */
/** A definition's schedule in words, as the CLI and the magics say it (jupyter_sched/wording/definitions.py):
 * "every minute (UTC)"; with no schedule, "no schedule: runs only with Run now" — no time zone for
 * something that never fires (new user 13, N20: the panel said "no schedule (UTC)"). */
/**
 * Each run's time limit as the definition card says it (jupyter_sched.wording.definitions.runs_text's words):
 * `time limit 5m`, or `no time limit` for a GPU run that gives none — it runs unlimited, which starts only
 * when nothing is reserved (newuser34 N5: a definition saved from this form had none and nothing said so);
 * '' for a CPU-only run that gives none.
 */
export function definitionLimitText(d: Pick<Definition, 'job'>): string {
  const job = (d.job ?? {}) as { time_limit?: number | string | null; time_limit_s?: number | null; gpus?: number | string | null };
  const limit = job.time_limit ?? job.time_limit_s;
  if (typeof limit === 'number' && limit > 0) {
    return `time limit ${exactDuration(limit)}`;
  }
  if (typeof limit === 'string' && limit) {
    return `time limit ${limit}`;
  }
  return Number(job.gpus ?? 0) > 0 ? 'no time limit' : '';
}

/** A definition's time limit as the form's Time limit field takes it back ("1h30m", "5m"; '' for none). */
export function limitFieldText(d: Pick<Definition, 'job'> | null): string {
  const job = (d?.job ?? {}) as { time_limit?: number | string | null; time_limit_s?: number | null };
  const limit = job.time_limit ?? job.time_limit_s;
  if (typeof limit === 'number') {
    return limit > 0 ? exactDuration(limit) : '';
  }
  return limit ? String(limit) : '';
}

/** The GPU models a definition's runs ask for (its job's `model` or `gpu_models`, one name or a list); [] for any. */
export function definitionModels(d: Pick<Definition, 'job'> | null): string[] {
  const job = (d?.job ?? {}) as { model?: unknown; gpu_models?: unknown };
  const given = job.model || job.gpu_models;
  const list = Array.isArray(given) ? given : given ? [given] : [];
  return list.filter((m): m is string => typeof m === 'string' && m !== '');
}

/** The team a definition's job names (`team` or `queue`); '' when it leaves it to the owner's default. */
function jobTeam(d: Pick<Definition, 'job'> | null): string {
  const job = (d?.job ?? {}) as { team?: unknown; queue?: unknown };
  const team = job.team || job.queue;
  return typeof team === 'string' ? team : '';
}

/**
 * The parts of each run's request the card says besides its time limit, in the words and order of
 * `definitions show` (jupyter_sched.wording.definitions.runs_parts): `model A100`, `priority low`, `team ml`
 * — only what the definition sets, and its team (newuser34 N5 leftover: model, priority and team were only
 * in the CLI's words).
 */
export function definitionRequestParts(d: Pick<Definition, 'job' | 'team'>): string[] {
  const job = (d.job ?? {}) as { priority?: unknown; no_preempt?: unknown };
  const models = definitionModels(d);
  return [
    models.length ? `model ${models.join('/')}` : '',
    typeof job.priority === 'string' && job.priority ? `priority ${job.priority}` : '',
    // each run asks for free GPUs only (session 38), in the words of `definitions show`
    job.no_preempt === true ? `no preempt: ${DEFINITION_NO_PREEMPT_WORDS}` : '',
    d.team ? `team ${d.team}` : ''
  ].filter(Boolean);
}

/** `definitions show`'s words for a definition whose runs ask no_preempt (jupyter_sched.wording.definitions.NO_PREEMPT_WORDS). */
export const DEFINITION_NO_PREEMPT_WORDS = "free GPUs only, never stops another's job";

/** What the form's lists and boxes start at (or are chosen): {@link formStart}, {@link requestFields}. */
export interface IFormChoice {
  model: string;
  team: string;
  priority: string;
  /** Each run asks for free GPUs only (`no_preempt`; the form's "Free GPUs only" box). Left out: not asked. */
  noPreempt?: boolean;
}

/** The value of the form's GPU model list for a definition: '' any, the model's name, or {@link SAVED_MODELS}. */
const SAVED_MODELS = '\u0000saved';

/**
 * The form's choices of GPU model, team and priority, the Submit form's (`offeredTeams`, `offeredPriorities`;
 * models from the inventory), with what the edited definition has kept even where it is no longer offered
 * (another user's team an admin edits, a model gone from the inventory): `[value, label]` pairs.
 */
export function formChoices(
  me: Pick<Me, 'team' | 'teams' | 'priorities'> & { user?: string } | null | undefined, configured: unknown, inventoryModels: readonly string[],
  editing: Pick<Definition, 'job'> & { user?: string } | null, team: string
): { models: [string, string][]; teams: [string, string][]; priorities: [string, string][] } {
  const saved = definitionModels(editing);
  const models: [string, string][] = [['', 'Any model'], ...[...new Set(inventoryModels)].sort().map(m => [m, m] as [string, string])];
  if (saved.length > 1 || (saved.length === 1 && !inventoryModels.includes(saved[0]))) {
    models.push([saved.length === 1 ? saved[0] : SAVED_MODELS, `${saved.join('/')} (as saved)`]);
  }
  const kept = jobTeam(editing);
  if (isOthers(editing, me)) {
    // an admin editing another user's definition (All users): my teams and my grants are not its owner's — its own
    // team, or its owner's default; every class (the server checks the owner's grants, naming priority)
    const owner = editing?.user ?? '';
    const all = offeredPriorities(configured, null);
    const keptClass = ((editing?.job ?? {}) as { priority?: unknown }).priority;
    return {
      models,
      teams: [['', `${owner}'s default team`], ...(kept ? [[kept, kept] as [string, string]] : [])],
      priorities: [...all, ...(typeof keptClass === 'string' && keptClass && !all.includes(keptClass) ? [keptClass] : [])].map(p => [p, p])
    };
  }
  const teams: [string, string][] = offeredTeams(me).map(t => [t === me?.team ? '' : t, t === me?.team ? `${t} (your default)` : t]);
  if (kept && kept !== me?.team && !teams.some(([v]) => v === kept)) {
    teams.push([kept, kept]);
    if (!teams.some(([v]) => v === '')) {
      teams.unshift(['', me?.team ? `${me.team} (your default)` : 'default team']);
    }
  }
  const offered = offeredPriorities(configured, me, team);
  const keptPriority = ((editing?.job ?? {}) as { priority?: unknown }).priority;
  const priorities: [string, string][] = offered.map(p => [p, p]);
  if (typeof keptPriority === 'string' && keptPriority && !offered.includes(keptPriority)) {
    priorities.push([keptPriority, keptPriority]);
  }
  return { models, teams, priorities };
}

/** Whether `d` is another user's definition (an admin's All users list), not the caller's. */
function isOthers(d: { user?: string } | null, me: { user?: string } | null | undefined): boolean {
  return !!(d?.user && me?.user && d.user !== me.user);
}

/** What the form's lists start at for a definition (null: a new one): its model, team and priority as values of the lists. */
export function formStart(
  d: Pick<Definition, 'job'> & { user?: string } | null, me: Pick<Me, 'team'> & { user?: string } | null | undefined
): Required<IFormChoice> {
  const saved = definitionModels(d);
  const team = jobTeam(d);
  const { priority, no_preempt: noPreempt } = (d?.job ?? {}) as { priority?: unknown; no_preempt?: unknown };
  return {
    model: saved.length > 1 ? SAVED_MODELS : saved[0] ?? '',
    // my default team is '' in my lists; another user's team is said as it is
    team: team && (isOthers(d, me) || team !== me?.team) ? team : '',
    priority: typeof priority === 'string' && priority ? priority : 'normal',
    noPreempt: noPreempt === true
  };
}

/**
 * The job fields of a Save from the form's lists: on create what differs from the defaults (any model, the
 * default team, normal); on an edit only what the user changed, `null` taking a field off (the server
 * keeps what a PATCH leaves out, and a saved list of models or another spelling stays as it was).
 */
export function requestFields(chosen: IFormChoice, start: IFormChoice, editing: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const from: IFormChoice = editing ? start : { model: '', team: '', priority: 'normal', noPreempt: false };
  if (chosen.noPreempt !== undefined && chosen.noPreempt !== (from.noPreempt ?? false)) {
    out.no_preempt = chosen.noPreempt; // false on an edit: its runs may preempt again (`definitions edit --preempt`)
  }
  if (chosen.model !== from.model && chosen.model !== SAVED_MODELS) {
    out.gpu_models = chosen.model ? [chosen.model] : null;
  }
  if (chosen.team !== from.team) {
    out.team = chosen.team || null;
  }
  if (chosen.priority !== from.priority && chosen.priority) {
    out.priority = chosen.priority;
  }
  return out;
}

/**
 * What Run now made, from its run's real state, as `definitions run` says it (jupyter_sched.wording.definitions.
 * run_made_text): `Queued a run of "nightly" (pending: …)` while it waits, `Started a run of "nightly"` once it
 * runs (newuser34 N5 nit: a run a spent budget held was said "Started").
 */
export function runNowNotice(run: Pick<DefinitionRun, 'job'>, name: string, timeZone?: string | null): string {
  const state = run.job?.state ?? '';
  if (state === 'pending' || state === 'admitted') {
    const said = (run.job as { reason?: { message?: string } | null } | null)?.reason?.message ?? '';
    const why = timeZone === undefined ? said : inItsZone(said, timeZone); // its clocks in the definition's zone (n30)
    return `Queued a run of "${name}"${why ? ` (pending: ${why})` : ''}`;
  }
  return state === 'running' || !state ? `Started a run of "${name}"` : `A run of "${name}": ${state}`;
}

export function scheduleText(d: Pick<Definition, 'schedule' | 'schedule_description' | 'timezone'>): string {
  const when = d.schedule_description || d.schedule;
  return when ? `${when} (${d.timezone || 'UTC'})` : 'no schedule: runs only with Run now';
}

/**
 * A refusal as the form says it, hidden characters escaped and its clocks in the browser's zone ({@link serverText}: it
 * may quote a name, and say until when, as every error line: newuser38 n30).
 */
export function errorText(err: unknown): string {
  if (err instanceof SchedApiError) {
    const field = err.field ?? '';
    const label = DEFINITION_LABELS[field.split('.')[0]] ?? field;
    return serverText(`${label ? `${label}: ` : ''}${formMessage(err.message, field, label)}${err.hint ? ` — ${err.hint}` : ''}`);
  }
  return shownText(err instanceof Error ? err.message : String(err));
}

/** Where a run's "Open" saves its executed notebook (newuser40 N1: one name, the same copy on every click). */
export { executedCopyPath }; // moved to ./executed (newuser39 N1), shared with My work and the log viewer

/** Construction options of {@link DefinitionsView}. */
export interface IDefinitionsViewOptions {
  model: ISchedModel;
  /** Open a file (relative to the server root) in JupyterLab. */
  openPath: INotebookFiles['openPath'];
  /** Write a notebook (nbformat JSON) at `path` under the server root, making its folders. */
  saveNotebook: INotebookFiles['saveNotebook'];
  /** Whether a file is at `path` under the server root. */
  exists?: INotebookFiles['exists'];
  /** Path prefilled in the form (e.g. the current notebook). */
  currentPath?(): string;
}

/** The view (see the module docstring). */
export class DefinitionsView extends Widget {
  private readonly model: ISchedModel;
  private readonly options: IDefinitionsViewOptions;
  private readonly formBox = h('div', { class: 'jp-sched-defs-formbox' });
  private readonly listBox = h('div', { class: 'jp-sched-defs-listbox', 'aria-live': 'polite' });
  private definitions: Definition[] = [];
  /**
   * An admin's "All users": the list is everyone's definitions (`GET definitions?all=true`), each with its owner, so
   * an admin can see and pause a user's nightly GPU definition from the panel (newuser29 n12: only the admin's own
   * were listed, "No scheduled notebooks yet" beside 160 of others'). Off: the caller's own, as for everyone.
   */
  private allUsers = false;
  private readonly runs = new Map<string, DefinitionRun[]>();
  private readonly expanded = new Set<string>();
  /** Why the last read of the definitions failed: cleared by the next read that works. */
  private loadError = '';
  /**
   * Why the last action on the list (Run now, Pause/Resume, Delete, Open notebook) was refused: kept
   * across re-reads — a jobs poll re-reads the list every few seconds — until the next action (new
   * user 23, N11: every refusal was wiped by the next reload within a second).
   */
  private actionError = '';
  private notice = '';
  private previewTimer: number | undefined;
  private handles: IDisposable[] = [];
  private loading: Promise<void> | null = null;
  /** The definitions' zones whose names were asked of the server ({@link askZoneNames}): once each. */
  private readonly zonesAsked = new Set<string>();
  /** The definition the form edits (null: the form creates a new one). */
  private editing: Definition | null = null;
  /** Where a refusal of the form's Save is said (set by {@link buildForm}). */
  private formError: HTMLElement | null = null;
  private fields!: {
    name: HTMLInputElement; path: HTMLInputElement; cron: HTMLInputElement; tz: HTMLInputElement;
    gpus: HTMLInputElement; timeLimit: HTMLInputElement; params: HTMLTextAreaElement; submit: HTMLButtonElement; heading: HTMLElement;
    model: HTMLSelectElement; team: HTMLSelectElement; priority: HTMLSelectElement; teamField: HTMLElement;
    noPreempt: HTMLInputElement;
  };
  /** What the form's model, team and priority lists started at (the edited definition's, or the defaults). */
  private start = formStart(null, null);

  constructor(options: IDefinitionsViewOptions) {
    super();
    this.options = options;
    this.model = options.model;
    this.addClass('jp-sched-defs');
    this.node.append(this.buildForm(), this.listBox);
    this.model.jobsChanged.connect(this.onJobs, this);
    this.model.event.connect(this.onEvent, this);
    this.model.quotasChanged.connect(this.onMe, this); // `me` read: whether the All users toggle is offered
    this.model.inventoryChanged.connect(this.syncChoices, this); // the GPU models the form offers
    void this.model.start().then(() => {
      this.syncChoices();
      if (!this.model.inventory) {
        this.model.refresh('inventory', { force: true }); // once: the form's GPU models, with Inventory folded
      }
      return this.reload();
    });
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.model.jobsChanged.disconnect(this.onJobs, this);
    this.model.event.disconnect(this.onEvent, this);
    this.model.quotasChanged.disconnect(this.onMe, this);
    this.model.inventoryChanged.disconnect(this.syncChoices, this);
    this.handles.forEach(handle => handle.dispose());
    window.clearTimeout(this.previewTimer);
    super.dispose();
  }

  private onJobs(): void {
    if (this.definitions.length) {
      void this.reload();
    }
  }

  /** Whether I may list everyone's definitions (an admin, as `GET me` says). */
  private get isAdmin(): boolean {
    return !!this.model.me?.is_admin;
  }

  private onMe(): void {
    this.syncChoices(); // the teams and their priorities come from `me`
    if (this.allUsers && !this.isAdmin) {
      this.allUsers = false; // no longer an admin: my own again
      void this.reload();
    } else {
      this.render();
    }
  }

  /** Show everyone's definitions (`on`, admins) or my own; re-read the list. */
  setAllUsers(on: boolean): Promise<void> {
    this.allUsers = on && this.isAdmin;
    return this.reload();
  }

  private onEvent(_: ISchedModel, event: { type: string }): void {
    if (event.type === 'definition' || event.type === 'definition_run') {
      void this.reload();
    }
  }

  /** Re-read the definitions and the runs of the expanded ones. */
  reload(): Promise<void> {
    if (this.loading) {
      return this.loading;
    }
    this.loading = (async () => {
      try {
        // every page: GET definitions answers 100 a page, the next behind its Link header (red28 R6)
        this.definitions = await this.model.client.requestAll('listDefinitions', this.allUsers ? { query: { all: true } } : {});
        for (const id of this.expanded) {
          this.runs.set(id, await this.model.client.request('listDefinitionRuns', { path: { definition_id: id }, query: { limit: 20 } }));
        }
        this.loadError = '';
      } catch (err) {
        this.loadError = errorText(err);
      } finally {
        this.loading = null;
      }
      this.render();
      void this.askZoneNames();
    })();
    return this.loading;
  }

  /**
   * Ask the server the names of each listed definition's zone not asked yet (`GET zone-labels?zone=Asia/Tokyo`),
   * then render again: its clocks the server sent no label with — a run's reason, a skip's why — name the zone as
   * the CLI does (`JST`, not `UTC+9`; s40-views). A refusal or an older server: the offset stands.
   */
  private async askZoneNames(): Promise<void> {
    const zones = [...new Set(this.definitions.map(d => d.timezone || 'UTC'))].filter(z => !this.zonesAsked.has(z) && !zoneLabelsKnown(z));
    if (!zones.length) {
      return;
    }
    zones.forEach(z => this.zonesAsked.add(z));
    const answers = await Promise.all(zones.map(zone => this.model.client.zoneLabels(zone).then(
      answer => { setZoneLabels(zone, answer.labels); return true; },
      () => false
    )));
    if (answers.some(Boolean) && !this.isDisposed) {
      this.render();
    }
  }

  // -- create ---------------------------------------------------------------------------------

  private input(cls: string, label: string, attrs: Record<string, unknown> = {}): HTMLInputElement {
    return h('input', { class: `jp-mod-styled jp-sched-defs-${cls}`, 'aria-label': label, title: label, ...attrs });
  }

  private buildForm(): HTMLElement {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
    const name = this.input('name', 'Name', { placeholder: 'daily-report' });
    const path = this.input('path', 'Notebook or script (path from the server root)', {
      placeholder: 'reports/daily.ipynb', value: this.options.currentPath?.() ?? ''
    });
    const cron = this.input('cron', 'Cron schedule (minute hour day month weekday)', { placeholder: '0 12 * * 1-5' });
    const tz = this.input('tz', 'Time zone (IANA)', { value: zone });
    const gpus = this.input('gpus', 'GPUs per run', { type: 'number', min: 0, step: 'any', value: 1 });
    // each run's time limit, read by the server as the Submit form's is ("2h", "90m", a bare number is
    // seconds); empty: none — said on the card as "no time limit" (newuser34 N5: the form had no such field)
    const timeLimit = this.input('timelimit', 'Time limit of each run (e.g. 2h; empty: none)', { type: 'text', placeholder: 'e.g. 2h (optional)' });
    // GPU model, priority and team, as the Submit form offers them (newuser34 N5 leftover: only the CLI set them)
    const select = (cls: string, label: string): HTMLSelectElement =>
      h('select', { class: `jp-mod-styled jp-sched-defs-${cls}`, 'aria-label': label, title: label });
    const gpuModel = select('model', 'GPU model of each run');
    const team = select('team', 'Team charged for each run');
    const priority = select('priority', 'Priority of each run');
    team.addEventListener('change', () => this.syncChoices()); // a team's own priority classes
    const params = h('textarea', {
      class: 'jp-mod-styled jp-sched-defs-params', rows: 2, 'aria-label': 'Parameters, one NAME=VALUE per line',
      title: 'Parameters, one NAME=VALUE per line (values for the notebook cell tagged "parameters")', placeholder: 'region=eu'
    });
    const preview = h('div', { class: 'jp-sched-defs-preview', 'aria-live': 'polite' });
    const pathNote = h('div', { class: 'jp-sched-defs-path-note jp-sched-defs-invalid', 'aria-live': 'polite' });
    path.addEventListener('input', () => (pathNote.textContent = ''));
    // a refusal of Save, beside the form and outside the list a jobs poll re-renders: it stays until the
    // user changes the form or saves (new user 23, N11: it was shown in the list and wiped within a second)
    const formError = h('div', { class: 'jp-sched-defs-form-error jp-sched-defs-invalid', role: 'alert' });
    this.formError = formError;
    const submitButton = h('button', { class: 'jp-sched-button jp-mod-accept jp-sched-defs-create', type: 'submit' }, 'Save definition');
    const heading = h('h3', { class: 'jp-sched-defs-heading' }, 'New scheduled notebook');
    const field = (text: string, input: HTMLElement, cls = ''): HTMLElement =>
      h('label', { class: `jp-sched-defs-field ${cls}`.trim() }, h('span', { class: 'jp-sched-defs-label' }, text), input);
    const teamField = field('Team', team, 'jp-sched-defs-field-team');
    // free GPUs only, as the Submit form's box and `definitions create --no-preempt` (session 38)
    const noPreempt = h('input', {
      type: 'checkbox', class: 'jp-sched-defs-nopreempt', 'aria-label': 'Free GPUs only',
      title: "Each run waits for free GPUs rather than stop anyone's running job (no preemption, no reclaim) — --no-preempt"
    });
    this.fields = { name, path, cron, tz, gpus, timeLimit, params, submit: submitButton, heading, model: gpuModel, team, priority, teamField, noPreempt };
    const schedulePreview = (): void => {
      window.clearTimeout(this.previewTimer);
      this.previewTimer = window.setTimeout(async () => {
        if (!cron.value.trim()) {
          preview.textContent = '';
          return;
        }
        try {
          const answer = await this.model.client.request('previewSchedule', { body: { schedule: cron.value, timezone: tz.value || 'UTC' } });
          preview.textContent = shownText(`${answer.description}; next ${answer.next.slice(0, 3).map((t, i) => localTime(t, answer.timezone, answer.next_zones?.[i])).join(', ')}`);
          preview.classList.remove('jp-sched-defs-invalid');
        } catch (err) {
          preview.textContent = errorText(err);
          preview.classList.add('jp-sched-defs-invalid');
        }
      }, PREVIEW_DELAY_MS);
    };
    cron.addEventListener('input', schedulePreview);
    tz.addEventListener('input', schedulePreview);
    const submit = async (event: Event): Promise<void> => {
      event.preventDefault();
      const file = path.value.trim();
      pathNote.textContent = '';
      // every field the form can judge is said at once, each beside its field or by Save, before anything is
      // sent; the browser's own checks are off (noValidate) so none stops Save with a bubble of its own (n22)
      const gpusProblem = gpusPerRunProblem(gpus.value);
      path.setAttribute('aria-invalid', String(!file));
      gpus.setAttribute('aria-invalid', String(gpusProblem !== null));
      formError.textContent = gpusProblem ?? '';
      if (!file || gpusProblem) {
        // refused here, beside the field it names: an empty path joined onto the server root was sent as the
        // root folder and refused as "not a .ipynb file" (new user 16, N4)
        pathNote.textContent = file ? '' : REQUIRED_PATH;
        (file ? gpus : path).focus();
        return;
      }
      const root = PageConfig.getOption('serverRoot');
      const absolute = file.startsWith('/') || !root ? file : URLExt.join(root, file);
      formError.textContent = '';
      try {
        const body: Record<string, unknown> = {
          name: name.value.trim() || file.split('/').pop()?.replace(/\.(ipynb|py)$/, '') || 'definition',
          [file.endsWith('.py') ? 'script' : 'notebook']: absolute,
          schedule: cron.value.trim() || null,
          timezone: tz.value.trim() || 'UTC',
          gpus: Number(gpus.value),
          parameters: parseParameters(params.value)
        };
        Object.assign(body, requestFields({ model: gpuModel.value, team: team.value, priority: priority.value, noPreempt: noPreempt.checked },
          this.start, !!this.editing));
        const limit = timeLimit.value.trim();
        if (limit) {
          body.time_limit = limit;
        } else if (this.editing && limitFieldText(this.editing)) {
          body.time_limit = null; // emptied in Edit: the limit it had is taken off
        }
        const saved = this.editing
          ? await this.model.client.request('updateDefinition', { path: { definition_id: this.editing.id }, body: body as Schemas['UpdateDefinitionRequest'] })
          : await this.model.client.request('createDefinition', { body: body as Schemas['CreateDefinitionRequest'] });
        // with the server's notes on its runs, as Submit says them (newuser39 n3: a parameter its notebook's
        // parameters cell does not set — `regoin=eu`, did you mean 'region'? — was saved without a word)
        this.notice = `Saved "${saved.name}": ${saved.schedule_description || 'no schedule'}` + requestNotes(saved.warnings, NULL_TRANS);
        formError.textContent = '';
        this.edit(null);
        preview.textContent = '';
        await this.reload();
      } catch (err) {
        this.notice = '';
        if (err instanceof SchedApiError && (err.field === 'schedule' || err.field === 'timezone')) {
          // said once, beside the schedule it is about, where the live check says it too (new user 6, F13:
          // the same refusal above and below the Save button)
          preview.textContent = errorText(err);
          preview.classList.add('jp-sched-defs-invalid');
          formError.textContent = '';
        } else {
          formError.textContent = errorText(err);
        }
        this.render();
      }
    };
    // each input under a visible label (field, above), as the Submit form has (new user 5: "1" and "UTC" read
    // as data of unknown meaning; the names were only in tooltips)
    const form = h(
      'form',
      { class: 'jp-sched-defs-form', novalidate: true, onsubmit: submit, oninput: () => (formError.textContent = '') },
      h('div', { class: 'jp-sched-defs-row' }, field('Name', name), field('Notebook or script', path)),
      pathNote,
      h('div', { class: 'jp-sched-defs-row' }, field('Cron schedule', cron), field('Time zone', tz),
        field('GPUs per run', gpus, 'jp-sched-defs-field-gpus')),
      h('div', { class: 'jp-sched-defs-row' }, field('GPU model', gpuModel, 'jp-sched-defs-field-model'),
        field('Priority', priority, 'jp-sched-defs-field-priority'), field('Time limit', timeLimit, 'jp-sched-defs-field-timelimit')),
      teamField,
      h('label', { class: 'jp-sched-defs-field jp-sched-defs-field-nopreempt' }, noPreempt,
        h('span', { class: 'jp-sched-defs-label' }, " Free GPUs only: its runs never stop another's job")),
      field('Parameters (NAME=VALUE per line)', params),
      preview,
      formError,
      h('div', { class: 'jp-sched-defs-row' }, submitButton,
        h('button', { class: 'jp-sched-button jp-sched-defs-cancel-edit', type: 'button', onclick: () => this.edit(null) }, 'Cancel'))
    );
    this.formBox.append(heading, form);
    this.formBox.classList.toggle('jp-sched-defs-editing', false);
    this.syncChoices();
    return this.formBox;
  }

  /**
   * Fill the GPU model, team and priority lists from what the panel knows (the inventory's models, `me`'s
   * teams and their priority classes, `config`'s classes), keeping each list's choice where it is still
   * offered, else the start's. The Team field shows only with a choice to make, as in the Submit form.
   */
  private syncChoices(): void {
    const f = this.fields;
    if (!f) {
      return;
    }
    const models = (this.model.inventory?.gpus ?? []).map(g => g.model);
    const fill = (list: HTMLSelectElement, options: [string, string][], fallback: string): void => {
      const want = list.options.length ? list.value : fallback;
      list.replaceChildren(...options.map(([value, label]) => h('option', { value }, label)));
      list.value = options.some(([v]) => v === want) ? want : options.some(([v]) => v === fallback) ? fallback : options[0]?.[0] ?? '';
    };
    const first = formChoices(this.model.me, this.model.config?.priorities, models, this.editing, f.team.value);
    fill(f.model, first.models, this.start.model);
    fill(f.team, first.teams, this.start.team);
    // the priorities of the team now chosen
    const choices = formChoices(this.model.me, this.model.config?.priorities, models, this.editing, f.team.value);
    fill(f.priority, choices.priorities, this.start.priority);
    f.teamField.hidden = first.teams.length === 0;
  }

  /** Load `d` into the form to change it (null: back to creating a new one, form emptied). */
  edit(d: Definition | null): void {
    const f = this.fields;
    this.editing = d;
    f.name.value = d?.name ?? '';
    f.path.value = d ? (d.notebook ?? d.script ?? '') : this.options.currentPath?.() ?? '';
    f.cron.value = d?.schedule ?? '';
    f.tz.value = d?.timezone ?? (Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');
    const gpus = (d?.job as { gpus?: number } | undefined)?.gpus;
    f.gpus.value = String(gpus ?? 1);
    f.timeLimit.value = limitFieldText(d);
    this.start = formStart(d, this.model.me);
    f.noPreempt.checked = this.start.noPreempt;
    for (const list of [f.model, f.team, f.priority]) {
      list.replaceChildren(); // refilled from the start, not the last choice
    }
    this.syncChoices();
    f.params.value = Object.entries(d?.parameters ?? {})
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join('\n');
    f.submit.textContent = d ? 'Save changes' : 'Save definition';
    if (this.formError) {
      this.formError.textContent = ''; // a refusal of the form left behind is no longer about it
    }
    f.heading.textContent = d ? shownText(`Edit "${d.name}"`) : 'New scheduled notebook';
    this.formBox.classList.toggle('jp-sched-defs-editing', !!d);
    if (d) {
      f.cron.dispatchEvent(new Event('input'));
      f.name.focus();
    }
  }

  // -- list -----------------------------------------------------------------------------------

  private async act<T>(what: () => Promise<T>, notice: string | ((answer: T) => string)): Promise<void> {
    this.actionError = '';
    try {
      const answer = await what();
      this.notice = typeof notice === 'function' ? notice(answer) : notice;
    } catch (err) {
      this.notice = '';
      this.actionError = errorText(err);
    }
    await this.reload();
  }

  /**
   * Delete after a confirmation that lists the runs still waiting to start and offers to cancel
   * them with it (`DELETE definitions/{id}?cancel_runs=true`; new user 8 N3: a queued firing ran
   * after the delete, which said only that its runs stay).
   */
  private async remove(d: Definition): Promise<void> {
    const client = this.model.client;
    let waiting: DefinitionRun[];
    try {
      const runs = await client.request('listDefinitionRuns', { path: { definition_id: d.id }, query: { limit: 500 } });
      waiting = runs.filter(run => WAITING.has(run.job?.state ?? ''));
    } catch (err) {
      this.actionError = errorText(err);
      this.render();
      return;
    }
    const body = new DeleteQuestion(d, waiting);
    const result = await showDialog({
      title: shownText(`Delete "${d.name}"?`),
      body,
      buttons: [Dialog.cancelButton({ label: 'Keep it' }), Dialog.warnButton({ label: 'Delete' })]
    });
    if (!result.button.accept) {
      return;
    }
    const cancelRuns = result.value ?? false;
    let answer: Schemas['DeleteDefinitionResponse'] | undefined;
    await this.act(async () => {
      answer = await client.request('deleteDefinition', { path: { definition_id: d.id }, query: cancelRuns ? { cancel_runs: true } : {} });
    }, '');
    if (answer) {
      this.notice = deletedNotice(d.name, answer);
      this.render();
    }
  }

  private async toggleRuns(d: Definition): Promise<void> {
    if (this.expanded.has(d.id)) {
      this.expanded.delete(d.id);
      this.render();
      return;
    }
    this.expanded.add(d.id);
    await this.reload();
  }

  /**
   * Open a run's executed notebook: fetched from the scheduler API and saved through this
   * JupyterLab's own contents API as `scheduled-runs/<name> (executed <job id>).ipynb`, so it lands in the user's
   * files whether the scheduler runs in this server or is a JupyterHub service elsewhere.
   */
  private async openRun(run: DefinitionRun): Promise<void> {
    try {
      const { notice } = await openExecutedNotebook(this.model.client, run.job_id, run.job?.notebook, this.options);
      if (notice) {
        this.notice = notice;
        this.render();
      }
    } catch (err) {
      this.actionError = errorText(err);
      this.render();
    }
  }

  private renderRun(run: DefinitionRun, d: Definition): HTMLElement {
    const state = run.job?.state ?? 'removed';
    // the executed notebook exists once the run has ended (the runner writes it then): a running run's button
    // answered "not found" (s39 nbopen's left-over) — it says when it opens instead
    const executed = !!d.notebook && hasExecutedNotebook(run.job);
    const download = executedDownloadUrl(run.job_id);
    return h(
      'li',
      { class: `jp-sched-run jp-sched-run-${state}`, 'data-job-id': run.job_id },
      h('span', { class: 'jp-sched-run-when' }, localTime(run.scheduled_for, d.timezone, run.scheduled_zone)),
      h('span', { class: 'jp-sched-run-trigger' }, triggerText(run)),
      h('span', { class: `jp-sched-run-state jp-sched-state jp-sched-state-badge-${state}` }, state),
      h('span', { class: 'jp-sched-run-reason' }, runReason(run, d.timezone)),
      run.catch_up ? h('span', { class: 'jp-sched-run-catchup' }, catchUpText(run, d.timezone)) : null,
      Object.keys(run.parameters ?? {}).length ? h('code', { class: 'jp-sched-run-params' }, JSON.stringify(run.parameters)) : null,
      executed
        ? h(
            'span',
            { class: 'jp-sched-run-actions' },
            h('button', { class: 'jp-sched-button jp-sched-run-open', 'data-key': `open-${run.job_id}`, onclick: () => void this.openRun(run) }, 'Open notebook'),
            h('a', { class: 'jp-sched-run-download', href: download, download: '' }, 'Download')
          )
        : d.notebook && state === 'running'
          ? h('span', { class: 'jp-sched-run-actions jp-sched-run-opens-later' }, EXECUTED_LATER)
          : null
    );
  }

  private renderDefinition(d: Definition): HTMLElement {
    const last = d.last_run ?? null;
    const runs = this.runs.get(d.id) ?? [];
    const open = this.expanded.has(d.id);
    const client = this.model.client;
    return h(
      'li',
      { class: `jp-sched-def${d.paused ? ' jp-sched-def-paused' : ''}`, 'data-definition-id': d.id },
      h(
        'div',
        { class: 'jp-sched-def-head' },
        h('span', { class: 'jp-sched-def-name' }, d.name),
        // whose it is, when the list is everyone's and it is not mine (the Queue names another's job's user alike)
        this.allUsers && d.user !== this.model.me?.user ? h('span', { class: 'jp-sched-def-user', title: shownText(`${d.user}'s definition`) }, shownText(d.user)) : null,
        h('span', { class: 'jp-sched-def-schedule' }, scheduleText(d)),
        ...definitionRequestParts(d).map(part => h('span', { class: 'jp-sched-def-request' }, part)),
        definitionLimitText(d) ? h('span', { class: 'jp-sched-def-limit' }, definitionLimitText(d)) : null,
        h('span', { class: 'jp-sched-def-next' }, d.paused ? 'paused' : d.next_run_at ? `next ${localTime(d.next_run_at, d.timezone, d.next_run_zone)}` : ''),
        last ? h('span', { class: `jp-sched-def-last jp-sched-state jp-sched-state-badge-${last.job?.state ?? 'removed'}` }, `last: ${last.job?.state ?? 'removed'}`) : null
      ),
      d.skipped ? h('p', { class: 'jp-sched-def-skipped' }, shownText(skippedText(d))) : null,
      h(
        'div',
        { class: 'jp-sched-def-actions' },
        h('button', { class: 'jp-sched-button jp-sched-def-expand', 'aria-expanded': String(open), 'data-key': `runs-${d.id}`, onclick: () => void this.toggleRuns(d) }, open ? 'Hide runs' : 'Runs'),
        h('button', { class: 'jp-sched-button jp-sched-def-run', 'data-key': `run-${d.id}`, onclick: () => void this.act(() => client.request('runDefinitionNow', { path: { definition_id: d.id }, body: {} }), run => runNowNotice(run, d.name, d.timezone)) }, 'Run now'),
        h(
          'button',
          {
            class: 'jp-sched-button jp-sched-def-toggle', 'data-key': `toggle-${d.id}`,
            onclick: () => void this.act(() => client.request('pauseOrResumeDefinition', { path: { definition_id: d.id, action: d.paused ? 'resume' : 'pause' } }), d.paused ? `Resumed "${d.name}"` : `Paused "${d.name}"`)
          },
          d.paused ? 'Resume' : 'Pause'
        ),
        h('button', { class: 'jp-sched-button jp-sched-def-edit', 'data-key': `edit-${d.id}`, onclick: () => this.edit(d) }, 'Edit'),
        h('button', { class: 'jp-sched-button jp-sched-def-delete', 'data-key': `delete-${d.id}`, onclick: () => void this.remove(d) }, 'Delete')
      ),
      open ? (runs.length ? h('ul', { class: 'jp-sched-runs' }, runs.map(run => this.renderRun(run, d))) : h('p', { class: 'jp-sched-empty' }, 'No runs yet.')) : null
    );
  }

  /** The admin's "All users" toggle (a pressed button, as the Queue's "Mine only"); null for anyone else. */
  private allUsersToggle(): HTMLElement | null {
    if (!this.isAdmin) {
      return null;
    }
    return h(
      'button',
      {
        type: 'button', class: 'jp-sched-toggle jp-sched-defs-all-users', 'aria-pressed': String(this.allUsers), 'data-key': 'defs-all-users',
        title: "Admins: list every user's scheduled notebooks, to see, pause or resume them",
        onclick: () => void this.setAllUsers(!this.allUsers)
      },
      'All users'
    );
  }

  private render(): void {
    replaceKeepingFocus(
      this.listBox,
      this.allUsersToggle(),
      ...[...new Set([this.actionError, this.loadError])].filter(said => said).map(said => h('div', { class: 'jp-sched-defs-error', role: 'alert' }, said)),
      this.notice ? h('div', { class: 'jp-sched-defs-notice' }, this.notice) : null,
      this.definitions.length
        ? h('ul', { class: 'jp-sched-defs-list' }, this.definitions.map(d => this.renderDefinition(d)))
        : h('p', { class: 'jp-sched-empty' }, this.allUsers
            ? 'No user has a scheduled notebook on this server.'
            : 'No scheduled notebooks yet: save one above, or with %schedule define in a notebook.')
    );
  }
}

const WAITING = new Set(['pending', 'preempted']);

/**
 * The body of the delete confirmation: the definition never fires again; its runs still waiting
 * to start are listed (they would run), with a box to cancel them too — unchecked, as the server's
 * and the CLI's default keeps them (`definitions delete --cancel-runs` is the box).
 */
export class DeleteQuestion extends Widget implements Dialog.IBodyWidget<boolean> {
  private readonly box: HTMLInputElement | null;

  constructor(d: Definition, waiting: readonly DefinitionRun[]) {
    super();
    this.addClass('jp-sched-def-delete-question');
    const n = waiting.length;
    const shown = waiting.slice(0, 10);
    this.box = n ? h('input', { type: 'checkbox', class: 'jp-sched-def-delete-cancel-runs' }) : null;
    const parts: Node[] = [h('p', {}, `"${d.name}" will not fire again. Its finished and running runs stay in My work.`)];
    if (!n) {
      parts.push(h('p', {}, 'None of its runs is waiting to start.'));
    } else {
      parts.push(
        h('p', {}, n === 1 ? '1 run has not started yet and would still run:' : `${n} runs have not started yet and would still run:`),
        h(
          'ul',
          { class: 'jp-sched-def-delete-waiting' },
          shown.map(run => h('li', { 'data-job-id': run.job_id }, `${run.job_id} (${run.job?.name ?? ''}): ${run.job?.state ?? ''}`))
        )
      );
      if (n > shown.length) {
        parts.push(h('p', {}, `… and ${n - shown.length} more`));
      }
      parts.push(h('label', { class: 'jp-sched-def-delete-cancel-label' }, this.box, n === 1 ? ' Also cancel its waiting run' : ` Also cancel its ${n} waiting runs`));
    }
    this.node.append(...parts);
  }

  getValue(): boolean {
    return this.box?.checked ?? false;
  }
}

/** What a delete did, as the CLI says it (`jupyter_sched.wording.jobs.definition_deleted`). */
export function deletedNotice(name: string, answer: Schemas['DeleteDefinitionResponse']): string {
  const runs = answer.waiting_runs ?? [];
  const waiting = runs.filter(run => WAITING.has(run.state));
  const gone = runs.filter(run => run.state === 'cancelled');
  const total = answer.waiting_total ?? waiting.length + gone.length;
  const said = `Deleted "${name}": it fires no more`;
  if (gone.length && !waiting.length) {
    return `${said}; cancelled its ${total === 1 ? '1 waiting run' : `${total} waiting runs`}; the others stay in My work`;
  }
  if (!waiting.length) {
    return `${said}; its runs stay in My work`;
  }
  const listed = waiting.slice(0, 3).map(run => `${run.id} (${run.name})`).join(', ');
  const extra = total > 3 ? ` and ${total - 3} more` : '';
  return `${said}; ${total === 1 ? '1 run is' : `${total} runs are`} still queued and will run: ${listed}${extra} — cancel ${total === 1 ? 'it' : 'them'} in My work`;
}

/** The plugin: a GPUs-sidebar section (when the registry is there) and a main-area command. */
export const definitionsPlugin: JupyterFrontEndPlugin<void> = {
  id: '@jupyter-sched/labextension:definitions',
  description: 'Scheduled notebooks: job definitions with GPU requests, parameters and cron schedules, and their runs.',
  autoStart: true,
  requires: [ISchedModel],
  optional: [ISchedSections, ICommandPalette],
  activate: (app: JupyterFrontEnd, model: ISchedModel, sections: ISchedSections | null, palette: ICommandPalette | null) => {
    const { openPath, saveNotebook, exists } = contentsFiles(app);
    const currentPath = (): string => {
      const current = app.shell.currentWidget as unknown as { context?: { path?: string } } | null;
      const path = current?.context?.path ?? '';
      return path.endsWith('.ipynb') || path.endsWith('.py') ? path : '';
    };
    sections?.add({
      id: 'definitions',
      title: 'Scheduled notebooks',
      rank: 350,
      isAvailable: m => m.supports('definitions'),
      create: context => ({ widget: new DefinitionsView({ model: context.model, openPath, saveNotebook, exists, currentPath }) })
    });
    let main: MainAreaWidget<DefinitionsView> | null = null;
    app.commands.addCommand(DEFINITIONS_COMMAND, {
      label: 'GPUs: Scheduled Notebooks',
      caption: 'Job definitions: notebooks on a cron schedule with GPUs and parameters, and their runs',
      execute: () => {
        if (!main || main.isDisposed) {
          main = new MainAreaWidget({ content: new DefinitionsView({ model, openPath, saveNotebook, exists, currentPath }) });
          main.id = 'jupyter-sched-definitions';
          main.title.label = 'Scheduled notebooks';
          main.title.closable = true;
        }
        if (!main.isAttached) {
          app.shell.add(main, 'main');
        }
        app.shell.activateById(main.id);
      }
    });
    palette?.addItem({ command: DEFINITIONS_COMMAND, category: 'GPUs' });
  }
};
