import { afterEach, describe, expect, it } from 'vitest';

import { setDisplayZone, setZoneLabels } from '../src/format';

import {
  gapsOf,
  type IUsageGap,
  type IUsagePoint,
  linePath,
  placeGapLabels,
  pointsFromHistory,
  renderUsageChart,
  timeTicks
} from '../src/usagechart';

// The shape of GET api/sched/telemetry/history (jupyter_sched.telemetry.report.history_answer):
// 5-second steps, 10 s valid, 5 s blank (DCGM blank sentinel), 10 s valid.
const ANSWER = {
  points: [
    ['10:00:00', 50, 'valid', ''],
    ['10:00:05', 50, 'valid', ''],
    ['10:00:10', null, 'blank', 'DCGM blank value (no data)'],
    ['10:00:15', 70, 'valid', ''],
    ['10:00:20', 70, 'valid', '']
  ].map(([t, util, validity, note]) => ({
    t: `2026-03-02T${t}Z`,
    gpu_uuid: 'GPU-aaaa',
    mig_instance: null,
    utilization_pct: util,
    memory_used_mib: 20480,
    validity,
    note
  })),
  gaps: [
    {
      gpu_uuid: 'GPU-aaaa',
      mig_instance: null,
      start: '2026-03-02T10:00:10Z',
      end: '2026-03-02T10:00:15Z',
      validity: 'blank',
      note: 'DCGM blank value (no data)',
      label: 'blank: DCGM blank value (no data)'
    }
  ]
};

