/**
 * The Admin section (shown only when `GET me` says `is_admin`): quota editor with the server's
 * validation messages, idle policy, usage report (table + bar chart) and audit log search.
 * Each part loads on demand and keeps its own inputs across panel refreshes.
 */
import { describeError, type IAuditRecord, type IQuota, type IUsageRow, type SchedClient, supports } from './api';
import { h, svg } from './dom';
import { formatDuration, formatNumber } from './format';
import type { PanelState } from './state';

/** Dimensions a usage report can be grouped by. */
export type UsageDimension = 'user' | 'team' | 'gpu_model';

/** One aggregated usage line: GPU-hours allocated and used, cost. */
export interface IUsageTotal {
  key: string;
  gpuHours: number;
  utilizedGpuHours: number | null;
  cost: number | null;
}

function hoursOf(row: IUsageRow, ...keys: string[]): number | null {
  for (const key of keys) {
    const value = row[key];
    if (typeof value === 'number' && isFinite(value)) {
      return key.endsWith('seconds') ? value / 3600 : value;
    }
  }
  return null;
}

/**
 * Sum usage rows (per job or pre-aggregated) by `by`. GPU-hours come from `gpu_hours` or
 * `gpu_seconds`/`allocated_gpu_seconds` ÷ 3600; utilized from `utilized_gpu_hours` or
 * `utilized_gpu_seconds` ÷ 3600. Sorted by GPU-hours, largest first.
 */
export function aggregateUsage(rows: IUsageRow[], by: UsageDimension): IUsageTotal[] {
  const totals = new Map<string, IUsageTotal>();
  for (const row of rows) {
    const raw = by === 'gpu_model' ? (row.gpu_model ?? row['model']) : row[by];
    const key = typeof raw === 'string' && raw ? raw : '(none)';
    const hours = hoursOf(row, 'gpu_hours', 'allocated_gpu_hours', 'gpu_seconds', 'allocated_gpu_seconds') ?? 0;
    const used = hoursOf(row, 'utilized_gpu_hours', 'utilized_gpu_seconds');
    const cost = typeof row.cost === 'number' ? row.cost : null;
    const total = totals.get(key) ?? { key, gpuHours: 0, utilizedGpuHours: null, cost: null };
    total.gpuHours += hours;
    if (used !== null) {
      total.utilizedGpuHours = (total.utilizedGpuHours ?? 0) + used;
    }
    if (cost !== null) {
      total.cost = (total.cost ?? 0) + cost;
    }
    totals.set(key, total);
  }
  return [...totals.values()].sort((a, b) => b.gpuHours - a.gpuHours);
}

/** GPU-hours with enough digits to see small numbers: 12.35, 0.0009. */
export function hours(value: number): string {
  return formatNumber(value, Math.abs(value) > 0 && Math.abs(value) < 0.01 ? 4 : 2);
}

/** An audit timestamp in the browser's local time (ISO string kept in the tooltip by callers). */
function when(value: unknown): string {
  const t = typeof value === 'string' ? Date.parse(value) : NaN;
  return isNaN(t) ? String(value ?? '') : new Date(t).toLocaleString();
}

/** Whether an audit record matches a free-text search (any field, case-insensitive). */
export function auditMatches(record: IAuditRecord, text: string): boolean {
  const needle = text.trim().toLowerCase();
  if (!needle) {
    return true;
  }
  return JSON.stringify(record).toLowerCase().includes(needle);
}

/** The Admin section's content. */
export class AdminView {
  readonly node: HTMLElement;
  private readonly quotaBody: HTMLElement;
  private readonly quotaMessage: HTMLElement;
  private readonly idleBody: HTMLElement;
  private readonly usageBody: HTMLElement;
  private readonly auditBody: HTMLElement;
  private readonly usageBy: HTMLSelectElement;
  private readonly auditSearch: HTMLInputElement;
  private quotaRows: HTMLElement[] = [];
  private auditRecords: IAuditRecord[] = [];
  private loaded = false;

