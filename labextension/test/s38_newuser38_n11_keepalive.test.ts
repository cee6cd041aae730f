import { afterEach, describe, expect, it } from 'vitest';

import { CommandIDs } from '../src/commandids';
import { keepAliveOffered } from '../src/keepalive';
import { MyWorkView } from '../src/sections';
import { FakeSchedServer, makeJob } from './fakeserver';
import { context, mount, recordingCommands, startedModel } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

describe('newuser38 n11: Keep alive only on a lease that holds GPUs', () => {
  it('test_newuser38_n11_keepAliveOffered: a granted lease, never a waiting, ended or batch one', () => {
    for (const state of ['admitted', 'running'] as const) {
      expect(keepAliveOffered({ kind: 'lease', state })).toBe(true);
    }
    for (const state of ['pending', 'preempted', 'cancelled', 'failed', 'succeeded', 'lost', 'rejected'] as const) {
      expect(keepAliveOffered({ kind: 'lease', state })).toBe(false);
    }
    expect(keepAliveOffered({ kind: 'training', state: 'running' })).toBe(false);
  });

  it('test_newuser38_n11_a_pending_lease_card_offers_release_not_keep_alive', async () => {
    // newuser38: My work showed "Keep alive" beside Release on a pending kernel lease (POST keepalive answers it
    // 409 "holds no GPUs yet")
    const server = new FakeSchedServer();
    server.leases = [
      makeJob({ id: 'l-wait', name: 'waiting-nb', kind: 'lease', state: 'pending', submitted_at: '2026-12-07T10:40:02Z' }),
      makeJob({ id: 'l-back', name: 'requeued-nb', kind: 'lease', state: 'preempted', submitted_at: '2026-12-07T10:40:01Z' }),
      makeJob({ id: 'l-run', name: 'granted-nb', kind: 'lease', state: 'running', submitted_at: '2026-12-07T10:40:00Z', allocation: { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-1'] } })
    ];
    const { model } = await startedModel(server, 'jobs', 'inventory');
    const { commands } = recordingCommands(CommandIDs.cancel, CommandIDs.keepalive);
    const view = await mount(new MyWorkView(context(model, commands)));
    const names = [...view.node.querySelectorAll('button')].map(b => b.getAttribute('aria-label'));
    expect(names.filter(n => /alive/.test(n ?? ''))).toEqual(['Keep lease granted-nb alive']);
    expect(names).toContain('Release lease waiting-nb');
    model.dispose();
  });
});
