/**
 * Admin (shown only when `GET me` says `is_admin`): the quota editor (PUT quotas), the idle
 * policy editor (PUT idle-policy; the server validates and audits old → new), the usage report
 * (a sortable table and a bar chart), how good the ETAs were (GET eta-accuracy) and a search
 * over the audit log. Each part loads when the section is shown, again on its Reload and on the
 * panel's Refresh (newuser22 N14: the Usage report was read once, when the panel opened, and
 * said 0.15 GPU-hours 23 minutes later while `status` said 0.92); the editors keep unsaved edits
 * (a refresh then leaves them as they are and says so), and keep their inputs across model updates.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import type { Message } from '@lumino/messaging';
import * as React from 'react';

import { describeError, SchedApiError } from '../client';
import { clockText, formatDuration, formatNumber, lastDaysText, recordTime, serverText, shownText, USAGE_DAYS, workName } from '../format';
import type { ISchedModel, ISchedSection } from '../tokens';
import type { Schemas } from '../client';
import type { AuditRecord, IdlePolicies, IdlePolicy, IdlePolicyPatch, QuotaLine, UsageReportRow, UsageRow } from '../types';
import { ModelView } from './base';

/** Dimensions a usage report can be grouped by. */
export type UsageDimension = 'user' | 'team' | 'gpu_model';

/**
 * One aggregated usage line: GPU-hours allocated and used, cost. `unpricedGpuHours` > 0: some of the usage had
 * no price in force (a GPU model `gpu_prices` does not price; hubadmin26 B21), and `cost` is what the rest
 * cost — a lower bound, said "≥ X; N GPU-hours unpriced" ({@link costText}).
 */
export interface IUsageTotal {
  key: string;
  gpuHours: number;
  utilizedGpuHours: number | null;
  cost: number | null;
  unpricedGpuHours: number;
}

function hoursOf(row: Record<string, unknown>, ...keys: string[]): number | null {
  for (const key of keys) {
    const value = row[key];
    if (typeof value === 'number' && isFinite(value)) {
      return key.endsWith('seconds') ? value / 3600 : value;
    }
  }
  return null;
}

/**
 * Sum usage rows by `by`. GPU-hours from `gpu_hours` or `gpu_seconds` ÷ 3600; utilized from
 * `utilized_gpu_hours` or `utilized_gpu_seconds` ÷ 3600. Largest first.
 */
export function aggregateUsage(rows: readonly (UsageRow | UsageReportRow)[], by: UsageDimension): IUsageTotal[] {
  const totals = new Map<string, IUsageTotal>();
  for (const row of rows as readonly Record<string, unknown>[]) {
    const raw = by === 'gpu_model' ? (row.gpu_model ?? row.model) : row[by];
    const key = typeof raw === 'string' && raw ? raw : '(none)';
    const hours = hoursOf(row, 'gpu_hours', 'allocated_gpu_hours', 'gpu_seconds', 'allocated_gpu_seconds') ?? 0;
    const used = hoursOf(row, 'utilized_gpu_hours', 'utilized_gpu_seconds');
    // a row partly unpriced has cost null, the priced part as priced_cost and the rest as unpriced_gpu_hours
    const unpriced = typeof row.unpriced_gpu_hours === 'number' && row.unpriced_gpu_hours > 0 ? row.unpriced_gpu_hours : 0;
    const cost = typeof row.cost === 'number' ? row.cost : unpriced && typeof row.priced_cost === 'number' ? row.priced_cost : unpriced ? 0 : null;
    const total = totals.get(key) ?? { key, gpuHours: 0, utilizedGpuHours: null, cost: null, unpricedGpuHours: 0 };
    total.gpuHours += hours;
    if (used !== null) {
      total.utilizedGpuHours = (total.utilizedGpuHours ?? 0) + used;
    }
    if (cost !== null) {
      total.cost = (total.cost ?? 0) + cost;
    }
    total.unpricedGpuHours += unpriced;
    totals.set(key, total);
  }
  return [...totals.values()].sort((a, b) => b.gpuHours - a.gpuHours);
}

export { USAGE_DAYS };

/**
 * What the Usage report covers and when it was read: `GPU-hours allocated in the last 7 days (since
 * Nov 28 05:34 UTC), as of 05:34 UTC` (newuser22 N14: no period, no time, and a figure 23 minutes old;
 * session 23: the period's start, as `status` and `jupyter-sched usage` say it — {@link lastDaysText}).
 * `asOf` is when the answer was asked for; `now` decides whether a date is said; `since` is the
 * period's start (the rows' `since`, else the one asked for).
 */
export function usagePeriodLine(asOf: Date, now: Date, trans: TranslationBundle, since: Date | null = null): string {
  return trans.__('GPU-hours allocated %1, as of %2', lastDaysText(since, now, trans), clockText(asOf, now));
}

/** The currency of the rows' costs (`cost_unit`, hubadmin22 H10), several joined; null when no row has one. */
export function costUnitOf(rows: readonly Record<string, unknown>[]): string | null {
  const priced = (r: Record<string, unknown>) => typeof r.cost === 'number' || typeof r.priced_cost === 'number';
  const units = [...new Set(rows.filter(r => priced(r) && typeof r.cost_unit === 'string' && r.cost_unit).map(r => r.cost_unit as string))];
  return units.length ? units.sort().join(', ') : null;
}

/**
 * A total's cost cell: `12.5`; `≥ 12.5; 3.25 GPU-hours unpriced` when some of its usage had no price in force
 * (the sum is partial: hubadmin26 B21); `–` when none is known.
 */
export function costText(total: IUsageTotal, trans: TranslationBundle): string {
  if (total.cost === null) {
    return '–';
  }
  if (total.unpricedGpuHours > 0) {
    return trans._n('≥ %2; %3 GPU-hour unpriced', '≥ %2; %3 GPU-hours unpriced', total.unpricedGpuHours === 1 ? 1 : 2, formatNumber(total.cost, 2), hours(total.unpricedGpuHours));
  }
  return formatNumber(total.cost, 2);
}

