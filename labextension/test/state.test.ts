import { describe, expect, it } from 'vitest';

import { PanelState, SPARK_POINTS, transitionNotice } from '../src/state';
import { makeJob } from './builders';

function stateFor(user = 'alice'): PanelState {
  const s = new PanelState();
  s.me = { user, is_admin: false };
  return s;
}

describe('PanelState.upsert', () => {
  it('a new job of mine lands in My work and, while pending, in the Queue', () => {
    const s = stateFor();
    s.upsert(makeJob({ id: 'j1', state: 'pending' }));
    expect(s.myJobs.map(j => j.id)).toEqual(['j1']);
    expect(s.queue.map(j => j.id)).toEqual(['j1']);
  });

  it('a finished job leaves the Queue but stays in My work', () => {
    const s = stateFor();
    s.upsert(makeJob({ id: 'j1', state: 'running' }));
    const previous = s.upsert(makeJob({ id: 'j1', state: 'succeeded' }));
    expect(previous?.state).toBe('running');
    expect(s.queue).toEqual([]);
    expect(s.myJobs.map(j => j.state)).toEqual(['succeeded']);
  });

  it("someone else's running job shows in the Queue only", () => {
    const s = stateFor();
    s.upsert(makeJob({ id: 'b1', user: 'bob', state: 'running' }));
    expect(s.myJobs).toEqual([]);
    expect(s.queue.map(j => j.id)).toEqual(['b1']);
  });

  it('a partial event merges into the known job', () => {
    const s = stateFor();
    s.upsert(makeJob({ id: 'j1', name: 'train', state: 'pending' }));
    s.upsert({ id: 'j1', state: 'running' } as never);
    expect(s.myJobs[0].name).toBe('train');
    expect(s.myJobs[0].state).toBe('running');
  });

  it('leases go to the lease list', () => {
    const s = stateFor();
    s.upsert(makeJob({ id: 'l1', kind: 'lease', state: 'running' }));
    expect(s.leases.map(j => j.id)).toEqual(['l1']);
    expect(s.myJobs).toEqual([]);
  });
});

describe('PanelState telemetry', () => {
  it.each([
    ['one sample', { uuid: 'G1', utilization: 40, memory_used_mib: 1000 }],
    ['a samples list', { samples: [{ gpu: 'G1', util: 40, mem_used_mib: 1000 }] }],
    ['a gpus list', { gpus: [{ gpu_uuid: 'G1', gpu_util: 40, memory_used_mib: 1000 }] }]
  ])('reads %s', (_name, data) => {
    const s = stateFor();
    expect(s.addTelemetry(data)).toBe(1);
    expect(s.live.get('G1')).toEqual({ util: [40], memoryUsedMib: 1000, note: null });
  });

  it('reads the telemetry wire shape (sample_to_dict) and keeps the note when utilization is unknown', () => {
    const s = stateFor();
    s.addTelemetry({ samples: [{ gpu_uuid: 'G1', utilization_pct: 55, memory_used_mib: 2048, note: '' }] });
    s.addTelemetry({ gpu_uuid: 'MIG-PARENT', utilization_pct: null, memory_used_mib: 100, note: 'no utilization signal for MIG device' });
    expect(s.live.get('G1')).toEqual({ util: [55], memoryUsedMib: 2048, note: null });
    expect(s.live.get('MIG-PARENT')).toEqual({ util: [], memoryUsedMib: 100, note: 'no utilization signal for MIG device' });
  });

  it('keeps the last SPARK_POINTS samples', () => {
    const s = stateFor();
    for (let i = 0; i < SPARK_POINTS + 5; i++) {
      s.addTelemetry({ uuid: 'G1', utilization: i });
    }
    expect(s.live.get('G1')?.util.length).toBe(SPARK_POINTS);
    expect(s.live.get('G1')?.util[0]).toBe(5);
  });

  it("a job's GPU use is the mean of its GPUs' latest samples", () => {
    const s = stateFor();
    s.addTelemetry({ samples: [{ uuid: 'G1', utilization: 20 }, { uuid: 'G2', utilization: 60 }] });
    const job = makeJob({ state: 'running', allocation: { node: 'n', gpu_uuids: ['G1', 'G2'], gpu_milli: 1000, workers: [] } });
    expect(s.jobUtilization(job)).toBe(40);
    expect(s.holders().size).toBe(0);
    s.upsert(job);
    expect([...s.holders().keys()].sort()).toEqual(['G1', 'G2']);
  });
});

describe('PanelState.holders', () => {
  it("reads the inventory's allocations and prefers the live job (with its name)", () => {
    const s = stateFor();
    s.inventory = { source: 'simulated', simulated: true, nodes: [], gpus: [], nvml: null, allocations: { G1: [{ job_id: 'b1', user: 'bob', kind: 'training', gpu_milli: 1000 }], G2: [{ job_id: 'j1', user: 'alice', kind: 'training', gpu_milli: 1000 }] } };
    expect(s.holders().get('G1')).toEqual({ id: 'b1', name: 'b1', user: 'bob', kind: 'training' });
    s.upsert(makeJob({ id: 'j1', name: 'train', state: 'running', allocation: { node: 'n', gpu_uuids: ['G2'], gpu_milli: 1000, workers: [] } }));
    expect(s.holders().get('G2')?.name).toBe('train');
  });

  it('a job that ended since the inventory was read frees its GPUs at once', () => {
    const s = stateFor();
    s.inventory = { source: 'simulated', simulated: true, nodes: [], gpus: [], nvml: null, allocations: { G1: [{ job_id: 'j1', user: 'alice', kind: 'training', gpu_milli: 1000 }] } };
    s.upsert(makeJob({ id: 'j1', state: 'succeeded' }));
    expect(s.holders().has('G1')).toBe(false);
  });
});

describe('transitionNotice', () => {
  it.each([
    ['running → succeeded notifies finished', 'running', 'succeeded', 'finished'],
    ['running → failed notifies finished', 'running', 'failed', 'finished'],
    ['running → preempted notifies preempted', 'running', 'preempted', 'preempted'],
    ['pending → running says nothing', 'pending', 'running', null],
    ['succeeded → succeeded says nothing', 'succeeded', 'succeeded', null]
  ])('%s', (_name, before, after, want) => {
    expect(transitionNotice(makeJob({ state: before as never }), makeJob({ state: after as never }))).toBe(want);
  });

  it('a job first seen already finished does not notify (page load)', () => {
    expect(transitionNotice(undefined, makeJob({ state: 'succeeded' }))).toBeNull();
  });
});
