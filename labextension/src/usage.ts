/**
 * "GPU usage": a sidebar section with a utilization and memory chart for each of my running jobs
 * and leases, and a command that opens one GPU's chart in the main area (the inventory's
 * click-through). Charts break their lines where telemetry was blank or suspect and label the gap
 * (issue 18: a blank reading pauses the idle clock and is never drawn as 0 %; a latched 100 % is
 * never drawn as busy).
 *
 * Data: `GET api/sched/telemetry/history` (the server's stored one-minute rollups, or its live
 * samples in 5-second steps for work younger than half an hour), refreshed every few seconds while
 * the section shows; until that answers (or on a server without the route) the model's live
 * telemetry history ({@link ISchedModel.history}) — a sample without a valid reading is a gap.
 */
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, InputDialog, MainAreaWidget } from '@jupyterlab/apputils';
import type { IDisposable } from '@lumino/disposable';
import { Widget } from '@lumino/widgets';

import { h, replaceKeepingFocus } from './dom';
import { shownText } from './format';
import { ISchedModel, ISchedSections } from './tokens';
import type { ISample, Job } from './types';
import { type IUsageGap, type IUsagePoint, pointsFromHistory, renderUsageChart } from './usagechart';

/** Command: open one GPU's chart, args `{gpu: uuid}`. */
export const GPU_USAGE_COMMAND = 'jupyter-sched:gpu-usage';

const LIVE_STATES = new Set(['admitted', 'running']);

/** A sample as a chart point; its validity is the server's (`validity`) or, when absent, blank
 * for a sample without a utilization. */
export function pointOf(sample: ISample): IUsagePoint {
  const extra = sample as ISample & { validity?: string; display?: string };
  const validity = extra.validity ?? (sample.util === null ? 'blank' : 'valid');
  const note = validity === 'valid' ? '' : sample.note || extra.display || 'no valid reading';
  return {
    device: sample.gpuUuid,
    t: sample.t,
    util: validity === 'valid' ? sample.util : null,
    memMib: sample.memoryUsedMib,
    validity,
    note
  };
}

/** The GPU uuids a job holds (every worker). */
export function jobGpus(job: Job): string[] {
  const alloc = job.allocation;
  if (!alloc) {
    return [];
  }
  const workers = alloc.workers?.length ? alloc.workers : [{ gpu_uuids: alloc.gpu_uuids ?? [] }];
  return [...new Set(workers.flatMap(w => w.gpu_uuids ?? []))];
}

/** Points of some GPUs since `since` (ms), from the model's history. */
export function pointsFor(model: ISchedModel, gpus: readonly string[], since = 0): IUsagePoint[] {
  return gpus.flatMap(uuid => model.history.history(uuid).filter(s => s.t >= since).map(pointOf));
}

/** A history answer (or live points) for one chart. */
export interface IHistory {
  points: IUsagePoint[];
  gaps: IUsageGap[] | null;
  stepMs: number;
}

function chartBlock(title: string, history: IHistory, key: string): HTMLElement {
  return h(
    'div',
    { class: 'jp-sched-usage-item', 'data-key': key },
    h('div', { class: 'jp-sched-usage-title' }, title),
    history.points.length
      ? renderUsageChart(history.points, history.gaps, { title, stepMs: history.stepMs })
      : h('p', { class: 'jp-sched-muted' }, 'No telemetry samples yet.')
  );
}

/**
 * A history without the one-step "missing" spans at its ends: the step the work started in (before
 * its first sample) and the step under way now (not sampled yet) are not telemetry that failed
 * (new user 6, F8: a 2-minute-old job's chart said "missing: no telemetry" at both edges while
 * every reading was valid). A longer missing span at an end stays: that one is a real gap.
 */
export function trimEdges(history: IHistory): IHistory {
  const { points, gaps, stepMs } = history;
  if (!gaps || !points.length) {
    return history;
  }
  const t0 = Math.min(...points.map(p => p.t));
  const t1 = Math.max(...points.map(p => p.t)) + stepMs;
  const edge = (g: IUsageGap): boolean =>
    g.validity === 'missing' && g.end - g.start <= stepMs && (g.start <= t0 || g.end >= t1);
  const dropped = gaps.filter(edge);
  if (!dropped.length) {
    return history;
  }
  const inside = (p: IUsagePoint): boolean =>
    p.validity === 'missing' && dropped.some(g => g.device === p.device && p.t >= g.start && p.t < g.end);
  return { ...history, points: points.filter(p => !inside(p)), gaps: gaps.filter(g => !edge(g)) };
}

