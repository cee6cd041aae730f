/**
 * Inventory: nodes and GPUs as one grid (ARIA grid pattern: one tab stop, arrow keys move between
 * GPUs, Home/End to the ends), each GPU with model, memory, live utilization and memory bars, a
 * sparkline from the telemetry history, who holds it, and its health. Simulated GPUs are marked;
 * a server without GPUs says so (case 015).
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { formatMiB, serverText, shownText, sparklinePath } from '../format';
import type { IHolder, ISchedModel, ISchedSection } from '../tokens';
import { ACTIVE_STATES, gpuInfo, type IGpuInfo, nodeInfo } from '../types';
import { glossaryTitle } from '../glossary';
import { Bar, ErrorNote, ModelView } from './base';

/** Samples drawn in a GPU's sparkline. */
export const SPARK_POINTS = 30;

function Sparkline(props: { values: number[] }): React.ReactElement | null {
  if (props.values.length < 2) {
    return null;
  }
  return (
    <svg className="jp-sched-spark" width={60} height={16} viewBox="0 0 60 16" preserveAspectRatio="none" aria-hidden="true" focusable="false">
      <path d={sparklinePath(props.values, 60, 16)} />
    </svg>
  );
}

/** `unhealthy: Xid 94, since 2024-10-25 02:19 UTC` (case 018: the reason and since when). */
export function healthText(gpu: IGpuInfo, trans: TranslationBundle): string {
  let text = gpu.healthReason ? `${gpu.health}: ${gpu.healthReason}` : gpu.health;
  const since = Date.parse(gpu.healthSince);
  if (!isNaN(since)) {
    text += trans.__(', since %1 UTC', new Date(since).toISOString().slice(0, 16).replace('T', ' '));
  }
  return shownText(text);
}

/** One sentence for a GPU tile: what a screen reader says when the tile gets focus. */
export function gpuLabel(gpu: IGpuInfo, holder: IHolder | undefined, live: { util: number | null; used: number | null; note: string }, trans: TranslationBundle): string {
  const parts = [trans.__('GPU %1 on %2: %3, %4', gpu.index, gpu.node, gpu.model, formatMiB(gpu.memoryMib))];
  if (gpu.simulated) {
    parts[0] += trans.__(', simulated');
  }
  parts.push(
    holder
      ? holder.shared
        ? trans.__('shared by %1 jobs: %2 (%3)', holder.shared, holder.name, holder.user)
        : holder.kind === 'lease'
          ? trans.__('lease %1 (%2)', holder.name, holder.user)
          : holder.share
            ? trans.__('job %1 (%2), %3 of it', holder.name, holder.user, holder.share)
            : trans.__('job %1 (%2)', holder.name, holder.user)
      : trans.__('free')
  );
  if (live.util !== null) {
    parts.push(trans.__('utilization %1%', Math.round(live.util)));
  } else if (live.note) {
    parts.push(trans.__('utilization unknown: %1', live.note));
  }
  if (live.used !== null) {
    parts.push(trans.__('memory %1 used', formatMiB(live.used)));
  }
  if (!gpu.healthy) {
    parts.push(healthText(gpu, trans));
  }
  if (gpu.foreignMemoryMib > 0) {
    parts.push(trans.__('%1 held by processes the scheduler did not start', formatMiB(gpu.foreignMemoryMib)));
  }
  return shownText(parts.join('; ')); // node, model and holder names' hidden characters as escapes (s30)
}

interface IGridProps {
  model: ISchedModel;
  trans: TranslationBundle;
}

