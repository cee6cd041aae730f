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
import { shownText, wallTime } from './format';

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

/** Width of one character of the chart's 9-px text, px (an upper estimate; style/usagechart.css). */
const CHAR_PX = 5;

/** Space around the plot for the value axis (left), the time axis and the legend (below). */
const MARGIN = { left: 36, right: 6, top: 4, axis: 14, legendRow: 13 };

/** Tick spacings of the time axis, ms: the first that keeps labels apart is used. */
const TIME_STEPS = [5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400].map(
  s => s * 1000
);

/** Options of {@link renderUsageChart}. */
export interface IChartOptions {
  title: string;
  /** Size of the whole chart (plot, axes and legend), px; 320 × 150 by default. */
  width?: number;
  height?: number;
  /** Step of the points, ms (for gaps computed here and the last step's width). */
  stepMs?: number;
}

/** `14:05` in the panel's zone (as every time the panel shows: newuser36 n7), with seconds when the ticks are closer than a minute. */
function clock(t: number, seconds: boolean): string {
  return wallTime(new Date(t), seconds).clock;
}

/**
 * Ticks of the time axis over `[t0, t1)` for a plot `width` px wide: multiples of the first
 * spacing of {@link TIME_STEPS} whose labels (`14:05` or `14:05:30`) stay apart.
 */
export function timeTicks(t0: number, t1: number, width: number): { t: number; label: string }[] {
  const span = Math.max(1, t1 - t0);
  for (const step of TIME_STEPS) {
    const seconds = step < 60000;
    const labelPx = (seconds ? 8 : 5) * CHAR_PX + 14;
    if ((step / span) * width < labelPx) {
      continue;
    }
    // a label is centred on its tick: none so near an end that it would be cut or meet the zone's name
    const half = labelPx / 2 - 5;
    const out: { t: number; label: string }[] = [];
    // on the zone's round minutes (a +5:30 zone's hours are not UTC's)
    const shift = wallTime(new Date(t0)).offsetMinutes * 60000;
    for (let t = Math.ceil((t0 + shift) / step) * step - shift; t < t1; t += step) {
      const x = ((t - t0) / span) * width;
      if (x >= half && x <= width - half) {
        out.push({ t, label: clock(t, seconds) });
      }
    }
    return out;
  }
  return [];
}

/** `2048 MiB`, `2.5 GiB`. */
function mib(value: number): string {
  return value < 1024 ? `${Math.round(value)} MiB` : `${Number((value / 1024).toFixed(1))} GiB`;
}

/**
 * Labels of gap spans laid out so that none covers another: each reason is written once, on its
 * widest span, in the first of two rows where it does not overlap a label already placed there;
 * one that fits nowhere is left to the legend and the span's tooltip. `x` is where the text
 * starts (`start`) or ends (`end`): rightwards from the gap's start when it fits in the plot,
 * else leftwards from the gap's end.
 */
export function placeGapLabels(
  gaps: readonly { x: number; w: number; label: string }[],
  width: number,
  rows = 2
): { label: string; x: number; anchor: 'start' | 'end'; row: number }[] {
  const widest = new Map<string, { x: number; w: number; label: string }>();
  for (const gap of gaps) {
    const seen = widest.get(gap.label);
    if (!seen || gap.w > seen.w) {
      widest.set(gap.label, gap);
    }
  }
  const taken: [number, number][][] = Array.from({ length: rows }, () => []);
  const out: { label: string; x: number; anchor: 'start' | 'end'; row: number }[] = [];
  for (const gap of [...widest.values()].sort((a, b) => a.x - b.x)) {
    const textWidth = gap.label.length * CHAR_PX;
    const fits = gap.x + 2 + textWidth <= width;
    const end = Math.min(width - 2, Math.max(textWidth + 2, gap.x + gap.w - 2));
    const [from, to] = fits ? [gap.x + 2, gap.x + 2 + textWidth] : [end - textWidth, end];
    const row = taken.findIndex(spans => spans.every(([a, b]) => to + 4 <= a || from >= b + 4));
    if (row < 0) {
      continue;
    }
    taken[row].push([from, to]);
    out.push({ label: gap.label, x: fits ? from : end, anchor: fits ? 'start' : 'end', row });
  }
  return out;
}

