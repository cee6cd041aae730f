/**
 * s30 (closing note 29, red29 R2 left): red29 escaped hidden characters in the audit card's actor and message and the
 * job rows' user only; the panel's other places showed user, team, job, node, model and definition names as
 * stored, so `train\u200b` read as `train` and a right-to-left override reordered what followed it. Every place a
 * stored string is rendered now goes through `shownText`: React text and attributes (titles, aria-labels), the
 * DOM builder `h()` (definitions, usage charts), toasts, confirm dialogs, the log viewer's titles, the status bar,
 * the sidebar's badges. One test per kind of place.
 */
import { Notification } from '@jupyterlab/apputils';
import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { describeError, SchedApiError, SchedClient } from '../src/client';
import { h } from '../src/dom';
import { createLogWidget } from '../src/logviewer';
import { SchedNotifier } from '../src/notify';
import { AdminView, InventoryView, MyWorkView, QueueView, QuotaView, SubmitView } from '../src/sections';
import { kernelGpuText } from '../src/statusbar';
import { FakeSchedServer, json, makeGpu, makeInventory, makeJob, queueRow, settle } from './fakeserver';
import { context, flush, mount, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
  vi.restoreAllMocks();
});

const ZW = 'train\u200b'; // reads as "train"
const ZW_SHOWN = 'train\\u200b';
const BIDI = '\u202ebob'; // reorders what follows
const BIDI_SHOWN = '\\u202ebob';
const NODE = 'node\u2060-a';
const NODE_SHOWN = 'node\\u2060-a';
const HIDDEN = /[\u200b\u202e\u2060\u2066\ufeff]/;

/** Every text and every shown attribute under `node`. */
function shown(node: Element): string {
  const attrs = [...node.querySelectorAll('[title], [aria-label]')].flatMap(el => [el.getAttribute('title') ?? '', el.getAttribute('aria-label') ?? '']);
  return [node.textContent ?? '', ...attrs].join('\n');
}