/** The GPU grid with a roving tab stop. */
function GpuGrid({ model, trans }: IGridProps): React.ReactElement {
  const inventory = model.inventory!;
  const holders = model.holders();
  const nodes = inventory.nodes.map(n => nodeInfo(n));
  const order = nodes.flatMap(n => n.gpus.map(g => g.uuid));
  const [active, setActive] = React.useState<string | null>(null);
  const current = active && order.includes(active) ? active : (order[0] ?? null);
  const gridRef = React.useRef<HTMLDivElement>(null);

  const focusCell = (uuid: string | undefined): void => {
    if (!uuid) {
      return;
    }
    setActive(uuid);
    const cells = gridRef.current?.querySelectorAll<HTMLElement>('[data-gpu-uuid]') ?? [];
    [...cells].find(c => c.dataset.gpuUuid === uuid)?.focus();
  };

  /** The cell visually above/below `from` (nearest column), from the laid-out positions; by index without layout. */
  const vertical = (from: string, direction: 1 | -1): string | undefined => {
    const cells = [...(gridRef.current?.querySelectorAll<HTMLElement>('[data-gpu-uuid]') ?? [])];
    const here = cells.find(c => c.dataset.gpuUuid === from);
    if (!here) {
      return undefined;
    }
    const box = here.getBoundingClientRect();
    if (box.height > 0) {
      const candidates = cells
        .map(c => ({ c, r: c.getBoundingClientRect() }))
        .filter(({ r }) => (direction > 0 ? r.top >= box.bottom - 1 : r.bottom <= box.top + 1));
      if (!candidates.length) {
        return undefined;
      }
      const rowTop = direction > 0 ? Math.min(...candidates.map(x => x.r.top)) : Math.max(...candidates.map(x => x.r.top));
      const row = candidates.filter(x => Math.abs(x.r.top - rowTop) < 2);
      row.sort((a, b) => Math.abs(a.r.left - box.left) - Math.abs(b.r.left - box.left));
      return row[0].c.dataset.gpuUuid;
    }
    // no layout (tests, hidden): the same position on the previous/next node
    const nodeIndex = nodes.findIndex(n => n.gpus.some(g => g.uuid === from));
    const position = nodes[nodeIndex].gpus.findIndex(g => g.uuid === from);
    const target = nodes[nodeIndex + direction];
    return target?.gpus[Math.min(position, target.gpus.length - 1)]?.uuid;
  };

  const onKeyDown = (event: React.KeyboardEvent): void => {
    if (!current) {
      return;
    }
    const index = order.indexOf(current);
    let next: string | undefined;
    switch (event.key) {
      case 'ArrowRight':
        next = order[index + 1];
        break;
      case 'ArrowLeft':
        next = order[index - 1];
        break;
      case 'ArrowDown':
        next = vertical(current, 1);
        break;
      case 'ArrowUp':
        next = vertical(current, -1);
        break;
      case 'Home':
        next = order[0];
        break;
      case 'End':
        next = order[order.length - 1];
        break;
      default:
        return;
    }
    event.preventDefault();
    focusCell(next);
  };

  return (
    <div className="jp-sched-gpugrid" role="grid" aria-label={trans.__('GPUs by node')} aria-readonly="true" ref={gridRef} onKeyDown={onKeyDown}>
      {nodes.map(node => (
        <div className="jp-sched-node" role="row" key={node.name} data-node={node.name}>
          <div className="jp-sched-node-head" role="rowheader">
            <span className="jp-sched-node-name">{shownText(node.name)}</span>{' '}
            <span className="jp-sched-muted">{trans._n('%1 GPU', '%1 GPUs', node.gpus.length)}</span>
            {!node.ready ? <> <span className="jp-sched-tag jp-sched-tag-bad">{trans.__('not ready')}</span></> : null}
            {node.unschedulable ? <> <span className="jp-sched-tag jp-sched-tag-bad" title={node.cordonText ? serverText(node.cordonText) : undefined}>{trans.__('cordoned')}</span></> : null}
            {/* why, by whom and since when (hubadmin24: jupyter-sched nodes cordon), the server's sentence */}
            {node.cordonText ? <div className="jp-sched-muted jp-sched-cordon">{serverText(node.cordonText)}</div> : null}
          </div>
          <div className="jp-sched-grid">
            {node.gpus.map(g => {
              const gpu = gpuInfo(g);
              const holder = holders.get(gpu.uuid);
              const latest = model.history.latest(gpu.uuid);
              const live = { util: latest?.util ?? null, used: latest?.memoryUsedMib ?? null, note: latest?.note ?? '' };
              const label = gpuLabel(gpu, holder, live, trans);
              const classes = ['jp-sched-gpu'];
              if (gpu.simulated) {
                classes.push('jp-sched-simulated');
              }
              if (holder) {
                classes.push('jp-sched-busy');
              }
              if (!gpu.healthy) {
                classes.push('jp-sched-unhealthy');
              }
              const owner = holder ? shownText(`${holder.name}${holder.share ? ` ${holder.share} GPU` : ''} (${holder.user})`) : trans.__('free');
              return (
                <div
                  key={gpu.uuid}
                  className={classes.join(' ')}
                  role="gridcell"
                  tabIndex={gpu.uuid === current ? 0 : -1}
                  data-gpu-uuid={gpu.uuid}
                  data-health={gpu.health}
                  aria-label={label}
                  title={label}
                  onFocus={() => setActive(gpu.uuid)}
                >
                  <div className="jp-sched-gpu-head" aria-hidden="true">
                    <span className="jp-sched-gpu-index">#{gpu.index}</span>
                    {gpu.simulated ? <span className="jp-sched-tag jp-sched-tag-sim">{trans.__('SIM')}</span> : null}
                  </div>
                  <div className="jp-sched-gpu-model" aria-hidden="true">
                    {shownText(gpu.model)}
                  </div>
                  <div className="jp-sched-gpu-meta" aria-hidden="true">
                    {formatMiB(gpu.memoryMib)}
                    {gpu.migDevices ? ` · MIG ×${gpu.migDevices}` : ''}
                  </div>
                  <Bar fraction={(live.util ?? 0) / 100} className="jp-sched-bar-util" />
                  <Bar fraction={live.used === null ? 0 : live.used / Math.max(1, gpu.memoryMib)} className="jp-sched-bar-mem" />
                  <Sparkline values={model.history.utilization(gpu.uuid, SPARK_POINTS)} />
                  <div
                    // the holder's name on one line with an ellipsis, whole on hover (new user 25, N9: 11 lines)
                    className={`jp-sched-gpu-owner${holder ? '' : ' jp-sched-free'}${gpu.healthy ? ' jp-sched-clamp' : ' jp-sched-health'}`}
                    title={gpu.healthy && holder ? owner : undefined}
                    aria-hidden="true"
                  >
                    {gpu.healthy ? owner : `⚠ ${healthText(gpu, trans)}`}
                  </div>
                </div>
              );
            })}
          </div>
        </div>
      ))}
    </div>
  );
}

