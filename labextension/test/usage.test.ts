import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { SchedClient } from '../src/client';
import { SchedModel } from '../src/model';
import { UsageView, gpuOfCommand, jobGpus, pointOf, stepFor, trimEdges } from '../src/usage';
import type { IUsageGap, IUsagePoint } from '../src/usagechart';
import { FakeSchedServer, json, makeJob, settle } from './fakeserver';

const GPU = 'GPU-sim-node-a-0';

function sample(second: number, util: number | null, extra: Record<string, unknown> = {}) {
  return { gpu_uuid: GPU, timestamp: `2026-12-01T10:00:${String(second).padStart(2, '0')}Z`, utilization_pct: util,
           memory_used_mib: 2048, ...extra };
}

describe('GPU usage section', () => {
  let server: FakeSchedServer;
  beforeEach(() => {
    vi.useFakeTimers();
    vi.stubGlobal('requestAnimationFrame', (f: FrameRequestCallback) => setTimeout(() => f(0), 0));
    server = new FakeSchedServer();
    server.jobs = [makeJob({ id: 'j-1', name: 'train', state: 'running', started_at: '2026-12-01T09:59:00Z',
                             allocation: { node: 'node-a', gpu_uuids: [GPU], gpu_milli: 1000 } })];
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.useRealTimers();
  });

  it('a sample without a valid reading is a gap with its note; the server validity wins', () => {
    const base = { gpuUuid: GPU, t: 0, activity: null, memoryUsedMib: 0, memoryTotalMib: 1, note: '' };
    expect(pointOf({ ...base, util: null }).validity).toBe('blank');
    const latched = { ...base, util: 100, validity: 'suspect', display: '100 % (suspect: no process, 0 MiB)' };
    expect(pointOf(latched)).toMatchObject({ util: null, validity: 'suspect', note: '100 % (suspect: no process, 0 MiB)' });
    expect(jobGpus(server.jobs[0])).toEqual([GPU]);
  });

  it('the GPU utilization command charts its argument, else the GPU tile right-clicked, else it asks', () => {
    const model = { inventory: { gpus: [{ uuid: 'GPU-first' }] } } as unknown as SchedModel;
    expect(gpuOfCommand({ gpu: 'GPU-arg' }, 'GPU-tile', model)).toBe('GPU-arg');
    expect(gpuOfCommand({}, 'GPU-tile', model)).toBe('GPU-tile');
    expect(gpuOfCommand({}, undefined, model)).toBe('GPU-first'); // the only one
    const two = { inventory: { gpus: [{ uuid: 'GPU-a' }, { uuid: 'GPU-b' }] } } as unknown as SchedModel;
    expect(gpuOfCommand({}, undefined, two)).toBeUndefined(); // several GPUs: the command asks which (newuser39 n15)
  });

  it("draws my running job's chart with a gap for the blank span", async () => {
    const model = new SchedModel({ client: new SchedClient(server.transport), refreshInterval: 10 });
    const view = new UsageView(model);
    await model.start();
    await settle();
    const readings = [50, 50, 50, null, null, null, 70, 70];
    server.stream.push('telemetry', { gpus: readings.map((util, k) => sample(k, util)) });
    await settle();
    await vi.runOnlyPendingTimersAsync();
    const chart = view.node.querySelector('svg.jp-sched-chart');
    expect(view.node.querySelector('.jp-sched-usage-title')?.textContent).toBe('job train (j-1)');
    expect(chart?.querySelector('rect.jp-sched-chart-gap-blank')).not.toBeNull();
    expect(chart?.querySelector('path.jp-sched-chart-util')?.getAttribute('d')?.match(/M/g)?.length).toBe(2);
    view.dispose();
    model.dispose();
  });

  it('prefers the server history (stored rollups or 5 s steps) with its gap spans', async () => {
    const asked: string[] = [];
    server.routes.set('GET telemetry/history', (_body, query) => {
      asked.push(query.toString());
      return json(200, {
        since: '2026-12-01T10:00:00Z', until: '2026-12-01T10:00:15Z', step_s: 5, devices: [],
        points: [
          { t: '2026-12-01T10:00:00Z', gpu_uuid: GPU, mig_instance: null, utilization_pct: 60, memory_used_mib: 1, validity: 'valid', note: '' },
          { t: '2026-12-01T10:00:05Z', gpu_uuid: GPU, mig_instance: null, utilization_pct: null, memory_used_mib: 1, validity: 'suspect', note: 'no process, 0 MiB' },
          { t: '2026-12-01T10:00:10Z', gpu_uuid: GPU, mig_instance: null, utilization_pct: 55, memory_used_mib: 1, validity: 'valid', note: '' }
        ],
        gaps: [{ gpu_uuid: GPU, mig_instance: null, start: '2026-12-01T10:00:05Z', end: '2026-12-01T10:00:10Z',
                 validity: 'suspect', note: 'no process, 0 MiB', label: 'suspect: no process, 0 MiB' }]
      });
    });
    const model = new SchedModel({ client: new SchedClient(server.transport), refreshInterval: 10 });
    const view = new UsageView(model, 60000);
    await model.start();
    await settle();
    await view.refresh();
    await vi.runOnlyPendingTimersAsync();
    expect(asked[0]).toContain('job=j-1');
    const gap = view.node.querySelector('rect.jp-sched-chart-gap-suspect');
    expect(gap?.getAttribute('data-gap')).toBe('suspect: no process, 0 MiB');
    expect(stepFor(0, 10 * 60 * 1000)).toBe(5);
    expect(stepFor(0, 2 * 60 * 60 * 1000)).toBe(60);
    view.dispose();
    model.dispose();
  });
});

describe('history edges (new user 6, F8)', () => {
  const at = (s: number) => Date.parse('2026-12-02T15:00:00Z') + s * 1000;
  const point = (s: number, validity = 'valid'): IUsagePoint => ({
    device: 'GPU-a', t: at(s), util: validity === 'valid' ? 3 : null, memMib: 100, validity,
    note: validity === 'valid' ? '' : 'no telemetry'
  });
  const gap = (from: number, to: number): IUsageGap => ({
    device: 'GPU-a', start: at(from), end: at(to), validity: 'missing', label: 'missing: no telemetry'
  });

  it('drops the one-step "missing" spans of the start step and the step under way', () => {
    const points = [point(0, 'missing'), point(5), point(10), point(15), point(20, 'missing')];
    const trimmed = trimEdges({ points, gaps: [gap(0, 5), gap(20, 25)], stepMs: 5000 });
    expect(trimmed.gaps).toEqual([]);
    expect(trimmed.points.map(p => p.t)).toEqual([at(5), at(10), at(15)]);
  });

  it('keeps a real gap: one inside the chart, or longer than a step at an end', () => {
    const points = [point(0, 'missing'), point(5, 'missing'), point(10), point(15, 'missing'), point(20)];
    const gaps = [gap(0, 10), gap(15, 20)];
    expect(trimEdges({ points, gaps, stepMs: 5000 }).gaps).toEqual(gaps);
  });
});

