import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { SchedClient } from '../src/client';
import { SchedModel } from '../src/model';
import { UsageView, jobGpus, pointOf } from '../src/usage';
import { FakeSchedServer, makeJob, settle } from './fakeserver';

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
});