function text(cls: string, x: number, y: number, content: string, anchor = 'start'): SVGElement {
  const node = svg('text', { class: cls, x: x.toFixed(1), y: y.toFixed(1), 'text-anchor': anchor });
  node.textContent = shownText(content);
  return node;
}

/**
 * Render the chart: utilization (%) as one line per device against a 0–100 % axis, memory
 * (scaled to its peak, which the legend states) dashed, gap spans shaded, each gap reason
 * written once where it does not cover another; a time axis (the panel's zone, named) and a legend below;
 * `role="img"` with a text summary for screen readers (new user 5 #17: no axes, no legend,
 * three "missing: no telemetry" labels on top of each other).
 */
export function renderUsageChart(points: readonly IUsagePoint[], gaps: readonly IUsageGap[] | null,
                                 options: IChartOptions): SVGElement {
  const width = options.width ?? 320;
  const stepMs = options.stepMs ?? 60000;
  const times = points.map(p => p.t);
  const t0 = times.length ? Math.min(...times) : 0;
  const t1 = times.length ? Math.max(...times) + stepMs : 1;
  const spans = gaps ?? gapsOf(points, stepMs);
  const devices = [...new Set(points.map(p => p.device))];
  const memMax = Math.max(0, ...points.map(p => p.memMib ?? 0));

  // the legend's entries, laid out in rows that fit the width
  const legend: { kind: string; label: string; series?: number }[] = [
    ...(devices.length > 1
      ? devices.map((d, i) => ({ kind: 'util', label: `utilization % ${d.length > 14 ? '…' + d.slice(-12) : d}`, series: i }))
      : [{ kind: 'util', label: 'utilization %', series: 0 }]),
    ...(memMax > 0 ? [{ kind: 'mem', label: `memory (top = ${mib(memMax)})` }] : []),
    ...(spans.length ? [{ kind: 'gap', label: spans.length === 1 ? 'no valid reading' : `no valid reading (${spans.length} spans)` }] : [])
  ];
  const legendRows: { kind: string; label: string; series?: number; x: number }[][] = [[]];
  let cursor = MARGIN.left;
  for (const entry of legend) {
    const w = 18 + entry.label.length * CHAR_PX + 10;
    if (cursor + w > width && legendRows[legendRows.length - 1].length) {
      legendRows.push([]);
      cursor = MARGIN.left;
    }
    legendRows[legendRows.length - 1].push({ ...entry, x: cursor });
    cursor += w;
  }
  const height = options.height ?? 150;
  const plotW = Math.max(40, width - MARGIN.left - MARGIN.right);
  const plotH = Math.max(30, height - MARGIN.top - MARGIN.axis - MARGIN.legendRow * legendRows.length);
  const frame: IFrame = { t0, t1, width: plotW, height: plotH, yMax: 100 };
  const span = Math.max(1, t1 - t0);
  const xOf = (t: number) => ((t - t0) / span) * plotW;

  const axes: Element[] = [];
  for (const v of [0, 50, 100]) {
    const y = plotH - (v / 100) * plotH;
    axes.push(svg('line', { class: 'jp-sched-chart-grid', x1: 0, x2: plotW, y1: y.toFixed(1), y2: y.toFixed(1) }));
    // 0 % sits on its line, 100 % under it: clear of "UTC" below and of the chart's top
    axes.push(text('jp-sched-chart-axis-label', -4, v === 0 ? y - 2 : v === 100 ? y + 8 : y + 3, `${v} %`, 'end'));
  }
  const ticks = times.length ? timeTicks(t0, t1, plotW) : [];
  for (const tick of ticks) {
    const x = xOf(tick.t);
    axes.push(svg('line', { class: 'jp-sched-chart-tick', x1: x.toFixed(1), x2: x.toFixed(1), y1: plotH, y2: plotH + 3 }));
    axes.push(text('jp-sched-chart-axis-label jp-sched-chart-time', x, plotH + 12, tick.label, 'middle'));
  }

  const shades: Element[] = [];
  const placed: { x: number; w: number; label: string }[] = [];
  for (const gap of spans) {
    const x = Math.max(0, xOf(gap.start));
    const w = Math.max(1, Math.min(plotW - x, ((gap.end - gap.start) / span) * plotW));
    const shade = svg('rect', {
      class: `jp-sched-chart-gap jp-sched-chart-gap-${gap.validity}`,
      x: x.toFixed(1),
      y: 0,
      width: w.toFixed(1),
      height: plotH,
      'data-gap': gap.label
    });
    const tip = svg('title', {});
    tip.textContent = shownText(`${gap.device}: ${gap.label}`);
    shade.appendChild(tip);
    shades.push(shade);
    placed.push({ x, w, label: gap.label });
  }
  const labels = placeGapLabels(placed, plotW).map(l =>
    text('jp-sched-chart-gap-label', l.x, 10 + 11 * l.row, l.label, l.anchor)
  );

  const lines: Element[] = [];
  devices.forEach((device, i) => {
    const own = points.filter(p => p.device === device).sort((a, b) => a.t - b.t);
    lines.push(
      svg('path', {
        class: `jp-sched-chart-util jp-sched-chart-series-${i % 4}`,
        d: linePath(own.map(p => ({ t: p.t, v: p.util })), frame),
        'data-device': device
      })
    );
    lines.push(
      svg('path', {
        class: `jp-sched-chart-mem jp-sched-chart-series-${i % 4}`,
        d: linePath(own.map(p => ({ t: p.t, v: p.memMib === null ? null : (p.memMib / Math.max(1, memMax)) * 100 })), frame),
        'data-device': device
      })
    );
  });

  const keys: Element[] = [];
  legendRows.forEach((row, r) => {
    const y = MARGIN.top + plotH + MARGIN.axis + MARGIN.legendRow * r + 9;
    for (const entry of row) {
      const swatch =
        entry.kind === 'gap'
          ? svg('rect', { class: 'jp-sched-chart-gap', x: entry.x, y: y - 7, width: 14, height: 8 })
          : svg('line', {
              class: `jp-sched-chart-${entry.kind} jp-sched-chart-series-${(entry.series ?? 0) % 4}`,
              x1: entry.x, x2: entry.x + 14, y1: y - 3, y2: y - 3
            });
      keys.push(svg('g', { class: 'jp-sched-chart-key', 'data-key': entry.kind }, swatch,
                    text('jp-sched-chart-legend', entry.x + 18, y, entry.label)));
    }
  });
  if (ticks.length) {
    // the clock's zone, once, under the value axis (ticks keep clear of it: timeTicks)
    // its name at the last tick (a summer-time change inside a chart is rarer than a chart)
    axes.push(text('jp-sched-chart-axis-label', -4, plotH + 12, wallTime(new Date(ticks[ticks.length - 1].t)).zone, 'end'));
  }

  const valid = points.filter(p => p.util !== null);
  const summary =
    `${options.title}: ${devices.length} device${devices.length === 1 ? '' : 's'}, ` +
    (valid.length ? `utilization ${Math.round(valid[valid.length - 1].util as number)}% at the last valid reading` : 'no valid reading') +
    // each label once: repeated spans of one reason read "missing: no telemetry" three times (new user 4)
    (spans.length ? `; gaps: ${[...new Set(spans.map(g => g.label))].join('; ')}` : '');
  const plot = svg('g', { class: 'jp-sched-chart-plot', transform: `translate(${MARGIN.left} ${MARGIN.top})` },
                   ...axes, ...shades, ...lines, ...labels);
  const root = svg('svg', {
    class: 'jp-sched-chart',
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    'aria-label': summary
  }, plot, ...keys);
  const title = svg('title', {});
  title.textContent = shownText(summary); // a job's or device's name in it: hidden characters as escapes (s30)
  root.insertBefore(title, root.firstChild);
  return root;
}
