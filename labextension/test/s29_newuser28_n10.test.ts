import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { SchedClient } from '../src/client';
import { SchedModel } from '../src/model';
import { FakeSchedServer, makeInventory, makeJob, queueRow, settle } from './fakeserver';

// newuser28 n10: during quick turnover (10-second jobs) the inventory card listed two jobs on one whole GPU —
// the one that had just ended, by its id (the inventory's answer, polled before its end, named it; the job
// lists, newer, no longer did) beside its successor, "j-… 1 GPU, a-sweep-… 1 GPU". A GPU holds at most one
// whole GPU of work: a holder only the inventory names is dropped where the listed live jobs fill the GPU.
describe('newuser28 n10: the inventory card names no ended job beside its successor', () => {
  let server: FakeSchedServer;
  let model: SchedModel;
  beforeEach(() => {
    vi.useFakeTimers();
    server = new FakeSchedServer();
  });
  afterEach(() => {
    model.dispose();
    vi.useRealTimers();
  });

  async function holdersWith(allocations: Record<string, unknown[]>, running: ReturnType<typeof makeJob>[]) {
    server.inventory = makeInventory(2, { allocations: allocations as never });
    server.jobs = running;
    server.queue = running.map(j => queueRow(j));
    model = new SchedModel({ client: new SchedClient(server.transport), refreshInterval: 10 });
    for (const r of ['inventory', 'jobs', 'queue'] as const) {
      model.watch(r);
    }
    await model.start();
    await settle();
    return model.holders();
  }

  const whole = { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-0'], gpu_milli: 1000, workers: [] };

  it('an ended job the inventory still names is not listed beside the job now holding the whole GPU', async () => {
    const holders = await holdersWith(
      { 'GPU-sim-node-a-0': [{ job_id: 'j-ended', user: 'alice', kind: 'training', gpu_milli: 1000 }] },
      [makeJob({ id: 'j-next', name: 'a-sweep-2', state: 'running', allocation: whole })]
    );
    expect(holders.get('GPU-sim-node-a-0')).toEqual({ id: 'j-next', name: 'a-sweep-2', user: 'alice', kind: 'training' });
  });

  it("a holder only the inventory names is kept where the GPU has room for it (another user's share)", async () => {
    const half = { ...whole, gpu_milli: 500 };
    const holders = await holdersWith(
      { 'GPU-sim-node-a-0': [{ job_id: 'j-other', user: 'bob', kind: 'training', gpu_milli: 500 }],
        'GPU-sim-node-a-1': [{ job_id: 'j-alone', user: 'bob', kind: 'training', gpu_milli: 1000 }] },
      [makeJob({ id: 'j-half', name: 'half', state: 'running', allocation: half })]
    );
    expect(holders.get('GPU-sim-node-a-0')).toMatchObject({ name: 'j-other 0.5 GPU, half 0.5 GPU', shared: 2 });
    expect(holders.get('GPU-sim-node-a-1')).toMatchObject({ id: 'j-alone', user: 'bob' });
  });
});