/** Seconds per point for work that started at `started` (ms): 5 s while young, else minutes. */
export function stepFor(started: number, now: number): number {
  return now - started < 30 * 60 * 1000 ? 5 : 60;
}

/**
 * Ask the server for a job's (lease's, GPU's) history; null when it cannot answer (an older
 * server without the route, or an error) — the caller then draws the live samples.
 */
export async function fetchHistory(model: ISchedModel, query: { job?: string; lease?: string; gpu?: string },
                                   stepS: number): Promise<IHistory | null> {
  try {
    const answer = await model.client.request('getTelemetryHistory', { query: { ...query, step_s: stepS } });
    const { points, gaps } = pointsFromHistory(answer);
    return trimEdges({ points, gaps, stepMs: stepS * 1000 });
  } catch {
    return null;
  }
}

/** The section's body: one chart per running job and lease of mine. */
export class UsageView extends Widget {
  private readonly connections: IDisposable[] = [];
  private pending = false;
  private readonly fetched = new Map<string, IHistory>();
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly model: ISchedModel, readonly refreshMs = 5000) {
    super();
    this.addClass('jp-sched-usage');
    const schedule = (): void => this.schedule();
    model.telemetry.connect(schedule);
    model.jobsChanged.connect(schedule);
    this.connections.push(
      { dispose: () => model.telemetry.disconnect(schedule), isDisposed: false },
      { dispose: () => model.jobsChanged.disconnect(schedule), isDisposed: false },
      model.watch('jobs')
    );
    this.render();
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), refreshMs);
  }

  dispose(): void {
    if (this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
    for (const c of this.connections.splice(0)) {
      c.dispose();
    }
    super.dispose();
  }

  /** Running jobs and leases of mine that hold GPUs. */
  work(): Job[] {
    return [...this.model.jobs, ...this.model.leases].filter(j => LIVE_STATES.has(j.state) && jobGpus(j).length);
  }

  /** Re-read every chart's history from the server. */
  async refresh(): Promise<void> {
    const now = Date.now();
    await Promise.all(
      this.work().map(async job => {
        const started = job.started_at ? Date.parse(job.started_at) : now;
        const query = job.kind === 'lease' ? { lease: job.id } : { job: job.id };
        const history = await fetchHistory(this.model, query, stepFor(started, now));
        if (history) {
          this.fetched.set(job.id, history);
        }
      })
    );
    this.schedule();
  }

  /** Re-render at most once per animation frame (telemetry arrives every second per GPU). */
  private schedule(): void {
    if (this.pending || this.isDisposed) {
      return;
    }
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      if (!this.isDisposed) {
        this.render();
      }
    });
  }

  render(): void {
    const blocks = this.work().map(job => {
      const since = job.started_at ? Date.parse(job.started_at) : 0;
      const kind = job.kind === 'lease' ? 'lease' : 'job';
      const history = this.fetched.get(job.id) ?? {
        points: pointsFor(this.model, jobGpus(job), since),
        gaps: null,
        stepMs: 1000
      };
      return chartBlock(`${kind} ${job.name} (${job.id})`, history, `usage-${job.id}`);
    });
    replaceKeepingFocus(
      this.node,
      blocks.length ? blocks : h('p', { class: 'jp-sched-muted' }, 'No running job or lease of yours holds a GPU.')
    );
  }
}

/** One GPU's chart, for the main area. */
export class GpuUsageView extends Widget {
  private readonly onTelemetry = (): void => this.render();

  constructor(private readonly model: ISchedModel, readonly gpu: string) {
    super();
    this.addClass('jp-sched-usage');
    model.telemetry.connect(this.onTelemetry);
    this.render();
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), 30000);
  }

  private timer: ReturnType<typeof setInterval> | null = null;

  dispose(): void {
    if (this.timer !== null) {
      clearInterval(this.timer);
    }
    this.model.telemetry.disconnect(this.onTelemetry);
    super.dispose();
  }

  render(): void {
    if (!this.model.supports('telemetry')) {
      // a chart that could never show anything (newuser39 n15: a grey "missing: no telemetry" chart): say why
      replaceKeepingFocus(this.node, h('p', { class: 'jp-sched-usage-off', role: 'status' },
        `${gpuUsageTitle(this.model, this.gpu)}: telemetry is off on this server, so no GPU's utilization or memory is recorded — the admin turns it on (c.SchedApp.telemetry_source)`));
      return;
    }
    const history = this.fetched ?? { points: pointsFor(this.model, [this.gpu]), gaps: null, stepMs: 1000 };
    replaceKeepingFocus(this.node, chartBlock(`GPU ${this.gpu}`, history, `gpu-${this.gpu}`));
  }

  private fetched: IHistory | null = null;

  /** Re-read the GPU's last hour from the server (minutes), then redraw. */
  async refresh(): Promise<void> {
    if (!this.model.supports('telemetry')) {
      return;
    }
    this.fetched = (await fetchHistory(this.model, { gpu: this.gpu }, 60)) ?? this.fetched;
    this.render();
  }
}

