/**
 * Renderers of the read-mostly sections: Inventory, Queue, My work and Quota. Each returns DOM
 * for a section body from the {@link PanelState}; actions go through {@link IViewActions}.
 */
import { ENABLE_FIX, type IGpu, type IJob, type IQuota, TERMINAL_STATES, supports } from './api';
import type { IHolder } from './state';
import { bar, h, svg } from './dom';
import {
  formatElapsed,
  formatGpus,
  formatMiB,
  formatNumber,
  isWaiting,
  queueLine,
  queuePosition,
  quotaFractions,
  quotaLabel,
  sparklinePath,
  stateLabel
} from './format';
import type { PanelState } from './state';

/** What the sections can ask the panel to do. */
export interface IViewActions {
  cancel(job: IJob): void;
  openLogs(job: IJob): void;
  resubmit(job: IJob): void;
  keepalive(job: IJob): void;
  setMineOnly(value: boolean): void;
}

/** The "server extension not enabled" state with the fix (a 404 from `api/sched`). */
export function renderExtensionMissing(url: string, retry: () => void): HTMLElement {
  return h(
    'div',
    { class: 'jp-sched-missing', role: 'alert' },
    h('strong', {}, 'Server extension not enabled'),
    h('p', {}, `This Jupyter server answered 404 for ${url}: the jupyter_sched server extension is not loaded, so there is no GPU scheduler to show.`),
    h('p', {}, 'Fix: run ', h('code', {}, ENABLE_FIX), ' in a terminal on the server, then restart JupyterLab.'),
    h('button', { class: 'jp-sched-button', onclick: retry }, 'Retry')
  );
}

function sparkline(values: number[]): SVGElement {
  const width = 60;
  const height = 16;
  return svg(
    'svg',
    { class: 'jp-sched-spark', width, height, viewBox: `0 0 ${width} ${height}`, 'aria-hidden': 'true' },
    svg('path', { d: sparklinePath(values, width, height) })
  );
}

function gpuTile(gpu: IGpu, state: PanelState, holder: IHolder | undefined): HTMLElement {
  const live = state.live.get(gpu.uuid);
  const util = live?.util.length ? live.util[live.util.length - 1] : null;
  const used = live?.memoryUsedMib ?? null;
  const owner = holder ? `${holder.kind === 'lease' ? 'lease' : 'job'} ${holder.name} (${holder.user})` : 'free';
  const health = gpu.health !== 'healthy' ? `${gpu.health}${gpu.health_reason ? `: ${gpu.health_reason}` : ''}` : '';
  const label =
    `GPU ${gpu.index} on ${gpu.node}: ${gpu.model}, ${formatMiB(gpu.memory_mib)}` +
    `${gpu.simulated ? ', simulated' : ''}; ${owner}` +
    (util !== null ? `; utilization ${Math.round(util)}%` : live?.note ? `; utilization unknown: ${live.note}` : '') +
    (used !== null ? `; memory ${formatMiB(used)} used` : '') +
    (health ? `; ${health}` : '');
  return h(
    'div',
    {
      class: `jp-sched-gpu${gpu.simulated ? ' jp-sched-simulated' : ''}${holder ? ' jp-sched-busy' : ''}${health ? ' jp-sched-unhealthy' : ''}`,
      tabindex: 0,
      'data-key': `gpu-${gpu.uuid}`,
      'data-gpu-uuid': gpu.uuid,
      'aria-label': label,
      title: label
    },
    h(
      'div',
      { class: 'jp-sched-gpu-head' },
      h('span', { class: 'jp-sched-gpu-index' }, `#${gpu.index}`),
      h('span', { class: 'jp-sched-gpu-model' }, gpu.model),
      gpu.simulated ? h('span', { class: 'jp-sched-tag jp-sched-tag-sim', title: 'Simulated GPU: no real device behind it' }, 'SIM') : null
    ),
    h('div', { class: 'jp-sched-gpu-meta' }, formatMiB(gpu.memory_mib), gpu.mig_enabled ? ` · MIG ×${gpu.mig_devices.length}` : ''),
    bar((util ?? 0) / 100, `utilization ${util === null ? (live?.note ?? 'unknown') : `${Math.round(util)}%`}`, 'jp-sched-bar-util'),
    bar(used === null ? 0 : used / Math.max(1, gpu.memory_mib), `memory ${used === null ? 'unknown' : `${formatMiB(used)} of ${formatMiB(gpu.memory_mib)}`}`, 'jp-sched-bar-mem'),
    live && live.util.length > 1 ? sparkline(live.util) : null,
    h('div', { class: `jp-sched-gpu-owner${holder ? '' : ' jp-sched-free'}` }, health ? `⚠ ${health}` : owner)
  );
}

