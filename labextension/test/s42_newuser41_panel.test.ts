// s42-panel: what the GPUs panel left out (newuser41 n6, n8, n10; store41's unchecked 503/507 answers).
import { afterEach, describe, expect, it } from 'vitest';

import { elapsedText, restartedText, runNumber } from '../src/format';
import { MyWorkView, QueueView } from '../src/sections';
import { FakeSchedServer, makeJob, queueRow } from './fakeserver';
import { context, disposeMounted, mount, startedModel, text } from './ui';

afterEach(() => {
  disposeMounted();
  document.body.replaceChildren();
});

const NOW = new Date('2026-12-07T20:40:26Z');
/** Start 2 of "victim lo", preempted at 20:24 by n41b's b-normal and started again at 20:34 (newuser41 n6). */
const RESTARTED = {
  id: 'j-victim', name: 'victim lo', user: 'alice', state: 'running' as const, priority: 'low' as const,
  submitted_at: '2026-12-07T20:10:00Z', started_at: '2026-12-07T20:34:00Z', attempts: 2, false_starts: 0,
  preempted_by: 'j-1m992vhtc-9tb164', preempted_by_name: 'b-normal',
  allocation: { node: 'vm', gpus: ['GPU-0'] }
};

describe('newuser41 n6: a preempted-and-restarted job says so on its cards', () => {
  it('test_newuser41_n6_restarted_text_says_the_start_and_its_preemptor_as_the_cli_does', () => {
    // the CLI's words (jupyter_sched.wording.jobs._restarted): " · start 2, after preemption by b-normal (j-…)"
    expect(restartedText(makeJob(RESTARTED))).toBe('start 2, after preemption by b-normal (j-1m992vhtc-9tb164)');
    expect(restartedText(makeJob({ ...RESTARTED, preempted_by_name: null }))).toBe('start 2, after preemption by j-1m992vhtc-9tb164');
    expect(restartedText(makeJob({ ...RESTARTED, preempted_by: null }))).toBe('start 2, after a requeue');
    // runs stopped just after they started are no starts (new user 24, N1); a first run, a lease, a
    // pending job (its reason says "requeued at … after preemption by …") and an ended one say nothing
    expect(restartedText(makeJob({ ...RESTARTED, attempts: 3, false_starts: 1 }))).toBe('start 2, after preemption by b-normal (j-1m992vhtc-9tb164)');
    expect(restartedText(makeJob({ ...RESTARTED, attempts: 2, false_starts: 1 }))).toBe('');
    expect(restartedText(makeJob({ ...RESTARTED, attempts: 1 }))).toBe('');
    expect(restartedText(makeJob({ ...RESTARTED, kind: 'lease' }))).toBe('');
    expect(restartedText(makeJob({ ...RESTARTED, state: 'pending' }))).toBe('');
    expect(restartedText(makeJob({ ...RESTARTED, state: 'succeeded' }))).toBe('');
    expect(runNumber(makeJob({ ...RESTARTED, attempts: undefined }))).toBe(1);
  });

  it('test_newuser41_n6_elapsed_names_what_it_counts', () => {
    expect(elapsedText(makeJob(RESTARTED), NOW)).toBe('elapsed 6m26s this run');
    expect(elapsedText(makeJob({ ...RESTARTED, attempts: 1 }), NOW)).toBe('elapsed 6m26s');
  });

  it('test_newuser41_n6_my_work_and_queue_cards_say_start_2_and_who_preempted_it', async () => {
    const server = new FakeSchedServer();
    server.jobs = [makeJob(RESTARTED), makeJob({ id: 'j-first', name: 'first run', state: 'running', attempts: 1, started_at: '2026-12-07T20:30:00Z', allocation: { node: 'vm', gpus: ['GPU-1'] } })];
    server.queue = server.jobs.map(job => queueRow(job));
    const { model } = await startedModel(server, 'jobs', 'queue', 'inventory');
    const mine = await mount(new MyWorkView(context(model)));
    const queue = await mount(new QueueView(context(model)));
    for (const view of [mine, queue]) {
      const card = text(view.node.querySelector('[data-job-id="j-victim"]'));
      expect(card).toContain('start 2, after preemption by b-normal (j-1m992vhtc-9tb164)');
      expect(card).toMatch(/elapsed \S+ this run/);
      const first = text(view.node.querySelector('[data-job-id="j-first"]'));
      expect(first).not.toContain('start ');
      expect(first).not.toContain('this run');
    }
    model.dispose();
  });
});
