/**
 * Pure formatting for the panel: pending reasons, ETAs, durations, sizes and GPU requests, in
 * the user's language (every sentence goes through a JupyterLab {@link TranslationBundle};
 * plurals through `_n`).
 *
 * Reasons are data with numbers: the server renders them (`reason.text` from the one wording
 * renderer, else `reason.message`); the panel shows that and builds a sentence from `code` +
 * `details` only when a server sent neither. Nothing here parses a message string.
 */
import { nullTranslator, type TranslationBundle } from '@jupyterlab/translation';

import { ACTIVE_STATES, isWaiting, type IResources, type Job, type PendingReason, type QuotaLine, resourcesOf } from './types';

/** The bundle used when a caller passes none (English, untranslated). */
export const NULL_TRANS: TranslationBundle = nullTranslator.load('jupyter_sched');

/**
 * Seconds → a duration as the CLI and the magics write one ({@link compactDuration}, the Python
 * `format_duration`): `45s`, `3m05s`, `2h03m`, `3d04h` — a job's elapsed time and wait, the ETA
 * accuracy (new user 20, N27: the panel said `elapsed 2 min 02 s` where the CLI said `2m02s`; the
 * compact form is also what `--time-limit` and `time_limit` take back). `–` for no duration.
 */
export function formatDuration(seconds: number, trans: TranslationBundle = NULL_TRANS): string {
  void trans; // kept for callers: the compact form is the same in every language, as the CLI's
  return !isFinite(seconds) || seconds < 0 ? '–' : compactDuration(seconds);
}

/**
 * Characters a user name or an audit row may hold that are drawn as nothing or reorder the text around them:
 * C0/C1 controls (but newline and tab), bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F,
 * U+061C), line/paragraph separators, and invisible format characters (U+00AD, U+180E, U+200B–U+200D,
 * U+2060–U+2064, U+FEFF) — the set the CLI's `escaped_controls` escapes (red29 R2: `amy\u200b` read as `amy`).
 */
// eslint-disable-next-line no-control-regex
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/**
 * `text` (a user name, an actor, an audit message) with every hidden or reordering character ({@link HIDDEN})
 * written as its escape (`amy\u200b`, `\u202e464a7392r`), so no name reads as another user's (red29 R2).
 */
export function shownText(text: string): string {
  return text.replace(HIDDEN, ch => '\\u' + ch.charCodeAt(0).toString(16).padStart(4, '0'));
}

/** Parse an ISO timestamp; `null` when absent or unparsable. */
export function parseTime(value: string | null | undefined): Date | null {
  if (!value) {
    return null;
  }
  const t = Date.parse(value);
  return isNaN(t) ? null : new Date(t);
}

/**
 * Seconds as every Python surface writes a duration (jupyter_sched.model.units.format_duration):
 * `45s`, `19m55s`, `20m`, `2h05m`, `3d04h`, `3d`.
 */
