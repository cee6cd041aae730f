/**
 * A job's (or a GPU's) utilization and memory over time, as a small SVG chart whose lines break
 * where telemetry was not valid: a blank reading (DCGM blank, MIG without profiling metrics), a
 * suspect one (a 101 % reading, a utilization latch at 100 % with no process and 0 MiB) or no
 * reading at all is drawn as a gap, never as a number, and each gap span is shaded with its reason
 * (`blank: DCGM blank value (no data)`) — issue 18, cases 009 and 026.
 *
 * Data: `GET api/sched/telemetry/history` (points per device and step, gap spans) via
 * {@link pointsFromHistory}; nothing here touches the network. Path building is pure
 * ({@link linePath}, {@link gapsOf}) so it is tested without a DOM.
 */
import { svg } from './dom';

/** One device-step of history. `util` is null in a gap. */
export interface IUsagePoint {
  device: string;
  /** Milliseconds since the epoch (start of the step). */
  t: number;
  util: number | null;
  memMib: number | null;
  /** `valid` | `blank` | `suspect` | `missing`. */
  validity: string;
  note: string;
}

/** Consecutive gap steps of one device with one reason, `[start, end)` in ms. */
export interface IUsageGap {
  device: string;
  start: number;
  end: number;
  validity: string;
  label: string;
}

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}

function num(value: unknown): number | null {
  return typeof value === 'number' && isFinite(value) ? value : null;
}

/** Read a `GET telemetry/history` answer: `{points: [...], gaps: [...]}`. */
export function pointsFromHistory(answer: unknown): { points: IUsagePoint[]; gaps: IUsageGap[] } {
  const body = record(answer);
  const points: IUsagePoint[] = [];
  for (const raw of Array.isArray(body.points) ? body.points : []) {
    const p = record(raw);
    const t = typeof p.t === 'string' ? Date.parse(p.t) : NaN;
    if (!isFinite(t) || typeof p.gpu_uuid !== 'string') {
      continue;
    }
    const mig = num(p.mig_instance);
    const validity = typeof p.validity === 'string' ? p.validity : 'valid';
    points.push({
      device: mig === null ? p.gpu_uuid : `${p.gpu_uuid}/${mig}`,
      t,
      util: validity === 'valid' ? num(p.utilization_pct) : null,
      memMib: num(p.memory_used_mib),
      validity,
      note: typeof p.note === 'string' ? p.note : ''
    });
  }
  const gaps: IUsageGap[] = [];
  for (const raw of Array.isArray(body.gaps) ? body.gaps : []) {
    const g = record(raw);
    const start = typeof g.start === 'string' ? Date.parse(g.start) : NaN;
    const end = typeof g.end === 'string' ? Date.parse(g.end) : NaN;
    if (!isFinite(start) || !isFinite(end) || typeof g.gpu_uuid !== 'string') {
      continue;
    }
    const mig = num(g.mig_instance);
    const validity = typeof g.validity === 'string' ? g.validity : 'blank';
    gaps.push({
      device: mig === null ? g.gpu_uuid : `${g.gpu_uuid}/${mig}`,
      start,
      end,
      validity,
      label: typeof g.label === 'string' ? g.label : `${validity}: ${String(g.note ?? '')}`
    });
  }
  return { points, gaps };
}

/** The gap spans of points (when an answer carries none): consecutive non-valid steps per device. */
export function gapsOf(points: readonly IUsagePoint[], stepMs: number): IUsageGap[] {
  const out: IUsageGap[] = [];
  const byDevice = new Map<string, IUsagePoint[]>();
  for (const p of points) {
    const list = byDevice.get(p.device) ?? [];
    list.push(p);
    byDevice.set(p.device, list);
  }
  for (const [device, list] of byDevice) {
    list.sort((a, b) => a.t - b.t);
    let open: IUsageGap | null = null;
    for (const p of list) {
      const label = `${p.validity}: ${p.note}`;
      if (open && (p.validity === 'valid' || open.label !== label)) {
        open.end = p.t;
        out.push(open);
        open = null;
      }
      if (p.validity !== 'valid' && !open) {
        open = { device, start: p.t, end: p.t + stepMs, validity: p.validity, label };
      }
    }
    if (open) {
      open.end = list[list.length - 1].t + stepMs;
      out.push(open);
    }
  }
  return out;
}

/** Geometry of the plot area. */
export interface IFrame {
  t0: number;
  t1: number;
  width: number;
  height: number;
  /** Value at the top of the plot (100 for %). */
  yMax: number;
}

/**
 * An SVG path through `values` (time-ordered), starting a new sub-path (`M`) after every null:
 * the line is broken, never interpolated, across a gap.
 */
