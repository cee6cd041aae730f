import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { SchedClient } from '../src/client';
import { queueLine } from '../src/format';
import { SchedModel } from '../src/model';
import { FakeSchedServer, makeJob, queueRow, settle } from './fakeserver';

/**
 * newuser38 n10: a held job kept "#1" while the next waiting job was the one to start. Held jobs have no start
 * position; the job's event (reason Held, no position) takes its number away and the next waiting job is #1.
 */
describe('newuser38 n10: a held job has no place in the queue', () => {
  let server: FakeSchedServer;
  let model: SchedModel;
  beforeEach(async () => {
    vi.useFakeTimers();
    server = new FakeSchedServer();
    server.queue = [1, 2, 3].map(i => queueRow({ id: `j${i}`, name: `held-${i}`, state: 'pending' }, { position: i }));
    model = new SchedModel({ client: new SchedClient(server.transport), refreshInterval: 1e9 });
    model.watch('queue');
    await model.start();
    await settle();
  });
  afterEach(() => {
    model.dispose();
    vi.useRealTimers();
  });

  const pending = () => model.queue.filter(j => j.state === 'pending').map(j => [j.id, j.position]);

  it('test_newuser38_n10: held, it loses its number and the next waiting job is #1', async () => {
    expect(pending()).toEqual([['j1', 1], ['j2', 2], ['j3', 3]]);
    const reason = { code: 'Held', message: 'held by alice at 10:40 UTC', details: { by: 'alice' }, position: null };
    server.stream.push('job', makeJob({ id: 'j1', name: 'held-1', state: 'pending', reason } as never));
    await settle();
    expect(pending()).toEqual([['j1', null], ['j2', 1], ['j3', 2]]);
    const held = model.queue.find(j => j.id === 'j1');
    expect(held && queueLine(held, new Date())).not.toMatch(/#\d/);
  });
});