export function compactDuration(seconds: number): string {
  // Python's round(): halves to even, as format_duration rounds
  const floor = Math.floor(seconds);
  const diff = seconds - floor;
  const total = diff > 0.5 || (diff === 0.5 && floor % 2 === 1) ? floor + 1 : floor;
  if (total < 60) {
    return `${total}s`;
  }
  const minutes = Math.floor(total / 60);
  const sec = total % 60;
  if (minutes < 60) {
    return sec ? `${minutes}m${String(sec).padStart(2, '0')}s` : `${minutes}m`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 48) {
    return `${hours}h${String(minutes % 60).padStart(2, '0')}m`;
  }
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days}d${String(hours % 24).padStart(2, '0')}h` : `${days}d`;
}

/**
 * A moment `seconds` from now, as the CLI and the magics say it beside a clock
 * (jupyter_sched.model.units.relative_text): `in 19m55s`, `now` when under a second away or past —
 * one relative-time style everywhere (new user 16, N8: the CLI said "in 19m55s" where the panel said
 * "in 19 min" for the same ETA).
 */
export function relativeText(seconds: number, trans: TranslationBundle = NULL_TRANS): string {
  return seconds >= 1 ? trans.__('in %1', compactDuration(seconds)) : trans.__('now');
}

/**
 * A moment `seconds` before now, as the CLI and the magics say it (jupyter_sched.model.units.ago_text):
 * `3m ago`, `just now` when under a second ago or ahead.
 */
export function agoText(seconds: number, trans: TranslationBundle = NULL_TRANS): string {
  return seconds >= 1 ? trans.__('%1 ago', compactDuration(seconds)) : trans.__('just now');
}

/**
 * A running job's own progress report as the CLI and the magics say it
 * (jupyter_sched.wording.reported.progress_text): the server's `progress.text` (`42 % done, reported
 * Dec 5 02:10 UTC`) with its clock as of `now` and how long ago — `42 % done, reported 02:10 UTC (3m
 * ago)`. "" when there is nothing to say: the job never reported, the report is of an earlier run
 * (the server's text is then empty), or the job no longer runs. A report older than the run's stale
 * bound ({@link staleAfterS}) reads `60 % done, no progress report since 22:27:38 UTC (3m10s)`
 * (newuser27 N8: a job whose reports went to a stopped server read "60 % done" for minutes).
 */
export function progressLine(job: Pick<Job, 'state' | 'progress'>, now: Date = new Date(), trans: TranslationBundle = NULL_TRANS): string {
  const text = job.progress?.text;
  if (!text || !ACTIVE_STATES.has(job.state)) {
    return '';
  }
  const at = parseTime(job.progress?.at);
  if (!at) {
    return clocksAsOf(text, now);
  }
  const age = (now.getTime() - at.getTime()) / 1000;
  const ranS = job.progress?.ran_s;
  const reports = job.progress?.reports;
  if (typeof ranS === 'number' && isFinite(ranS) && typeof reports === 'number' && age > staleAfterS(ranS, reports)) {
    const done = clocksAsOf(text, now).replace(/, reported .*$/, '');
    return trans.__('%1, no progress report since %2 (%3)', done, clockText(at, now, true), compactDuration(age));
  }
  return `${clocksAsOf(text, now)} (${agoText(age, trans)})`;
}

/**
 * Seconds after a progress report past which it is stale — the job stopped reporting and no end is read
 * from it (jupyter_sched.backfill.progress `stale_after_s`): 3 of the run's mean report intervals
 * (`ranS` over `reports`), between 120 s and 1800 s.
 */
export function staleAfterS(ranS: number, reports: number): number {
  return Math.min(1800, Math.max(120, (3 * ranS) / Math.max(reports, 1)));
}

/**
 * The planned preemption of running work, as the CLI and the magics say it after its end
 * (jupyter_sched.wording.preemption.planned_preemption_text): the server's `preemption_planned.text`
 * (`to be preempted at ~Dec 5 02:11 UTC for norm2 (j-…), normal priority of the same team, unless it
 * ends first`) with its clock as of `now` (new user 21, N5). "" when none is planned, the work no
 * longer runs, or it is stopping already (its stop is what its card says).
 */
export function plannedLine(job: Pick<Job, 'state' | 'preemption_planned'>, now: Date = new Date()): string {
  const text = job.preemption_planned?.text;
  if (!text || !ACTIVE_STATES.has(job.state) || stoppingText(job)) {
    return '';
  }
  return clocksAsOf(text, now);
}

/**
 * Work on GPUs the inventory no longer lists (hubadmin 22, H3: a node or GPUs gone under it), from the
 * answer's `gone_gpus`, in the words of the CLI's and the magics' lines (jupyter_sched.wording.jobs.gone_text):
 * `GPU-sim-vm-3 no longer in the inventory (it runs on unless its GPUs went with it; an admin can cancel it)`.
 * "" for work holding only listed GPUs, waiting or ended.
 */
export function goneLine(job: Pick<Job, 'state' | 'gone_gpus'>, trans: TranslationBundle = NULL_TRANS): string {
  const gone = job.gone_gpus ?? [];
  if (!gone.length || !ACTIVE_STATES.has(job.state)) {
    return '';
  }
  return trans.__('%1 no longer in the inventory (it runs on unless its GPUs went with it; an admin can cancel it)', gone.join(', '));
}

/**
 * A GPU that turned unhealthy under running work (hubadmin24 B14, the owner's half), from the answer's
 * `unhealthy_gpus`: each one's `text`, the server's one sentence (jupyter_sched.wording.jobs.unhealthy_gpu_dict),
 * as the CLI's `status JOB` and the magics' job views show it. "" for work on healthy GPUs, waiting or ended.
 */
export function unhealthyLine(job: Pick<Job, 'state' | 'unhealthy_gpus'>): string {
  const gpus = job.unhealthy_gpus ?? [];
  if (!gpus.length || !ACTIVE_STATES.has(job.state)) {
    return '';
  }
  return clocksAsOf(gpus.map(g => g.text).filter(Boolean).join('; ')); // its "since …" in the browser's zone (newuser38 n30)
}

/**
 * Its node is drained (hubadmin26 B1): the answer's `drain.text`, the server's one sentence
 * (jupyter_sched.wording.cordons.drain_dict) as the CLI's `jobs`/`status JOB` and the magics say it:
 * `node-a is being drained by boss (BIOS update): this job is stopped at 18:37 UTC and requeued — checkpoint
 * before then`. "" for work not on a drained node, waiting or ended.
 */
export function drainLine(job: Pick<Job, 'state' | 'drain'>): string {
  // its "stopped at 18:37 UTC" in the browser's zone, as the card's other clocks (newuser38 n30)
  return job.drain && ACTIVE_STATES.has(job.state) && !isWaiting(job.state) ? clocksAsOf(job.drain.text) : '';
}

/**
 * The time limit a waiting job that gave none is planned with and stopped at (newuser28 N8, verify28 V9): the
 * answer's `planned_time_limit.text`, the server's one phrase (jupyter_sched.wording.time_limits.planned_limit_text)
 * as the CLI's `status`/`queue`/`jobs` and the magics say it: `time limit 30m (queue default; none given)`.
 * "" for a job that gave a limit, or holds GPUs, or ended.
 */
export function plannedLimitLine(job: Pick<Job, 'state' | 'time_limit_s' | 'planned_time_limit'>): string {
  return job.planned_time_limit && isWaiting(job.state) && job.time_limit_s == null ? job.planned_time_limit.text : '';
}

/** True when its node's drain stops it before its time limit ends: its "ends by" is not said (jupyter_sched.wording.jobs._drain_first). */
function drainFirst(job: Pick<Job, 'state' | 'drain' | 'started_at' | 'time_limit_s'>): boolean {
  if (!drainLine(job) || !job.drain) {
    return false;
  }
  const started = parseTime(job.started_at);
  const limit = job.time_limit_s;
  const evict = parseTime(job.drain.evict_at);
  if (!started || !evict || typeof limit !== 'number' || !isFinite(limit)) {
    return true;
  }
  return evict.getTime() < started.getTime() + limit * 1000;
}

/** What a lease's own line adds for `idle_release.kernel` (jupyter_sched.wording.jobs._IDLE_KERNEL). */
const IDLE_KERNEL: Record<string, string> = {
  shutdown: '; if the kernel still holds them then (a CUDA context), it is shut down',
  hold: '; if the kernel still holds them then (a CUDA context), they stay out of use until it lets go'
};

/**
 * What this server's idle policy does to a lease, from its `idle_release`, as `[when, note]`
 * (jupyter_sched.wording.jobs.idle_release_words): `['after 4m idle', '']`, `['', '; this server reports
 * idle leases, it does not reclaim them']`, `['', '; this server does not reclaim idle leases']`,
 * `['when idle', '']` without the field.
 */
export function idleReleaseWords(idleRelease: unknown): [string, string] {
  if (!idleRelease || typeof idleRelease !== 'object') {
    return ['when idle', ''];
  }
  const { action, after_s: after } = idleRelease as { action?: unknown; after_s?: unknown };
  if (action === 'release' && typeof after === 'number' && isFinite(after)) {
    return [`after ${compactDuration(after)} idle`, ''];
  }
  if (action === 'notify') {
    return ['', '; this server reports idle leases, it does not reclaim them'];
  }
  if (action === 'off') {
    return ['', '; this server does not reclaim idle leases'];
  }
  return ['when idle', ''];
}

/**
 * How long a kernel's "busy" keeps its lease's idle GPUs, from `idle_release.busy_after_s` / `busy_action`
 * (jupyter_sched.wording.jobs.busy_bound_words; red39 R8): `kept while its kernel is busy, up to 4h00m with
 * idle GPUs`, `kept while its kernel is busy; 4h00m with idle GPUs is reported, not reclaimed`, '' when not said.
 */
export function busyBoundWords(idleRelease: unknown): string {
  if (!idleRelease || typeof idleRelease !== 'object') {
    return '';
  }
  const { busy_after_s: after, busy_action: action } = idleRelease as { busy_after_s?: unknown; busy_action?: unknown };
  if (typeof after !== 'number' || !isFinite(after) || after <= 0) {
    return '';
  }
  return action === 'notify'
    ? `kept while its kernel is busy; ${compactDuration(after)} with idle GPUs is reported, not reclaimed`
    : `kept while its kernel is busy, up to ${compactDuration(after)} with idle GPUs`;
}

type EndsOf = Pick<Job, 'id' | 'state' | 'kind' | 'name' | 'started_at' | 'time_limit_s' | 'kernel_id' | 'parent_job_id' | 'released_at_exit' | 'idle_release' | 'drain'> & {
  mine?: boolean | null;
  projected_end?: Job['projected_end'];
  time_limit_source?: Job['time_limit_source'];
};

/** Where a limit the job did not give came from, in the words of jupyter_sched.wording.time_limits.limit_source_words. */
const LIMIT_SOURCE_WORDS: Record<string, string> = {
  'queue default': 'queue default; none given',
  'queue max': 'queue maximum; none given',
  'unlimited asked': 'queue maximum; 0 = unlimited asked'
};

/** ` (queue default; none given)` after a running job's limit its queue gave (newuser28 N8); "" for a limit it gave. */
function limitSource(job: Pick<EndsOf, 'time_limit_source'>): string {
  const words = job.time_limit_source ? LIMIT_SOURCE_WORDS[job.time_limit_source] : undefined;
  return words ? ` (${words})` : '';
}

/**
 * When running work is projected to end before its time limit — the end the ETAs of the jobs waiting on it
 * read, from its progress report or a learnt runtime — as the CLI and the magics say it
 * (jupyter_sched.wording.projected.projected_end_text): the server's `projected_end.text` (`projected end
 * ~Dec 5 05:10 UTC, from its progress report of Dec 5 05:08:30 UTC`) with its clocks as of `now` and how far
 * off the end is — `projected end ~05:10 UTC (in 1m20s), from its progress report of 05:08:30 UTC` (new user
 * 22, N10). "" without one (another user's work, work its limit ends, a lease) or while it is stopping.
 */
export function projectedLine(job: Pick<Job, 'state' | 'kind' | 'projected_end' | 'stop_requested'>, now: Date = new Date()): string {
  const end = job.projected_end;
  const at = parseTime(end?.at);
  if (!end?.text || !at || job.kind === 'lease' || !ACTIVE_STATES.has(job.state) || stoppingText(job)) {
    return '';
  }
  if (end.text.startsWith('finishing')) {  // a report of 100 % done: no "projected end in 51s" (newuser26 N5)
    return clocksAsOf(end.text, now);
  }
  const relative = relativeText(Math.max(0, (at.getTime() - now.getTime()) / 1000));
  const head = /^projected end ~[^,]*/.exec(end.text);
  const rest = head ? end.text.slice(head[0].length) : '';
  return `projected end ~${clockText(at, now)} (${relative})${clocksAsOf(rest, now)}`;
}

/**
 * When running work ends at the latest, in the words of the CLI's `queue` and `jobs` lines
 * (jupyter_sched.wording.jobs.ends_by, without its planned preemption: {@link plannedLine} says that):
 * `ends by 05:22 UTC (in 9m28s), its 10m time limit`, `no time limit`; my job projected to end sooner (its
 * progress or a learnt runtime: {@link projectedLine}) that first — `projected end ~05:10 UTC (in 1m20s), from
 * its progress report of 05:08:30 UTC · at the latest 05:22 UTC (in 9m28s), its 10m time limit`; a lease, how its GPUs are given
 * back — `a kernel's GPUs: held until released (%gpu release) or reclaimed after 4m idle, no time limit`
 * (new user 22, N5: the cards said `elapsed 31s` and nothing of the end the CLI gave). "" for work not
 * holding GPUs or stopping (its stop is what its card says). A bound-to-no-kernel lease is released
 * with the card's Release button, as `cancel` releases it in a terminal.
 */
export function endsLine(job: EndsOf, now: Date = new Date()): string {
  if (!ACTIVE_STATES.has(job.state) || isWaiting(job.state) || stoppingText(job) || drainFirst(job)) {
    return '';  // a drain that stops it first: its drainLine says when, in place of "ends by" (hubadmin26 B1)
  }
  const mine = job.mine !== false;
  if (job.kind !== 'lease') {
    const limit = job.time_limit_s;
    if (typeof limit !== 'number' || !isFinite(limit)) {
      const projected = projectedLine(job, now);
      return projected ? `${projected} · no time limit` : 'no time limit';
    }
    const started = parseTime(job.started_at);
    if (!started) {
      const projected = projectedLine(job, now);
      const said = `${compactDuration(limit)} time limit${limitSource(job)}`;
      return projected ? `${projected} · ${said}` : said;
    }
    const end = new Date(started.getTime() + limit * 1000);
    const left = Math.max(0, (end.getTime() - now.getTime()) / 1000);
    const projected = projectedLine(job, now);  // the end its waiters are given, then the limit's (new user 22, N10)
    const limitEnd = `${clockText(end, now)} (${relativeText(left)}), its ${compactDuration(limit)} time limit${limitSource(job)}`;
    return projected ? `${projected} · at the latest ${limitEnd}` : `ends by ${limitEnd}`;
  }
  if (job.parent_job_id && mine) {
    return `GPUs held for job ${job.parent_job_id}: released when it ends (Release releases them sooner), no time limit`;
  }
  if (job.released_at_exit && mine) {
    return 'GPUs held by a kernel this server did not start (nbconvert, papermill, VS Code…): released when it runs '
      + '%gpu release or exits (Release releases them sooner), no time limit';
  }
  const [when, note] = idleReleaseWords(job.idle_release);
  if (!job.kernel_id && mine) {
    const idle = !when ? '' : when === 'when idle' ? ' (or idle reclaim)' : ` (or idle reclaim ${when})`;
    return `GPUs held for no kernel: Release releases them${idle}, no time limit${note}`;
  }
  if (!mine) {
    // a kernel's default public names (jupyter_sched.model.names.LEASE_NAMES[:2])
    const what = ['notebook lease', 'kernel lease'].includes(job.name ?? '') ? "a kernel's GPUs" : "a lease's GPUs";
    return `${what}: held until its owner releases them${when ? ` or they are reclaimed ${when}` : ''}, no time limit${note}`;
  }
  const kernelAction = (job.idle_release as { kernel?: unknown } | null | undefined)?.kernel;
  const kernel = when ? IDLE_KERNEL[String(kernelAction)] ?? '' : '';
  // its keepalive while it lasts (newuser39 n11; jupyter_sched.wording.jobs._lease_hold)
  const until = parseTime((job.idle_release as { keepalive_until?: string } | null | undefined)?.keepalive_until);
  const kept = until && until > now ? until : null; // over: a row read or kept since says nothing of it (s40-views)
  const bound = busyBoundWords(job.idle_release);  // red39 R8: how long "busy" keeps idle GPUs
  const busy = bound ? ` (${bound})` : '';
  const idle = !when ? busy : kept
    ? ` or reclaimed ${when}${busy}, not before ${clockText(kept, now)}: kept while idle until then (its keepalive)`
    : ` or reclaimed ${when}${busy}`;
  return `a kernel's GPUs: held until released (%gpu release)${idle}, no time limit${note}${kernel}`;
}

/** An ETA relative to `now` ({@link relativeText}): `unknown`, `now`, `in 40s`, `in 12m`, `in 2h05m`. */
export function formatEta(eta: string | null | undefined, now: Date = new Date(), trans: TranslationBundle = NULL_TRANS): string {
  const at = parseTime(eta);
  if (!at) {
    return trans.__('unknown');
  }
  return relativeText((at.getTime() - now.getTime()) / 1000, trans);
}

/**
 * The time zone's name beside a clock in a zone (a job definition's firings) — the one rule of every
 * surface (jupyter_sched.model.units.zone_label; session 22, issue 20: the panel said the browser's
 * `GMT+5:30` where the CLI said `IST`): the server's `label`, sent with each zoned time (`next_run_zone`,
 * `upcoming_zones`, `scheduled_zone`, `next_zones`) — the tz database's letters (`CET`, `IST`), else
 * `UTC+4` — said as given. Without one (nothing sent), the zone's offset at `at` as the server writes
 * a zone that has no letters (`UTC+5:30`, `UTC-3`, `UTC`), never the browser's own abbreviation, which
 * differs by locale and knows none for most of Asia and Africa. '' for a zone this browser does not know.
 */
export function zoneText(label: string | null | undefined, at: Date, timeZone: string): string {
  if (label) {
    return label;
  }
  const named = zoneName(at, timeZone);
  if (named) {
    return named; // the server's name of that offset (`GET zone-labels?zone=`), as the CLI says it (s40-views)
  }
  try {
    const offset = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' })
      .formatToParts(at).find(p => p.type === 'timeZoneName')?.value ?? '';
    const parts = /^GMT([+\-\u2212])(\d{2}):(\d{2})$/.exec(offset);
    if (!parts || (parts[2] === '00' && parts[3] === '00')) {
      return 'UTC'; // "GMT" or "GMT+00:00": no offset
    }
    const minutes = parts[3] === '00' ? '' : `:${parts[3]}`;
    return `UTC${parts[1] === '+' ? '+' : '-'}${Number(parts[2])}${minutes}`;
  } catch {
    return '';
  }
}

/** A clock more than this many days from now carries its year (jupyter_sched.model.units.YEAR_SHOWN_AFTER_DAYS). */
export const YEAR_SHOWN_AFTER_DAYS = 182;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The IANA zone the panel's clocks are said in (newuser26 n14): the browser's own; UTC where it has none. */
let displayZone = browserZone();

function browserZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/**
 * The names of {@link displayZone}'s offsets by minutes east of UTC (`60` → `CET`), as the server's tz database has
 * them (`GET zone-labels`, the model asks once): the panel's clocks name their zone as the CLI and the magics do
 * (newuser35 n12: `03:00 UTC+1` here, `03:00 CET` there). Null until the server answered: `UTC+1` ({@link zoneText}).
 */
let zoneNames: Map<number, string> | null = null;

/**
 * The names of other zones' offsets, by IANA zone (a job definition's: `Asia/Tokyo` → `540` → `JST`), as the server
 * sent them (`GET zone-labels?zone=`): a definition's clocks said in its zone name it as the CLI does (s40-views:
 * the panel said `12:00 UTC+9` where the CLI said `12:00 JST`, wherever the server sent no label with the time).
 */
const otherZoneNames = new Map<string, Map<number, string>>();

/** Name `zone`'s offsets by `labels` (the server's `GET zone-labels?zone=`): the display zone's, or a definition's. */
export function setZoneLabels(zone: string, labels: readonly { offset_minutes: number; label: string }[]): void {
  const names = new Map(labels.map(l => [l.offset_minutes, l.label]));
  if (zone === displayZone) {
    zoneNames = names;
  }
  otherZoneNames.set(zone, names);
}

/** Whether the server's names of `zone`'s offsets are known here ({@link setZoneLabels}). */
export function zoneLabelsKnown(zone: string): boolean {
  return otherZoneNames.has(zone);
}

/** The server's name of `timeZone`'s offset at `at` (`JST`), where it sent that zone's names; else undefined. */
function zoneName(at: Date, timeZone: string): string | undefined {
  const names = timeZone === displayZone && zoneNames ? zoneNames : otherZoneNames.get(timeZone);
  if (!names) {
    return undefined;
  }
  const offset = offsetMinutes(at, timeZone);
  return offset === null ? undefined : names.get(offset);
}

/** Minutes east of UTC of `timeZone` at `at` (null: a zone this browser does not know). */
function offsetMinutes(at: Date, timeZone: string): number | null {
  try {
    const offset = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' })
      .formatToParts(at).find(p => p.type === 'timeZoneName')?.value ?? '';
    const parts = /^GMT([+\-\u2212])(\d{2}):(\d{2})$/.exec(offset);
    if (!parts) {
      return 0; // "GMT": no offset
    }
    return (parts[1] === '+' ? 1 : -1) * (Number(parts[2]) * 60 + Number(parts[3]));
  } catch {
    return null;
  }
}

/** Say the panel's clocks in `zone` (an IANA name; tests pin it); returns the zone used before. An unknown zone: UTC. */
export function setDisplayZone(zone: string): string {
  const before = displayZone;
  zoneNames = null;
  otherZoneNames.clear(); // every zone's names asked again (tests pin a zone and its names)
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    displayZone = zone;
  } catch {
    displayZone = 'UTC';
  }
  localParts.clear();
  return before;
}