/**
 * The GPU a `jupyter-sched:gpu-usage` call is about: its `gpu` argument, else the GPU tile the
 * context menu was opened on (inventory tiles carry `data-gpu-uuid`), else the only GPU there is; with
 * several, undefined: the command asks which (newuser39 n15: the palette charted GPU #0 without asking).
 */
export function gpuOfCommand(args: { gpu?: unknown }, tileUuid: string | undefined, model: ISchedModel): string | undefined {
  const gpus = model.inventory?.gpus ?? [];
  return typeof args.gpu === 'string' ? args.gpu : (tileUuid ?? (gpus.length === 1 ? gpus[0].uuid : undefined));
}

/** A GPU as the inventory numbers it, for the tab and the chooser: `GPU #0 (g1) utilization` (newuser39 n15: the tab
 * read "GPU usage GPU-static-g", its uuid cut). */
export function gpuUsageTitle(model: ISchedModel, uuid: string): string {
  const gpu = model.inventory?.gpus.find(g => g.uuid === uuid);
  return gpu ? `GPU #${String(gpu.index)} (${String(gpu.node)}) utilization` : `GPU ${uuid} utilization`;
}

/** The plugin: the "GPU usage" section (when the sections registry is there) and the GPU command. */
export const usagePlugin: JupyterFrontEndPlugin<void> = {
  id: '@jupyter-sched/labextension:usage',
  description: 'Utilization and memory over time for my jobs, leases and any GPU, with gaps where telemetry was blank or suspect.',
  autoStart: true,
  requires: [ISchedModel],
  optional: [ISchedSections, ICommandPalette],
  activate: (app: JupyterFrontEnd, model: ISchedModel, sections: ISchedSections | null, palette: ICommandPalette | null) => {
    sections?.add({
      id: 'utilization',
      title: 'GPU usage',
      rank: 150,
      isAvailable: m => m.supports('telemetry'),
      create: context => ({ widget: new UsageView(context.model) })
    });
    app.commands.addCommand(GPU_USAGE_COMMAND, {
      // what it is — one GPU's utilization over time — not "GPU usage", which `jupyter-sched usage` and the panel's
      // Usage report call GPU-hours (newuser39 n15)
      label: args => (typeof args.gpu === 'string' ? gpuUsageTitle(model, args.gpu) : 'GPU Utilization of a GPU…'),
      caption: 'Utilization and memory of one GPU over time (asks which GPU), gaps where telemetry was blank or suspect; GPU-hours: the Usage report',
      execute: async args => {
        let gpu = gpuOfCommand(args, app.contextMenuHitTest(n => !!n.dataset.gpuUuid)?.dataset.gpuUuid, model);
        const gpus = model.inventory?.gpus ?? [];
        if (!gpu && gpus.length) {
          const titles = gpus.map(g => `${gpuUsageTitle(model, g.uuid)} — ${String(g.model)}`);
          const chosen = await InputDialog.getItem({ title: 'Utilization of which GPU?', items: titles });
          gpu = chosen.button.accept && chosen.value ? gpus[titles.indexOf(chosen.value)]?.uuid : undefined;
        }
        if (!gpu) {
          return;
        }
        const main = new MainAreaWidget({ content: new GpuUsageView(model, gpu) });
        main.id = `jupyter-sched-gpu-usage-${gpu}`;
        main.title.label = shownText(gpuUsageTitle(model, gpu));
        main.title.caption = shownText(`Utilization and memory of GPU ${gpu} over time`);
        main.title.closable = true;
        app.shell.add(main, 'main');
        app.shell.activateById(main.id);
      }
    });
    palette?.addItem({ command: GPU_USAGE_COMMAND, category: 'GPUs' });
  }
};