/** A card's props: `round` grows on each panel Refresh and each showing of the section, and the card re-reads its answers then. */
interface ICardProps {
  ctx: ISchedSection.IContext;
  trans: TranslationBundle;
  round: number;
}

/** GPU-hours with enough digits to see small numbers: 12.35, 0.0009. */
export function hours(value: number): string {
  return formatNumber(value, Math.abs(value) > 0 && Math.abs(value) < 0.01 ? 4 : 2);
}

/**
 * Whether an audit record matches a free-text search (any field, case-insensitive), or its job's name
 * (`names`: job id → name, of the work the panel lists): rows carry the job's id only, and "lowB" found
 * none of lowB's 15 records (new user 24, N6).
 */
export function auditMatches(record: AuditRecord, text: string, names: ReadonlyMap<string, string> = new Map()): boolean {
  const needle = text.trim().toLowerCase();
  const name = record.job_id ? names.get(record.job_id) ?? '' : '';
  return !needle || JSON.stringify(record).toLowerCase().includes(needle) || name.toLowerCase().includes(needle);
}

/** Job id → name of every job, lease and queue row the panel holds (the audit card names rows and searches names with it). */
export function jobNames(model: ISchedModel): Map<string, string> {
  const names = new Map<string, string>();
  for (const job of [...model.queue, ...model.jobs, ...model.leases]) {
    if (job.id && job.name && job.name !== job.id) {
      // a lease by the name its card shows, `lease for nb2.ipynb`, not its stored `notebook lease` (newuser33 n4)
      names.set(job.id, workName(job));
    }
  }
  return names;
}

/** A quota line as the editor holds it (strings while typing). */
interface IQuotaDraft {
  key: number;
  team: string;
  user: string;
  gpu_model: string;
  guaranteed: string;
  borrowing_limit: string;
}

/** The editor's lines as the PUT body's `quotas` (numbers parsed; empty borrow = unlimited). */
export function quotaLinesFrom(drafts: readonly Omit<IQuotaDraft, 'key'>[]): QuotaLine[] {
  const num = (value: string): number => (value.trim() !== '' && isFinite(Number(value)) ? Number(value) : Number.NaN);
  return drafts.map(d => ({
    team: d.team.trim(),
    user: d.user.trim() || null,
    gpu_model: d.gpu_model.trim() || '*',
    guaranteed: num(d.guaranteed),
    borrowing_limit: d.borrowing_limit.trim() === '' ? null : num(d.borrowing_limit)
  }));
}

/** The form's column labels of the fields a quota line has (`quotas[0].borrowing_limit` → Borrow). */
const QUOTA_LABELS: Record<string, string> = {
  team: 'Team',
  user: 'User',
  gpu_model: 'Model',
  guaranteed: 'Guaranteed',
  borrowing_limit: 'Borrow'
};

/**
 * A refused Save in the form's words: the row (`Row 1 (team x)`) and the column's label instead of the
 * JSON path (`[quotas[0].borrowing_limit]`) or the ledger's `quota[x, H100]`, and the form's fix
 * instead of REST's ("leave it empty for unlimited", not "leave borrowing_limit out") — new user 18,
 * N18, as the Submit form says `Time limit: …`.
 */
export function quotaErrorText(err: unknown, drafts: readonly Omit<IQuotaDraft, 'key'>[], trans: TranslationBundle): string {
  if (!(err instanceof SchedApiError)) {
    return describeError(err);
  }
  const path = err.field ?? '';
  let message = err.message;
  let row: number | null = null;
  let field = path;
  let named = false; // the message began with the field's name, now taken off
  const indexed = /^quotas\[(\d+)\](?:\.(\w+))?$/.exec(path);
  if (indexed) {
    row = Number(indexed[1]);
    field = indexed[2] ?? '';
  }
  // the ledger names a line by its place: `quota[x/ann, H100]: no GPUs…`, `quota[x, *].guaranteed must…`
  const place = /^quota\[([^,\]]*), ([^\]]*)\](?:\.(\w+))?:? /.exec(message);
  if (place) {
    message = message.slice(place[0].length);
    const [team, user] = place[1].split('/');
    if (row === null) {
      const found = drafts.findIndex(d => d.team.trim() === team && d.user.trim() === (user ?? '') && (d.gpu_model.trim() || '*') === place[2]);
      row = found >= 0 ? found : null;
    }
    if (place[3]) {
      field = place[3];
      named = true;
    }
  } else if (path && message.startsWith(path)) {
    message = message.slice(path.length).replace(/^:? /, '');
    named = true;
  }
  if (field === 'borrowing_limit') {
    message = message.replace(/ or null\b/, ''); // null is the API's unlimited; the form's is an empty Borrow (the hint)
  }
  const label = QUOTA_LABELS[field];
  let text = label ? (named ? `${trans.__(label)} ${message}` : `${trans.__(label)}: ${message}`) : message;
  if (row !== null && row < drafts.length) {
    const d = drafts[row];
    const who = [d.team.trim() ? trans.__('team %1', d.team.trim()) : '', d.user.trim() ? trans.__('user %1', d.user.trim()) : ''].filter(Boolean).join(', ');
    text = (who ? trans.__('Row %1 (%2): ', row + 1, who) : trans.__('Row %1: ', row + 1)) + text;
  }
  // a form row has no field to leave out: an empty Borrow is unlimited, an empty Guaranteed is no number
  let hint = (err.hint ?? '')
    .replace(/,? or leave (\w+) out(?: \(default: [^)]*\))?/, (_all, name: string) => (name === 'borrowing_limit' ? trans.__(', or leave it empty for unlimited') : ''))
    .replace(/\buse null for unlimited\b/, trans.__('leave it empty for unlimited'));
  for (const [json, shown] of Object.entries(QUOTA_LABELS)) {
    if (json.includes('_')) {
      hint = hint.replace(new RegExp(`\\b${json}\\b`, 'g'), trans.__(shown));
    }
  }
  return hint ? `${text} — ${hint}` : text;
}