/** The zone the panel's clocks are said in (its label, e.g. `UTC+1`, follows each clock). */
export function getDisplayZone(): string {
  return displayZone;
}

const localParts = new Map<string, Intl.DateTimeFormat>();

/** `at` on the wall clock of {@link displayZone}: its fields, and the zone's label there (`UTC`, `UTC+1`, `UTC+5:30`). */
function wallClock(at: Date): { year: number; month: number; day: number; hour: number; minute: number; second: number; zone: string } {
  const offset = zoneNames ? offsetMinutes(at, displayZone) : null;
  const named = offset === null ? undefined : zoneNames?.get(offset);
  const zone = named ?? (zoneText(null, at, displayZone) || 'UTC');
  if (offset === 0 || zone === 'UTC') {
    return { year: at.getUTCFullYear(), month: at.getUTCMonth(), day: at.getUTCDate(), hour: at.getUTCHours(), minute: at.getUTCMinutes(), second: at.getUTCSeconds(), zone };
  }
  let format = localParts.get(displayZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: displayZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric'
    });
    localParts.set(displayZone, format);
  }
  const parts: Record<string, number> = {};
  for (const part of format.formatToParts(at)) {
    parts[part.type] = Number(part.value);
  }
  return { year: parts.year, month: parts.month - 1, day: parts.day, hour: parts.hour % 24, minute: parts.minute, second: parts.second, zone };
}

/**
 * `at`'s wall clock in the panel's zone without its date — `14:05` (`14:05:30` with `seconds`) — and that zone's
 * name there (`CET`, `UTC+5:30`, `UTC`), for a chart's time axis (newuser36 n7: it was UTC beside every other
 * clock in the browser's zone). `offsetMinutes`: minutes east of UTC at `at` (0 where unknown), so ticks fall on
 * the zone's round minutes.
 */
export function wallTime(at: Date, seconds = false): { clock: string; zone: string; offsetMinutes: number } {
  const two = (n: number) => String(n).padStart(2, '0');
  const wall = wallClock(at);
  const clock = `${two(wall.hour)}:${two(wall.minute)}${seconds ? `:${two(wall.second)}` : ''}`;
  return { clock, zone: wall.zone, offsetMinutes: offsetMinutes(at, displayZone) ?? 0 };
}

/**
 * A moment as every surface writes it (jupyter_sched.model.units.clock_text): `09:58 UTC` on
 * `now`'s day (UTC), else `Dec 3 09:58 UTC`, with the year more than {@link YEAR_SHOWN_AFTER_DAYS}
 * days from `now` (`Dec 4 2027 23:58 UTC`). `now` null (a record kept, as an audit row): always
 * with its date. `seconds`: `Dec 4 13:21:43 UTC` (new user 17, N6: the Audit log said
 * `12/4/2026, 1:21:43 PM`, the browser's locale and no zone). The clock is the browser's zone's, its
 * label after it as the server writes a zone (`10:58 UTC+1`, `Dec 3 15:28 UTC+5:30`; newuser26 n14: every
 * clock was UTC, though the browser knows the user's zone) — `UTC` where the browser is on UTC.
 */
export function clockText(at: Date, now: Date | null = new Date(), seconds = false): string {
  const two = (n: number) => String(n).padStart(2, '0');
  const wall = wallClock(at);
  const hhmm = `${two(wall.hour)}:${two(wall.minute)}${seconds ? `:${two(wall.second)}` : ''} ${wall.zone}`;
  const day = `${MONTHS[wall.month]} ${wall.day}`;
  if (now === null) {
    return `${day} ${hhmm}`;
  }
  const today = wallClock(now);
  if (wall.year === today.year && wall.month === today.month && wall.day === today.day) {
    return hhmm;
  }
  const far = Math.abs(at.getTime() - now.getTime()) > YEAR_SHOWN_AFTER_DAYS * 86400 * 1000;
  return far ? `${day} ${wall.year} ${hhmm}` : `${day} ${hhmm}`;
}

/** Days of the one usage period (the server's `USAGE_WINDOW`): GET me's `gpu_hours_7d`, the usage report, `status`, `jupyter-sched usage`. */
export const USAGE_DAYS = 7;

/**
 * The one usage period with its start, as the CLI says it (jupyter_sched/wording/usage.py
 * `last_days`): `in the last 7 days (since Nov 28 08:40 UTC)`; `in the last 7 days` when the start
 * is not known (a server that does not send it).
 */
export function lastDaysText(since: Date | null, now: Date, trans: TranslationBundle): string {
  return since && !isNaN(since.getTime())
    ? trans.__('in the last %1 days (since %2)', USAGE_DAYS, clockText(since, now))
    : trans.__('in the last %1 days', USAGE_DAYS);
}

/** The IANA names of UTC itself (jupyter_sched.model.units `UTC_NAMES`). */
const UTC_ZONES = new Set(['UTC', 'UCT', 'Zulu', 'Universal', 'GMT', 'GMT0', 'GMT+0', 'GMT-0', 'Greenwich', 'Etc/UTC',
  'Etc/UCT', 'Etc/Zulu', 'Etc/Universal', 'Etc/GMT', 'Etc/GMT0', 'Etc/GMT+0', 'Etc/GMT-0', 'Etc/Greenwich']);

/** Is the panel's day (its display zone's) the UTC day budgets count? */
function dayIsUtc(): boolean {
  return UTC_ZONES.has(displayZone);
}

/** A daily budget's period in the server's words (jupyter_sched.model.periods `UTC_DAY`). */
const UTC_DAY = 'this UTC day';

/**
 * The current budget period as a reader says it (jupyter_sched.model.periods `this_period_text`):
 * `today` for a day (newuser27 n4: "used this day") where the browser is on UTC, else `this UTC day` — the
 * budget's day is UTC's, which is not the user's day elsewhere (newuser30 n11); `this week`, `this month`,
 * `this quarter`.
 */
export function thisPeriodText(period: string, trans: TranslationBundle): string {
  switch (period) {
    case 'day':
      return dayIsUtc() ? trans.__('today') : trans.__('this UTC day');
    case 'week':
      return trans.__('this week');
    case 'month':
      return trans.__('this month');
    case 'quarter':
      return trans.__('this quarter');
    default:
      return trans.__('this %1', period);
  }
}

/** GPU-hours as the CLI writes them (jupyter_sched.model.units `gpu_hours_text`): two decimals at most (`0.21`, `0.1`, `100`), `<0.01` for a small non-zero amount. */
export function gpuHoursText(hours: number): string {
  if (hours > 0 && hours < 0.005) {
    return '<0.01';
  }
  return String(Number(hours.toFixed(2)));
}