/** The Inventory section body. */
export class InventoryView extends ModelView {
  constructor(ctx: ISchedSection.IContext) {
    super(ctx, {
      resources: ['inventory', 'queue'],
      signals: [ctx.model.inventoryChanged, ctx.model.telemetry, ctx.model.queueChanged, ctx.model.jobsChanged, ctx.model.errorChanged]
    });
    this.addClass('jp-sched-inventory');
  }

  /**
   * "3/4 free" for the section's title bar; with work on GPUs the inventory no longer lists (the
   * queue's and my jobs' `gone_gpus`), "2/2 free · 2 GPUs held off the inventory (gonejob)": the
   * bare "2/2 free" beside a card running on two gone GPUs read as "nothing is held" (new user 24, N8).
   */
  static badge(model: ISchedModel, trans: TranslationBundle): string {
    const gpus = model.inventory?.gpus ?? [];
    if (!model.inventory) {
      return '';
    }
    const busy = model.holders();
    const free = gpus.filter(g => !busy.has(g.uuid) && gpuInfo(g).healthy).length;
    const said = trans.__('%1/%2 free', free, gpus.length);
    const offList = new Map<string, { name: string; gone: readonly string[] }>();
    for (const job of [...model.queue, ...model.jobs]) {
      const gone = (job as { gone_gpus?: readonly string[] | null }).gone_gpus ?? [];
      if (gone.length && ACTIVE_STATES.has(job.state) && !offList.has(job.id)) {
        offList.set(job.id, { name: job.name || job.id, gone });
      }
    }
    if (!offList.size) {
      return said;
    }
    const held = new Set([...offList.values()].flatMap(j => [...j.gone])).size;
    const names = [...offList.values()].map(j => j.name).join(', ');
    return `${said} · ${trans._n('%1 GPU held off the inventory (%2)', '%1 GPUs held off the inventory (%2)', held, names)}`;
  }

  protected renderView(): React.ReactElement {
    const { model, trans } = this;
    const inv = model.inventory;
    const error = <ErrorNote error={model.error('inventory')} />;
    if (!inv) {
      return (
        <div>
          {error}
          <p className="jp-sched-muted">{trans.__('Loading inventory…')}</p>
        </div>
      );
    }
    if (!inv.gpus.length) {
      const nvml = inv.nvml && inv.nvml.available === false ? inv.nvml.error : '';
      // case 027 Z: on Kubernetes the advice follows the executor in use (no "use the Kubernetes executor")
      const cluster = inv.source === 'kubernetes';
      return (
        <div>
          {error}
          <div className="jp-sched-empty jp-sched-nogpus">
            <strong>{cluster ? trans.__('This cluster has no GPU nodes') : trans.__('No GPUs on this server')}</strong>
            {nvml ? <p>{shownText(trans.__('NVML: %1', nvml))}</p> : null}
            <p className="jp-sched-muted">
              {cluster
                ? trans.__('No node advertises nvidia.com/gpu or a MIG resource. CPU-only work still runs; ask an admin to add a GPU node pool.')
                : trans.__('CPU-only work still runs; GPU work needs a GPU node or the Kubernetes executor.')}
            </p>
          </div>
        </div>
      );
    }
    const simulated = inv.simulated || inv.gpus.some(g => g.simulated);
    return (
      <div>
        {error}
        {simulated ? (
          <p className="jp-sched-banner jp-sched-banner-sim" title={glossaryTitle('simulated NVML', trans)}>
            {trans.__('Simulated GPUs')}
            {/* plain words first, NVML's own after (new user 30, N4: "Simulated GPUs — NVML: NVML shared library not found") */}
            {inv.nvml && inv.nvml.available === false && inv.nvml.error
              ? shownText(` — ${trans.__('no NVIDIA driver found on this machine')}; NVML: ${inv.nvml.error}`)
              : ''}
            {'. '}
            {trans.__('Utilization follows the real CPU activity of the jobs.')}
          </p>
        ) : null}
        <GpuGrid model={model} trans={trans} />
      </div>
    );
  }
}