type Kind = 'ok' | 'error' | 'info' | 'warn';

/** What a card says under its buttons: one sentence, and (a save's warnings) a list under it. */
interface IMessage {
  text: string;
  kind: Kind;
  items?: readonly string[];
}

function Feedback(props: { message: IMessage | null; children?: React.ReactNode }): React.ReactElement {
  const items = props.message?.items ?? [];
  return (
    <div className={`jp-sched-feedback${props.message ? ` jp-sched-feedback-${props.message.kind}` : ''}`} role="status">
      {serverText(props.message?.text ?? '') /* it names teams, users, jobs (s30), the server's clocks (newuser38 n30) */}
      {items.length ? (
        <ul className="jp-sched-feedback-items">
          {items.map((item, i) => (
            <li key={i}>{serverText(item)}</li>
          ))}
        </ul>
      ) : null}
      {props.children}
    </div>
  );
}

/**
 * A quota warning in the editor's words: the API's `quotas[1]` is the form's `Row 2`, and a fix
 * "with PUT quotas" is made here (new user 23, N12).
 */
export function quotaWarningText(warning: string, trans: TranslationBundle): string {
  return warning
    .replace(/\bquotas\[(\d+)\]/g, (_all, i: string) => trans.__('Row %1', Number(i) + 1))
    .replace(/ with PUT quotas\b/g, trans.__(' here'));
}

let draftKey = 0;

function QuotaEditor({ ctx, trans, round }: ICardProps): React.ReactElement {
  const [drafts, setDraftsNow] = React.useState<IQuotaDraft[]>([]);
  const [message, setMessage] = React.useState<IMessage | null>(null);
  /** The dry run's new warnings, waiting for "Save anyway" (null: nothing asked). */
  const [asking, setAsking] = React.useState<readonly string[] | null>(null);
  /** The warnings of the set in force (GET quotas, or the last save): only new ones are asked about. */
  const standing = React.useRef<readonly string[]>([]);
  const setDrafts: typeof setDraftsNow = next => {
    setAsking(null); // the question was about the lines as they were
    setDraftsNow(next);
  };
  const lines = (ds: readonly IQuotaDraft[]): string => JSON.stringify(ds.map(({ key: _key, ...line }) => line));
  const read = React.useRef(lines([]));
  const current = React.useRef(drafts);
  current.current = drafts;
  const toDrafts = (lines: readonly QuotaLine[]): IQuotaDraft[] =>
    lines.map(q => ({
      key: ++draftKey,
      team: q.team,
      user: q.user ?? '',
      gpu_model: q.gpu_model ?? '*',
      guaranteed: String(q.guaranteed ?? 0),
      borrowing_limit: q.borrowing_limit === null || q.borrowing_limit === undefined ? '' : String(q.borrowing_limit)
    }));
  const shown = (ds: IQuotaDraft[]): void => {
    read.current = lines(ds);
    setDrafts(ds);
  };
  const load = React.useCallback(async () => {
    try {
      const got = await ctx.model.client.quotas();
      standing.current = got.warnings ?? [];
      shown(toDrafts(got.quotas));
    } catch (err) {
      setMessage({ text: describeError(err), kind: 'error' });
    }
  }, [ctx]);
  React.useEffect(() => {
    if (lines(current.current) === read.current) {
      void load();
    } else {
      setMessage({ text: trans.__('Not re-read: these lines have edits not saved (Save quotas, or Reload to drop them).'), kind: 'info' });
    }
  }, [load, round]);

  /**
   * Save: a dry run first (`dry_run: true`, nothing stored); when it warns of something the set in
   * force does not (a team left at 0 GPUs, a line for a user not in its team), the warnings are
   * listed with "Save anyway" — else the lines are saved, and the saved set's warnings said under
   * the button (new user 23, N12: "Saved 2 quota lines." and nothing of the team left at 0 GPUs).
   */
  const save = async (anyway = false): Promise<void> => {
    // only the lines: budgets, teams and user_teams the server keeps as they are
    const quotas = quotaLinesFrom(drafts);
    setAsking(null);
    try {
      if (!anyway) {
        setMessage({ text: trans.__('Checking…'), kind: 'info' });
        const dry = await ctx.model.client.setQuotas({ quotas, dry_run: true });
        const fresh = (dry.warnings ?? []).filter(w => !standing.current.includes(w));
        if (fresh.length) {
          setAsking(fresh);
          setMessage({
            text: trans.__('Not saved yet. With these lines the server warns:'),
            kind: 'warn',
            items: fresh.map(w => quotaWarningText(w, trans))
          });
          return;
        }
      }
      setMessage({ text: trans.__('Saving…'), kind: 'info' });
      const saved = await ctx.model.client.setQuotas({ quotas });
      const warnings = saved.warnings ?? [];
      standing.current = warnings;
      shown(toDrafts(saved.quotas));
      const said = trans._n('Saved %1 quota line.', 'Saved %1 quota lines.', saved.quotas.length);
      setMessage(
        warnings.length
          ? { text: `${said} ${trans.__('The server warns:')}`, kind: 'warn', items: warnings.map(w => quotaWarningText(w, trans)) }
          : { text: said, kind: 'ok' }
      );
      ctx.model.refresh('quotas', { force: true });
    } catch (err) {
      setMessage({ text: trans.__('Not saved: %1', quotaErrorText(err, drafts, trans)), kind: 'error' });
    }
  };
  const edit = (key: number, field: keyof Omit<IQuotaDraft, 'key'>, value: string) =>
    setDrafts(ds => ds.map(d => (d.key === key ? { ...d, [field]: value } : d)));
  const input = (d: IQuotaDraft, field: keyof Omit<IQuotaDraft, 'key'>, label: string, type = 'text', placeholder?: string) => {
    const id = `jp-sched-q-${field}-${d.key}`;
    return (
      <div className={`jp-sched-q-field jp-sched-q-field-${field}`}>
        <label className="jp-sched-field-label" htmlFor={id}>
          {label}
        </label>
        <input
          id={id}
          type={type}
          name={field}
          className={`jp-mod-styled jp-sched-q-${field}`}
          value={d[field]}
          placeholder={placeholder}
          min={type === 'number' ? 0 : undefined}
          step={type === 'number' ? 'any' : undefined}
          onChange={e => edit(d.key, field, e.target.value)}
        />
      </div>
    );
  };
  return (
    <div>
      <h4 className="jp-sched-subhead">{trans.__('Quotas (GPUs)')}</h4>
      <p className="jp-sched-muted">{trans.__('Per team (and user) and GPU model ("*" = any): guaranteed GPUs, and how many more it may borrow (empty = unlimited).')}</p>
      <ul className="jp-sched-quota-editor" aria-label={trans.__('Quota lines')}>
        {drafts.map((d, i) => (
          <li className="jp-sched-quota-row" key={d.key}>
            {input(d, 'team', trans.__('Team'))}
            {input(d, 'user', trans.__('User'), 'text', trans.__('whole team'))}
            {input(d, 'gpu_model', trans.__('Model'))}
            {input(d, 'guaranteed', trans.__('Guaranteed'), 'number')}
            {input(d, 'borrowing_limit', trans.__('Borrow'), 'number', trans.__('unlimited'))}
            <button
              type="button"
              className="jp-sched-button jp-sched-danger jp-sched-q-remove"
              aria-label={shownText(trans.__('Remove quota line %1 (%2)', i + 1, d.team || trans.__('no team')))}
              onClick={() => setDrafts(ds => ds.filter(x => x.key !== d.key))}
            >
              ×
            </button>
          </li>
        ))}
      </ul>
      <div className="jp-sched-actions">
        <button
          type="button"
          className="jp-sched-button jp-sched-quota-add"
          onClick={() => setDrafts(ds => [...ds, { key: ++draftKey, team: '', user: '', gpu_model: '*', guaranteed: '0', borrowing_limit: '' }])}
        >
          {trans.__('Add line')}
        </button>
        <button type="button" className="jp-sched-button" onClick={() => void load()}>
          {trans.__('Reload')}
        </button>
        <button type="button" className="jp-sched-button jp-mod-accept jp-sched-quota-save" onClick={() => void save()}>
          {trans.__('Save quotas')}
        </button>
      </div>
      <Feedback message={message}>
        {asking ? (
          <div className="jp-sched-actions">
            <button type="button" className="jp-sched-button jp-sched-danger jp-sched-quota-save-anyway" onClick={() => void save(true)}>
              {trans.__('Save anyway')}
            </button>
            <button
              type="button"
              className="jp-sched-button jp-sched-quota-keep-editing"
              onClick={() => (setAsking(null), setMessage({ text: trans.__('Not saved: change the lines, then Save quotas.'), kind: 'info' }))}
            >
              {trans.__('Keep editing')}
            </button>
          </div>
        ) : null}
      </Feedback>
    </div>
  );
}

