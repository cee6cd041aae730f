/**
 * newuser38 n21 / n24 (session 39): what the panel says of a team's reclaim cool-down and of held work.
 *
 * n21: after n38a's `%gpu release`, teammate n38b's Quota section said nothing of the team's paused reclaims; `GET me`'s
 * quota_text now carries the line (`vision: reclaims paused until 11:08 UTC (cool-down after n38a's release): …`) under
 * the team's quota line, as `jupyter-sched status` says it. n24: a job held for good was counted as "1 pending" alone;
 * the Queue's badge and its Pending heading now say the held ones apart, and My work says each kind with its fix.
 */
import { describe, expect, it } from 'vitest';

import { MyWorkView, QueueView, QuotaView } from '../src/sections';
import { FakeSchedServer, makeJob, queueRow } from './fakeserver';
import { context, mount, startedModel } from './ui';

const PAUSED = "vision: reclaims paused until 11:08 UTC (cool-down after n38a's release): its jobs take no borrowed GPUs back until then";
const HELD_REASON = {
  code: 'TeamMembership',
  message: 'held: n38b is no longer a member of team nlp (found 10:40 UTC); it never starts charged to nlp',
  details: {},
  unblock: 'cancel it and resubmit to one of n38b\'s teams (vision), or an admin adds n38b back to nlp'
};

describe('newuser38 n21 / n24', () => {
  it('test_newuser38_n21_the_quota_section_says_the_teams_reclaim_cooldown', async () => {
    const server = new FakeSchedServer();
    server.me = {
      ...server.me,
      user: 'n38b',
      team: 'vision',
      quota_text: `team vision: guaranteed 2 GPUs, no borrowing limit; 0 GPUs in use by the team, 0 GPUs of them yours\n${PAUSED}`,
      reclaim_cooldowns: [{ team: 'vision', until: '2026-12-07T11:08:00+00:00', user: 'n38a', cause: 'release', lease: true, text: PAUSED }]
    };
    const { model } = await startedModel(server, 'quotas');
    const view = await mount(new QuotaView(context(model)));
    const said = view.node.querySelector('.jp-sched-quota-text')?.textContent ?? '';
    expect(said.split('\n')).toEqual([expect.stringMatching(/^team vision: guaranteed 2 GPUs/), `${PAUSED}.`]);
    model.dispose();
  });

  it('test_newuser38_n24_the_queue_and_my_work_say_held_jobs_apart', async () => {
    const server = new FakeSchedServer();
    server.queue = [
      queueRow({ id: 'j-held', state: 'pending', reason: HELD_REASON }),
      queueRow({ id: 'j-wait', state: 'pending' }, { position: 1 }),
      queueRow({ id: 'j-run', user: 'bob', state: 'running' })
    ];
    server.jobs = [makeJob({ id: 'j-held', state: 'pending', reason: HELD_REASON }), makeJob({ id: 'j-wait', state: 'pending' })];
    server.me = {
      ...server.me,
      pending: 2,
      held: [{ code: 'TeamMembership', jobs: 1, what: 'never starts (you left team nlp)', fix: 'cancel and resubmit with --team vision' }]
    };
    const { model } = await startedModel(server, 'queue', 'jobs', 'inventory', 'quotas');
    expect(QueueView.badge(model, context(model).trans)).toBe('2 pending (1 held) · 1 running');
    const queue = await mount(new QueueView(context(model)));
    expect(queue.node.querySelector('.jp-sched-subhead')?.textContent).toBe('Pending (2, 1 held)');
    expect(MyWorkView.badge(model, context(model).trans)).toBe('2 active (1 held)');
    const mine = await mount(new MyWorkView(context(model)));
    expect([...mine.node.querySelectorAll('.jp-sched-held-work')].map(p => p.textContent)).toEqual([
      '1 held: never starts (you left team nlp) — cancel and resubmit with --team vision'
    ]);
    model.dispose();
  });

  it('test_newuser38_n24_nothing_held_reads_as_before', async () => {
    const server = new FakeSchedServer();
    server.queue = [queueRow({ id: 'j-wait', state: 'pending' }, { position: 1 })];
    const { model } = await startedModel(server, 'queue', 'jobs', 'inventory', 'quotas');
    expect(QueueView.badge(model, context(model).trans)).toBe('1 pending · 0 running');
    expect(MyWorkView.badge(model, context(model).trans)).toBe('');
    const mine = await mount(new MyWorkView(context(model)));
    expect(mine.node.querySelector('.jp-sched-held-work')).toBeNull();
    model.dispose();
  });
});