/** Inventory: nodes and GPUs as a compact grid; explicit "no GPUs on this server" state (case 015). */
export function renderInventory(state: PanelState): (Node | null)[] {
  const inv = state.inventory;
  if (!inv) {
    return [h('p', { class: 'jp-sched-muted' }, 'Loading inventory…')];
  }
  if (!inv.gpus.length) {
    const error = inv.nvml && !inv.nvml.available ? inv.nvml.error : '';
    return [
      h(
        'div',
        { class: 'jp-sched-empty jp-sched-nogpus', role: 'status' },
        h('strong', {}, 'No GPUs on this server'),
        error ? h('p', {}, `NVML: ${error}`) : null,
        h('p', { class: 'jp-sched-muted' }, 'CPU-only work still runs; GPU work needs a GPU node or the Kubernetes executor.')
      )
    ];
  }
  const holders = state.holders();
  return [
    inv.simulated || inv.gpus.some(g => g.simulated)
      ? h(
          'p',
          { class: 'jp-sched-banner jp-sched-banner-sim' },
          'Simulated GPUs',
          inv.nvml && !inv.nvml.available && inv.nvml.error ? ` — NVML: ${inv.nvml.error}` : '',
          '. Utilization follows the real CPU activity of the jobs.'
        )
      : null,
    ...inv.nodes.map(node =>
      h(
        'div',
        { class: 'jp-sched-node' },
        h(
          'div',
          { class: 'jp-sched-node-head' },
          h('span', { class: 'jp-sched-node-name' }, node.name),
          h('span', { class: 'jp-sched-muted' }, ` ${node.gpus.length} GPU${node.gpus.length === 1 ? '' : 's'}`),
          !node.ready ? h('span', { class: 'jp-sched-tag jp-sched-tag-bad' }, 'not ready') : null,
          node.unschedulable ? h('span', { class: 'jp-sched-tag jp-sched-tag-bad' }, 'cordoned') : null
        ),
        h('div', { class: 'jp-sched-grid' }, ...node.gpus.map(g => gpuTile(g, state, holders.get(g.uuid))))
      )
    )
  ];
}

function jobRow(job: IJob, state: PanelState, extra: (Node | null)[] = []): HTMLElement {
  const mine = state.me?.user === job.user;
  return h(
    'li',
    { class: `jp-sched-job jp-sched-state-${job.state}${mine ? ' jp-sched-mine' : ''}`, 'data-job-id': job.id, 'data-state': job.state },
    h(
      'div',
      { class: 'jp-sched-job-head' },
      h('span', { class: `jp-sched-state jp-sched-state-badge-${job.state}` }, stateLabel(job.state)),
      h('span', { class: 'jp-sched-job-name', title: job.id }, job.name || job.id),
      h('span', { class: `jp-sched-prio jp-sched-prio-${job.priority}` }, job.priority)
    ),
    h(
      'div',
      { class: 'jp-sched-job-meta' },
      `${job.user} · ${formatGpus(job.resources)}`,
      job.kind === 'lease' ? ' · lease' : '',
      job.simulated ? ' · simulated GPUs' : ''
    ),
    ...extra
  );
}

/** How a finished job ended: its message (which names the exit code), else the exit code. */
export function outcome(job: Pick<IJob, 'exit_code' | 'message'>): string {
  if (job.message) {
    return job.message;
  }
  return job.exit_code !== null && job.exit_code !== undefined ? `exit code ${job.exit_code}` : '';
}