type ReclaimMode = Schemas['ReclaimMode'];
const RECLAIM_MODES: ReclaimMode[] = ['release', 'requeue', 'stop', 'notify'];
const NUMBER_FIELDS = ['threshold_pct', 'window_s', 'warning_s', 'grace_s', 'keepalive_max_s', 'max_gap_s'] as const;
const MODE_FIELDS = ['lease_mode', 'job_mode', 'busy_kernel_mode', 'service_mode'] as const;

/** The fields of `draft` that differ from `current`, as a PUT idle-policy patch (numbers parsed). */
/** A configured number of seconds as it was likely set: `30 min`, `2 h`, `90 s` (else as a duration). */
function setting(seconds: number, trans: TranslationBundle): string {
  if (seconds < 60 || seconds % 60 !== 0) {
    return seconds < 60 ? trans.__('%1 s', formatNumber(seconds)) : formatDuration(seconds, trans);
  }
  return seconds % 3600 === 0 ? trans.__('%1 h', seconds / 3600) : trans.__('%1 min', seconds / 60);
}

/**
 * The default idle policy in one sentence, with only the numbers the admin set: a grace is said
 * only when there is one (new user 4: "then a warning and, 0 s later, reclaim" read as if work were
 * reclaimed with no notice, and a 600 s grace nobody set was added to every deadline).
 */
export function idlePolicySentence(policy: IdlePolicy, trans: TranslationBundle): string {
  const threshold = formatNumber(policy.threshold_pct);
  const window = setting(policy.window_s, trans);
  const warning = policy.warning_s ?? 0;
  const grace = policy.grace_s ?? 0;
  if (grace > 0 && warning > 0) {
    return trans.__('Idle below %1 % for %2 (a warning %3 before that), then a %4 grace, then reclaim.', threshold, window, setting(warning, trans), setting(grace, trans));
  }
  if (grace > 0) {
    return trans.__('Idle below %1 % for %2: a warning, then a %3 grace, then reclaim.', threshold, window, setting(grace, trans));
  }
  if (warning > 0) {
    return trans.__('Idle below %1 % for %2: reclaim, with a warning %3 before.', threshold, window, setting(warning, trans));
  }
  return trans.__('Idle below %1 % for %2: reclaim, with no warning before.', threshold, window);
}

export function idlePatch(current: IdlePolicy, draft: Record<string, string | boolean>): IdlePolicyPatch {
  const patch: Record<string, unknown> = {};
  if (typeof draft.enabled === 'boolean' && draft.enabled !== current.enabled) {
    patch.enabled = draft.enabled;
  }
  for (const key of NUMBER_FIELDS) {
    const raw = draft[key];
    if (typeof raw === 'string' && raw.trim() !== '' && Number(raw) !== current[key]) {
      // a non-number goes to the server as typed: its 400 names the field and the fix
      patch[key] = isFinite(Number(raw)) ? Number(raw) : raw;
    }
  }
  for (const key of MODE_FIELDS) {
    const raw = draft[key];
    if (typeof raw === 'string' && raw && raw !== current[key]) {
      patch[key] = raw;
    }
  }
  return patch as IdlePolicyPatch;
}

