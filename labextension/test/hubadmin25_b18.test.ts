import { describe, expect, it } from 'vitest';

import { CommandIDs } from '../src/commandids';
import { MyWorkView } from '../src/sections';
import { SchedClient } from '../src/client';
import { FakeSchedServer, json, makeJob, settle } from './fakeserver';
import { context, mount, recordingCommands, startedModel } from './ui';

describe('hubadmin25 B18: Hold / Release of a pending job in My work', () => {
  it('test_hubadmin25_b18_panel_hold_release: a pending job has Hold, a held one Release (its held reason shown); running and leases have neither', async () => {
    const server = new FakeSchedServer();
    const held = {
      code: 'Held', message: 'held by alice at 2026-12-01T10:00:09Z',
      details: { by: 'alice', at: '2026-12-01T10:00:09Z', admin: false }, unblock: 'release it: jupyter-sched release j-held', eta: null, eta_reason: 'held'
    };
    server.jobs = [
      makeJob({ id: 'j-wait', name: 'waits', state: 'pending', submitted_at: '2026-12-01T10:00:03Z' }),
      makeJob({ id: 'j-held', name: 'nightly', state: 'pending', submitted_at: '2026-12-01T10:00:02Z', reason: held, held: { by: 'alice', at: '2026-12-01T10:00:09Z', admin: false } }),
      makeJob({ id: 'j-run', name: 'train', state: 'running', submitted_at: '2026-12-01T10:00:01Z', started_at: '2026-12-01T10:00:05Z', allocation: { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-0'], gpu_milli: 1000 } })
    ];
    const { model } = await startedModel(server, 'jobs', 'inventory');
    const { commands, runs } = recordingCommands(CommandIDs.hold, CommandIDs.cancel, CommandIDs.openLogs);
    const view = await mount(new MyWorkView(context(model, commands)));
    const labels = [...view.node.querySelectorAll('button')].map(b => b.getAttribute('aria-label'));
    expect(labels.filter(l => /^(Hold|Release) job/.test(l ?? ''))).toEqual(['Hold job waits', 'Release job nightly']);
    expect(labels).not.toContain('Hold job train');
    const release = [...view.node.querySelectorAll('button')].find(b => b.getAttribute('aria-label') === 'Release job nightly')!;
    expect(release.textContent).toBe('Release');
    release.click();
    await settle();
    expect(runs.map(r => `${r.id} ${(r.args as { id: string }).id}`)).toEqual(['jupyter-sched:hold j-held']);
    expect(view.node.textContent).toContain('held by you'); // alice's own hold, read by alice (newuser27 n2)
    model.dispose();
  });

  it('test_hubadmin25_b18_client_update: PATCH jobs/{id} with the fields given, answered with the job and its changed lines', async () => {
    const server = new FakeSchedServer();
    server.routes.set('PATCH jobs/j-1', body => json(200, { ...makeJob({ id: 'j-1' }), changed: ['held (release with: jupyter-sched release j-1)'], echo: body }));
    const client = new SchedClient(server.transport);
    const answer = await client.update('j-1', { held: true });
    expect(answer.changed).toEqual(['held (release with: jupyter-sched release j-1)']);
    expect(server.calls.at(-1)).toMatchObject({ method: 'PATCH', path: 'api/sched/jobs/j-1', body: { held: true } });
  });
});