/**
 * GPU-hours with their unit, as the CLI says them (jupyter_sched.model.units `gpu_hours_phrase`): the unit
 * agrees with the number as shown — `1 GPU-hour`, `0.5 GPU-hours`, `2 GPU-hours` (issue 20: "1 GPU-hours").
 * `shown`: the number already written another way (e.g. `formatNumber`); default {@link gpuHoursText}.
 */
export function gpuHoursPhrase(hours: number, trans: TranslationBundle = NULL_TRANS, shown: string = gpuHoursText(hours)): string {
  return trans._n('%2 GPU-hour', '%2 GPU-hours', Number(shown.replace(/,/g, '')) === 1 ? 1 : 2, shown);
}

/**
 * A GPU-hour budget's standing as `jupyter-sched status` says it (jupyter_sched.wording.status
 * `budget_lines`, newuser27 n4): `0.21 of 0.1 GPU-hours used today — spent: new GPU jobs wait until
 * Dec 6 00:00 UTC (or until an admin raises it); CPU-only jobs run`, or `0.05 of 0.1 GPU-hours used
 * today, resets Dec 6 00:00 UTC`; without a reset time (an older server), the numbers alone.
 */
export function budgetStandingText(used: number, limit: number, period: string, resetsAt: Date | null, now: Date, trans: TranslationBundle): string {
  const numbers = trans.__('%1 of %2 used %3', gpuHoursText(used), gpuHoursPhrase(limit, trans), thisPeriodText(period, trans));
  const when = resetsAt && !isNaN(resetsAt.getTime()) ? clockText(resetsAt, now) : null;
  if (used >= limit) {
    return when
      ? trans.__('%1 — spent: new GPU jobs wait until %2 (or until an admin raises it); CPU-only jobs run', numbers, when)
      : trans.__('%1 — spent: new GPU jobs wait until the budget resets (or until an admin raises it); CPU-only jobs run', numbers);
  }
  return when ? trans.__('%1, resets %2', numbers, when) : numbers;
}

/** An audit record's time (`at`, ISO): `Dec 4 13:21:43 UTC` ({@link clockText} with its date and seconds), or the text as given when it is no time. */
export function recordTime(iso: string): string {
  const at = new Date(iso);
  return isNaN(at.getTime()) ? iso : clockText(at, null, true);
}

const ISO_TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})/;
/**
 * A clock as the server writes one in its sentences (jupyter_sched.model.units `clock_text` with no reader: always
 * UTC) — `Dec 7 11:02:00 UTC`, `Dec 4 2027 23:58 UTC`, or today's `11:02 UTC` — and never a zone with an offset
 * after it (`12:00 UTC+4`: a job definition's own zone, said as meant). The Python `wording.reasons.clock_times`
 * reads the same forms.
 */
const SERVER_CLOCK = /\b(?:(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{1,2}) (?:(\d{4}) )?)?(\d{2}):(\d{2})(?::(\d{2}))? UTC(?![+\-\u2212\w])/;

/** An ISO time or a server clock ({@link ISO_TIME}, {@link SERVER_CLOCK}), the ISO one first. */
const CLOCKS = new RegExp(`(${ISO_TIME.source})|${SERVER_CLOCK.source}`, 'g');

/**
 * Every clock a server sentence carries, said for `now` as {@link clockText} says the panel's own — in the browser's
 * zone, today's without its date — so no line says two zones (newuser38 n30: an audit row `Dec 7 03:01:30 PST · …
 * reported as idle at Dec 7 11:02:00 UTC`, 8 h apart; new user 16, N8: "reserved from Dec 4 11:05 UTC · ETA 11:05
 * UTC"). The server's words stay UTC (every reader reads them: old clients, the JSON); each reader says them in its
 * own zone (the CLI and the magics by `clock_times`, the process's `TZ`). `ref`: the moment the sentence was written
 * (an audit row's `at`; default `now`) — a clock without its date is of `ref`'s UTC day, as the server wrote it, and
 * one without its year of the year nearest `ref`. ISO times (`held by root since 2026-12-06T18:48:06Z`) are said as
 * clocks too, unless `iso` is false (a refusal's `e.g. 2025-03-30T06:30:00Z` is what to type). `now` null: every
 * clock with its date, as a record's own time is said ({@link recordTime}). A daily
 * budget's "this UTC day" is "today" to a browser on UTC.
 */
export function clocksAsOf(text: string, now: Date | null = new Date(), ref: Date | null = null, iso = true): string {
  // "this UTC day" (the server's words, true in every zone) is "today" where the browser is on UTC, as the
  // CLI says it (jupyter_sched.model.periods `said_to_reader`; newuser30 n11)
  const day = dayIsUtc() && text.includes(UTC_DAY) ? text.split(UTC_DAY).join('today') : text;
  // an ISO time in a server's sentence ("released (held by you since 2026-12-06T18:48:06Z)") as a clock, as the
  // CLI's `wording.reasons.clock_times` says it (newuser33 n1: the panel's Release toast showed it raw) — in the
  // same pass as the server's clocks, so no clock said here is read again
  return clocksSaidBy(day, (at, seconds) => clockText(at, now, seconds), ref && !isNaN(ref.getTime()) ? ref : now ?? new Date(), iso);
}

/** How every line the scheduler writes into a job's log begins (`jupyter_sched.wording.log_clocks.MARK`). */
export const LOG_MARK = '[jupyter_sched]';

/**
 * A line of a job's log as the log viewer shows it: one of the scheduler's own (it begins with {@link LOG_MARK})
 * with its clocks in the browser's zone, as {@link clocksAsOf} says a server's sentence (newuser41 n2: `[jupyter_sched]
 * preempted at 20:24:21 UTC` beside the panel's PST); ISO times in it are data (a notebook's parameters), left as
 * written; the job's own lines as written. `ours`: `line` is a piece of such a line (a styled run after its first).
 * The CLI's `logs` and `%schedule logs` say the same (`log_clocks_said`).
 */
export function logLineClocks(line: string, now: Date = new Date(), ours = false): string {
  return ours || line.startsWith(LOG_MARK) ? clocksAsOf(line, now, null, false) : line;
}

/**
 * `text` with each clock a server wrote in it ({@link SERVER_CLOCK}, and ISO times unless `iso` is false) said by
 * `say` (`seconds`: the server said them) — {@link clocksAsOf}'s reading for a reader with its own zone: a job
 * definition's, whose output says every clock in its zone (definitions.ts, as the CLI's `in_its_zone`). `ref`: when
 * the text was written (a clock without its date is of its UTC day). One pass: no clock said here is read again.
 */
export function clocksSaidBy(text: string, say: (at: Date, seconds: boolean) => string, ref: Date, iso = true): string {
  return text.replace(
    CLOCKS,
    (whole, isoText: string | undefined, month: string | undefined, date: string | undefined, year: string | undefined, hh: string, mm: string, ss: string | undefined) => {
      if (isoText !== undefined && !iso) {
        return whole;
      }
      const when = isoText !== undefined ? parseTime(isoText) : serverClock(ref, month, date, year, Number(hh), Number(mm), Number(ss ?? 0));
      return when === null ? whole : say(when, isoText === undefined && ss !== undefined);
    }
  );
}

/** The moment of a server clock's fields ({@link SERVER_CLOCK}) written at `ref`; null for no such time (`Feb 30`, `25:00`). */
function serverClock(ref: Date, month: string | undefined, date: string | undefined, year: string | undefined, hh: number, mm: number, ss: number): Date | null {
  if (hh > 23 || mm > 59 || ss > 59) {
    return null;
  }
  if (month === undefined) {
    // today's form: the UTC day it was written on
    return new Date(Date.UTC(ref.getUTCFullYear(), ref.getUTCMonth(), ref.getUTCDate(), hh, mm, ss));
  }
  const m = MONTHS.indexOf(month);
  const at = (y: number): Date | null => {
    const t = new Date(Date.UTC(y, m, Number(date), hh, mm, ss));
    return t.getUTCMonth() === m ? t : null; // `Feb 30` is no day
  };
  if (year) {
    return at(Number(year));
  }
  let when: Date | null = null;
  for (const y of [ref.getUTCFullYear(), ref.getUTCFullYear() - 1, ref.getUTCFullYear() + 1]) {
    const t = at(y);
    if (t && (!when || Math.abs(t.getTime() - ref.getTime()) < Math.abs(when.getTime() - ref.getTime()))) {
      when = t;
    }
  }
  return when;
}

/**
 * A server sentence as the panel shows it (a refusal, a toast, a notice, a node's cordon, a job's or an audit row's
 * message): its clocks in the browser's zone ({@link clocksAsOf}; `ref`: when it was written) and its hidden
 * characters as escapes ({@link shownText}: it may quote a name). ISO times are left as written unless `iso` (an
 * audit row's `held by ana at 2026-12-05T18:40:00Z`): in a refusal or a form's hint one is what to type.
 */
export function serverText(text: string, now: Date | null = new Date(), ref: Date | null = null, iso = false): string {
  return shownText(clocksAsOf(text, now, ref, iso));
}

/** The server's ETA sentence (`ETA Dec 2 06:44 UTC, when j-1 ends (by its 4m time limit)`) with its
 * clocks as of `now` ({@link clocksAsOf}) and the relative time right after the clock, where it
 * belongs (`ETA 06:44 UTC (in 3m), when …`) — the CLI's words. A sentence that does not start with a
 * clock gets the relative time at its end. */
export function etaWithRelative(sentence: string, eta: string, now: Date = new Date(), trans: TranslationBundle = NULL_TRANS): string {
  const relative = `(${formatEta(eta, now, trans)})`;
  const clock = /^ETA (?:[A-Z][a-z]{2} \d{1,2} (?:\d{4} )?)?\d{2}:\d{2} UTC/.exec(sentence);
  if (!clock) {
    return `${clocksAsOf(sentence, now)} ${relative}`;
  }
  // the ETA's own clock from its timestamp: the server's words carry no year (new user 14, N18)
  const at = parseTime(eta);
  const shown = at ? `ETA ${clockText(at, now)}` : clocksAsOf(clock[0], now);
  return `${shown} ${relative}${clocksAsOf(sentence.slice(clock[0].length), now)}`;
}

/** Elapsed: running → since start; finished → start to finish; pending → waiting since submit. */
/**
 * When a finished job ended and how long it ran, as the CLI and the magics say it
 * (jupyter_sched.wording.jobs.ended_text): `ended 22:11 UTC (ran 4m02s)`, `ended 22:11 UTC` for one
 * that never started; "" for work not ended (newuser27 N5: a finished row said "elapsed 0s" and never when).
 */