describe('usage chart', () => {
  it('reads the history answer and keeps the gap', () => {
    const { points, gaps } = pointsFromHistory(ANSWER);
    expect(points.map(p => p.util)).toEqual([50, 50, null, 70, 70]);
    expect(gaps).toEqual([
      { device: 'GPU-aaaa', start: Date.parse('2026-03-02T10:00:10Z'), end: Date.parse('2026-03-02T10:00:15Z'),
        validity: 'blank', label: 'blank: DCGM blank value (no data)' }
    ]);
  });

  it('a suspect reading is never drawn as a number even when the answer carries one', () => {
    const { points } = pointsFromHistory({
      points: [{ t: '2026-03-02T10:00:00Z', gpu_uuid: 'G', utilization_pct: 100, validity: 'suspect', note: 'no process, 0 MiB' }]
    });
    expect(points[0].util).toBeNull();
  });

  it('breaks the line at a gap instead of joining across it', () => {
    const d = linePath(
      [{ t: 0, v: 50 }, { t: 5, v: 50 }, { t: 10, v: null }, { t: 15, v: 70 }, { t: 20, v: 70 }],
      { t0: 0, t1: 25, width: 250, height: 100, yMax: 100 }
    );
    expect(d).toBe('M0.0 50.0 L50.0 50.0 M150.0 30.0 L200.0 30.0');
  });

  it('derives gap spans from points when the answer has none', () => {
    const { points } = pointsFromHistory(ANSWER);
    expect(gapsOf(points, 5000).map(g => [g.start, g.end, g.label])).toEqual([
      [Date.parse('2026-03-02T10:00:10Z'), Date.parse('2026-03-02T10:00:15Z'), 'blank: DCGM blank value (no data)']
    ]);
  });

  it('keeps a gap label inside the chart: leftwards from the gap end when it would pass the right edge', () => {
    const at = (s: number) => Date.parse('2026-03-02T10:00:00Z') + s * 1000;
    const points: IUsagePoint[] = [0, 10, 20, 30].map(s => ({
      device: 'GPU-a', t: at(s), util: 50, memMib: 100, validity: 'valid', note: ''
    }));
    const late: IUsageGap[] = [
      { device: 'GPU-a', start: at(20), end: at(30), validity: 'blank', label: 'blank: DCGM blank value (no data)' }
    ];
    const early: IUsageGap[] = [{ ...late[0], start: at(0), end: at(10) }];
    const labelOf = (gaps: IUsageGap[]) =>
      renderUsageChart(points, gaps, { title: 'j', stepMs: 10000, width: 280 }).querySelector(
        'text.jp-sched-chart-gap-label'
      );
    // plot 238 px wide (280 less the axes' 42): the gap spans x 119..178.5; 33 characters (~165 px)
    // from 121 would pass 238, so the label ends at the gap's end
    expect([labelOf(late)?.getAttribute('text-anchor'), labelOf(late)?.getAttribute('x')]).toEqual(['end', '176.5']);
    expect([labelOf(early)?.getAttribute('text-anchor'), labelOf(early)?.getAttribute('x')]).toEqual(['start', '2.0']);
  });

  it('says each gap reason once to screen readers, however many spans it has (new user 4)', () => {
    const at = (s: number) => Date.parse('2026-03-02T10:00:00Z') + s * 1000;
    const points: IUsagePoint[] = [0, 10, 20, 30, 40].map(s => ({
      device: 'GPU-a', t: at(s), util: 5, memMib: 1, validity: 'valid', note: ''
    }));
    const span = { device: 'GPU-a', validity: 'missing', label: 'missing: no telemetry' };
    const gaps: IUsageGap[] = [{ ...span, start: at(0), end: at(10) }, { ...span, start: at(20), end: at(30) }];
    const chart = renderUsageChart(points, gaps, { title: 'lease l-1', stepMs: 10000 });
    expect(chart.getAttribute('aria-label')?.match(/missing: no telemetry/g)?.length).toBe(1);
  });

  it('renders a shaded, labelled gap and says it to screen readers', () => {
    const { points, gaps } = pointsFromHistory(ANSWER);
    const chart = renderUsageChart(points, gaps, { title: 'job j-1', stepMs: 5000 });
    const gap = chart.querySelector('rect.jp-sched-chart-gap-blank');
    expect(gap?.getAttribute('data-gap')).toBe('blank: DCGM blank value (no data)');
    expect(chart.querySelector('text.jp-sched-chart-gap-label')?.textContent).toBe('blank: DCGM blank value (no data)');
    expect(chart.querySelector('path.jp-sched-chart-util')?.getAttribute('d')?.match(/M/g)?.length).toBe(2);
    expect(chart.getAttribute('aria-label')).toBe(
      'job j-1: 1 device, utilization 70% at the last valid reading; gaps: blank: DCGM blank value (no data)'
    );
  });

  it('new user 5 #17: has a value axis, a time axis in UTC and a legend for both lines', () => {
    const at = (m: number) => Date.parse('2026-12-02T13:00:00Z') + m * 60000;
    const points: IUsagePoint[] = Array.from({ length: 25 }, (_, m) => ({
      device: 'GPU-sim-vm-0', t: at(m), util: m % 5, memMib: 162 + m, validity: 'valid', note: ''
    }));
    const chart = renderUsageChart(points, [], { title: 'lease l-1', stepMs: 60000 });
    const texts = (sel: string) => [...chart.querySelectorAll(sel)].map(n => n.textContent);
    expect(texts('text.jp-sched-chart-axis-label:not(.jp-sched-chart-time)')).toEqual(['0 %', '50 %', '100 %', 'UTC']);
    // 25 min over a 278-px plot: 5-min ticks (a 1- or 2-min spacing would put the labels on each other)
    expect(texts('text.jp-sched-chart-time')).toEqual(['13:05', '13:10', '13:15', '13:20']);
    expect(texts('text.jp-sched-chart-legend')).toEqual(['utilization %', 'memory (top = 186 MiB)']);
    expect(chart.querySelector('[data-key="util"] line.jp-sched-chart-util')).not.toBeNull();
    expect(chart.querySelector('[data-key="mem"] line.jp-sched-chart-mem')).not.toBeNull();
  });

  it('new user 5 #17: gap labels never lie on each other — one per reason, and a count in the legend', () => {
    const at = (m: number) => Date.parse('2026-12-02T13:00:00Z') + m * 60000;
    const points: IUsagePoint[] = Array.from({ length: 25 }, (_, m) => ({
      device: 'GPU-a', t: at(m), util: 3, memMib: 100, validity: 'valid', note: ''
    }));
    const missing = { device: 'GPU-a', validity: 'missing', label: 'missing: no telemetry' };
    const gaps: IUsageGap[] = [
      { ...missing, start: at(2), end: at(3) },
      { ...missing, start: at(4), end: at(6) },
      { ...missing, start: at(7), end: at(8) },
      { device: 'GPU-a', validity: 'blank', label: 'blank: DCGM blank value (no data)', start: at(9), end: at(10) }
    ];
    const chart = renderUsageChart(points, gaps, { title: 'lease l-1', stepMs: 60000 });
    expect(chart.querySelectorAll('rect.jp-sched-chart-gap[data-gap]').length).toBe(4); // every span shaded
    const labels = [...chart.querySelectorAll('text.jp-sched-chart-gap-label')];
    expect(labels.map(l => l.textContent)).toEqual(['missing: no telemetry', 'blank: DCGM blank value (no data)']);
    const box = (l: Element) => {
      const x = Number(l.getAttribute('x'));
      const w = (l.textContent ?? '').length * 5;
      return { row: l.getAttribute('y'), from: l.getAttribute('text-anchor') === 'end' ? x - w : x, w };
    };
    const [a, b] = labels.map(box);
    expect(a.row === b.row && !(a.from + a.w <= b.from || b.from + b.w <= a.from)).toBe(false);
    expect(texts(chart, 'text.jp-sched-chart-legend')).toContain('no valid reading (4 spans)');
  });

  it('places gap labels in the first free row and leaves out one that fits nowhere', () => {
    const gaps = [
      { x: 0, w: 10, label: 'aaaaaaaaaa' },
      { x: 5, w: 10, label: 'bbbbbbbbbb' },
      { x: 8, w: 10, label: 'cccccccccc' },
      { x: 200, w: 10, label: 'dddddddddd' }
    ];
    expect(placeGapLabels(gaps, 300).map(l => [l.label, l.row])).toEqual([
      ['aaaaaaaaaa', 0], ['bbbbbbbbbb', 1], ['dddddddddd', 0]
    ]);
  });

  it('spaces time ticks so that their labels stay apart', () => {
    const t0 = Date.parse('2026-12-02T13:00:00Z');
    expect(timeTicks(t0, t0 + 60000, 284).map(t => t.label)).toEqual(['13:00:15', '13:00:30', '13:00:45']);
    const hours = timeTicks(t0, t0 + 6 * 3600000, 284).map(t => t.label);
    expect(hours).toEqual(['14:00', '15:00', '16:00', '17:00', '18:00']);
  });
});