  constructor(
    private readonly client: SchedClient,
    private readonly state: PanelState,
    private readonly onQuotasChanged: () => void
  ) {
    this.quotaBody = h('div', { class: 'jp-sched-quota-editor', role: 'list', 'aria-label': 'Quota lines' });
    this.quotaMessage = h('div', { class: 'jp-sched-feedback', role: 'status', 'aria-live': 'polite' });
    this.idleBody = h('div', { class: 'jp-sched-idle' });
    this.usageBody = h('div', { class: 'jp-sched-usage' });
    this.auditBody = h('div', { class: 'jp-sched-audit' });
    this.usageBy = h(
      'select',
      { class: 'jp-sched-usage-by', 'aria-label': 'Group usage by', onchange: () => void this.loadUsage() },
      h('option', { value: 'user' }, 'by user'),
      h('option', { value: 'team' }, 'by team'),
      h('option', { value: 'gpu_model' }, 'by GPU model')
    );
    this.auditSearch = h('input', {
      type: 'search',
      class: 'jp-sched-audit-search',
      placeholder: 'Search audit log (user, job, action…)',
      'aria-label': 'Search audit log',
      oninput: () => this.renderAudit()
    });
    const quotaTable = this.quotaBody;
    this.node = h(
      'div',
      { class: 'jp-sched-admin' },
      h('h4', { class: 'jp-sched-subhead' }, 'Quotas (GPUs)'),
      h('p', { class: 'jp-sched-muted' }, 'Per team (and user) and GPU model ("*" = any): guaranteed GPUs, and how many more it may borrow (empty = unlimited).'),
      quotaTable,
      h(
        'div',
        { class: 'jp-sched-actions' },
        h('button', { type: 'button', class: 'jp-sched-button jp-sched-quota-add', onclick: () => this.addQuotaRow(null) }, 'Add line'),
        h('button', { type: 'button', class: 'jp-sched-button', onclick: () => void this.loadQuotas() }, 'Reload'),
        h('button', { type: 'button', class: 'jp-sched-button jp-mod-accept jp-sched-quota-save', onclick: () => void this.saveQuotas() }, 'Save quotas')
      ),
      this.quotaMessage,
      h('h4', { class: 'jp-sched-subhead' }, 'Idle policy'),
      this.idleBody,
      supports(state.config, 'usage') ? [h('h4', { class: 'jp-sched-subhead' }, 'Usage report (GPU-hours)'), this.usageBy, this.usageBody] : null,
      supports(state.config, 'audit') ? [h('h4', { class: 'jp-sched-subhead' }, 'Audit log'), this.auditSearch, this.auditBody] : null
    );
  }

  /** Load everything the first time the section is shown. */
  ensureLoaded(): void {
    if (this.loaded) {
      return;
    }
    this.loaded = true;
    this.renderIdle();
    void this.loadQuotas();
    if (supports(this.state.config, 'usage')) {
      void this.loadUsage();
    }
    if (supports(this.state.config, 'audit')) {
      void this.loadAudit();
    }
  }

  private addQuotaRow(q: IQuota | null): void {
    const input = (name: string, value: string, label: string, text: string, type = 'text') =>
      h(
        'label',
        { class: `jp-sched-q-field jp-sched-q-field-${name}` },
        h('span', { class: 'jp-sched-field-label' }, text),
        h('input', {
          type,
          class: `jp-mod-styled jp-sched-q-${name}`,
          name,
          value,
          'aria-label': label,
          placeholder: name === 'user' ? 'whole team' : name === 'borrowing_limit' ? 'unlimited' : undefined,
          min: type === 'number' ? 0 : undefined,
          step: type === 'number' ? 'any' : undefined
        })
      );
    const remove = h('button', { type: 'button', class: 'jp-sched-button jp-sched-danger jp-sched-q-remove', 'aria-label': 'Remove quota line', title: 'Remove this line' }, '×');
    const row = h(
      'div',
      { class: 'jp-sched-quota-row', role: 'listitem' },
      input('team', q?.team ?? '', 'Team', 'Team'),
      input('user', q?.user ?? '', 'User (empty: whole team)', 'User'),
      input('gpu_model', q?.gpu_model ?? '*', 'GPU model (* for any)', 'Model'),
      input('guaranteed', String(q?.guaranteed ?? 0), 'Guaranteed GPUs', 'Guaranteed', 'number'),
      input('borrowing_limit', q?.borrowing_limit === null || q?.borrowing_limit === undefined ? '' : String(q.borrowing_limit), 'Borrowing limit (empty: unlimited)', 'Borrow', 'number'),
      remove
    );
    remove.addEventListener('click', () => {
      this.quotaRows = this.quotaRows.filter(r => r !== row);
      row.remove();
    });
    this.quotaRows.push(row);
    this.quotaBody.appendChild(row);
  }