/** Queue: pending and running work with class, user, GPUs, position, one-sentence reason, ETA. */
export function renderQueue(state: PanelState, actions: IViewActions, now: Date): (Node | null)[] {
  const rows = state.queue.filter(j => !state.mineOnly || (j.mine ?? j.user === state.me?.user));
  const pending = rows.filter(j => isWaiting(j.state)).sort((a, b) => (queuePosition(a) ?? 1e9) - (queuePosition(b) ?? 1e9));
  const running = rows.filter(j => !isWaiting(j.state));
  const toggle = h(
    'label',
    { class: 'jp-sched-filter' },
    h('input', {
      type: 'checkbox',
      'data-key': 'mine-only',
      checked: state.mineOnly,
      onchange: (e: Event) => actions.setMineOnly((e.target as HTMLInputElement).checked)
    }),
    ' Mine only'
  );
  const list = (items: IJob[]) =>
    h(
      'ul',
      { class: 'jp-sched-list' },
      ...items.map(job =>
        jobRow(job, state, [
          h('div', { class: 'jp-sched-reason' }, queueLine(job, now)),
          !isWaiting(job.state) ? h('div', { class: 'jp-sched-muted' }, `elapsed ${formatElapsed(job, now)}`) : null
        ])
      )
    );
  return [
    toggle,
    h('h4', { class: 'jp-sched-subhead' }, `Pending (${pending.length})`),
    pending.length ? list(pending) : h('p', { class: 'jp-sched-muted' }, 'Nothing waiting.'),
    h('h4', { class: 'jp-sched-subhead' }, `Running (${running.length})`),
    running.length ? list(running) : h('p', { class: 'jp-sched-muted' }, 'Nothing running.')
  ];
}

/** My work: my jobs and leases with state, elapsed, GPU use; cancel, logs, resubmit, keep alive. */
export function renderMyWork(state: PanelState, actions: IViewActions, now: Date): (Node | null)[] {
  const all = [...state.leases, ...state.myJobs].sort((a, b) => (b.submitted_at ?? '').localeCompare(a.submitted_at ?? ''));
  if (!all.length) {
    return [h('p', { class: 'jp-sched-muted' }, 'No jobs or leases yet. Use Submit below, %gpu or %%schedule in a notebook.')];
  }
  return [
    h(
      'ul',
      { class: 'jp-sched-list' },
      ...all.map(job => {
        const util = state.jobUtilization(job);
        const done = TERMINAL_STATES.has(job.state);
        const buttons: HTMLElement[] = [];
        if (job.kind !== 'lease' && supports(state.config, 'logs')) {
          buttons.push(
            h('button', { class: 'jp-sched-button', 'data-key': `logs-${job.id}`, onclick: () => actions.openLogs(job), 'aria-label': `Open logs of ${job.name}` }, 'Logs')
          );
        }
        if (job.kind === 'lease' && !done) {
          buttons.push(h('button', { class: 'jp-sched-button', 'data-key': `keep-${job.id}`, onclick: () => actions.keepalive(job) }, 'Keep alive'));
        }
        if (!done) {
          buttons.push(
            h(
              'button',
              { class: 'jp-sched-button jp-sched-danger', 'data-key': `cancel-${job.id}`, onclick: () => actions.cancel(job), 'aria-label': `Cancel ${job.name}` },
              job.kind === 'lease' ? 'Release' : 'Cancel'
            )
          );
        } else if (job.kind !== 'lease') {
          buttons.push(h('button', { class: 'jp-sched-button', 'data-key': `resubmit-${job.id}`, onclick: () => actions.resubmit(job) }, 'Resubmit'));
        }
        const detail = isWaiting(job.state)
            ? queueLine(job, now)
            : done
              ? outcome(job)
              : job.allocation
                ? `on ${job.allocation.node} · GPU${job.allocation.gpu_uuids.length === 1 ? '' : 's'} ${job.allocation.gpu_uuids.map(u => u.slice(0, 12)).join(', ')}`
                : '';
        return jobRow(job, state, [
          h(
            'div',
            { class: 'jp-sched-job-meta' },
            `elapsed ${formatElapsed(job, now)}`,
            util !== null ? ` · GPU use ${Math.round(util)}%` : ''
          ),
          util !== null ? bar(util / 100, `GPU use ${Math.round(util)}%`, 'jp-sched-bar-util') : null,
          detail ? h('div', { class: 'jp-sched-reason' }, detail) : null,
          h('div', { class: 'jp-sched-actions' }, ...buttons)
        ]);
      })
    )
  ];
}

