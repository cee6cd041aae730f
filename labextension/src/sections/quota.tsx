/**
 * Quota: my team's (and my own) quota lines — GPUs in use against the guarantee and the
 * borrowing limit — and GPU-hour budgets.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { budgetStandingText, formatNumber, gpuHoursPhrase, lastDaysText, quotaFractions, quotaLabel, serverText, shownText } from '../format';
import type { ISchedModel, ISchedSection } from '../tokens';
import { allocationGpus, type Me, type QuotaLine } from '../types';
import { ErrorNote, Meter, ModelView } from './base';

function numberField(value: unknown): number | undefined {
  return typeof value === 'number' && isFinite(value) ? value : undefined;
}

/** GPUs in use now under a quota line: server-reported `used`, else `usage` rows, else summed from running queue rows. */
export function quotaUsed(q: QuotaLine, model: ISchedModel): number {
  const reported = numberField((q as Record<string, unknown>).used);
  if (reported !== undefined) {
    return reported;
  }
  const usage = (model.quotas as Record<string, unknown> | null)?.usage;
  if (Array.isArray(usage)) {
    return usage
      .filter(u => u && u.team === q.team && (!q.user || u.user === q.user) && (q.gpu_model === '*' || u.gpu_model === q.gpu_model))
      .reduce((sum: number, u) => sum + (numberField(u.gpus) ?? 0), 0);
  }
  const models = new Map((model.inventory?.gpus ?? []).map(g => [g.uuid, g.model]));
  let used = 0;
  for (const job of model.queue) {
    if ((job.state !== 'running' && job.state !== 'admitted') || job.team !== q.team || (q.user && job.user !== q.user)) {
      continue;
    }
    for (const uuid of allocationGpus(job.allocation)) {
      if (q.gpu_model === '*' || models.get(uuid) === q.gpu_model) {
        used += (job.allocation?.gpu_milli ?? 1000) / 1000;
      }
    }
  }
  return used;
}

/**
 * What a team's line (any model, not one user's) counts now, as the server counts it for admission, `status` and
 * `queue --summary` (GET me's `by_team[].in_use`, else `team_in_use`: a GPU only the team's shares hold counts
 * whole) and what the team's work asked (`in_use` less `held_whole`); null where the server does not say it (a
 * user's line, a line of one GPU model, an older server). Newuser40 N3: the bar said "2.1 used" with room shown
 * beside a sentence saying 3 GPUs in use of at most 3, while the next job was refused for lack of room.
 */
export function lineCount(q: Pick<QuotaLine, 'team' | 'user' | 'gpu_model'>, me: Me | null): { counted: number; asked: number } | null {
  if (!me || q.user || q.gpu_model !== '*') {
    return null;
  }
  const row = (me.by_team ?? []).find(t => t.team === q.team);
  const [inUse, whole] = row ? [row.in_use, row.held_whole] : me.team === q.team ? [me.team_in_use, me.team_held_whole] : [null, null];
  const counted = numberField(inUse);
  return counted === undefined ? null : { counted, asked: Math.max(0, counted - (numberField(whole) ?? 0)) };
}

interface IBudget {
  team: string;
  user: string | null;
  gpuHours: number;
  period: string;
  used: number | undefined;
  /** when the period's GPU-hours start again from 0 (GET me's `resets_at`); null when not sent */
  resetsAt: Date | null;
}

function budgetsOf(rows: unknown): IBudget[] {
  if (!Array.isArray(rows)) {
    return [];
  }
  return rows
    .filter(b => b && typeof b.team === 'string' && typeof b.gpu_hours === 'number')
    .map(b => ({
      team: b.team,
      user: typeof b.user === 'string' ? b.user : null,
      gpuHours: b.gpu_hours,
      period: String(b.period ?? 'month'),
      used: numberField(b.used_gpu_hours),
      resetsAt: typeof b.resets_at === 'string' ? new Date(b.resets_at) : null
    }));
}

/** The Quota section body. */
export class QuotaView extends ModelView {
  constructor(ctx: ISchedSection.IContext) {
    super(ctx, {
      resources: ['quotas', 'queue'],
      signals: [ctx.model.quotasChanged, ctx.model.queueChanged, ctx.model.errorChanged],
      focusable: true
    });
    this.addClass('jp-sched-quota-section');
  }