  /** The editor's lines as the PUT body's `quotas` (numbers parsed; empty borrow = unlimited). */
  quotaLines(): Record<string, unknown>[] {
    return this.quotaRows.map(row => {
      const get = (name: string) => (row.querySelector(`[name="${name}"]`) as HTMLInputElement).value.trim();
      const num = (value: string): number | string => (value !== '' && isFinite(Number(value)) ? Number(value) : value);
      const borrow = get('borrowing_limit');
      return {
        team: get('team'),
        user: get('user') || null,
        gpu_model: get('gpu_model') || '*',
        guaranteed: num(get('guaranteed')),
        borrowing_limit: borrow === '' ? null : num(borrow)
      };
    });
  }

  async loadQuotas(): Promise<void> {
    try {
      const qs = await this.client.quotas();
      this.state.quotas = qs;
      this.quotaRows = [];
      this.quotaBody.replaceChildren();
      for (const q of qs.quotas) {
        this.addQuotaRow(q);
      }
    } catch (err) {
      this.showQuotaMessage(describeError(err), 'error');
    }
  }

  private showQuotaMessage(text: string, kind: 'ok' | 'error' | 'info'): void {
    this.quotaMessage.className = `jp-sched-feedback jp-sched-feedback-${kind}`;
    this.quotaMessage.textContent = text;
  }

  /** PUT the edited quotas; the server validates (field + hint) and audits the change. */
  async saveQuotas(): Promise<void> {
    // only the lines: budgets, teams and user_teams the server keeps as they are
    const body = { quotas: this.quotaLines() };
    this.showQuotaMessage('Saving…', 'info');
    try {
      const saved = await this.client.setQuotas(body as never);
      if (saved && Array.isArray(saved.quotas)) {
        this.state.quotas = saved;
      }
      this.showQuotaMessage(`Saved ${this.quotaRows.length} quota line${this.quotaRows.length === 1 ? '' : 's'}.`, 'ok');
      this.onQuotasChanged();
    } catch (err) {
      this.showQuotaMessage(`Not saved: ${describeError(err)}`, 'error');
    }
  }

  private renderIdle(): void {
    const idle = (this.state.config?.['idle'] ?? this.state.quotas?.idle ?? null) as Record<string, unknown> | null;
    if (!idle) {
      this.idleBody.replaceChildren(h('p', { class: 'jp-sched-muted' }, 'The server reports no idle policy.'));
      return;
    }
    const item = (label: string, value: unknown, unit: 'percent' | 'seconds') =>
      typeof value === 'number' ? h('li', {}, `${label}: `, h('strong', {}, unit === 'percent' ? `${formatNumber(value)} %` : formatDuration(value))) : null;
    this.idleBody.replaceChildren(
      h(
        'ul',
        { class: 'jp-sched-kv' },
        item('Idle below', idle['threshold_percent'], 'percent'),
        item('over a trailing window of', idle['window_s'], 'seconds'),
        item('then warning, and release after a grace of', idle['grace_s'], 'seconds')
      ),
      h('p', { class: 'jp-sched-muted' }, 'Set with c.SchedApp.idle_threshold_percent, idle_window_s and idle_grace_s.')
    );
  }

