import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { SchedClient } from '../src/client';
import { queueLine } from '../src/format';
import { SchedModel } from '../src/model';
import { InventoryView, QueueView } from '../src/sections';
import { FakeSchedServer, makeJob, queueRow, settle } from './fakeserver';
import { context, mount, startedModel, text } from './ui';

/**
 * New user 25, N3: the Queue showed positions of an older queue read beside the list the events
 * keep — the only pending job read "#2", the first of fourteen "#8" — while GET queue said 1.
 */
describe('newuser25 N3: queue positions follow the list the events keep', () => {
  let server: FakeSchedServer;
  let model: SchedModel;
  beforeEach(async () => {
    vi.useFakeTimers();
    server = new FakeSchedServer();
    server.queue = [1, 2, 3].map(i => queueRow({ id: `j${i}`, name: `turnc-${i}`, state: 'pending' }, { position: i }));
    // the queue is re-read after events only once its throttle allows: the events alone must number it
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

  it('test_newuser25_n3: jobs ahead that start or end renumber the ones behind them; the only one is #1', async () => {
    expect(pending()).toEqual([['j1', 1], ['j2', 2], ['j3', 3]]);
    const allocation = { node: 'vm', gpu_uuids: ['GPU-sim-vm-1'], gpu_milli: 1000, workers: [] };
    server.stream.push('job', makeJob({ id: 'j1', name: 'turnc-1', state: 'running', allocation }));
    await settle();
    expect(pending()).toEqual([['j2', 1], ['j3', 2]]);
    server.stream.push('job', makeJob({ id: 'j2', name: 'turnc-2', state: 'cancelled' }));
    await settle();
    expect(pending()).toEqual([['j3', 1]]);
    const only = model.queue.find(j => j.id === 'j3');
    expect(only && queueLine(only, new Date())).toMatch(/^#1 · /);
  });

  it('test_newuser25_n3: a new job is numbered after the ones it joins; an event carrying its place keeps it', async () => {
    server.stream.push('job', makeJob({ id: 'j4', name: 'turnc-4', state: 'pending', user: 'alice' }));
    await settle();
    expect(pending()).toEqual([['j1', 1], ['j2', 2], ['j3', 3], ['j4', null]]);
    // the engine's reason says where j4 stands now (it overtook j2 and j3: a higher priority)
    const reason = { code: 'Capacity', message: 'no free GPU', details: {}, position: 2 };
    server.stream.push('job', makeJob({ id: 'j4', name: 'turnc-4', state: 'pending', reason } as never));
    await settle();
    expect(pending()).toEqual([['j1', 1], ['j2', 3], ['j3', 4], ['j4', 2]]);
  });

  // newuser38 n10 (moved here: the same queue): a held job kept "#1" while the next waiting job was the one to
  // start. Held jobs have no start position; the job's event (reason Held, no position) takes its number away.
  it('test_newuser38_n10: held, it loses its number and the next waiting job is #1', async () => {
    expect(pending()).toEqual([['j1', 1], ['j2', 2], ['j3', 3]]);
    const reason = { code: 'Held', message: 'held by alice at 10:40 UTC', details: { by: 'alice' }, position: null };
    server.stream.push('job', makeJob({ id: 'j1', name: 'turnc-1', state: 'pending', reason } as never));
    await settle();
    expect(pending()).toEqual([['j1', null], ['j2', 1], ['j3', 2]]);
    const held = model.queue.find(j => j.id === 'j1');
    expect(held && queueLine(held, new Date())).not.toMatch(/#\d/);
  });
});

/**
 * New user 25, N9: a 190-character name was not clamped — 11 lines in the GPU card, 10 in the
 * Running title of a ~300 px sidebar. One line with an ellipsis, the whole name in the tooltip.
 */
describe('newuser25 N9: long names on one line, whole on hover', () => {
  const LONG = `experiment-${'α'.repeat(60)}-final-with-a-very-long-tail-${'x'.repeat(90)}`;
  afterEach(() => {
    document.body.replaceChildren();
  });

  it('test_newuser25_n9: the clamp is one line with an ellipsis', () => {
    const css = readFileSync(join(__dirname, '..', 'style', 'base.css'), 'utf8');
    const rule = /\.jp-sched-clamp \{([^}]*)\}/.exec(css)?.[1] ?? '';
    expect(rule).toContain('white-space: nowrap');
    expect(rule).toContain('overflow: hidden');
    expect(rule).toContain('text-overflow: ellipsis');
    expect(rule).toContain('min-width: 0'); // a flex item shrinks below its text only so
  });

  it('test_newuser25_n9: the queue row title and the GPU card clamp the name and carry it whole in their title', async () => {
    const server = new FakeSchedServer();
    const allocation = { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-0'], gpu_milli: 1000, workers: [] };
    server.queue = [queueRow({ id: 'j-long', name: LONG, state: 'running', allocation })];
    const { model } = await startedModel(server, 'queue', 'inventory');
    const queue = await mount(new QueueView(context(model)));
    const name = queue.node.querySelector('.jp-sched-job-name')!;
    expect(name.classList.contains('jp-sched-clamp')).toBe(true);
    expect(text(name)).toBe(LONG);
    expect(name.getAttribute('title')).toBe(`${LONG} (j-long)`);
    const inventory = await mount(new InventoryView(context(model)));
    const owner = inventory.node.querySelector('[data-gpu-uuid="GPU-sim-node-a-0"] .jp-sched-gpu-owner')!;
    expect(owner.classList.contains('jp-sched-clamp')).toBe(true);
    expect(owner.getAttribute('title')).toBe(`${LONG} (alice)`);
    model.dispose();
  });
});