  protected renderView(): React.ReactElement {
    const { model, trans } = this;
    const qs = model.quotas;
    if (!qs) {
      return (
        <div>
          <ErrorNote error={model.error('quotas')} />
          <p className="jp-sched-muted">{trans.__('Loading quotas…')}</p>
        </div>
      );
    }
    const me = model.me;
    const teams = new Set([me?.team, ...(Array.isArray(me?.teams) ? (me?.teams as string[]) : [])].filter((t): t is string => !!t));
    const mineOrTeam = (line: { team: string; user?: string | null }) => (line.user ? line.user === me?.user : teams.size === 0 || teams.has(line.team));
    const relevant = me?.quotas ?? qs.quotas.filter(mineOrTeam);
    const budgets = me?.budgets ? budgetsOf(me.budgets) : budgetsOf(qs.budgets).filter(mineOrTeam);
    return (
      <div>
        <ErrorNote error={model.error('quotas')} />
        {me ? <p className="jp-sched-muted jp-sched-me">{this.summary()}</p> : null}
        {me?.quota_text ? (
          // the server's sentence, the one `jupyter-sched status` and `%gpu` say (new user 17, N17: the
          // panel's own "you may use idle GPUs, preemptible" was false where nothing is borrowed)
          // its clocks (a team's reclaim cool-down, newuser38 n21) in the reader's zone, one zone per line (n30)
          <p className="jp-sched-muted jp-sched-quota-text">{serverText(`${me.quota_text.replace(/\.$/, '')}.`)}</p>
        ) : !relevant.length ? (
          <p className="jp-sched-muted jp-sched-quota-text">{shownText(trans.__('No quota lines for %1.', [...teams].join(', ') || trans.__('your team')))}</p>
        ) : null}
        {relevant.map(q => {
          const count = lineCount(q, me);
          const used = count?.counted ?? quotaUsed(q, model);
          const guaranteed = q.guaranteed ?? 0;
          const f = quotaFractions(used, guaranteed, q.borrowing_limit ?? null, trans);
          if (count && used - count.asked >= 0.0005) {
            f.text += trans.__(' (%1 asked; a GPU only the team\'s shares hold counts whole against the line)', formatNumber(count.asked, 2));
          }
          const label = quotaLabel(q, trans);
          const shown = shownText(label); // the team's and user's hidden characters as escapes (s30)
          return (
            <div className="jp-sched-quota" data-quota={label} key={label}>
              <div className="jp-sched-quota-label">{shown}</div>
              <Meter value={used} max={f.max ?? Math.max(used, guaranteed, 1)} label={`${shown}: ${f.text}`} className="jp-sched-quota-bar">
                <div className="jp-sched-quota-mark" style={{ left: `${f.guaranteedFraction * 100}%` }} />
              </Meter>
              <div className="jp-sched-muted">{f.text}</div>
            </div>
          );
        })}
        {budgets.map(b => {
          const who = shownText(b.user ? `${b.team} / ${b.user}` : b.team);
          return (
            <div className="jp-sched-quota jp-sched-budget" key={`${who}-${b.period}`}>
              <div className="jp-sched-quota-label">{trans.__('%1 · GPU-hours per %2', who, b.period)}</div>
              {b.used !== undefined ? (
                <Meter value={b.used} max={b.gpuHours} label={trans.__('%1 of %2', formatNumber(b.used), gpuHoursPhrase(b.gpuHours, trans, formatNumber(b.gpuHours)))} />
              ) : null}
              <div className="jp-sched-muted">
                {b.used !== undefined
                  ? budgetStandingText(b.used, b.gpuHours, b.period, b.resetsAt, new Date(), trans)
                  : trans.__('budget %1 per %2', gpuHoursPhrase(b.gpuHours, trans, formatNumber(b.gpuHours)), b.period)}
              </div>
            </div>
          );
        })}
      </div>
    );
  }

  private summary(): string {
    const { model, trans } = this;
    const me = model.me!;
    const parts = [me.user];
    if (me.team) {
      parts.push(trans.__('team %1', me.team));
    }
    const inUse = me.in_use;
    if (inUse && typeof inUse.gpus === 'number') {
      const jobs = inUse.jobs ?? 0;
      const leases = inUse.leases ?? 0;
      // jobs in a stop's grace still hold GPUs: said apart, as `jupyter-sched status` does (new user 8, N13)
      const stopping = Math.min(inUse.stopping ?? 0, jobs);
      const work = stopping ? trans.__('%1, %2 stopping', trans._n('%1 job', '%1 jobs', jobs), stopping) : trans._n('%1 job', '%1 jobs', jobs);
      parts.push(
        trans._n('holding %2 GPU', 'holding %2 GPUs', inUse.gpus, formatNumber(inUse.gpus, 2)) +
          ` (${work}, ${trans._n('%1 lease', '%1 leases', leases)})`
      );
    }
    if (typeof me.gpu_hours_7d === 'number') {
      // the one usage period, with its start, as `jupyter-sched status` says it (session 23)
      const since = typeof me.gpu_hours_since === 'string' ? new Date(me.gpu_hours_since) : null;
      parts.push(trans.__('%1 %2', gpuHoursPhrase(me.gpu_hours_7d, trans, formatNumber(me.gpu_hours_7d, 2)), lastDaysText(since, new Date(), trans)));
    }
    return shownText(parts.join(' · '));
  }
}

/** The section header's `3 in use`: what the default team's lines count ({@link lineCount}, newuser40 N3), else your own. */
export function quotaBadge(model: ISchedModel, trans: TranslationBundle): string {
  const me = model.me;
  const inUse = numberField(me?.team_in_use) ?? me?.in_use?.gpus;
  return typeof inUse === 'number' ? trans.__('%1 in use', formatNumber(inUse, 2)) : '';
}