  async loadUsage(): Promise<void> {
    let rows: IUsageRow[];
    try {
      rows = await this.client.usage({ all: true, by: this.usageBy.value });
    } catch (err) {
      this.usageBody.replaceChildren(h('p', { class: 'jp-sched-feedback-error' }, describeError(err)));
      return;
    }
    const by = this.usageBy.value as UsageDimension;
    if (!rows.length) {
      this.usageBody.replaceChildren(h('p', { class: 'jp-sched-muted' }, 'No usage recorded yet.'));
      return;
    }
    if (!rows.some(r => by in r || (by === 'gpu_model' && 'model' in r))) {
      this.usageBody.replaceChildren(h('p', { class: 'jp-sched-muted' }, `This server does not report usage ${this.usageBy.selectedOptions[0]?.text ?? by}; pick another grouping.`));
      return;
    }
    const totals = aggregateUsage(rows, by);
    const max = Math.max(...totals.map(t => t.gpuHours), 1e-9);
    const rowHeight = 14;
    const chart = svg(
      'svg',
      { class: 'jp-sched-chart', width: '100%', height: totals.length * (rowHeight + 4), viewBox: `0 0 100 ${totals.length * (rowHeight + 4)}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': 'GPU-hours chart' },
      ...totals.map((t, i) => svg('rect', { x: 0, y: i * (rowHeight + 4), width: Math.max(0.5, (t.gpuHours / max) * 100), height: rowHeight, class: 'jp-sched-chart-bar' }))
    );
    const hasCost = totals.some(t => t.cost !== null);
    const hasUsed = totals.some(t => t.utilizedGpuHours !== null);
    this.usageBody.replaceChildren(
      h(
        'div',
        { class: 'jp-sched-table-wrap' },
        h(
          'table',
          { class: 'jp-sched-table jp-sched-usage-table' },
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Who'), h('th', { scope: 'col' }, 'GPU-h'), hasUsed ? h('th', { scope: 'col' }, 'Used GPU-h') : null, hasCost ? h('th', { scope: 'col' }, 'Cost') : null)),
          h(
            'tbody',
            {},
            ...totals.map(t =>
              h(
                'tr',
                {},
                h('td', {}, t.key),
                h('td', {}, hours(t.gpuHours)),
                hasUsed ? h('td', {}, t.utilizedGpuHours === null ? '–' : hours(t.utilizedGpuHours)) : null,
                hasCost ? h('td', {}, t.cost === null ? '–' : formatNumber(t.cost, 2)) : null
              )
            )
          )
        )
      ),
      chart
    );
  }

  async loadAudit(): Promise<void> {
    try {
      this.auditRecords = await this.client.audit({ limit: 500 });
    } catch (err) {
      this.auditBody.replaceChildren(h('p', { class: 'jp-sched-feedback-error' }, describeError(err)));
      return;
    }
    this.renderAudit();
  }

  private renderAudit(): void {
    const matches = this.auditRecords.filter(r => auditMatches(r, this.auditSearch.value)).slice(0, 100);
    if (!matches.length) {
      this.auditBody.replaceChildren(h('p', { class: 'jp-sched-muted' }, this.auditRecords.length ? 'No matching records.' : 'The audit log is empty.'));
      return;
    }
    this.auditBody.replaceChildren(
      h(
        'ul',
        { class: 'jp-sched-list jp-sched-audit-list' },
        ...matches.map(r =>
          h(
            'li',
            { class: 'jp-sched-audit-record' },
            h('div', { class: 'jp-sched-muted' }, when(r.at ?? r.time), r.actor ? ` · ${r.actor}` : ''),
            h('div', {}, h('strong', {}, String(r.action ?? r.kind ?? 'event')), r.subject || r.job_id ? ` ${r.subject ?? r.job_id}` : '', r.message ? ` — ${r.message}` : '')
          )
        )
      )
    );
  }
}