/**
 * A refused idle-policy save in the form's words: the field by its label, once — not the API's path
 * twice (`idle.default.threshold_pct must be … [idle.default.threshold_pct]`), and `window_s` in the
 * message or hint as the idle window (new user 23, N13). `labels`: the form's label of each field.
 */
export function idleErrorText(err: unknown, labels: Readonly<Record<string, string>>, trans: TranslationBundle): string {
  if (!(err instanceof SchedApiError)) {
    return describeError(err);
  }
  const path = err.field ?? '';
  const key = path.split('.').pop() ?? '';
  const label = labels[key];
  const named = (text: string): string =>
    text.replace(/\bwindow_s\b/g, trans.__('the idle window')).replace(/\b(\w+_(?:s|pct|mode))\b/g, (all, name: string) => labels[name] ?? all);
  let message = err.message;
  const prefix = [path, key].find(p => p && (message.startsWith(`${p} `) || message.startsWith(`${p}:`)));
  if (label && prefix) {
    message = `${label} ${named(message.slice(prefix.length).replace(/^:? /, ''))}`;
  } else if (label) {
    message = `${label}: ${named(message)}`;
  } else {
    message = path ? `${named(message)} [${path}]` : named(message);
  }
  return err.hint ? `${message} — ${named(err.hint)}` : message;
}

function IdlePolicyEditor({ ctx, trans, round }: ICardProps): React.ReactElement {
  const [policies, setPolicies] = React.useState<IdlePolicies | null>(null);
  const [draft, setDraft] = React.useState<Record<string, string | boolean>>({});
  const [message, setMessage] = React.useState<{ text: string; kind: Kind } | null>(null);
  const edited = React.useRef(false);
  edited.current = !!policies && Object.keys(idlePatch(policies.default, draft)).length > 0;
  const reset = (p: IdlePolicies) => {
    setPolicies(p);
    const d: Record<string, string | boolean> = { enabled: p.default.enabled };
    for (const key of NUMBER_FIELDS) {
      d[key] = String(p.default[key] ?? '');
    }
    for (const key of MODE_FIELDS) {
      d[key] = String(p.default[key] ?? '');
    }
    setDraft(d);
  };
  const load = React.useCallback(async () => {
    try {
      reset(await ctx.model.client.idlePolicy());
      setMessage(null); // the values are the server's again: a refusal of an earlier Save no longer applies (n25)
    } catch (err) {
      setMessage({ text: describeError(err), kind: 'error' });
    }
  }, [ctx]);
  React.useEffect(() => {
    if (!edited.current) {
      void load();
    } else {
      setMessage({ text: trans.__('Not re-read: this form has edits not saved (Save idle policy, or Reload to drop them).'), kind: 'info' });
    }
  }, [load, round]);

  if (!policies) {
    return (
      <div>
        <h4 className="jp-sched-subhead">{trans.__('Idle policy')}</h4>
        <Feedback message={message} />
      </div>
    );
  }
  const save = async (): Promise<void> => {
    const patch = idlePatch(policies.default, draft);
    if (!Object.keys(patch).length) {
      setMessage({ text: trans.__('Nothing changed.'), kind: 'info' });
      return;
    }
    setMessage({ text: trans.__('Saving…'), kind: 'info' });
    try {
      reset(await ctx.model.client.setIdlePolicy({ default: patch }));
      setMessage({ text: trans._n('Saved %1 change; the server applies it at once.', 'Saved %1 changes; the server applies them at once.', Object.keys(patch).length), kind: 'ok' });
    } catch (err) {
      setMessage({ text: trans.__('Not saved: %1', idleErrorText(err, labels, trans)), kind: 'error' });
    }
  };
  const labels: Record<string, string> = {
    threshold_pct: trans.__('Idle below (%)'),
    window_s: trans.__('Idle window (s)'),
    warning_s: trans.__('Warning before reclaim (s)'),
    grace_s: trans.__('Grace after the window (s)'),
    keepalive_max_s: trans.__('Longest keep-alive (s, 0 = off)'),
    max_gap_s: trans.__('Longest sample gap (s)'),
    lease_mode: trans.__('Idle leases'),
    job_mode: trans.__('Idle jobs'),
    busy_kernel_mode: trans.__('Busy kernels on idle GPUs'),
    service_mode: trans.__('Idle services')
  };
  const overrides = Object.keys(policies.by_priority ?? {}).length + Object.keys(policies.by_kind ?? {}).length;
  const id = (key: string) => `jp-sched-idle-${key}`;
  return (
    <div className="jp-sched-idle">
      <h4 className="jp-sched-subhead">{trans.__('Idle policy')}</h4>
      {!policies.active ? <p className="jp-sched-muted">{trans.__('Telemetry is off: no idle detection runs until it is on.')}</p> : null}
      <p className="jp-sched-muted">
        {idlePolicySentence(policies.default, trans)}
      </p>
      <form
        className="jp-sched-idle-form"
        aria-label={trans.__('Default idle policy')}
        // the server checks every field and the panel says its refusal by the field's label: the browser's own
        // check (min=0) stopped a Save with a bubble and left an earlier refusal shown (newuser38 n25)
        noValidate
        onSubmit={event => {
          event.preventDefault();
          void save();
        }}
      >
        <div className="jp-sched-field jp-sched-field-inline">
          <input id={id('enabled')} type="checkbox" checked={draft.enabled === true} onChange={e => setDraft(d => ({ ...d, enabled: e.target.checked }))} />
          <label htmlFor={id('enabled')}>{trans.__('Reclaim idle GPUs')}</label>
        </div>
        <div className="jp-sched-idle-grid">
          {NUMBER_FIELDS.filter(k => k in policies.default).map(key => (
            <div className="jp-sched-field" key={key}>
              <label className="jp-sched-field-label" htmlFor={id(key)}>
                {labels[key]}
              </label>
              <input id={id(key)} name={key} type="number" min={0} step="any" className="jp-mod-styled" value={String(draft[key] ?? '')} onChange={e => setDraft(d => ({ ...d, [key]: e.target.value }))} />
            </div>
          ))}
          {MODE_FIELDS.filter(k => k in policies.default).map(key => (
            <div className="jp-sched-field" key={key}>
              <label className="jp-sched-field-label" htmlFor={id(key)}>
                {labels[key]}
              </label>
              <select id={id(key)} name={key} className="jp-mod-styled" value={String(draft[key] ?? '')} onChange={e => setDraft(d => ({ ...d, [key]: e.target.value }))}>
                {RECLAIM_MODES.map(m => (
                  <option key={m} value={m}>
                    {m}
                  </option>
                ))}
              </select>
            </div>
          ))}
        </div>
        {overrides ? <p className="jp-sched-muted">{trans._n('%1 override by priority class or job kind keeps its own values.', '%1 overrides by priority class or job kind keep their own values.', overrides)}</p> : null}
        <div className="jp-sched-actions">
          <button type="button" className="jp-sched-button" onClick={() => void load()}>
            {trans.__('Reload')}
          </button>
          <button type="submit" className="jp-sched-button jp-mod-accept jp-sched-idle-save">
            {trans.__('Save idle policy')}
          </button>
        </div>
        <Feedback message={message} />
      </form>
    </div>
  );
}