export function endedText(
  job: Pick<Job, 'started_at' | 'finished_at'>,
  now: Date = new Date(),
  trans: TranslationBundle = NULL_TRANS
): string {
  const end = parseTime(job.finished_at);
  if (!end) {
    return '';
  }
  const start = parseTime(job.started_at);
  const when = clockText(end, now);
  return start
    ? trans.__('ended %1 (ran %2)', when, formatDuration(Math.max(0, (end.getTime() - start.getTime()) / 1000), trans))
    : trans.__('ended %1', when);
}

export function formatElapsed(
  job: Pick<Job, 'submitted_at' | 'started_at' | 'finished_at'>,
  now: Date = new Date(),
  trans: TranslationBundle = NULL_TRANS
): string {
  const start = parseTime(job.started_at);
  const end = parseTime(job.finished_at);
  if (start) {
    return formatDuration(((end ?? now).getTime() - start.getTime()) / 1000, trans);
  }
  const submitted = parseTime(job.submitted_at);
  if (submitted && !end) {
    return trans.__('waiting %1', formatDuration((now.getTime() - submitted.getTime()) / 1000, trans));
  }
  return '–';
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

/**
 * `start 2, after preemption by b-normal (j-…)` of work running again after it was preempted (or
 * `start 2, after a requeue` when no job preempted it), as the CLI's `jobs` and `status` say it
 * (`wording.jobs._restarted`); "" on a first run, of a lease, and of work not running. Runs stopped just
 * after they started (`false_starts`) are no starts (new user 24, N1). Newuser41 n6: the My work and Queue
 * cards of a preempted-and-restarted job said only "Running · elapsed 6m26s", counting the second run.
 */
export function restartedText(
  job: Pick<Job, 'state' | 'kind' | 'attempts' | 'false_starts' | 'preempted_by' | 'preempted_by_name'>,
  trans: TranslationBundle = NULL_TRANS
): string {
  const start = runNumber(job);
  if (start <= 1) {
    return '';
  }
  const by = preemptorOf(job.preempted_by, job.preempted_by_name);
  return by ? trans.__('start %1, after preemption by %2', start, by) : trans.__('start %1, after a requeue', start);
}

/** Which start of a running job this run is (its `attempts` less its `false_starts`); 1 for a first run, a
 * lease, and work not admitted or running. */
export function runNumber(job: Pick<Job, 'state' | 'kind' | 'attempts' | 'false_starts'>): number {
  if (job.kind === 'lease' || (job.state !== 'admitted' && job.state !== 'running')) {
    return 1;
  }
  const attempts = Number.isInteger(job.attempts) ? (job.attempts as number) : 0;
  const falseStarts = Number.isInteger(job.false_starts) ? (job.false_starts as number) : 0;
  return Math.max(1, attempts - falseStarts);
}

/**
 * `elapsed 6m26s`, and of a restarted job `elapsed 6m26s this run` — what it counts: the time since this
 * start, not since the first (newuser41 n6: "elapsed 6m26s" of start 2 hid the 10 minutes of start 1).
 */
export function elapsedText(
  job: Pick<Job, 'state' | 'kind' | 'attempts' | 'false_starts' | 'submitted_at' | 'started_at' | 'finished_at'>,
  now: Date = new Date(),
  trans: TranslationBundle = NULL_TRANS
): string {
  const elapsed = formatElapsed(job, now, trans);
  return runNumber(job) > 1 && job.started_at ? trans.__('elapsed %1 this run', elapsed) : trans.__('elapsed %1', elapsed);
}

/** MiB → `512 MiB`, `80 GiB`, `1.5 TiB`. */
export function formatMiB(mib: number | null | undefined): string {
  if (mib === null || mib === undefined || !isFinite(mib)) {
    return '–';
  }
  if (mib < 1024) {
    return `${Math.round(mib)} MiB`;
  }
  const gib = mib / 1024;
  if (gib < 1024) {
    return `${gib >= 100 || Number.isInteger(gib) ? Math.round(gib) : gib.toFixed(1)} GiB`;
  }
  return `${(gib / 1024).toFixed(1)} TiB`;
}

/** Bytes → `812 bytes`, `64 KB`, `3.9 MB` (decimal units, as a file manager and `%schedule logs` say them). */
export function formatBytes(count: number): string {
  for (const [unit, size] of [
    ['GB', 1e9],
    ['MB', 1e6],
    ['KB', 1e3]
  ] as const) {
    if (count >= size) {
      const value = count / size;
      return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${unit}`;
    }
  }
  return `${count} bytes`;
}

/** A number with at most `digits` decimals, no trailing zeros: 2 → `2`, 2.5 → `2.5`. */
export function formatNumber(value: number, digits = 1): string {
  if (!isFinite(value)) {
    return '∞';
  }
  return String(Number(value.toFixed(digits)));
}

/**
 * A GPU request: `1 GPU`, `4 GPUs`, `0.5 GPU`, `2 × A100-80GB`, `CPU only`, plus workers; a
 * heterogeneous gang as the CLI writes it (`jupyter_sched.wording.jobs.gpus_text`), workers × GPUs
 * each group by group, with its total: `1 × 1 + 1 × 2 GPUs (3 GPUs, 2 workers)` — new user 18, N8:
 * it read `2 GPUs × 2 workers` (4 GPUs) for a 3-GPU job.
 */
export function formatGpus(
  r: Pick<IResources, 'gpus' | 'gpu_milli' | 'gpu_models' | 'workers'> & Partial<Pick<IResources, 'groups'>>,
  trans: TranslationBundle = NULL_TRANS
): string {
  if (r.groups?.length) {
    const each = r.groups.map(g => `${g.workers} × ${g.gpus}`).join(' + ');
    const total = r.groups.reduce((sum, g) => sum + g.gpus * g.workers, 0);
    const workers = r.groups.reduce((sum, g) => sum + g.workers, 0);
    const of = r.gpu_models.length ? ` of ${r.gpu_models.join('|')}` : '';
    return trans.__('%1 GPUs (%2, %3)', each, trans._n('%1 GPU', '%1 GPUs', total) + of, trans._n('%1 worker', '%1 workers', workers));
  }
  let text: string;
  if (!r.gpus) {
    text = trans.__('CPU only');
  } else if (r.gpu_milli && r.gpu_milli < 1000) {
    // "0.5 GPU", as the CLI and the magics say a share (jupyter_sched.wording.gpus_text; new user 16, N8)
    text = trans.__('%1 GPU', formatNumber((r.gpus * r.gpu_milli) / 1000, 3));
  } else if (r.gpu_models.length) {
    text = `${r.gpus} × ${r.gpu_models.join('|')}`;
  } else {
    text = trans._n('%1 GPU', '%1 GPUs', r.gpus);
  }
  return r.workers > 1 ? trans._n('%2 × %1 worker', '%2 × %1 workers', r.workers, text) : text;
}

function num(details: Record<string, unknown>, ...keys: string[]): number | undefined {
  for (const key of keys) {
    const value = details[key];
    if (typeof value === 'number' && isFinite(value)) {
      return value;
    }
  }
  return undefined;
}

function str(details: Record<string, unknown>, ...keys: string[]): string | undefined {
  for (const key of keys) {
    const value = details[key];
    if (typeof value === 'string' && value) {
      return value;
    }
  }
  return undefined;
}

/**
 * One sentence for a reason's code and numbers, used only when the server sent no text.
 * Never the bare "does not fit": it names the resource and the numbers it has.
 */
export function sentenceFromDetails(code: string, details: Record<string, unknown>, trans: TranslationBundle = NULL_TRANS): string {
  const q = (v: number | undefined, digits = 2) => (v === undefined ? '?' : formatNumber(v, digits));
  const requested = num(details, 'requested', 'gpus', 'needed');
  const free = num(details, 'free', 'available');
  const capacity = num(details, 'capacity', 'total');
  const used = num(details, 'used', 'in_use');
  const quota = num(details, 'quota', 'guaranteed', 'limit');
  const model = str(details, 'model', 'gpu_model', 'flavor');
  const team = str(details, 'team') ?? trans.__('the team');
  const gpusOf = model ? trans.__('%1 GPUs', model) : trans.__('GPUs');
  let text: string;
  switch (code) {
    case 'ExceedsQuota':
      text = trans.__('%1 uses %2 of %3 %4; the job needs %5 more.', team, q(used), q(quota), gpusOf, q(requested));
      break;
    case 'BorrowingLimitReached':
      text = trans.__('%1 uses %2 of %3 %4; the job needs %5 more (borrowing limit reached).', team, q(used), q(quota), gpusOf, q(requested));
      break;
    case 'BudgetExhausted':
      {
        const budget = num(details, 'budget_gpu_hours', 'gpu_hours', 'budget');
        text = trans.__(
          '%1 has spent %2 of %3 this period.',
          team,
          q(num(details, 'spent_gpu_hours', 'used_gpu_hours', 'spent'), 1),
          budget === undefined ? trans.__('? GPU-hours') : gpuHoursPhrase(budget, trans, q(budget, 1))
        );
      }
      break;
    case 'WaitingForCapacity':
      text = trans.__('%1 of %2 %3 free, job needs %4.', q(free), q(capacity), gpusOf, q(requested));
      break;
    case 'Fragmented':
      text = trans.__('%1 of %2 %3 free, job needs %4 on one node (free GPUs are spread over nodes).', q(free), q(capacity), gpusOf, q(requested));
      break;
    case 'NoMatchingGpuModel':
      text = trans.__('No node has the requested GPU model %1.', model ?? '?');
      break;
    case 'NoMatchingMigProfile': // its own code: not "no GPU model", nor "no GPUs" (new user 14, N19)
      text = trans.__('No GPU here has the MIG profile %1.', str(details, 'mig_profile') ?? '?');
      break;
    case 'UnhealthyGpu':
      text = trans.__('The matching %1 are unhealthy.', gpusOf);
      break;
    case 'NodeCordoned': {
      // hubadmin24: the node an admin cordoned for maintenance would hold it
      const cordons = Array.isArray(details.cordons) ? (details.cordons as Record<string, unknown>[]) : [];
      const first = cordons[0] ?? {};
      // no "other nodes" where the cordoned node is the only one (newuser27 n5)
      text = details.no_other_nodes
        ? trans.__('Job needs %1 %2; node %3 is cordoned for maintenance: %4.', q(requested), gpusOf,
            str(first, 'node') ?? '?', str(first, 'reason') ?? '?')
        : trans.__('%1 of %2 free on the other nodes, job needs %3; node %4 is cordoned for maintenance: %5.', q(free), gpusOf,
            q(requested), str(first, 'node') ?? '?', str(first, 'reason') ?? '?');
      break;
    }
    default: {
      const numbers = Object.entries(details)
        .filter(([, v]) => typeof v === 'number' || typeof v === 'string')
        .map(([k, v]) => `${k.replace(/_/g, ' ')} ${v}`);
      text = `${code.replace(/([a-z])([A-Z])/g, '$1 $2')}${numbers.length ? `: ${numbers.join(', ')}` : ''}.`;
    }
  }
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The wording renderer's text of a reason (`reason.text`), when the server sends it. */
export interface IReasonText {
  summary: string;
  eta: string;
  unblock: string;
  line: string;
}

export function reasonText(reason: PendingReason | null | undefined): IReasonText | null {
  const text = reason && typeof reason === 'object' ? (reason as Record<string, unknown>).text : null;
  if (!text || typeof text !== 'object') {
    return null;
  }
  const t = text as Record<string, unknown>;
  const s = (k: string) => (typeof t[k] === 'string' ? (t[k] as string) : '');
  return s('summary') || s('line') ? { summary: s('summary'), eta: s('eta'), unblock: s('unblock'), line: s('line') } : null;
}

/**
 * What blocks a request and its fix as one sentence of clauses, no final stop: `needs 99 GPUs … has 4 — ask for
 * at most 4 GPUs` — the shape `jupyter_sched/wording/reasons.py` `refusal_line` gives the CLI's and the magics'
 * refusals and dry runs (newuser32 n1: the panel said "— Ask for at most 4 GPUs." and its Check fit left the fix out).
 */
export function refusalLine(message: string, fix: string | null | undefined): string {
  const said = asClause(message);
  return fix && fix.trim() ? `${said} — ${asClause(fix)}` : said;
}

function sentence(text: string): string {
  const trimmed = text.trim();
  return !trimmed || /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/** The primary reason as one sentence (the server's text, else its message, else built from numbers). */
export function reasonSentence(reason: PendingReason | null | undefined, trans: TranslationBundle = NULL_TRANS): string {
  if (!reason) {
    return '';
  }
  const text = reasonText(reason);
  if (text?.summary) {
    return sentence(text.summary);
  }
  if (reason.message?.trim()) {
    return sentence(reason.message);
  }
  return reason.code ? sentenceFromDetails(reason.code, reason.details ?? {}, trans) : '';
}

/** Queue position of a job (`position` on the row, else on its reason), or null. */
export function queuePosition(job: { position?: number | null; reason?: PendingReason | null }): number | null {
  if (typeof job.position === 'number') {
    return job.position;
  }
  return job.reason?.position ?? null;
}

/**
 * An admitted job with a reason waits in the cluster: the scheduler granted its GPUs but the
 * cluster has not started it (Kubernetes pods that cannot schedule, case 027). It is not running.
 */
export function inCluster(job: { state: string; reason?: PendingReason | null }): boolean {
  return job.state === 'admitted' && !!job.reason;
}

/**
 * The queue line of a waiting job: `#3 · <reason> · ETA in 12 min (<why>) · <what unblocks it, as a clause>`.
 * Held back by the cluster: `Pending (in the cluster): <reason>`. Running jobs: `running on <node>`.
 * `me`: the reader (GET me's user): a hold they put on their own job reads `held by you at 22:14 UTC ·
 * ETA unknown: held · release it: jupyter-sched release j-…` — the command once (newuser27 n2).
 * `release`: where the reader releases the job in the panel ({@link ReleaseAt}); the hold's command reads
 * {@link releaseWords}' words instead (newuser31 n7: a CLI command to type beside the button; newuser33 n2: in
 * the Queue section, which has no Release button).
 */
export function queueLine(
  job: Job & { position?: number | null; eta?: string | null; eta_reason?: string },
  now: Date = new Date(),
  trans: TranslationBundle = NULL_TRANS,
  me: string | null = null,
  release: boolean | ReleaseAt = null
): string {
  if (inCluster(job)) {
    const why = reasonSentence(job.reason, trans);
    return why ? trans.__('Pending (in the cluster): %1', why) : trans.__('Pending (in the cluster)');
  }
  if (!isWaiting(job.state)) {
    const node = job.allocation?.node;
    const stopping = stoppingText(job);
    const state = stopping ? stopping.charAt(0).toUpperCase() + stopping.slice(1) : stateLabel(stateWord(job), trans);
    return node ? trans.__('%1 on %2', state, node) : state;
  }
  const parts: string[] = [];
  const position = queuePosition(job);
  if (position !== null) {
    parts.push(`#${position}`);
  }
  // a part of a " · " line, not a sentence: no period before the separator (new user 5: "0 free. · ETA")
  let why = clocksAsOf(reasonSentence(job.reason, trans), now).replace(/\.$/, '');
  const holder = job.reason?.code === 'Held' ? job.reason.details?.by : undefined;
  if (me && holder === me && why.startsWith(`held by ${me} `)) {
    why = trans.__('held by you %1', why.slice(`held by ${me} `.length));
  }
  if (why) {
    parts.push(why);
  }
  const eta = job.reason?.eta ?? job.eta ?? null;
  const text = reasonText(job.reason);
  if (text?.eta) {
    parts.push(eta ? etaWithRelative(text.eta, eta, now, trans) : text.eta);
  } else {
    const etaReason = job.reason?.eta_reason || job.eta_reason || '';
    parts.push(trans.__('ETA %1', formatEta(eta, now, trans)) + (etaReason ? ` (${etaReason})` : ''));
  }
  let unblock = text ? text.unblock : (job.reason?.unblock ?? '');
  const at: ReleaseAt = release === true ? 'here' : release === false ? null : release;
  if (at && job.reason?.code === 'Held' && /^release it: jupyter-sched release \S+?\.?$/i.test(unblock.trim())) {
    // the panel's own control, not a command to type in a terminal (newuser31 n7, newuser33 n2); the server's text
    // says it as a sentence ("Release it: jupyter-sched release j-… ."), the reason's field without capital or stop
    unblock = releaseWords(at, trans);
  }
  if (unblock) {
    // the server's sentence as a part of the line, as the CLI's line has it: no "Unblocks when:" before
    // "It starts when …" (new user 20, N22: said twice, a capital after the colon)
    parts.push(asClause(clocksAsOf(unblock, now)));
  }
  return parts.join(' · ');
}

/**
 * Where a held job is released in the panel, for the words that replace the server's command (`jupyter-sched
 * release j-…`, the CLI's; the magics say `%schedule release`): `here`, the row's own Release button (My work);
 * `myWork`, My work's (the Queue section and a toast, which have none); null: nowhere (an admin's hold its owner may
 * not release), the server's words stand.
 */
export type ReleaseAt = 'here' | 'myWork' | null;

/** What releases a held job in the panel ({@link ReleaseAt}): `its Release button in My work lets it queue again`. */
export function releaseWords(at: 'here' | 'myWork', trans: TranslationBundle = NULL_TRANS): string {
  return at === 'here' ? trans.__('its Release button lets it queue again') : trans.__('its Release button in My work lets it queue again');
}

/**
 * The server's answer to a hold or release (`changed`: "held (release with: jupyter-sched release j-…)",
 * "released (held by you since 2026-12-06T18:48:06Z): it queues again …") as a toast says it: its times as the
 * panel's clocks ({@link clocksAsOf}), its release command as the panel's control (newuser33 n1, n2).
 */
export function changedText(changed: readonly string[], now: Date = new Date(), trans: TranslationBundle = NULL_TRANS): string {
  return changed
    .map(line => clocksAsOf(line, now).replace(/\brelease with: jupyter-sched release \S+?(?=\)|$)/i, () => releaseWords('myWork', trans)))
    .join('; ');
}

/**
 * A sentence as a part of a " · " line: first letter lower-case (unless it starts a name in capitals,
 * such as GPU) and no final period — `wording.reasons.as_clause`, which the CLI's line uses.
 */
export function asClause(text: string): string {
  let out = text.trim();
  if (/^[A-Z](?![A-Z])/.test(out)) {
    out = out.charAt(0).toLowerCase() + out.slice(1);
  }
  return out.endsWith('.') && !out.endsWith('..') ? out.slice(0, -1) : out;
}

/**
 * What cancelling (or releasing) `job` does, for its confirmation dialog: waiting work holds no
 * GPUs and is only taken out of the queue (new user 5: "holds 4 GPUs and is pending", then the
 * SIGTERM/SIGKILL line, for a job that never started); work holding GPUs is stopped, a lease's
 * kernel keeps running.
 */
export function cancelQuestion(job: Job, trans: TranslationBundle = NULL_TRANS): string {
  const gpus = formatGpus(resourcesOf(job), trans);
  const lease = job.kind === 'lease';
  if (isWaiting(job.state)) {
    return lease
      ? trans.__('%1 (%2) is waiting for %3; releasing withdraws the request.', workName(job), job.id, gpus)
      : trans.__('%1 (%2) is %3 (asks for %4); cancelling takes it out of the queue.', job.name, job.id, job.state, gpus);
  }
  return lease
    ? trans.__('%1 (%2) holds %3. The kernel keeps running but loses its GPUs.', workName(job), job.id, gpus)
    : trans.__('%1 (%2) holds %3 and is %4. It is stopped (SIGTERM, then SIGKILL after the grace period).', job.name, job.id, gpus, job.state);
}

/**
 * The title of the cancel/release dialog, by the name the card shows ({@link workName}): `Release lease for
 * nb2.ipynb?`, `Release lease mylease?`, `Cancel job train?` (newuser33 n4: "Release lease notebook lease?",
 * the stored name, under a card and a body saying "lease for …/nb2.ipynb").
 */
export function cancelTitle(job: Job, trans: TranslationBundle = NULL_TRANS): string {
  if (job.kind !== 'lease') {
    return trans.__('Cancel job %1?', job.name);
  }
  const shown = workName(job);
  return shown === job.name ? trans.__('Release lease %1?', shown) : trans.__('Release %1?', shown);
}

/**
 * The toast after a Release, as Keep alive gets one (newuser33 n4: nothing said it was done): what the
 * server answered — a granted lease's GPUs are free again, a waiting request withdrawn.
 */
export function releasedText(before: Job, after: Job, trans: TranslationBundle = NULL_TRANS): string {
  const shown = workName(before);
  if (isWaiting(before.state)) {
    return trans.__('Withdrew %1 (%2): it no longer waits for GPUs.', shown, before.id);
  }
  const gpus = formatGpus(resourcesOf(before), trans);
  return after.state === 'cancelled'
    ? trans.__('Released %1 (%2): its %3 went back to the pool; the kernel keeps running without them.', shown, before.id, gpus)
    : trans.__('Releasing %1 (%2): the pool gets its %3 back once its processes let go; the kernel keeps running.', shown, before.id, gpus);
}

/**
 * What ending this work costs its team's reclaims, from a cancel's or release's answer (`reclaim_cooldown.text`, the
 * server's words — what `jupyter-sched cancel` and `%gpu release` print), as a sentence; '' when it costs nothing
 * (s38: the README's "the release says until when" was true of the CLI and the magics only).
 */
export function cooldownNews(answer: Pick<Job, 'reclaim_cooldown'>): string {
  const text = answer.reclaim_cooldown?.text?.trim() ?? '';
  return text ? `${text.charAt(0).toUpperCase()}${text.slice(1).replace(/\.$/, '')}.` : '';
}

/** Quota line label: `team-ml / alice · A100-80GB` (`*` → `any model`). */
export function quotaLabel(q: Pick<QuotaLine, 'team' | 'user' | 'gpu_model'>, trans: TranslationBundle = NULL_TRANS): string {
  const who = q.user ? `${q.team} / ${q.user}` : q.team;
  return `${who} · ${q.gpu_model === '*' ? trans.__('any model') : q.gpu_model}`;
}

/** Fractions of a bar for usage against guarantee and guarantee+borrowing (0..1 each), and its text. */
export function quotaFractions(
  used: number,
  guaranteed: number,
  borrowingLimit: number | null,
  trans: TranslationBundle = NULL_TRANS
): { max: number | null; usedFraction: number; guaranteedFraction: number; text: string } {
  const max = borrowingLimit === null ? null : guaranteed + borrowingLimit;
  const scale = Math.max(max ?? Math.max(guaranteed, used) * 1.25, used, guaranteed, 1);
  const text =
    trans.__('%1 used · %2 guaranteed · ', formatNumber(used), formatNumber(guaranteed)) +
    (borrowingLimit === null
      ? trans.__('borrowing unlimited')
      : trans.__('borrow up to %1 (max %2)', formatNumber(borrowingLimit), formatNumber(max as number)));
  return { max, usedFraction: Math.min(1, used / scale), guaranteedFraction: Math.min(1, guaranteed / scale), text };
}

/**
 * Work in the grace of a stop: the server's sentence, as the CLI and the magics say it
 * (`stopping (cancel requested by ann at 04:08 UTC; killed at 04:08:11 UTC if still running)`,
 * new user 8, N13: it read "Running"); '' otherwise.
 */
export function stoppingText(job: object): string {
  const said = (job as { stop_requested?: { text?: string | null } | null }).stop_requested?.text ?? '';
  return said && clocksAsOf(said); // its clocks in the browser's zone (newuser38 n30)
}

/**
 * The names a lease gets when its request names none (jupyter_sched/model/names.py, `LEASE_NAMES`):
 * public, saying only what kind of lease it is (new user 10, N11: `kernel-<8 hex of the kernel id>`).
 */
export const LEASE_NAMES: ReadonlySet<string> = new Set(['notebook lease', 'kernel lease', 'lease']);

/**
 * The name a job or lease is shown by, as the CLI and the magics say it
 * (`jupyter_sched.wording.jobs.work_name`, word for word): its name, except a lease given none,
 * which its owner (whose rows carry `kernel_notebook` / `kernel_id`) reads as
 * `lease for nb/explore.ipynb` or `lease for kernel 1a2b3c4d`; others read its public name.
 */
export function workName(job: { name?: string | null; kind?: string | null; kernel_id?: string | null; kernel_notebook?: string | null }): string {
  const name = job.name ?? '';
  if (job.kind !== 'lease') {
    return name;
  }
  const kernel = typeof job.kernel_id === 'string' && job.kernel_id ? job.kernel_id : null;
  if (!LEASE_NAMES.has(name) && !(kernel && name === `kernel-${kernel.slice(0, 8)}`)) {
    return name;
  }
  const notebook = job.kernel_notebook;
  if (typeof notebook === 'string' && notebook.trim()) {
    return `lease for ${notebook}`;
  }
  return kernel ? `lease for kernel ${kernel.slice(0, 8)}` : name;
}

/**
 * A job's state as users read it, as the CLI and the magics say it (`wording.jobs.state_word`):
 * `stopping` in a stop's grace ({@link stoppingText}), `starting` for an admitted job the cluster
 * does not hold back, else its state — an ended lease is `cancelled`, as REST's documented state
 * says it (new user 17, N23: the panel said "Released", every REST body "cancelled").
 */
export function stateWord(job: { state: string; kind?: string | null; reason?: PendingReason | null }): string {
  if (stoppingText(job)) {
    return 'stopping';
  }
  // on its way to running (new user 11, N4: "admitted" was said only by the panel and %schedule queue)
  return job.state === 'admitted' && !inCluster(job) ? 'starting' : job.state;
}

/** A state as users read it (`stopping`: a job in a stop's grace, see {@link stoppingText}). */
export function stateLabel(state: string, trans: TranslationBundle = NULL_TRANS): string {
  const labels: Record<string, string> = {
    pending: trans.__('Pending'),
    admitted: trans.__('Admitted'),
    starting: trans.__('Starting'),
    running: trans.__('Running'),
    stopping: trans.__('Stopping'),
    succeeded: trans.__('Succeeded'),
    failed: trans.__('Failed'),
    cancelled: trans.__('Cancelled'),
    released: trans.__('Released'),
    preempted: trans.__('Preempted'),
    lost: trans.__('Lost'),
    rejected: trans.__('Rejected')
  };
  return labels[state] ?? state.charAt(0).toUpperCase() + state.slice(1);
}

/** Actors of a release that are no person (the engine's and the hub service's names for themselves). */
const SYSTEM_ACTORS = new Set(['user', 'scheduler', 'jupyterhub']);

/**
 * An ended lease's message as its reader reads who released it, in the words of the CLI's and the magics'
 * lines (`jupyter_sched.wording.jobs.lease_end_words`; new user 23, N17: `released by root` for the reader's
 * own release): `released by you` (the reader's lease), `released by its owner`, `released by an admin (root)`;
 * the cause after a colon kept, and every other message (the server's release, an idle reclaim, a request
 * withdrawn at its timeout) as it is. A job's `cancelled by ann (killed by SIGTERM)` likewise where its owner is
 * known (`cancelled by you (…)`, new user 25, n2).
 */
export function leaseEndWords(
  job: { kind?: string | null; message?: string | null; user?: string | null; mine?: boolean | null },
  reader: string | null = null
): string {
  const message = job.message ?? '';
  const owner = job.user ?? '';
  if (job.kind !== 'lease') {
    // a job's cancel as a lease's release (new user 25, n2: `cancelled by root (killed by SIGTERM)` to root)
    const cancelled = 'cancelled by ';
    if (!owner || !message.startsWith(cancelled)) {
      return message;
    }
    const rest = message.slice(cancelled.length);
    const actor = rest.split(/: | \(/, 1)[0];
    const you = job.mine === true || (reader !== null && reader === owner);
    if (actor !== owner || (!you && job.mine !== false)) {
      return message; // another's cancel names them, as the toasts do; whose it is not known: as it is
    }
    return `${cancelled}${you ? 'you' : 'its owner'}${rest.slice(actor.length)}`;
  }
  const head = 'released by ';
  if (!message.startsWith(head)) {
    return message;
  }
  const rest = message.slice(head.length);
  const colon = rest.indexOf(': ');
  const actor = colon < 0 ? rest : rest.slice(0, colon);
  const why = colon < 0 ? '' : rest.slice(colon);
  let who: string;
  if (owner && actor === owner) {
    who = job.mine === true || (reader !== null && reader === owner) ? 'you' : 'its owner';
  } else if (actor && !actor.includes(' ') && !SYSTEM_ACTORS.has(actor)) {
    who = `an admin (${actor})`;
  } else {
    return message;
  }
  return `${head}${who}${why}`;
}

/** Signal names 1-31 as Linux numbers them (Python's `signal.Signals(n).name`). */
const SIGNAL_NAMES = [
  '', 'SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGILL', 'SIGTRAP', 'SIGABRT', 'SIGBUS', 'SIGFPE', 'SIGKILL', 'SIGUSR1',
  'SIGSEGV', 'SIGUSR2', 'SIGPIPE', 'SIGALRM', 'SIGTERM', 'SIGSTKFLT', 'SIGCHLD', 'SIGCONT', 'SIGSTOP', 'SIGTSTP',
  'SIGTTIN', 'SIGTTOU', 'SIGURG', 'SIGXCPU', 'SIGXFSZ', 'SIGVTALRM', 'SIGPROF', 'SIGWINCH', 'SIGIO', 'SIGPWR', 'SIGSYS'
];

/** What most often sends a signal (jupyter_sched/wording/exit_codes.py SIGNAL_CAUSES, the same words). */
const SIGNAL_CAUSES: Record<string, string> = {
  SIGKILL: 'out of memory (the OOM killer) or kill -9',
  SIGTERM: 'asked to stop (kill, a time limit, a cancel)',
  SIGSEGV: 'a crash: it read or wrote memory it does not own',
  SIGABRT: "it aborted (a failed assertion or a library's abort())",
  SIGBUS: 'a bad memory access (often a truncated memory-mapped file)',
  SIGFPE: 'an arithmetic error (an integer divided by zero)',
  SIGINT: 'interrupted (Ctrl-C)',
  SIGHUP: 'its terminal or session went away',
  SIGPIPE: 'it wrote to a pipe nobody read any more',
  SIGILL: 'an illegal instruction (a binary built for another CPU)'
};

/**
 * An exit code in words, as the CLI and the magics say it (jupyter_sched/wording/exit_codes.py
 * `exit_code_words`; both read labextension/test/exit_codes.json in their tests): a shell's 129-159 is
 * 128 + the signal that killed a process it started — `exit code 137 (128+9: a process it started was killed by
 * SIGKILL — out of memory (the OOM killer) or kill -9)` (newuser42 n1: the panel said "exited with code 137").
 */
export function exitCodeWords(code: number): string {
  if (!Number.isInteger(code) || code < 129 || code > 159) {
    return `exit code ${code}`;
  }
  const name = SIGNAL_NAMES[code - 128];
  const cause = SIGNAL_CAUSES[name];
  return `exit code ${code} (128+${code - 128}: a process it started was killed by ${name}${cause ? ` — ${cause}` : ''})`;
}

/**
 * How a finished job ended: its message (which names the exit code; a lease's says who released it as
 * `reader` reads it, {@link leaseEndWords}), else the exit code — a signal's code in words ({@link exitCodeWords}).
 */
export function outcome(
  job: Pick<Job, 'exit_code' | 'message'> & Partial<Pick<Job, 'kind' | 'user' | 'finished_at'>> & { mine?: boolean | null },
  trans: TranslationBundle = NULL_TRANS,
  reader: string | null = null,
  now: Date = new Date()
): string {
  const code = job.exit_code;
  const signalled = typeof code === 'number' && exitCodeWords(code) !== `exit code ${code}`;
  if (job.message) {
    // the server's clocks in it (`asked to shut down at 11:02:05 UTC`, written as it ended) in the browser's zone (newuser38 n30)
    const said = clocksAsOf(leaseEndWords(job, reader), now, parseTime(job.finished_at));
    const head = `exited with code ${code}`;
    return signalled && said.startsWith(head) && !/\d/.test(said.charAt(head.length))
      ? exitCodeWords(code as number) + said.slice(head.length)
      : said;
  }
  if (signalled) {
    return exitCodeWords(code as number);
  }
  return typeof code === 'number' ? trans.__('exit code %1', code) : '';
}

/** Sparkline SVG path (`M x y L ...`) of `values` (0..100) in a `width`×`height` box. */
export function sparklinePath(values: readonly number[], width: number, height: number): string {
  if (!values.length) {
    return '';
  }
  const n = values.length;
  const step = n > 1 ? width / (n - 1) : 0;
  return values
    .map((v, i) => {
      const clamped = Math.max(0, Math.min(100, isFinite(v) ? v : 0));
      const x = n > 1 ? i * step : width;
      const y = height - (clamped / 100) * height;
      return `${i === 0 ? 'M' : 'L'}${x.toFixed(1)} ${y.toFixed(1)}`;
    })
    .join(' ');
}

/** When work holding GPUs ends by its time limit (started_at + time_limit_s), or null. */
export function limitEnd(job: Job): Date | null {
  const limit = (job as { time_limit_s?: number | null }).time_limit_s;
  if (!job.started_at || typeof limit !== 'number' || !(limit > 0)) {
    return null;
  }
  return new Date(new Date(job.started_at).getTime() + limit * 1000);
}

/**
 * True when an idle deadline (ISO) is at or after `job`'s time-limit end: its limit ends it first, so no
 * surface says the idle warning — the cards' rule ({@link limitEnd}; new user 11, N23) and the toast's
 * (new user 24, N2: the toast said "reported as idle at 12:06 UTC" for a job ending at 12:06).
 */
export function idleAfterEnd(deadline: unknown, job: Job | undefined): boolean {
  const end = job ? limitEnd(job) : null;
  const at = typeof deadline === 'string' ? new Date(deadline) : null;
  return !!(end && at && !isNaN(at.getTime()) && at.getTime() >= end.getTime());
}

/**
 * When an idle warning's action happens, as a clock: `at 09:09 UTC` — a toast stays on screen, and
 * a relative `in 1m57s` was still said a minute later (new user 23, N15); the cards beside it say the
 * same clock. 'soon' without a deadline; `now` only tells a deadline already past (`now`).
 */
export function idleDeadlineText(deadline: unknown, now: Date, trans: TranslationBundle = NULL_TRANS): string {
  const at = typeof deadline === 'string' ? parseTime(deadline) : null;
  if (!at) {
    return trans.__('soon');
  }
  return at.getTime() <= now.getTime() ? trans.__('now') : trans.__('at %1', clockUTC(deadline as string));
}

/**
 * The notification text of an `idle_warning` event (`{job_id, kind, stage: warn|reclaim|clear,
 * action: notify|release|requeue|stop|shutdown|hold, reason, deadline}`), short enough for a
 * toast; null for `clear` (activity resumed). Its title says what happened or will happen for the action the
 * server took, in the words of the audit (`engine.idle`): `notify` frees nothing ("Idle GPUs
 * reported", the GPUs kept — new user 19, N10: it said "Idle GPUs reclaimed: … were reported as
 * idle"); `release` frees the GPUs; `requeue` stops the job and puts it back in the queue; `stop`
 * stops it. A kernel's lease revoked while its kernel still holds the GPU (session 20,
 * `engine.idle_kernels`): `release` with `draining` — freed once the kernel lets go; then
 * `shutdown` — the kernel is shut down, the GPUs freed once it exits; `hold` — the GPUs stay out
 * of use until the kernel lets go. An unknown action reads as `release` (the
 * server's default).
 */
export function idleNotice(data: Record<string, unknown>, name: string, now: Date = new Date(), trans: TranslationBundle = NULL_TRANS): string | null {
  const stage = data.stage ?? 'warn';
  if (stage === 'clear') {
    return null;
  }
  const action = ['notify', 'release', 'requeue', 'stop', 'shutdown', 'hold'].includes(String(data.action)) ? String(data.action) : 'release';
  if (stage === 'reclaim') {
    const reason = typeof data.reason === 'string' && data.reason ? data.reason : '';
    const done: Record<string, string> = {
      notify: reason
        ? trans.__('Idle GPUs reported: %1 is idle (%2); nothing was freed, it keeps its GPUs.', name, reason.length > 60 ? `${reason.slice(0, 59)}…` : reason)
        : trans.__('Idle GPUs reported: %1 is idle; nothing was freed, it keeps its GPUs.', name),
      release: data.draining
        ? trans.__("Idle GPUs reclaimed: %1's GPUs were revoked; they are freed once its kernel lets go of them.", name)
        : trans.__("Idle GPUs reclaimed: %1's GPUs were released.", name),
      requeue: trans.__('Idle GPUs reclaimed: %1 was stopped and put back in the queue; its GPUs were freed.', name),
      stop: trans.__('Idle GPUs reclaimed: %1 was stopped; its GPUs were freed.', name),
      shutdown: trans.__("Idle GPUs reclaimed: %1's kernel, still holding them, was shut down; they are freed once it exits.", name),
      hold: trans.__("Idle GPUs reclaimed: %1's kernel still holds them; they stay out of use until it restarts or exits.", name)
    };
    return done[action];
  }
  const when = idleDeadlineText(data.deadline, now, trans);
  // only a lease has Keep alive; a batch job or service is kept by using its GPUs
  const unless = typeof data.kind === 'string' && data.kind !== 'lease' ? trans.__('unless it is used') : trans.__('unless it is used or kept alive');
  const ahead: Record<string, string> = {
    notify: trans.__('Idle GPUs: %1 is idle; it will be reported as idle %2 %3 (its GPUs are not taken).', name, when, unless),
    release: trans.__('Idle GPUs: %1 is idle; its GPUs will be released %2 %3.', name, when, unless),
    requeue: trans.__('Idle GPUs: %1 is idle; it will be stopped and put back in the queue %2 %3.', name, when, unless),
    stop: trans.__('Idle GPUs: %1 is idle; it will be stopped %2 %3.', name, when, unless)
  };
  return ahead[action];
}

/**
 * The server's message without the field's JSON name where the form says its label before it:
 * `time_limit: cannot parse…` → `cannot parse…`, and `gpus must be a whole number…` → `must be a
 * whole number…` (new user 6, F13: "GPUs: gpus must be…" said the field twice).
 */
export function formMessage(message: string, field: string, label: string | undefined): string {
  if (!field) {
    return message;
  }
  if (message.startsWith(`${field}: `)) {
    return message.slice(field.length + 2);
  }
  return label && message.startsWith(`${field} `) ? message.slice(field.length + 1) : message;
}

/** `15:52 UTC` (the clock every time in the panel is said in: the browser's zone, named — `16:52 UTC+1`), or the text as given when it is no time. */
export function clockUTC(iso: string): string {
  const at = new Date(iso);
  if (isNaN(at.getTime())) {
    return iso;
  }
  const wall = wallClock(at);
  return `${String(wall.hour).padStart(2, '0')}:${String(wall.minute).padStart(2, '0')} ${wall.zone}`;
}

/** The form's label of each CLI option a server sentence may name (`jupyter_sched/wording/flags.py` FLAGS). */
const FLAG_LABELS: Record<string, string> = {
  '--model': 'GPU model',
  '--team': 'Team',
  '--gpus': 'GPUs',
  '--priority': 'Priority',
  '--time-limit': 'Time limit',
  '--name': 'Name',
  // the server's own note on the field the form sends (newuser31 N4: `time_limit 90 is 90 seconds …`)
  time_limit: 'Time limit'
};

/**
 * A server sentence in the Submit form's words (verify21 V3: Check fit said "or submit with --model
 * <one you have a line for: A100-80GB>; gpu_models is another name for model" — a form has a "GPU
 * model" field, no options and no second spelling):
 * - `submit with --model <one you have a line for: A, B>` → `pick GPU model A or B`;
 * - `submit with team (--team cv)` → `choose Team cv` (new user 23, N9);
 * - any other `--model` / `--team` / … → the field's label;
 * - the REST note on a field's other spelling (`; gpu_models is another name for model`,
 *   `; time_limit_s is time_limit in seconds`, …) is dropped, and `gpu_models` (the form sends that
 *   spelling, so the server's words name it) reads `model` again;
 * - a notebook parameter as the CLI quotes it (`-p 'days="…"'`) is `days="…" in Parameters` (newuser39 n3: the
 *   server's parameters note is said in Check fit, Submit and Scheduled notebooks too).
 */
export function formWords(text: string, trans: TranslationBundle = NULL_TRANS): string {
  const label = (flag: string) => trans.__(FLAG_LABELS[flag]);
  const flags = Object.keys(FLAG_LABELS).join('|');
  return text
    .replace(/;\s*[a-z_]+ (?:is another name for [a-z_]+|counts thousandths|is [a-z_]+ in (?:MiB|seconds))[^;]*?(?=;|\.\s|\.?$)/g, '')
    .replace(new RegExp(`submit with (${flags}) <[^<>:]*: ([^<>]*)>`, 'g'), (_, flag: string, list: string) =>
      `pick ${label(flag)} ${list.split(/,\s*/).join(' or ')}`)
    // `submit with team (--team cv)` — the CLI's "team (--team cv)" — is `choose Team cv` (new user 23, N9:
    // the form said "submit with team (Team cv)")
    .replace(new RegExp(`\\b[a-z_]+ \\((${flags}) ([^()\\s]+)\\)`, 'g'), (_, flag: string, value: string) => `${flag} ${value}`)
    .replace(new RegExp(`\\bsubmit with (?=(?:${flags}) )`, 'g'), 'choose ')
    // a quoted option is words as typed (`'--gpus 2' in the arguments goes to train.py`: newuser32 N2), not the field
    .replace(new RegExp(`(?<![\\w'-])(${flags})(?![\\w-])`, 'g'), (_, flag: string) => label(flag))
    .replace(/\bgpu_models\b/g, 'model')
    // a notebook parameter's CLI spelling (`quote it as a JSON string: -p 'days="…"'`) is the form's Parameters field
    .replace(/(?<![\w-])-p '([^'\s]+)'/g, (_, word: string) => `${word} in ${trans.__('Parameters')}`);
}
