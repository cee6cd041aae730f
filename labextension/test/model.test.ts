import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { SchedClient } from '../src/client';
import { stateWord, stoppingText } from '../src/format';
import { SchedModel } from '../src/model';
import type { IJobTransition } from '../src/tokens';
import { FakeSchedServer, makeGpu, makeInventory, makeJob, queueRow, settle } from './fakeserver';

function started(server: FakeSchedServer, options: Partial<ConstructorParameters<typeof SchedModel>[0]> = {}) {
  const model = new SchedModel({ client: new SchedClient(server.transport), refreshInterval: 10, ...options });
  return model;
}

async function ready(model: SchedModel, ...resources: Parameters<SchedModel['watch']>[0][]) {
  for (const r of resources) {
    model.watch(r);
  }
  await model.start();
  await settle();
}

describe('SchedModel start', () => {
  let server: FakeSchedServer;
  beforeEach(() => {
    vi.useFakeTimers();
    server = new FakeSchedServer();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('loads config and identity, opens the stream and reads only what is watched', async () => {
    const model = started(server);
    const statuses: string[] = [];
    model.statusChanged.connect((_, s) => statuses.push(s));
    await ready(model, 'inventory', 'jobs');
    expect(statuses).toEqual(['loading', 'ready']);
    expect(model.me?.user).toBe('alice');
    expect(model.streamStatus).toBe('open');
    expect(server.count('GET', 'inventory')).toBe(1);
    expect(server.count('GET', 'jobs')).toBe(1);
    expect(server.count('GET', 'leases')).toBe(1);
    expect(server.count('GET', 'queue')).toBe(0);
    expect(server.count('GET', 'quotas')).toBe(0);
    // a later watcher gets its resource read at once
    model.watch('quotas');
    await settle();
    expect(server.count('GET', 'quotas')).toBe(1);
    model.dispose();
  });

  it('a 404 without our error body means the server extension is missing', async () => {
    server.routes.set('GET config', () => new Response('<h1>404</h1>', { status: 404 }));
    const model = started(server);
    await model.start();
    expect(model.status).toBe('missing');
    expect(model.startError).toContain('jupyter server extension enable jupyter_sched');
    model.dispose();
  });

  it('another failure is "failed" with the message, and refreshAll retries', async () => {
    server.failWith = { status: 500, code: 'internal', message: 'database is locked' };
    const model = started(server);
    await model.start();
    expect(model.status).toBe('failed');
    expect(model.startError).toBe('database is locked');
    server.failWith = null;
    model.refreshAll();
    await settle();
    expect(model.status).toBe('ready');
    model.dispose();
  });

  it('seeds the telemetry history from GET telemetry (recent samples, then current)', async () => {
    server.telemetry = {
      enabled: true,
      simulated: true,
      gpus: [
        {
          gpu_uuid: 'GPU-sim-node-a-0',
          current: { gpu_uuid: 'GPU-sim-node-a-0', timestamp: '2026-12-01T10:00:02Z', utilization_pct: 30, memory_used_mib: 100 },
          recent: [
            { gpu_uuid: 'GPU-sim-node-a-0', timestamp: '2026-12-01T10:00:00Z', utilization_pct: 10 },
            { gpu_uuid: 'GPU-sim-node-a-0', timestamp: '2026-12-01T10:00:01Z', utilization_pct: 20 },
            { gpu_uuid: 'GPU-sim-node-a-0', timestamp: '2026-12-01T10:00:02Z', utilization_pct: 30 }
          ]
        }
      ]
    };
    const model = started(server, { historySeconds: 120 });
    const updates: string[][] = [];
    model.telemetry.connect((_, u) => updates.push([...u.gpus]));
    await ready(model);
    expect(model.history.utilization('GPU-sim-node-a-0', 10)).toEqual([10, 20, 30]);
    expect(updates).toEqual([['GPU-sim-node-a-0']]);
    const call = server.calls.find(c => c.path.startsWith('api/sched/telemetry'));
    expect(call?.path).toMatch(/since=\d{4}-\d\d-\d\dT.*&limit=600$/);
    model.dispose();
  });
});

describe('SchedModel event folding', () => {
  let server: FakeSchedServer;
  let model: SchedModel;
  beforeEach(async () => {
    vi.useFakeTimers();
    server = new FakeSchedServer();
    server.jobs = [makeJob({ id: 'j1', state: 'pending' })];
    server.queue = [queueRow({ id: 'j1', state: 'pending' }, { position: 1 })];
    model = started(server);
    await ready(model, 'inventory', 'jobs', 'queue');
  });
  afterEach(() => {
    model.dispose();
    vi.useRealTimers();
  });

  it('a job event of mine updates My work and the queue and announces the transition', async () => {
    const transitions: IJobTransition[] = [];
    model.jobTransition.connect((_, t) => transitions.push(t));
    let jobsSignals = 0;
    model.jobsChanged.connect(() => jobsSignals++);
    server.stream.push('job', makeJob({ id: 'j1', state: 'running', allocation: { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-1'], gpu_milli: 1000, workers: [] } }));
    await settle();
    expect(model.jobs.map(j => [j.id, j.state])).toEqual([['j1', 'running']]);
    expect(model.queue.map(j => [j.id, j.state])).toEqual([['j1', 'running']]);
    expect(model.queue[0].position).toBe(1);
    expect(transitions.map(t => [t.previous?.state, t.job.state])).toEqual([['pending', 'running']]);
    expect(jobsSignals).toBe(1);
    expect(model.holders().get('GPU-sim-node-a-1')?.id).toBe('j1');
  });

  it('a finished job leaves the queue, stays in My work, and shows no live utilization of its old GPUs', async () => {
    const allocation = { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-1'], gpu_milli: 1000, workers: [] };
    server.stream.push('job', makeJob({ id: 'j1', state: 'running', allocation }));
    server.stream.push('telemetry', { at: '2026-12-01T10:00:00Z', gpus: [{ gpu_uuid: 'GPU-sim-node-a-1', timestamp: '2026-12-01T10:00:00Z', utilization_pct: 87 }] });
    await settle();
    expect(model.jobUtilization(model.jobs[0])).toBe(87);
    server.stream.push('job', makeJob({ id: 'j1', state: 'succeeded', allocation }));
    await settle();
    expect(model.queue).toEqual([]);
    expect(model.jobs[0].state).toBe('succeeded');
    // someone else now holds GPU 1 and keeps it busy: not this job's utilization any more
    expect(model.jobUtilization(model.jobs[0])).toBeNull();
    expect(model.holders().has('GPU-sim-node-a-1')).toBe(false);
  });

  it('new user 6 F2 remainder: a GPU shared by two fractional jobs names both with their shares; one share alone says its fraction', async () => {
    const shared = { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-2'], gpu_milli: 500, workers: [] };
    server.stream.push('job', makeJob({ id: 'h1', name: 'half', state: 'running', allocation: shared }));
    server.stream.push('job', makeJob({ id: 'h2', name: 'half2', user: 'bob', state: 'running', allocation: shared }));
    server.stream.push('job', makeJob({ id: 'q1', name: 'quarter', state: 'running', allocation: { ...shared, gpu_uuids: ['GPU-sim-node-a-3'], gpu_milli: 250 } }));
    await settle();
    const holder = model.holders().get('GPU-sim-node-a-2');
    expect(holder?.shared).toBe(2);
    expect(holder?.name).toBe('half 0.5 GPU, half2 0.5 GPU');
    expect(holder?.user).toBe('alice, bob');
    expect(model.holders().get('GPU-sim-node-a-3')).toMatchObject({ id: 'q1', name: 'quarter', share: 0.25 });
    server.stream.push('job', makeJob({ id: 'h2', name: 'half2', user: 'bob', state: 'succeeded', allocation: shared }));
    await settle();
    expect(model.holders().get('GPU-sim-node-a-2')).toMatchObject({ id: 'h1', name: 'half', share: 0.5 });
  });

  it("another user's job goes to the queue only; a lease of mine goes to leases", async () => {
    server.stream.push('job', makeJob({ id: 'b1', user: 'bob', state: 'pending' }));
    server.stream.push('lease', makeJob({ id: 'l1', kind: 'lease', state: 'running' }));
    await settle();
    expect(model.jobs.map(j => j.id)).toEqual(['j1']);
    expect(model.leases.map(j => j.id)).toEqual(['l1']);
    expect(model.queue.map(j => j.id)).toEqual(['j1', 'b1', 'l1']);
    expect(model.queue.find(j => j.id === 'b1')?.mine).toBe(false);
  });

  it('an inventory event patches the GPU in place (a GPU going unhealthy) without a request', async () => {
    const before = server.count('GET', 'inventory');
    const updates: unknown[] = [];
    model.inventoryChanged.connect((_, u) => updates.push(u.changes));
    server.stream.push('inventory', {
      source: 'simulated',
      simulated: true,
      changes: [{ kind: 'gpu', what: 'health', gpu: makeGpu(2, { health: 'unhealthy', health_reason: 'Xid 79' }) }]
    });
    await settle();
    expect(server.count('GET', 'inventory')).toBe(before);
    expect(model.inventory?.gpus.map(g => g.health)).toEqual(['healthy', 'healthy', 'unhealthy', 'healthy']);
    expect((model.inventory?.nodes[0].gpus as { health: string }[])[2].health).toBe('unhealthy');
    expect(updates).toHaveLength(1);
  });

  it('inventory events add and remove nodes and cordon them', async () => {
    server.stream.push('inventory', {
      changes: [
        { kind: 'node', what: 'added', node: { name: 'node-b', ready: true, unschedulable: false } },
        { kind: 'gpu', what: 'added', gpu: makeGpu(0, { uuid: 'GPU-b-0', node: 'node-b' }) },
        { kind: 'node', what: 'cordoned', node: { name: 'node-a', ready: true, unschedulable: true } },
        { kind: 'gpu_removed', what: 'removed', gpu_uuid: 'GPU-sim-node-a-3', node: 'node-a' }
      ]
    });
    await settle();
    const inv = model.inventory!;
    expect(inv.nodes.map(n => [n.name, n.unschedulable])).toEqual([
      ['node-a', true],
      ['node-b', false]
    ]);
    expect(inv.gpus.map(g => g.uuid)).toEqual(['GPU-sim-node-a-0', 'GPU-sim-node-a-1', 'GPU-sim-node-a-2', 'GPU-b-0']);
    server.stream.push('inventory', { changes: [{ kind: 'node_removed', what: 'removed', node: 'node-b' }] });
    await settle();
    expect(model.inventory!.nodes.map(n => n.name)).toEqual(['node-a']);
  });

  it('an inventory event without changes re-reads the inventory', async () => {
    const before = server.count('GET', 'inventory');
    server.inventory = makeInventory(2);
    server.stream.push('inventory', { source: 'nvml' });
    await settle();
    expect(server.count('GET', 'inventory')).toBe(before + 1);
    expect(model.inventory?.gpus).toHaveLength(2);
  });

  it('telemetry events extend the history once per sample and signal the GPUs', async () => {
    const seen: string[][] = [];
    model.telemetry.connect((_, u) => seen.push([...u.gpus]));
    const sample = (u: number, t: string) => ({ gpu_uuid: 'GPU-sim-node-a-0', timestamp: t, utilization_pct: u, memory_used_mib: 512 });
    server.stream.push('telemetry', { gpus: [sample(5, '2026-12-01T10:00:00Z')] });
    server.stream.push('telemetry', { gpus: [sample(5, '2026-12-01T10:00:00Z')] });
    server.stream.push('telemetry', { gpus: [sample(9, '2026-12-01T10:00:01Z'), { gpu_uuid: 'GPU-sim-node-a-1', timestamp: '2026-12-01T10:00:01Z', utilization_pct: null, note: 'MIG: no profiling metrics' }] });
    await settle();
    expect(model.history.utilization('GPU-sim-node-a-0', 30)).toEqual([5, 9]);
    expect(model.history.latest('GPU-sim-node-a-0')?.memoryUsedMib).toBe(512);
    expect(model.history.latest('GPU-sim-node-a-1')?.note).toBe('MIG: no profiling metrics');
    expect(seen).toEqual([['GPU-sim-node-a-0'], ['GPU-sim-node-a-0', 'GPU-sim-node-a-1']]);
  });

  it('lagged re-reads every watched resource', async () => {
    const before = ['inventory', 'queue', 'jobs'].map(r => server.count('GET', r));
    vi.advanceTimersByTime(11000);
    await settle();
    const afterPoll = ['inventory', 'queue', 'jobs'].map(r => server.count('GET', r));
    server.stream.push('lagged', { dropped: 12 });
    await settle();
    // the queue was just polled: its re-read waits for the end of its throttle window
    await vi.advanceTimersByTimeAsync(9000);
    const after = ['inventory', 'queue', 'jobs'].map(r => server.count('GET', r));
    expect(after.map((n, i) => n - afterPoll[i])).toEqual([1, 1, 1]);
    expect(afterPoll[0]).toBe(before[0]);
  });

  it('every event is re-emitted for other plugins (idle warnings, preemptions)', async () => {
    const types: string[] = [];
    model.event.connect((_, e) => types.push(e.type));
    server.stream.push('idle_warning', { job_id: 'l1', stage: 'warn' });
    server.stream.push('preempted', { job_id: 'j1' });
    await settle();
    expect(types).toEqual(['idle_warning', 'preempted']);
  });

  it('new user 17 N21: the job-ended event after a cancel refreshes the item and me together (no stale Stopping, no 1 in use)', async () => {
    const allocation = { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-1'], gpu_milli: 1000, workers: [] };
    const stop = { intent: 'cancel', by: 'root', text: 'stopping (cancel requested by root at 13:46 UTC; killed at 13:46:55 UTC if still running)' };
    server.me = { ...server.me, in_use: { gpus: 1, jobs: 1, leases: 0, stopping: 1 } };
    server.stream.push('job', makeJob({ id: 'j1', state: 'running', allocation, stop_requested: stop } as Parameters<typeof makeJob>[0]));
    await settle();
    expect(stateWord(model.jobs[0])).toBe('stopping');
    const mes = server.count('GET', 'me');
    // the server settles: the job ended (its event carries no stop in grace), nothing in use
    server.me = { ...server.me, in_use: { gpus: 0, jobs: 0, leases: 0, stopping: 0 } };
    server.stream.push('job', makeJob({ id: 'j1', state: 'cancelled', allocation, message: 'cancelled by root (killed by SIGTERM)' }));
    await settle();
    expect(model.jobs[0].state).toBe('cancelled');
    expect(stoppingText(model.jobs[0])).toBe('');
    expect(stateWord(model.jobs[0])).toBe('cancelled');
    // me read at once, not a refresh interval later (the Quota title said "1 in use" beside an all-free inventory)
    expect(server.count('GET', 'me')).toBe(mes + 1);
    expect(model.me?.in_use?.gpus).toBe(0);
  });

  it('new user 17 N21: many of my jobs ending at once read me once more, not once per job', async () => {
    const mes = server.count('GET', 'me');
    for (let i = 0; i < 5; i++) {
      server.stream.push('job', makeJob({ id: `c${i}`, state: 'cancelled' }));
    }
    await settle();
    expect(server.count('GET', 'me') - mes).toBeGreaterThanOrEqual(1);
    expect(server.count('GET', 'me') - mes).toBeLessThanOrEqual(2);
  });

  it('new user 21 N5: a planned preemption read in full is kept by an event of the same run, dropped by its next start', async () => {
    const plan = { at: '2026-12-05T02:11:00Z', for_job: 'j-n2', for_name: 'norm2', for_owner: null, for_priority: 'normal' as const, for_team: 'ml',
                   same_team: true, verb: 'preempted' as const, text: 'to be preempted at ~Dec 5 02:11 UTC for norm2 (j-n2), normal priority of the same team, unless it ends first' };
    const run = { id: 'j1', state: 'running' as const, started_at: '2026-12-05T02:06:00Z', allocation: { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-1'], gpu_milli: 1000, workers: [] } };
    model.upsert(makeJob({ ...run, preemption_planned: plan }));  // a full read (GET jobs)
    server.stream.push('job', makeJob({ ...run, message: 'ready on port 8766' }));  // the engine's event: no plan field
    await settle();
    expect(model.find('j1')?.preemption_planned).toEqual(plan);
    server.stream.push('job', makeJob({ ...run, started_at: '2026-12-05T02:12:00Z' }));  // preempted, requeued, started again
    await settle();
    expect(model.find('j1')?.preemption_planned).toBeUndefined();
  });

  it('a job event with an unreadable body re-reads jobs and queue', async () => {
    vi.advanceTimersByTime(11000);
    await settle();
    const before = [server.count('GET', 'jobs'), server.count('GET', 'queue')];
    server.stream.push('job', { nothing: true });
    await settle();
    await vi.advanceTimersByTimeAsync(9000);
    expect([server.count('GET', 'jobs') - before[0], server.count('GET', 'queue') - before[1]]).toEqual([1, 1]);
  });
});

describe('SchedModel freshness', () => {
  let server: FakeSchedServer;
  beforeEach(() => {
    vi.useFakeTimers();
    server = new FakeSchedServer();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('while the stream is up only the queue is polled (others\u2019 jobs send no events to me)', async () => {
    const model = started(server);
    await ready(model, 'inventory', 'queue', 'jobs');
    const before = ['inventory', 'queue', 'jobs'].map(r => server.count('GET', r));
    await vi.advanceTimersByTimeAsync(10000);
    await settle();
    const after = ['inventory', 'queue', 'jobs'].map(r => server.count('GET', r));
    expect(after.map((n, i) => n - before[i])).toEqual([0, 1, 0]);
    model.dispose();
  });

  it('when the stream drops, watched resources are polled once per interval; on reconnect they are re-read', async () => {
    const model = started(server);
    await ready(model, 'inventory', 'jobs');
    const statuses: string[] = [];
    model.streamStatusChanged.connect((_, s) => statuses.push(s));
    server.eventsStatus = 503;
    server.stream.close();
    await settle();
    expect(model.streamStatus).not.toBe('open');
    const before = server.count('GET', 'inventory');
    await vi.advanceTimersByTimeAsync(10000);
    await settle();
    expect(server.count('GET', 'inventory')).toBe(before + 1);
    // the stream comes back: one catch-up read of each watched resource
    server.eventsStatus = 200;
    await vi.advanceTimersByTimeAsync(40000);
    await settle();
    expect(model.streamStatus).toBe('open');
    expect(statuses).toContain('down');
    expect(statuses[statuses.length - 1]).toBe('open');
    const polls = server.count('GET', 'inventory');
    await vi.advanceTimersByTimeAsync(10000);
    await settle();
    expect(server.count('GET', 'inventory')).toBe(polls);
    model.dispose();
  });

  it('refreshAll reconnects a down stream at once and re-reads now, bypassing the throttle', async () => {
    const model = started(server);
    await ready(model, 'jobs');
    server.eventsStatus = 503;
    server.stream.close();
    await settle();
    server.eventsStatus = 200;
    const before = server.count('GET', 'jobs');
    model.refreshAll();
    await settle();
    expect(model.streamStatus).toBe('open');
    expect(server.count('GET', 'jobs')).toBe(before + 1);
    model.refreshAll();
    await settle();
    expect(server.count('GET', 'jobs')).toBe(before + 2);
    model.dispose();
  });

  it('a failed refresh is reported per resource and cleared by the next success', async () => {
    const model = started(server);
    await ready(model, 'queue');
    const errors: (string | null)[] = [];
    model.errorChanged.connect((_, e) => errors.push(e.error));
    server.failWith = { status: 503, code: 'unavailable', message: 'store is busy' };
    model.refresh('queue', { force: true });
    await settle();
    expect(model.error('queue')).toBe('store is busy');
    server.failWith = null;
    model.refresh('queue', { force: true });
    await settle();
    expect(model.error('queue')).toBeNull();
    expect(errors).toEqual(['store is busy', null]);
    model.dispose();
  });

  it('an unwatched resource is not polled, and disposing a watch stops its polling', async () => {
    const model = started(server);
    const watch = model.watch('quotas');
    await model.start();
    await settle();
    server.eventsStatus = 503;
    server.stream.close();
    await settle();
    await vi.advanceTimersByTimeAsync(10000);
    const polled = server.count('GET', 'quotas');
    expect(polled).toBe(2);
    watch.dispose();
    watch.dispose();
    await vi.advanceTimersByTimeAsync(30000);
    expect(server.count('GET', 'quotas')).toBe(polled);
    model.dispose();
  });

  it('the refresh interval can change while running', async () => {
    const model = started(server);
    await ready(model, 'queue');
    model.refreshInterval = 2;
    const before = server.count('GET', 'queue');
    await vi.advanceTimersByTimeAsync(2000);
    expect(server.count('GET', 'queue')).toBe(before + 1);
    model.refreshInterval = Number.NaN;
    expect(model.refreshInterval).toBe(10);
    model.dispose();
  });

  it('polling a finished job of mine announces the transition (stream down)', async () => {
    server.jobs = [makeJob({ id: 'j1', state: 'running' })];
    const model = started(server);
    await ready(model, 'jobs');
    const transitions: string[] = [];
    model.jobTransition.connect((_, t) => transitions.push(`${t.previous?.state}->${t.job.state}`));
    server.jobs = [makeJob({ id: 'j1', state: 'failed', exit_code: 3 })];
    model.refresh('jobs', { force: true });
    await settle();
    expect(transitions).toEqual(['running->failed']);
    model.dispose();
  });

  it('supports, isMine and find', async () => {
    server.config = { ...server.config, features: { leases: false } };
    server.jobs = [makeJob({ id: 'j1' })];
    const model = started(server);
    await ready(model, 'jobs');
    expect(model.supports('leases')).toBe(false);
    expect(model.supports('anything-else')).toBe(true);
    expect(server.count('GET', 'leases')).toBe(0);
    expect(model.isMine({ user: 'alice' })).toBe(true);
    expect(model.isMine({ user: 'bob', mine: true })).toBe(true);
    expect(model.find('j1')?.id).toBe('j1');
    expect(model.find('nope')).toBeUndefined();
    model.dispose();
  });
});