type SortKey = 'key' | 'gpuHours' | 'utilizedGpuHours' | 'cost';

function UsageReport({ ctx, trans, round, now }: ICardProps & { now: () => Date }): React.ReactElement {
  const [by, setBy] = React.useState<UsageDimension>('user');
  const [rows, setRows] = React.useState<UsageReportRow[] | null>(null);
  const [asOf, setAsOf] = React.useState<Date | null>(null);
  const [asked, setAsked] = React.useState<Date | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  const [sort, setSort] = React.useState<{ key: SortKey; direction: 1 | -1 }>({ key: 'gpuHours', direction: -1 });
  const [reloads, setReloads] = React.useState(0);
  React.useEffect(() => {
    let live = true;
    const at = now();
    const since = new Date(at.getTime() - USAGE_DAYS * 86400 * 1000); // the one usage period (status's)
    // the report, not GET usage: its rows carry cost and cost_unit (H10) and their period
    ctx.model.client
      .usageReport({ all: true, by, since: since.toISOString() })
      .then(r => live && (setRows(r), setAsOf(at), setAsked(since), setError(null)))
      .catch(err => live && setError(describeError(err)));
    return () => {
      live = false;
    };
  }, [ctx, by, round, reloads]);
  const totals = rows ? aggregateUsage(rows, by) : [];
  const sorted = [...totals].sort((a, b) => {
    const x = a[sort.key] ?? -Infinity;
    const y = b[sort.key] ?? -Infinity;
    return (typeof x === 'string' ? x.localeCompare(String(y)) : (x as number) - (y as number)) * sort.direction;
  });
  const hasUsed = totals.some(t => t.utilizedGpuHours !== null);
  const hasCost = totals.some(t => t.cost !== null);
  const costUnit = rows ? costUnitOf(rows as readonly Record<string, unknown>[]) : null;
  const served = rows && rows.length && typeof rows[0].since === 'string' ? new Date(rows[0].since) : null;
  const periodStart = served && !isNaN(served.getTime()) ? served : asked;
  const max = Math.max(...totals.map(t => t.gpuHours), 1e-9);
  const header = (key: SortKey, label: string) => (
    <th scope="col" aria-sort={sort.key === key ? (sort.direction > 0 ? 'ascending' : 'descending') : 'none'}>
      <button type="button" className="jp-sched-sort" onClick={() => setSort(s => ({ key, direction: s.key === key ? ((-s.direction) as 1 | -1) : key === 'key' ? 1 : -1 }))}>
        {label}
        <span aria-hidden="true">{sort.key === key ? (sort.direction > 0 ? ' ▲' : ' ▼') : ''}</span>
      </button>
    </th>
  );
  const names: Record<UsageDimension, string> = { user: trans.__('User'), team: trans.__('Team'), gpu_model: trans.__('GPU model') };
  return (
    <div className="jp-sched-usage">
      <h4 className="jp-sched-subhead">{trans.__('Usage report (GPU-hours)')}</h4>
      <p className="jp-sched-muted jp-sched-usage-period" aria-live="polite">
        {asOf ? usagePeriodLine(asOf, now(), trans, periodStart) : trans.__('Loading…')}
      </p>
      <label className="jp-sched-field-label" htmlFor="jp-sched-usage-by">
        {trans.__('Group by')}
      </label>{' '}
      <select id="jp-sched-usage-by" className="jp-mod-styled jp-sched-usage-by" value={by} onChange={e => setBy(e.target.value as UsageDimension)}>
        <option value="user">{names.user}</option>
        <option value="team">{names.team}</option>
        <option value="gpu_model">{names.gpu_model}</option>
      </select>{' '}
      <button type="button" className="jp-sched-button jp-sched-usage-reload" onClick={() => setReloads(n => n + 1)}>
        {trans.__('Reload')}
      </button>
      {error ? <p className="jp-sched-feedback jp-sched-feedback-error">{serverText(error)}</p> : null}
      {rows && !rows.length ? <p className="jp-sched-muted">{trans.__('No GPU-hours recorded %1.', lastDaysText(periodStart, now(), trans))}</p> : null}
      {totals.length ? (
        <div className="jp-sched-table-wrap">
          <table className="jp-sched-table jp-sched-usage-table">
            <caption className="jp-sched-visually-hidden">{trans.__('GPU-hours by %1', names[by].toLowerCase())}</caption>
            <thead>
              <tr>
                {header('key', names[by])}
                {header('gpuHours', trans.__('GPU-h'))}
                {hasUsed ? header('utilizedGpuHours', trans.__('Used GPU-h')) : null}
                {hasCost ? header('cost', costUnit ? trans.__('Cost (%1)', costUnit) : trans.__('Cost')) : null}
                <th scope="col">{trans.__('Share')}</th>
              </tr>
            </thead>
            <tbody>
              {sorted.map(t => (
                <tr key={t.key}>
                  <td>{shownText(t.key) /* a user, team or model name (s30) */}</td>
                  <td>{hours(t.gpuHours)}</td>
                  {hasUsed ? <td>{t.utilizedGpuHours === null ? '–' : hours(t.utilizedGpuHours)}</td> : null}
                  {hasCost ? (
                    <td title={t.unpricedGpuHours > 0 ? trans.__('Partial: some of this usage had no price per GPU-hour in force (c.HubSchedApp.gpu_prices); its cost is at least this') : undefined}>
                      {costText(t, trans)}
                    </td>
                  ) : null}
                  <td className="jp-sched-share">
                    <div className="jp-sched-chart-bar" style={{ width: `${Math.max(1, (t.gpuHours / max) * 100)}%` }} aria-hidden="true" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </div>
  );
}

/** Records the audit card reads (newest first), and the most it lists. */
const AUDIT_READ = 500;
const AUDIT_SHOWN = 100;

/**
 * The audit card's count line, true to what was searched (new user 23, N16: "0 matching records" for
 * `preempt` while the log had 2 older than the newest 500 read, and "100 matching records" for the
 * list's cap): `matched` records match `search` among `read` (AUDIT_READ at most, plus the server's
 * every record whose action, user or job is the word when `asked`); at most AUDIT_SHOWN are listed.
 */
export function auditCountText(matched: number, read: number, search: string, asked: boolean, trans: TranslationBundle): string {
  const word = search.trim();
  const capped = matched > AUDIT_SHOWN ? trans.__('; the newest %1 are listed', AUDIT_SHOWN) : '';
  if (!word) {
    const older = read >= AUDIT_READ ? trans.__(' (the newest %1 read; older ones: search, or jupyter-sched audit --since …)', AUDIT_READ) : '';
    return trans._n('%1 record', '%1 records', read) + older + capped;
  }
  const scope = read >= AUDIT_READ
    ? asked
      ? trans.__(' in the newest %1 records, or with action, user or job "%2" in the whole log', AUDIT_READ, word)
      : trans.__(' in the newest %1 records (older ones: jupyter-sched audit)', AUDIT_READ)
    : '';
  return trans._n('%1 matching record', '%1 matching records', matched) + scope + capped;
}

function AuditSearch({ ctx, trans, round }: ICardProps): React.ReactElement {
  const [records, setRecords] = React.useState<AuditRecord[] | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  const [search, setSearch] = React.useState('');
  /** The server's records whose action, user or job is the searched word (the whole log, not the newest 500). */
  const [asked, setAsked] = React.useState<{ word: string; rows: AuditRecord[] } | null>(null);
  const load = React.useCallback(async () => {
    try {
      setRecords(await ctx.model.client.audit({ limit: AUDIT_READ }));
      setError(null);
    } catch (err) {
      setError(describeError(err));
    }
  }, [ctx]);
  React.useEffect(() => {
    void load();
  }, [load, round]);
  React.useEffect(() => {
    const word = search.trim();
    if (!/^[\w.@-]+$/.test(word)) {
      setAsked(null);
      return;
    }
    let live = true;
    const timer = window.setTimeout(async () => {
      // a job's name is asked as its id: the log keeps ids (new user 24, N6)
      const named = [...jobNames(ctx.model)].filter(([, name]) => name.toLowerCase() === word.toLowerCase()).map(([id]) => ({ job_id: id }));
      const queries = [{ action: word }, { user: word }, ...(word.startsWith('j-') ? [{ job_id: word }] : []), ...named];
      // a word that is no action, user or job is answered with no rows (or a 400): the browser's search stands
      const found = await Promise.all(queries.map(q => ctx.model.client.audit({ ...q, limit: AUDIT_READ }).catch(() => [] as AuditRecord[])));
      if (live) {
        setAsked({ word, rows: found.flat() });
      }
    }, 300);
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [ctx, search, round]);
  const word = search.trim();
  const extra = asked && asked.word === word ? asked.rows : [];
  const byId = new Map<string | number, AuditRecord>();
  for (const r of [...(records ?? []), ...extra]) {
    byId.set(r.id, r);
  }
  const all = [...byId.values()].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  const names = jobNames(ctx.model);
  const matching = all.filter(r => auditMatches(r, search, names));
  const matches = matching.slice(0, AUDIT_SHOWN);
  return (
    <div className="jp-sched-audit">
      <h4 className="jp-sched-subhead">{trans.__('Audit log')}</h4>
      <div className="jp-sched-row">
        <input
          type="search"
          className="jp-mod-styled jp-sched-audit-search"
          placeholder={trans.__('Search audit log (user, job, action…)')}
          aria-label={trans.__('Search audit log')}
          value={search}
          onChange={e => setSearch(e.target.value)}
        />
        <button type="button" className="jp-sched-button" onClick={() => void load()}>
          {trans.__('Reload')}
        </button>
      </div>
      {error ? <p className="jp-sched-feedback jp-sched-feedback-error">{error}</p> : null}
      <p className="jp-sched-muted" role="status">
        {records === null
          ? trans.__('Loading…')
          : records.length
            ? auditCountText(word ? matching.length : all.length, records.length, search, asked?.word === word, trans)
            : trans.__('The audit log is empty.')}
      </p>
      <ul className="jp-sched-list jp-sched-audit-list" aria-label={trans.__('Audit records')}>
        {matches.map(r => (
          <li className="jp-sched-audit-record" key={r.id}>
            <div className="jp-sched-muted">
              <time dateTime={r.at}>{recordTime(r.at)}</time>
              {r.actor ? ` · ${shownText(r.actor)}` : ''}
            </div>
            <div>
              <strong>{r.action}</strong>
              {r.job_id ? shownText(names.has(r.job_id) ? ` ${names.get(r.job_id)} (${r.job_id})` : ` ${r.job_id}`) : ''}
              {r.message ? ` — ${serverText(r.message, null, new Date(r.at), true) /* dated, as its time (newuser38 n30) */}` : ''}
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * Why no ETA has been scored yet (an answer whose median error is null). An ETA is checked against its job's
 * start, so a job waiting now counts only once it starts: "No job has waited for GPUs yet" read false to an
 * admin whose job had been pending 3 minutes (newuser38 n3), and it was also said when jobs that waited had
 * started with no ETA (coverage 0).
 */
export function noEtaScoredLine(acc: Schemas['GetEtaAccuracyResponse'], trans: TranslationBundle): string {
  const after = trans.__("an ETA is checked against its job's start, and a job waiting now counts once it starts.");
  if (!acc.jobs || acc.coverage === null) {
    if (!acc.window) {
      return trans.__('No job has started yet, so no ETA can be scored: %1', after);
    }
    return trans._n(
      'No waiting job has started yet (the last job started at once), so no ETA can be scored: %2',
      'No waiting job has started yet (the last %1 jobs started at once), so no ETA can be scored: %2',
      acc.window,
      after
    );
  }
  return trans._n(
    'The last job that waited for GPUs had no ETA when queued, so no ETA can be scored yet.',
    'None of the last %1 jobs that waited for GPUs had an ETA when queued, so no ETA can be scored yet.',
    acc.jobs
  );
}

/**
 * One sentence on how good the ETAs were (GET eta-accuracy): the median error of the start
 * predicted when each job was queued, against its wait, and the share of jobs that had one.
 */
/** Under this median wait (seconds) the error is not said as a share of the wait: "4913 % of the median
 * wait (5s)" measures nothing anyone can use (newuser23 N8); the absolute error and the wait are said instead. */
export const SHARE_FLOOR_S = 60;

export function etaAccuracyLine(acc: Schemas['GetEtaAccuracyResponse'], trans: TranslationBundle): string {
  if (!acc.jobs || acc.coverage === null || acc.median_abs_error_s === null) {
    return noEtaScoredLine(acc, trans);
  }
  // under a second with one decimal: "off by 0 s, 45 % of the median wait (0 s)" read as a
  // contradiction (new user 6, F6); a share of a sub-second wait is not said at all
  const said = (s: number): string =>
    s < 1 ? (s < 0.05 ? trans.__('under 0.1s') : trans.__('%1s', s.toFixed(1))) : formatDuration(s, trans);  // 20s, as formatDuration (N27)
  const error = said(acc.median_abs_error_s);
  const wait = acc.median_wait_s === null ? '' : said(acc.median_wait_s);
  const share = acc.error_of_wait === null ? '' : Math.round(acc.error_of_wait * 100);
  const short = acc.median_wait_s !== null && acc.median_wait_s < SHARE_FLOOR_S;
  return (
    (wait && short
      ? acc.median_wait_s !== null && acc.median_wait_s < 1
        ? trans.__('ETAs were off by %1 at the median (the median wait was %2),', error, wait)
        : trans.__('ETAs were off by %1 at the median (the median wait was %2, under a minute: no share of it is said),', error, wait)
      : wait && share !== ''
        ? trans.__('ETAs were off by %1 at the median, %2 % of the median wait (%3),', error, share, wait)
        : trans.__('ETAs were off by %1 at the median,', error)) +
    ' ' +
    trans._n(
      'over the last job that waited; %2 % of them had an ETA when queued.',
      'over the last %1 jobs that waited; %2 % of them had an ETA when queued.',
      acc.jobs,
      Math.round(acc.coverage * 100)
    )
  );
}

function EtaAccuracy({ ctx, trans, round }: ICardProps): React.ReactElement {
  const [line, setLine] = React.useState<string | null>(null);
  const load = React.useCallback(async () => {
    try {
      setLine(etaAccuracyLine(await ctx.model.client.etaAccuracy(), trans));
    } catch (err) {
      setLine(describeError(err));
    }
  }, [ctx, trans]);
  React.useEffect(() => {
    void load();
  }, [load, round]);
  return (
    <div className="jp-sched-eta-accuracy">
      <p aria-live="polite">{line ?? trans.__('Loading…')}</p>
      <button type="button" className="jp-sched-button" onClick={() => void load()}>
        {trans.__('Reload')}
      </button>
    </div>
  );
}

/**
 * The Admin section body. Its cards read their own answers (no watched resource): they read them
 * again on the panel's Refresh and each time the section is shown again (`round`).
 */
export class AdminView extends ModelView {
  private round = 0;

  constructor(ctx: ISchedSection.IContext) {
    super(ctx, { resources: [], signals: [] });
    this.addClass('jp-sched-admin');
    ctx.model.refreshedAll.connect(this.reread, this);
  }

  private reread(): void {
    this.round++;
    this.update();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this.reread(); // expanded again after a while: what it shows is read now, not when first opened
  }

  dispose(): void {
    if (!this.isDisposed) {
      this.model.refreshedAll.disconnect(this.reread, this);
    }
    super.dispose();
  }

  protected renderView(): React.ReactElement {
    const { ctx, trans, model, round } = this;
    return (
      <div>
        <QuotaEditor ctx={ctx} trans={trans} round={round} />
        {model.supports('idle_policy') ? <IdlePolicyEditor ctx={ctx} trans={trans} round={round} /> : null}
        {model.supports('usage') ? <UsageReport ctx={ctx} trans={trans} round={round} now={() => this.now()} /> : null}
        {model.supports('audit') ? <EtaAccuracy ctx={ctx} trans={trans} round={round} /> : null}
        {model.supports('audit') ? <AuditSearch ctx={ctx} trans={trans} round={round} /> : null}
      </div>
    );
  }
}