/** GPUs in use now under a quota line: server-reported `used`, else summed from running queue rows. */
export function quotaUsed(q: IQuota, state: PanelState): number {
  if (typeof q.used === 'number') {
    return q.used;
  }
  const usage = state.quotas?.usage;
  if (usage) {
    return usage
      .filter(u => u.team === q.team && (q.user === null || u.user === q.user) && (q.gpu_model === '*' || u.gpu_model === q.gpu_model))
      .reduce((sum, u) => sum + u.gpus, 0);
  }
  const models = new Map((state.inventory?.gpus ?? []).map(g => [g.uuid, g.model]));
  let used = 0;
  for (const job of state.queue) {
    if ((job.state !== 'running' && job.state !== 'admitted') || job.team !== q.team || (q.user && job.user !== q.user)) {
      continue;
    }
    for (const uuid of job.allocation?.gpu_uuids ?? []) {
      if (q.gpu_model === '*' || models.get(uuid) === q.gpu_model) {
        used += (job.allocation?.gpu_milli ?? 1000) / 1000;
      }
    }
  }
  return used;
}

/** Quota: my team's and my lines (usage vs guaranteed and borrowing limit), GPU-hours vs budget. */
export function renderQuota(state: PanelState): (Node | null)[] {
  const qs = state.quotas;
  if (!qs) {
    return [h('p', { class: 'jp-sched-muted' }, 'Loading quotas…')];
  }
  const me = state.me;
  const teams = new Set([me?.team, ...(me?.teams ?? [])].filter((t): t is string => !!t));
  const mineOrTeam = (line: { team: string; user: string | null }) => (line.user ? line.user === me?.user : teams.size === 0 || teams.has(line.team));
  // `GET me` answers my team's lines and budgets with GPU-hours used; else filter `GET quotas`
  const relevant = me?.quotas ?? qs.quotas.filter(mineOrTeam);
  const budgets = me?.budgets ?? (qs.budgets ?? []).filter(mineOrTeam);
  const out: (Node | null)[] = [];
  if (me) {
    const inUse = me.in_use;
    out.push(
      h(
        'p',
        { class: 'jp-sched-muted jp-sched-me' },
        `${me.user}${me.team ? ` · team ${me.team}` : ''}`,
        inUse ? ` · holding ${formatNumber(inUse.gpus, 2)} GPU${inUse.gpus === 1 ? '' : 's'} (${inUse.jobs} job${inUse.jobs === 1 ? '' : 's'}, ${inUse.leases} lease${inUse.leases === 1 ? '' : 's'})` : '',
        typeof me.gpu_hours_7d === 'number' ? ` · ${formatNumber(me.gpu_hours_7d, 2)} GPU-hours in 7 days` : ''
      )
    );
  }
  if (!relevant.length) {
    out.push(h('p', { class: 'jp-sched-muted' }, `No quota lines for ${[...teams].join(', ') || 'your team'}: you may use idle GPUs, preemptible.`));
  }
  for (const q of relevant) {
    const used = quotaUsed(q, state);
    const f = quotaFractions(used, q.guaranteed, q.borrowing_limit);
    out.push(
      h(
        'div',
        { class: 'jp-sched-quota', 'data-quota': quotaLabel(q) },
        h('div', { class: 'jp-sched-quota-label' }, quotaLabel(q)),
        h(
          'div',
          { class: 'jp-sched-quota-bar', role: 'meter', 'aria-label': f.text, 'aria-valuenow': used, 'aria-valuemin': 0, 'aria-valuemax': f.max ?? used, title: f.text },
          h('div', { class: `jp-sched-quota-used${used > q.guaranteed ? ' jp-sched-borrowing' : ''}`, style: { width: `${f.usedFraction * 100}%` } }),
          h('div', { class: 'jp-sched-quota-mark', style: { left: `${f.guaranteedFraction * 100}%` } })
        ),
        h('div', { class: 'jp-sched-muted' }, f.text)
      )
    );
  }
  for (const b of budgets) {
    const used = b.used_gpu_hours;
    out.push(
      h(
        'div',
        { class: 'jp-sched-quota jp-sched-budget' },
        h('div', { class: 'jp-sched-quota-label' }, `${b.user ? `${b.team} / ${b.user}` : b.team} · GPU-hours per ${b.period}`),
        typeof used === 'number' ? bar(used / Math.max(b.gpu_hours, 1e-9), `${formatNumber(used)} of ${formatNumber(b.gpu_hours)} GPU-hours`) : null,
        h(
          'div',
          { class: 'jp-sched-muted' },
          typeof used === 'number'
            ? `${formatNumber(used)} of ${formatNumber(b.gpu_hours)} GPU-hours used this ${b.period}`
            : `budget ${formatNumber(b.gpu_hours)} GPU-hours per ${b.period}`
        )
      )
    );
  }
  return out;
}