describe('test_red30_panel_every_place_escapes_hidden_characters', () => {
  it('queue and My work rows: the job name (text and title), the owner, the node in the detail line, the buttons\' labels', async () => {
    const server = new FakeSchedServer();
    const allocation = { node: NODE, gpu_uuids: ['GPU-sim-node-a-0'], gpu_milli: 1000 };
    server.queue = [
      queueRow({ id: 'q1', name: ZW, user: BIDI, state: 'running', started_at: '2026-11-29T10:01:00Z', allocation,
        resources: { gpus: 1, gpu_milli: 1000, gpu_models: ['A100\ufeff'], workers: 1 } }),
      queueRow({ id: 'q2', name: 'plain', user: 'alice', state: 'pending' })
    ];
    server.jobs = [makeJob({ id: 'm1', name: ZW, state: 'running', started_at: '2026-11-29T10:01:00Z', allocation })];
    const { model } = await startedModel(server, 'queue', 'jobs', 'inventory');
    const queue = await mount(new QueueView(context(model)));
    const row = queue.node.querySelector('[data-job-id="q1"]')!;
    expect(text(row.querySelector('.jp-sched-job-name'))).toBe(ZW_SHOWN);
    expect(row.querySelector('.jp-sched-job-name')!.getAttribute('title')).toBe(`${ZW_SHOWN} (q1)`);
    expect(text(row.querySelector('.jp-sched-job-meta'))).toContain(BIDI_SHOWN);
    expect(text(row.querySelector('.jp-sched-job-meta'))).toContain('A100\\ufeff'); // the model asked for
    expect(shown(queue.node)).not.toMatch(HIDDEN);
    const mine = await mount(new MyWorkView(context(model)));
    const card = mine.node.querySelector('[data-job-id="m1"]')!;
    expect(text(card.querySelector('.jp-sched-reason'))).toContain(`on ${NODE_SHOWN}`);
    expect(card.querySelector('.jp-sched-danger')!.getAttribute('aria-label')).toBe(`Cancel job ${ZW_SHOWN}`);
    expect(shown(mine.node)).not.toMatch(HIDDEN);
    model.dispose();
  });

  it('inventory: the node, the model, a tile\'s sentence and its holder, the cordon note', async () => {
    const server = new FakeSchedServer();
    const gpus = [0, 1].map(i => makeGpu(i, { node: NODE, model: 'A100\ufeff' }));
    server.inventory = makeInventory(0, { nodes: [{ name: NODE, ready: true, unschedulable: true, cordon_text: `cordoned by ${BIDI}`, gpus }], gpus });
    server.queue = [queueRow({ id: 'q1', name: ZW, user: BIDI, state: 'running', allocation: { node: NODE, gpu_uuids: [gpus[0].uuid], gpu_milli: 1000 } })];
    const { model } = await startedModel(server, 'inventory', 'queue');
    const view = await mount(new InventoryView(context(model)));
    expect(text(view.node.querySelector('.jp-sched-node-name'))).toBe(NODE_SHOWN);
    expect(text(view.node.querySelector('.jp-sched-gpu-model'))).toBe('A100\\ufeff');
    const tile = view.node.querySelector('[role="gridcell"]')!;
    expect(tile.getAttribute('aria-label')).toContain(`GPU 0 on ${NODE_SHOWN}: A100\\ufeff`);
    expect(tile.getAttribute('aria-label')).toContain(`job ${ZW_SHOWN} (${BIDI_SHOWN})`);
    expect(text(tile.querySelector('.jp-sched-gpu-owner'))).toBe(`${ZW_SHOWN} (${BIDI_SHOWN})`);
    expect(shown(view.node)).not.toMatch(HIDDEN);
    model.dispose();
  });

  it('quota: my line (user, team), a quota line\'s label and meter, a budget\'s owner', async () => {
    const server = new FakeSchedServer();
    server.me = {
      ...server.me, user: BIDI, team: 'ml\u2066', gpu_hours_7d: 1,
      quotas: [{ team: 'ml\u2066', user: BIDI, gpu_model: '*', guaranteed: 2, borrowing_limit: 1 }],
      budgets: [{ team: 'ml\u2066', user: BIDI, gpu_hours: 100, period: 'month', used_gpu_hours: 25 }]
    };
    const { model } = await startedModel(server, 'quotas', 'queue');
    const view = await mount(new QuotaView(context(model)));
    expect(text(view.node.querySelector('.jp-sched-me'))).toMatch(/^\\u202ebob · team ml\\u2066 · /);
    expect(text(view.node.querySelector('.jp-sched-quota-label'))).toContain('ml\\u2066');
    expect(shown(view.node)).not.toMatch(HIDDEN);
    model.dispose();
  });

  it('admin: the usage table\'s names, the audit card\'s job name', async () => {
    const server = new FakeSchedServer();
    server.me = { ...server.me, is_admin: true };
    server.queue = [queueRow({ id: 'j-9', name: ZW, user: BIDI, state: 'running' })];
    server.routes.set('GET usage/report', () => json(200, [{ user: BIDI, gpu_hours: 2, gpu_seconds: 7200, jobs: 1, since: '2026-11-28T08:40:00Z', until: '2026-12-05T08:40:00Z' }]));
    server.routes.set('GET quotas', () => json(200, { quotas: [{ team: 'ml\u2066', user: null, gpu_model: '*', guaranteed: 1, borrowing_limit: null }], budgets: [], teams: [], user_teams: {} }));
    server.routes.set('GET audit', () => json(200, [{ id: 1, at: '2026-12-06T05:33:00Z', actor: 'alice', action: 'cancel', user: BIDI, job_id: 'j-9', message: '', details: {} }]));
    server.routes.set('GET eta-accuracy', () => json(200, { jobs: 0, coverage: null, median_abs_error_s: null, median_wait_s: null, error_of_wait: null }));
    const { model } = await startedModel(server, 'queue');
    const view = await mount(new AdminView(context(model)));
    await settle();
    await flush();
    const cells = [...view.node.querySelectorAll('.jp-sched-usage-table tbody td')].map(td => text(td));
    expect(cells[0]).toBe(BIDI_SHOWN);
    expect(text(view.node.querySelector('.jp-sched-audit-record'))).toContain(`${ZW_SHOWN} (j-9)`);
    expect(view.node.querySelector('.jp-sched-q-remove')!.getAttribute('aria-label')).toBe('Remove quota line 1 (ml\\u2066)');
    expect(shown(view.node)).not.toMatch(HIDDEN);
    view.dispose();
  });

  it('definitions: the list (built by h()), its tooltips, and the delete dialog\'s title and runs', async () => {
    const { DefinitionsView } = await import('../src/definitions');
    const server = new FakeSchedServer();
    const definition = {
      id: 'd-1', user: 'ann', name: `daily${'\u200b'}`, notebook: 'daily.ipynb', script: null, schedule: '* * * * *', timezone: 'UTC',
      schedule_description: 'every minute', paused: false, next_run_at: '2026-12-03T04:00:00Z', parameters: {}, job: { gpus: 1 }, last_run: null
    };
    server.routes.set('GET definitions', () => json(200, [definition]));
    server.routes.set('GET definitions/d-1/runs', () => json(200, [{ definition_id: 'd-1', job_id: 'j-w', trigger: 'schedule', scheduled_for: '2026-12-03T03:54:00Z',
      parameters: {}, created_at: '2026-12-03T03:54:00Z', job: { id: 'j-w', name: ZW, state: 'pending', message: '', reason: null } }]));
    const { model } = await startedModel(server);
    const view = new DefinitionsView({ model, openPath: async () => undefined, saveNotebook: async () => undefined });
    document.body.appendChild(view.node);
    await settle();
    await flush();
    expect(text(view.node.querySelector('.jp-sched-def-name'))).toBe('daily\\u200b');
    expect(shown(view.node)).not.toMatch(HIDDEN);
    view.node.querySelector<HTMLButtonElement>('.jp-sched-def-delete')!.click();
    await vi.waitFor(() => expect(text(document.querySelector('.jp-Dialog-header'))).toBe('Delete "daily\\u200b"?'));
    expect(text(document.querySelector('.jp-sched-def-delete-waiting li'))).toBe(`j-w (${ZW_SHOWN}): pending`);
    expect(text(document.querySelector('.jp-Dialog-body'))).not.toMatch(HIDDEN);
    document.querySelector<HTMLButtonElement>('.jp-Dialog-button.jp-mod-reject')!.click();
    // the builder itself: text children and shown attributes escaped, values kept for sending back
    const built = h('span', { title: ZW, 'aria-label': BIDI, 'data-name': ZW, value: ZW }, ZW);
    expect([built.textContent, built.title, built.getAttribute('aria-label'), built.dataset.name]).toEqual([ZW_SHOWN, ZW_SHOWN, BIDI_SHOWN, ZW]);
    view.dispose();
    model.dispose();
  });

  it('toasts: a job\'s end names it escaped', async () => {
    const server = new FakeSchedServer();
    server.jobs = [makeJob({ id: 'j1', name: ZW, state: 'running', started_at: '2026-12-05T05:00:00Z' })];
    const { model } = await startedModel(server, 'jobs');
    const notifier = new SchedNotifier(model, new CommandRegistry(), nullTranslator.load('x'));
    const said: string[] = [];
    for (const type of ['info', 'success', 'warning', 'error'] as const) {
      vi.spyOn(Notification, type).mockImplementation((message: string) => (said.push(message), `t${said.length}`));
    }
    server.stream.push('job', makeJob({ id: 'j1', name: ZW, state: 'failed', started_at: '2026-12-05T05:00:00Z', finished_at: '2026-12-05T05:09:00Z', exit_code: 1, message: `${BIDI} broke it` }));
    await settle();
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(ZW_SHOWN);
    expect(said[0]).not.toMatch(HIDDEN);
    notifier.dispose();
    model.dispose();
  });

  it('the log viewer\'s tab title, caption and heading; the status bar\'s lease line; errors', async () => {
    const server = new FakeSchedServer();
    const trans = nullTranslator.load('x');
    const job = makeJob({ id: 'j1', name: ZW, user: BIDI, state: 'running' });
    server.routes.set('GET jobs/j1/logs', () => new Response('', { status: 200, headers: { 'X-Log-Offset': '0' } }));
    const widget = createLogWidget(new SchedClient(server.transport), 'j1', trans, job);
    expect(widget.title.label).toBe(`Logs: ${ZW_SHOWN}`);
    expect(widget.title.caption).toContain(`(${BIDI_SHOWN})`);
    widget.dispose();
    const { model } = await startedModel(server);
    model.upsert(makeJob({ id: 'l1', kind: 'lease', name: ZW, state: 'running', kernel_id: 'k1', allocation: { node: NODE, gpu_uuids: ['g'], gpu_milli: 1000 } }));
    const said = kernelGpuText(model, 'k1', trans);
    expect(said.detail).toContain(ZW); // the words as built; the item shows them escaped
    const { KernelGpuStatus } = await import('../src/statusbar');
    const { Signal } = await import('@lumino/signaling');
    const item = await mount(new KernelGpuStatus(model, () => 'k1', new Signal<unknown, unknown>({}), trans, () => undefined));
    const button = item.node.querySelector('button')!;
    expect(button.title).toBe(`Lease ${ZW_SHOWN} holds 1 GPU on ${NODE_SHOWN}`);
    expect(shown(item.node)).not.toMatch(HIDDEN);
    const refused = new SchedApiError(409, { code: 'conflict', message: `a job named ${ZW} exists`, field: 'name', hint: null });
    expect(describeError(refused)).toBe(`a job named ${ZW_SHOWN} exists [name]`);
    item.dispose();
    model.dispose();
  });

  it('submit: the team and GPU model lists', async () => {
    const server = new FakeSchedServer();
    server.me = { ...server.me, team: 'ml\u2066', teams: ['ml\u2066', 'cv'] };
    server.inventory = makeInventory(2);
    server.inventory.gpus = server.inventory.gpus.map(g => ({ ...g, model: 'A100\ufeff' }));
    const { model } = await startedModel(server, 'inventory');
    const view = await mount(new SubmitView(context(model)));
    await flush();
    const options = [...view.node.querySelectorAll('.jp-sched-submit-team option')].map(o => text(o));
    expect(options[0]).toBe('ml\\u2066 (your default)');
    const models = [...view.node.querySelectorAll('.jp-sched-submit-model option')].map(o => text(o));
    expect(models).toContain('A100\\ufeff');
    expect(shown(view.node)).not.toMatch(HIDDEN);
    view.dispose();
    model.dispose();
  });
});
