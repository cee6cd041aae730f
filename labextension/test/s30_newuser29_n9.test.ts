import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { SchedClient } from '../src/client';
import { SchedModel } from '../src/model';
import { FakeSchedServer, makeInventory, makeJob, queueRow, settle } from './fakeserver';

// newuser29 n9: during fast turnover (10-s sweeps) the inventory cards named an ended job, by id, beside the new one
// — "j-1m94xrd4k-q0w2f6 1 GPU, a-sweep-4…". The cause: GPU holders come from the inventory's last full read; the
// end of another user's job, streamed, took it out of the queue and no list had it any more, so nothing said it
// had ended and the card kept it until the next inventory read (newuser28 n10 dropped it only where a listed live
// job filled the GPU). Now work seen ended holds no GPU, whatever an older inventory read says.
describe('newuser29 n9: an ended job leaves the inventory card at its end event, not at the next inventory read', () => {
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

  const gpu0 = 'GPU-sim-node-a-0';
  const gpu1 = 'GPU-sim-node-a-1';
  const on = (uuid: string, milli = 1000) => ({ node: 'node-a', gpu_uuids: [uuid], gpu_milli: milli, workers: [] });

  async function started(running: ReturnType<typeof makeJob>[]): Promise<void> {
    const allocations: Record<string, unknown[]> = {};
    for (const j of running) {
      const uuid = j.allocation!.gpu_uuids[0];
      allocations[uuid] = [...(allocations[uuid] ?? []), { job_id: j.id, user: j.user, kind: 'training', gpu_milli: j.allocation!.gpu_milli }];
    }
    server.inventory = makeInventory(2, { allocations: allocations as never });
    server.jobs = [];
    server.queue = running.map(j => queueRow(j));
    model = new SchedModel({ client: new SchedClient(server.transport), refreshInterval: 10 });
    for (const r of ['inventory', 'jobs', 'queue'] as const) {
      model.watch(r);
    }
    await model.start();
    await settle();
  }

  it("test_newuser29_n9 another user's job ended: its GPU is free on the card before the inventory is read again", async () => {
    const other = makeJob({ id: 'j-1m94xrd4k-q0w2f6', name: 'a-sweep-3', user: 'bob', state: 'running', allocation: on(gpu0) });
    const stays = makeJob({ id: 'j-stays', name: 'a-sweep-9', user: 'bob', state: 'running', allocation: on(gpu1) });
    await started([other, stays]);
    expect(model.holders().get(gpu0)).toMatchObject({ id: other.id, name: 'a-sweep-3' });
    model.onEvent({ type: 'job', data: { job: { ...other, state: 'succeeded', finished_at: '2026-12-06T05:52:00Z' } } } as never);
    expect(model.queue.some(q => q.id === other.id)).toBe(false); // left every list
    expect(model.holders().get(gpu0)).toBeUndefined();
    expect(model.holders().get(gpu1)).toMatchObject({ id: 'j-stays' }); // the live one stays

    // its successor on the same GPU, streamed before the inventory is read again: named alone
    const next = makeJob({ id: 'j-next', name: 'a-sweep-4', user: 'bob', state: 'running', allocation: on(gpu0) });
    model.onEvent({ type: 'job', data: { job: next } } as never);
    expect(model.holders().get(gpu0)).toEqual({ id: 'j-next', name: 'a-sweep-4', user: 'bob', kind: 'training' });
  });

  it('test_newuser29_n9 a shared GPU: the ended half leaves, the other half stays named', async () => {
    const half = makeJob({ id: 'j-half', name: 'half', user: 'bob', state: 'running', allocation: on(gpu0, 500) });
    await started([half, makeJob({ id: 'j-gone', name: 'gone', user: 'carol', state: 'running', allocation: on(gpu0, 500) })]);
    expect(model.holders().get(gpu0)).toMatchObject({ shared: 2 });
    model.onEvent({ type: 'job', data: { job: makeJob({ id: 'j-gone', user: 'carol', state: 'cancelled' }) } } as never);
    expect(model.holders().get(gpu0)).toEqual({ id: 'j-half', name: 'half', user: 'bob', kind: 'training', share: 0.5 });
  });
});