function texts(root: Element, sel: string): (string | null)[] {
  return [...root.querySelectorAll(sel)].map(n => n.textContent);
}

describe('newuser36 n7: the time axis in the browser\'s zone', () => {
  afterEach(() => {
    setDisplayZone('UTC');
  });

  it('test_newuser36_n7nit_the_usage_charts_time_axis_is_in_the_browsers_zone_named', () => {
    const at = (m: number) => Date.parse('2026-12-02T13:00:00Z') + m * 60000;
    const points: IUsagePoint[] = Array.from({ length: 25 }, (_, m) => ({
      device: 'GPU-sim-vm-0', t: at(m), util: m % 5, memMib: 162 + m, validity: 'valid', note: ''
    }));
    setDisplayZone('Europe/Berlin');
    setZoneLabels('Europe/Berlin', [{ offset_minutes: 60, label: 'CET' }, { offset_minutes: 120, label: 'CEST' }]);
    const chart = renderUsageChart(points, [], { title: 'job j-1', stepMs: 60000 });
    expect(texts(chart, 'text.jp-sched-chart-time')).toEqual(['14:05', '14:10', '14:15', '14:20']);
    expect(texts(chart, 'text.jp-sched-chart-axis-label:not(.jp-sched-chart-time)').at(-1)).toBe('CET');
    // a half-hour zone's ticks fall on its own round hours, named as the server does without letters
    setDisplayZone('Asia/Kolkata');
    const t0 = Date.parse('2026-12-02T13:00:00Z');
    expect(timeTicks(t0, t0 + 6 * 3600000, 284).map(t => t.label)).toEqual(['19:00', '20:00', '21:00', '22:00', '23:00', '00:00']);
    const late = renderUsageChart(points, [], { title: 'job j-1', stepMs: 60000 });
    expect(texts(late, 'text.jp-sched-chart-axis-label:not(.jp-sched-chart-time)').at(-1)).toBe('UTC+5:30');
  });
});
