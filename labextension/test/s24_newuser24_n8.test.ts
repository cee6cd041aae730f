/**
 * New user 24, N8: GPUs gone from the inventory under running work — the panel's Inventory title said
 * "2/2 FREE" (the two listed GPUs) beside its own Queue card of a job running on two gone GPUs, with no
 * word of the GPUs still held off the inventory. The badge now says them, with the work's names.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { InventoryView } from '../src/sections';
import { FakeSchedServer, makeInventory, makeJob, queueRow } from './fakeserver';
import { context, startedModel } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

const started = new Date(Date.now() - 120_000).toISOString();
const gonejob = {
  id: 'j-g', name: 'gonejob', user: 'alice', state: 'running' as const, started_at: started,
  allocation: { node: 'vm', gpu_uuids: ['GPU-sim-vm-0', 'GPU-sim-vm-1'], gpu_milli: 1000 },
  gone_gpus: ['GPU-sim-vm-0', 'GPU-sim-vm-1']
};

describe('new user 24 N8: the Inventory title says GPUs held off the inventory', () => {
  it('test_newuser24_n8 2/2 free · 2 GPUs held off the inventory (gonejob)', async () => {
    const server = new FakeSchedServer();
    server.inventory = makeInventory(2);
    server.queue = [queueRow(gonejob, { mine: true })];
    server.jobs = [makeJob({ ...gonejob, submitted_at: '2026-12-05T06:00:00Z' })];
    const { model } = await startedModel(server, 'inventory', 'queue', 'jobs');
    expect(InventoryView.badge(model, context(model).trans)).toBe('2/2 free · 2 GPUs held off the inventory (gonejob)');
    model.dispose();
  });

  it('test_newuser24_n8 ended work on gone GPUs, or none, leaves the plain count', async () => {
    const server = new FakeSchedServer();
    server.inventory = makeInventory(2);
    server.jobs = [makeJob({ ...gonejob, state: 'succeeded', submitted_at: '2026-12-05T06:00:00Z' })];
    const { model } = await startedModel(server, 'inventory', 'jobs');
    expect(InventoryView.badge(model, context(model).trans)).toBe('2/2 free');
    model.dispose();
  });
});