export function linePath(samples: readonly { t: number; v: number | null }[], frame: IFrame): string {
  const span = Math.max(1, frame.t1 - frame.t0);
  const parts: string[] = [];
  let drawing = false;
  for (const { t, v } of samples) {
    if (v === null || !isFinite(v)) {
      drawing = false;
      continue;
    }
    const x = ((t - frame.t0) / span) * frame.width;
    const y = frame.height - (Math.max(0, Math.min(frame.yMax, v)) / Math.max(1e-9, frame.yMax)) * frame.height;
    parts.push(`${drawing ? 'L' : 'M'}${x.toFixed(1)} ${y.toFixed(1)}`);
    drawing = true;
  }
  return parts.join(' ');
}

/** Width of one character of a gap label at its 9-px font, px (an upper estimate; style/usagechart.css). */
const LABEL_CHAR_PX = 5;

/** Options of {@link renderUsageChart}. */
export interface IChartOptions {
  title: string;
  width?: number;
  height?: number;
  /** Step of the points, ms (for gaps computed here and the last step's width). */
  stepMs?: number;
}

/**
 * Render the chart: utilization (%) as one line per device, memory (scaled to its peak) dashed,
 * gap spans shaded with their label on them; `role="img"` with a text summary for screen readers.
 */
export function renderUsageChart(points: readonly IUsagePoint[], gaps: readonly IUsageGap[] | null,
                                 options: IChartOptions): SVGElement {
  const width = options.width ?? 280;
  const height = options.height ?? 90;
  const stepMs = options.stepMs ?? 60000;
  const times = points.map(p => p.t);
  const t0 = times.length ? Math.min(...times) : 0;
  const t1 = times.length ? Math.max(...times) + stepMs : 1;
  const frame: IFrame = { t0, t1, width, height, yMax: 100 };
  const spans = gaps ?? gapsOf(points, stepMs);
  const memMax = Math.max(1, ...points.map(p => p.memMib ?? 0));
  const children: Element[] = [];
  const span = Math.max(1, t1 - t0);
  spans.forEach((gap, i) => {
    const x = ((gap.start - t0) / span) * width;
    const w = Math.max(1, ((gap.end - gap.start) / span) * width);
    const shade = svg('rect', {
      class: `jp-sched-chart-gap jp-sched-chart-gap-${gap.validity}`,
      x: x.toFixed(1),
      y: 0,
      width: w.toFixed(1),
      height,
      'data-gap': gap.label
    });
    const tip = svg('title', {});
    tip.textContent = `${gap.device}: ${gap.label}`;
    shade.appendChild(tip);
    children.push(shade);
    // the label runs rightwards from the gap's start when it fits, else leftwards from the gap's
    // end, so it is never cut at the chart's right edge (the gap's tooltip has the whole text)
    const textWidth = gap.label.length * LABEL_CHAR_PX;
    const fits = x + 2 + textWidth <= width;
    const label = svg('text', {
      class: 'jp-sched-chart-gap-label',
      x: (fits ? x + 2 : Math.min(width - 2, Math.max(textWidth + 2, x + w - 2))).toFixed(1),
      y: 10 + 10 * (i % 3),
      'text-anchor': fits ? 'start' : 'end'
    });
    label.textContent = gap.label;
    children.push(label);
  });
  const devices = [...new Set(points.map(p => p.device))];
  devices.forEach((device, i) => {
    const own = points.filter(p => p.device === device).sort((a, b) => a.t - b.t);
    children.push(
      svg('path', {
        class: `jp-sched-chart-util jp-sched-chart-series-${i % 4}`,
        d: linePath(own.map(p => ({ t: p.t, v: p.util })), frame),
        'data-device': device
      })
    );
    children.push(
      svg('path', {
        class: `jp-sched-chart-mem jp-sched-chart-series-${i % 4}`,
        d: linePath(own.map(p => ({ t: p.t, v: p.memMib === null ? null : (p.memMib / memMax) * 100 })), frame),
        'data-device': device
      })
    );
  });
  const valid = points.filter(p => p.util !== null);
  const summary =
    `${options.title}: ${devices.length} device${devices.length === 1 ? '' : 's'}, ` +
    (valid.length ? `utilization ${Math.round(valid[valid.length - 1].util as number)}% at the last valid reading` : 'no valid reading') +
    // each label once: repeated spans of one reason read "missing: no telemetry" three times (new user 4)
    (spans.length ? `; gaps: ${[...new Set(spans.map(g => g.label))].join('; ')}` : '');
  const root = svg('svg', {
    class: 'jp-sched-chart',
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    'aria-label': summary
  }, ...children);
  const title = svg('title', {});
  title.textContent = summary;
  root.insertBefore(title, root.firstChild);
  return root;
}
