/**
 * newuser31 n14: n31b held every GPU while n31a's job waited, and nothing n31b read said so. `GET me` now
 * carries `waiting_on_you` (who waits for the GPUs my work holds: their owners, never their jobs' names), and
 * My work says the server's sentence — the one `jupyter-sched status` and `%schedule status` print.
 */
import { describe, expect, it } from 'vitest';

import { GLOSSARY } from '../src/glossary';
import { MyWorkView } from '../src/sections';
import { FakeSchedServer, makeJob } from './fakeserver';
import { context, mount, startedModel } from './ui';

const TEXT = '1 job of another user (n31a) waits for GPUs you hold';

describe('newuser31 n14', () => {
  it('test_newuser31_n14_my_work_says_who_waits_for_my_gpus', async () => {
    const server = new FakeSchedServer();
    server.jobs = [makeJob({ id: 'j-1', name: 'fl2-1', state: 'running', submitted_at: '2026-12-01T10:00:02Z' })];
    server.me = { ...server.me, waiting_on_you: { jobs: 1, users: ['n31a'], text: TEXT } };
    const { model } = await startedModel(server, 'jobs', 'inventory', 'quotas');
    const view = await mount(new MyWorkView(context(model)));
    expect(view.node.querySelector('.jp-sched-waiting-on-you')?.textContent).toBe(TEXT);
    model.dispose();
  });

  it('test_newuser31_n14_nothing_is_said_when_nobody_waits', async () => {
    const server = new FakeSchedServer();
    server.jobs = [makeJob({ id: 'j-1', name: 'fl2-1', state: 'running', submitted_at: '2026-12-01T10:00:02Z' })];
    const { model } = await startedModel(server, 'jobs', 'inventory', 'quotas');
    const view = await mount(new MyWorkView(context(model)));
    expect(view.node.querySelector('.jp-sched-waiting-on-you')).toBeNull();
    model.dispose();
  });

  it('test_newuser31_n6_the_glossary_never_says_a_backfilled_job_delays_nobody', () => {
    // newuser31 N6: the ETA a backfilled job moves later is that job's end; no start is kept while a holder has no limit
    const meaning = GLOSSARY.find(t => t.term === 'backfill')?.meaning ?? '';
    expect(meaning).not.toContain('delays nobody');
    expect(meaning).toContain('while no start can be kept');
  });
});
