/**
 * s25 drain (hubadmin24): the panel shows a cordoned node's reason, and B14's owner half — a GPU that turned
 * unhealthy under the owner's running job — on the job's row, one line, the server's sentence
 * (jupyter_sched.wording.jobs.unhealthy_gpu_dict: the CLI's `status JOB` and the magics say the same text).
 */
import { afterEach, describe, expect, it } from 'vitest';

import { unhealthyLine } from '../src/format';
import { InventoryView, MyWorkView, QueueView } from '../src/sections';
import { FakeSchedServer, makeGpu, makeInventory, makeJob, queueRow } from './fakeserver';
import { context, mount, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

const SICK = 'GPU 0 (GPU-n2-0) on n2 is unhealthy (ECC errors, RMA): the work runs on there, but may fail or slow ' +
  'down; if it does, cancel and resubmit it (nothing new is placed on that GPU)';
const started = new Date(Date.now() - 120_000).toISOString();
const sick = {
  id: 'j-s', name: 'train', user: 'alice', state: 'running' as const, started_at: started,
  allocation: { node: 'n2', gpu_uuids: ['GPU-n2-0'], gpu_milli: 1000 },
  unhealthy_gpus: [{ uuid: 'GPU-n2-0', index: 0, node: 'n2', reason: 'ECC errors, RMA', since: null, text: SICK }]
};

describe('s25 drain: cordoned nodes and unhealthy GPUs under my work', () => {
  it('test_hubadmin24_b14_owner unhealthyLine says the server sentence for running work only', () => {
    expect(unhealthyLine(sick)).toBe(SICK);
    expect(unhealthyLine({ ...sick, state: 'succeeded' })).toBe('');
    expect(unhealthyLine({ state: 'running', unhealthy_gpus: [] })).toBe('');
    expect(unhealthyLine({ state: 'running' })).toBe('');
  });

  it('test_hubadmin24_b14_owner the My work card and the Queue row show it', async () => {
    const server = new FakeSchedServer();
    server.jobs = [makeJob({ ...sick, submitted_at: '2026-12-05T06:00:00Z' })];
    const { model } = await startedModel(server, 'jobs', 'inventory');
    const card = await mount(new MyWorkView(context(model)));
    expect(text(card.node.querySelector('[data-job-id="j-s"] .jp-sched-unhealthy'))).toBe(SICK);
    model.dispose();

    const queued = new FakeSchedServer();
    queued.queue = [queueRow(sick, { mine: true })];
    const second = await startedModel(queued, 'queue');
    const queue = await mount(new QueueView(context(second.model)));
    expect(text(queue.node.querySelector('[data-job-id="j-s"] .jp-sched-reason'))).toBe(`Running on n2 · ${SICK}`);
    second.model.dispose();
  });

  it('test_s25_drain the inventory names a cordoned node\'s reason, who and when', async () => {
    const server = new FakeSchedServer();
    const b = [0, 1].map(i => makeGpu(i, { uuid: `GPU-b-${i}`, node: 'node-b' }));
    server.inventory = makeInventory(2);
    const said = 'node node-b is cordoned for maintenance: PSU swap, by root at Dec 5 15:40 UTC';
    server.inventory.nodes.push({
      name: 'node-b', ready: true, unschedulable: true, gpus: b,
      cordon: { reason: 'PSU swap', by: 'root', at: '2026-12-05T15:40:00Z', evict_at: null, text: said }
    });
    server.inventory.gpus = [...server.inventory.gpus, ...b];
    const { model } = await startedModel(server, 'inventory');
    const view = await mount(new InventoryView(context(model)));
    const head = view.node.querySelectorAll('[role="rowheader"]')[1];
    expect(text(head.querySelector('.jp-sched-cordon'))).toBe(said);
    expect(head.querySelector('.jp-sched-tag-bad')?.getAttribute('title')).toBe(said);
    model.dispose();
  });
});

describe('s25 drain: a reason without the server text', () => {
  it('test_s25_drain sentenceFromDetails names the cordoned node and its reason', async () => {
    const { sentenceFromDetails } = await import('../src/format');
    const said = sentenceFromDetails('NodeCordoned', {
      requested: 4, free: 1, model: 'A100-80GB',
      cordons: [{ node: 'n3', gpus: 4, reason: 'PSU swap', by: 'root', at: '2026-12-05T15:40:00Z', evict_at: null }]
    });
    expect(said).toContain('node n3 is cordoned for maintenance: PSU swap.');
    expect(said).toContain('job needs 4');
  });
});

describe('newuser27 n5: a one-node lab names no other nodes', () => {
  it('test_newuser27_n5 sentenceFromDetails leaves "the other nodes" out', async () => {
    const { sentenceFromDetails } = await import('../src/format');
    const said = sentenceFromDetails('NodeCordoned', {
      requested: 1, free: 0, model: 'Simulated GPU 80GB', no_other_nodes: true,
      cordons: [{ node: 'vm', gpus: 1, reason: 'PSU swap', by: 'root', at: '2026-12-05T15:40:00Z', evict_at: null }]
    });
    expect(said).not.toContain('other nodes');
    expect(said).toContain('node vm is cordoned for maintenance: PSU swap.');
  });
});
