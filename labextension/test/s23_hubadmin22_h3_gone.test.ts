/**
 * Hubadmin22 H3 (left by session 22): work on GPUs the inventory no longer lists is marked in the panel.
 *
 * A node deleted from the inventory file (or a restart with fewer GPUs) under running work: session 22 said
 * it in the log, GET inventory (admins) and `jupyter-sched jobs`; the panel's My work card and Queue row
 * said "Running on n2" as if nothing had happened. The job answers now carry `gone_gpus`, and both say
 * the CLI's and the magics' sentence (jupyter_sched.wording.jobs.gone_text), via {@link goneLine}.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { goneLine } from '../src/format';
import { MyWorkView, QueueView } from '../src/sections';
import { nullTranslator } from '@jupyterlab/translation';
import { FakeSchedServer, makeJob, queueRow } from './fakeserver';
import { context, mount, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

// the sentence the Python test pins for the CLI and the magics (tests/services/test_s23_hubadmin22_h3_gone_gpus.py)
const SENTENCE = 'GPU-static-n2-0, GPU-static-n2-1 no longer in the inventory (it runs on unless its GPUs went with it; an admin can cancel it)';
const started = new Date(Date.now() - 120_000).toISOString();
const gone = {
  id: 'j-b', name: 'b-n', user: 'alice', state: 'running' as const, started_at: started,
  allocation: { node: 'n2', gpu_uuids: ['GPU-static-n2-0', 'GPU-static-n2-1'], gpu_milli: 1000 },
  gone_gpus: ['GPU-static-n2-0', 'GPU-static-n2-1']
};
const kept = { id: 'j-a', name: 'a-n', user: 'bob', state: 'running' as const, started_at: started,
               allocation: { node: 'n1', gpu_uuids: ['GPU-static-n1-0'], gpu_milli: 1000 } };

const reasons = (node: Element) =>
  Object.fromEntries([...node.querySelectorAll('.jp-sched-job')].map(r => [r.getAttribute('data-job-id'), text(r.querySelector('.jp-sched-reason'))]));

describe('hubadmin22 H3: work on GPUs gone from the inventory', () => {
  it('test_s23_hubadmin22_h3 goneLine says the CLI\'s sentence, for running work only', () => {
    const trans = nullTranslator.load('jupyter_sched');
    expect(goneLine(gone, trans)).toBe(SENTENCE);
    expect(goneLine({ ...gone, state: 'succeeded' }, trans)).toBe('');
    expect(goneLine({ state: 'running', gone_gpus: [] }, trans)).toBe('');
    expect(goneLine({ state: 'running' }, trans)).toBe('');
  });

  it('test_s23_hubadmin22_h3 the Queue row and the My work card say it; other rows do not', async () => {
    const server = new FakeSchedServer();
    server.queue = [queueRow(gone, { mine: true }), queueRow(kept, { mine: false })];
    const { model } = await startedModel(server, 'queue');
    const queue = await mount(new QueueView(context(model)));
    const rows = reasons(queue.node);
    expect(rows['j-b']).toBe(`Running on n2 · ${SENTENCE}`);
    expect(rows['j-a']).toBe('Running on n1');
    model.dispose();

    const mine = new FakeSchedServer();
    mine.jobs = [makeJob({ ...gone, submitted_at: '2026-12-05T06:00:00Z' })];
    const second = await startedModel(mine, 'jobs', 'inventory');
    const card = await mount(new MyWorkView(context(second.model)));
    expect(reasons(card.node)['j-b']).toBe(`on n2 · GPUs GPU-static-n2-0, GPU-static-n2-1 · ${SENTENCE}`);
    second.model.dispose();
  });

  it('test_s23_hubadmin22_h3 a job event (no gone_gpus) keeps the mark of its run; its next start drops it', async () => {
    const server = new FakeSchedServer();
    server.jobs = [makeJob({ ...gone, submitted_at: '2026-12-05T06:00:00Z' })];
    const { model } = await startedModel(server, 'jobs');
    const event = { ...gone } as Record<string, unknown>;
    delete event.gone_gpus;
    model.upsert(makeJob(event));
    expect(model.jobs[0].gone_gpus).toEqual(['GPU-static-n2-0', 'GPU-static-n2-1']);
    model.upsert(makeJob({ ...event, started_at: new Date().toISOString(), allocation: kept.allocation }));
    expect(model.jobs[0].gone_gpus).toBeUndefined();
    model.dispose();
  });
});
