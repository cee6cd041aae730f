import { afterEach, describe, expect, it } from 'vitest';
import { act } from 'react';

import { CommandIDs } from '../src/commandids';
import { clockText } from '../src/format';
import { InventoryView, MyWorkView, QueueView, QuotaView } from '../src/sections';
import { gpuLabel } from '../src/sections/inventory';
import { idleLine, limitEnd } from '../src/sections/jobs';
import { gpuInfo } from '../src/types';
import { nullTranslator } from '@jupyterlab/translation';
import { FakeSchedServer, json, makeGpu, makeInventory, makeJob, queueRow, settle } from './fakeserver';
import { context, flush, MemoryState, mount, recordingCommands, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

describe('Inventory section', () => {
  it('new user 6 F2 remainder: a shared GPU names every job on it; a lone share says its fraction', () => {
    const trans = nullTranslator.load('jupyter_sched');
    const gpu = gpuInfo(makeGpu(2));
    const live = { util: null, used: null, note: '' };
    const shared = { id: 'h1', name: 'half 0.5 GPU, half2 0.5 GPU', user: 'alice, bob', kind: 'training', shared: 2 };
    expect(gpuLabel(gpu, shared, live, trans)).toContain('shared by 2 jobs: half 0.5 GPU, half2 0.5 GPU (alice, bob)');
    const lone = { id: 'q1', name: 'quarter', user: 'alice', kind: 'training', share: 0.25 };
    expect(gpuLabel(gpu, lone, live, trans)).toContain('job quarter (alice), 0.25 of it');
  });

  it('shows every GPU with its full model name, a SIM tag, and a sentence for screen readers', async () => {
    const { model } = await startedModel(new FakeSchedServer(), 'inventory');
    const view = await mount(new InventoryView(context(model)));
    const tiles = view.node.querySelectorAll('[role="gridcell"]');
    expect(tiles).toHaveLength(4);
    expect(text(tiles[0].querySelector('.jp-sched-gpu-model'))).toBe('Simulated GPU 80GB');
    expect(view.node.querySelectorAll('.jp-sched-tag-sim')).toHaveLength(4);
    expect(tiles[0].getAttribute('aria-label')).toBe('GPU 0 on node-a: Simulated GPU 80GB, 80 GiB, simulated; free');
    expect(text(view.node.querySelector('.jp-sched-banner-sim'))).toContain('Simulated GPUs — no NVIDIA driver found on this machine; NVML: NVML shared library not found');
    expect(text(view.node.querySelector('[role="rowheader"]'))).toBe('node-a 4 GPUs');
    expect(InventoryView.badge(model, context(model).trans)).toBe('4/4 free');
    model.dispose();
  });

  it('has one tab stop; arrow keys, Home and End move between GPUs', async () => {
    const server = new FakeSchedServer();
    const b = [0, 1].map(i => makeGpu(i, { uuid: `GPU-b-${i}`, node: 'node-b' }));
    server.inventory = makeInventory(3);
    server.inventory.nodes.push({ name: 'node-b', ready: true, unschedulable: true, gpus: b });
    server.inventory.gpus = [...server.inventory.gpus, ...b];
    const { model } = await startedModel(server, 'inventory');
    const view = await mount(new InventoryView(context(model)));
    const cells = () => [...view.node.querySelectorAll<HTMLElement>('[role="gridcell"]')];
    expect(cells().map(c => c.tabIndex)).toEqual([0, -1, -1, -1, -1]);
    expect(text(view.node.querySelectorAll('[role="rowheader"]')[1])).toBe('node-b 2 GPUs cordoned');
    const grid = view.node.querySelector<HTMLElement>('[role="grid"]')!;
    const press = async (key: string) => {
      await act(async () => {
        (document.activeElement ?? grid).dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
      });
      await flush();
    };
    cells()[0].focus();
    await press('ArrowRight');
    expect(document.activeElement).toBe(cells()[1]);
    await press('ArrowDown'); // no layout in jsdom: same position on the next node
    expect(document.activeElement).toBe(cells()[4]);
    await press('ArrowUp');
    expect(document.activeElement).toBe(cells()[1]);
    await press('End');
    expect(document.activeElement).toBe(cells()[4]);
    await press('Home');
    expect(document.activeElement).toBe(cells()[0]);
    await press('ArrowLeft');
    expect(document.activeElement).toBe(cells()[0]);
    expect(cells().filter(c => c.tabIndex === 0)).toHaveLength(1);
    model.dispose();
  });

  it('a GPU going unhealthy updates that tile only: the other tiles keep their DOM (and a selection in them)', async () => {
    const { server, model } = await startedModel(new FakeSchedServer(), 'inventory');
    const view = await mount(new InventoryView(context(model)));
    const before = [...view.node.querySelectorAll('[role="gridcell"]')];
    const modelText = before[0].querySelector('.jp-sched-gpu-model')!.firstChild!;
    const selection = document.getSelection()!;
    selection.selectAllChildren(before[0].querySelector('.jp-sched-gpu-model')!);
    server.stream.push('inventory', { changes: [{ kind: 'gpu', what: 'health', gpu: makeGpu(2, { health: 'unhealthy', health_reason: 'Xid 79: GPU fell off the bus' }) }] });
    await settle();
    await flush();
    const after = [...view.node.querySelectorAll('[role="gridcell"]')];
    expect(after[0]).toBe(before[0]);
    expect(after[0].querySelector('.jp-sched-gpu-model')!.firstChild).toBe(modelText);
    expect(selection.toString()).toBe('Simulated GPU 80GB');
    expect(after[2].classList.contains('jp-sched-unhealthy')).toBe(true);
    expect(text(after[2].querySelector('.jp-sched-gpu-owner'))).toBe('⚠ unhealthy: Xid 79: GPU fell off the bus');
    expect(after[2].getAttribute('aria-label')).toContain('unhealthy: Xid 79');
    expect(InventoryView.badge(model, context(model).trans)).toBe('3/4 free');
    model.dispose();
  });

  it('case 018: an unhealthy GPU shows its reason and since when, with a red marker, and does not count as free', async () => {
    const server = new FakeSchedServer();
    server.inventory = makeInventory(2);
    server.inventory.gpus[1] = makeGpu(1, { health: 'unhealthy', health_reason: 'Xid 94', health_since: '2024-10-25T02:19:08Z' });
    server.inventory.nodes[0].gpus = server.inventory.gpus;
    const { model } = await startedModel(server, 'inventory');
    const view = await mount(new InventoryView(context(model)));
    const tile = view.node.querySelectorAll('[role="gridcell"]')[1];
    expect(tile.classList.contains('jp-sched-unhealthy')).toBe(true);
    expect(text(tile.querySelector('.jp-sched-gpu-owner'))).toBe('⚠ unhealthy: Xid 94, since 2024-10-25 02:19 UTC');
    expect(tile.getAttribute('aria-label')).toContain('; unhealthy: Xid 94, since 2024-10-25 02:19 UTC');
    expect(InventoryView.badge(model, context(model).trans)).toBe('1/2 free');
    model.dispose();
  });

  it('shows who holds a GPU, its live utilization and a sparkline from the history', async () => {
    const server = new FakeSchedServer();
    const allocation = { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-1'], gpu_milli: 1000, workers: [] };
    server.queue = [queueRow({ id: 'j1', name: 'train-big', state: 'running', allocation })];
    const { model } = await startedModel(server, 'inventory', 'queue');
    const view = await mount(new InventoryView(context(model)));
    for (const [t, u] of [
      ['2026-12-01T10:00:00Z', 40],
      ['2026-12-01T10:00:01Z', 60]
    ] as const) {
      server.stream.push('telemetry', { gpus: [{ gpu_uuid: 'GPU-sim-node-a-1', timestamp: t, utilization_pct: u, memory_used_mib: 40960 }] });
    }
    await settle();
    await flush();
    const tile = view.node.querySelectorAll('[role="gridcell"]')[1];
    expect(tile.classList.contains('jp-sched-busy')).toBe(true);
    expect(tile.getAttribute('aria-label')).toBe('GPU 1 on node-a: Simulated GPU 80GB, 80 GiB, simulated; job train-big (alice); utilization 60%; memory 40 GiB used');
    expect(tile.querySelector('.jp-sched-spark path')?.getAttribute('d')).toBe('M0.0 9.6 L60.0 6.4');
    expect((tile.querySelector('.jp-sched-bar-util .jp-sched-bar-fill') as HTMLElement).style.width).toBe('60%');
    model.dispose();
  });

  it('case 015: a server without GPUs says so with the NVML reason', async () => {
    const server = new FakeSchedServer();
    server.inventory = makeInventory(0);
    const { model } = await startedModel(server, 'inventory');
    const view = await mount(new InventoryView(context(model)));
    expect(text(view.node)).toContain('No GPUs on this server');
    expect(text(view.node)).toContain('NVML: NVML shared library not found');
    model.dispose();
  });

  it('case 027 Z: a Kubernetes cluster without GPU nodes says so, with no executor advice', async () => {
    const server = new FakeSchedServer();
    server.inventory = makeInventory(0, { source: 'kubernetes', simulated: false, nvml: null });
    const { model } = await startedModel(server, 'inventory');
    const view = await mount(new InventoryView(context(model)));
    expect(text(view.node)).toContain('This cluster has no GPU nodes');
    expect(text(view.node)).not.toContain('Kubernetes executor');
    model.dispose();
  });

  it('reads the inventory while shown and stops asking when hidden', async () => {
    const { server, model } = await startedModel();
    expect(server.count('GET', 'inventory')).toBe(0);
    const view = await mount(new InventoryView(context(model)));
    await settle();
    expect(server.count('GET', 'inventory')).toBe(1);
    expect(text(view.node)).not.toContain('Loading inventory');
    view.hide();
    server.eventsStatus = 503;
    server.stream.close();
    await settle();
    model.refresh('inventory');
    await settle();
    model.dispose();
  });
});

describe('Queue section', () => {
  async function queueView(state = new MemoryState()) {
    const server = new FakeSchedServer();
    server.queue = [
      queueRow({ id: 'p2', name: 'second', state: 'pending', reason: { message: '0 of 4 GPUs free, job needs 2', position: 2 } }, { position: 2 }),
      queueRow({ id: 'p1', name: 'first', user: 'bob', state: 'pending', reason: { code: 'WaitingForCapacity', details: { free: 0, capacity: 4, requested: 1 } } }, { position: 1, mine: false }),
      queueRow({ id: 'r1', name: 'runner', user: 'bob', state: 'running', started_at: new Date(Date.now() - 65000).toISOString(), allocation: { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-0'] } }, { mine: false })
    ];
    const { model } = await startedModel(server, 'queue');
    const view = await mount(new QueueView(context(model, undefined, state)));
    return { server, model, view, state };
  }

  it('test_newuser21_n5_planned_preemption_in_the_queue: a running row says its plan, as the CLI\'s queue line', async () => {
    const at = new Date(Date.now() + 240_000);
    const server = new FakeSchedServer();
    server.queue = [queueRow({
      id: 'r1', name: 'lowml', user: 'bob', state: 'running', started_at: new Date(Date.now() - 65000).toISOString(), allocation: { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-0'] },
      preemption_planned: { at: at.toISOString(), for_job: 'j-n2', for_name: 'norm2', for_owner: 'alice', for_priority: 'normal', for_team: 'ml', same_team: true, verb: 'preempted',
                            text: `to be preempted at ~${clockText(at, null)} for alice's job "norm2" (j-n2), normal priority of the same team, unless it ends first` }
    }, { mine: false })];
    const { model } = await startedModel(server, 'queue');
    const view = await mount(new QueueView(context(model)));
    expect(text(view.node.querySelector('.jp-sched-job .jp-sched-reason'))).toBe(
      `Running on node-a · to be preempted at ~${clockText(at)} for alice's job "norm2" (j-n2), normal priority of the same team, unless it ends first`);
    model.dispose();
  });

  it('test_s22_newuser22_n5_running_cards_say_when_they_end: the Queue and My work cards say the CLI\'s ends-by line', async () => {
    const started = new Date(Date.now() - 31_000);
    const end = new Date(started.getTime() + 600_000);
    const alloc = { node: 'vm', gpu_uuids: ['GPU-sim-vm-0', 'GPU-sim-vm-1'], gpu_milli: 1000 };
    const progml = { id: 'j-prog', name: 'progml', user: 'root', state: 'running' as const, started_at: started.toISOString(), time_limit_s: 600, allocation: alloc };
    const cvlease = { id: 'l-cv', name: 'cvlease', user: 'root', kind: 'lease' as const, state: 'running' as const, kernel_id: 'k-1',
                      started_at: started.toISOString(), idle_release: { action: 'release', after_s: 240 }, allocation: { ...alloc, gpu_uuids: ['GPU-sim-vm-2'] } };
    const endsBy = new RegExp(`^ends by ${clockText(end)} \\(in 9m[0-9]{2}s\\), its 10m time limit$`);
    const held = "a kernel's GPUs: held until released (%gpu release) or reclaimed after 4m idle, no time limit";
    const server = new FakeSchedServer();
    server.queue = [queueRow(progml, { mine: true }), queueRow(cvlease, { mine: true }),
                    queueRow({ ...cvlease, id: 'l-bob', name: 'kernel lease', user: 'bob', kernel_id: null }, { mine: false }),
                    queueRow({ id: 'p1', user: 'bob', state: 'pending' }, { position: 1, mine: false })];
    const { model } = await startedModel(server, 'queue');
    const view = await mount(new QueueView(context(model)));
    const ends = (node: Element) => [...node.querySelectorAll('.jp-sched-job')].map(r => [r.getAttribute('data-job-id'), text(r.querySelector('.jp-sched-job-ends'))]);
    const queued = ends(view.node);
    expect(queued[0]).toEqual(['p1', '']); // waiting work: its ETA says when, not an end
    expect(queued[1][1]).toMatch(endsBy);
    expect(queued.slice(2)).toEqual([['l-cv', held], ['l-bob', "a kernel's GPUs: held until its owner releases them or they are reclaimed after 4m idle, no time limit"]]);
    model.dispose();
    const mine = new FakeSchedServer();
    mine.jobs = [makeJob({ ...progml, submitted_at: '2026-12-01T10:00:03Z' })];
    mine.leases = [makeJob({ ...cvlease, submitted_at: '2026-12-01T10:00:02Z' })];
    const second = await startedModel(mine, 'jobs', 'inventory');
    const card = await mount(new MyWorkView(context(second.model)));
    const said = ends(card.node);
    expect(said[0][1]).toMatch(endsBy);
    expect(said[1]).toEqual(['l-cv', held]);
    second.model.dispose();
  });

  it('test_s23_newuser22_n10_my_running_cards_say_the_projected_end_my_waiters_are_given: My work and my Queue line; not another user\'s', async () => {
    const started = new Date(Date.now() - 90_000);
    const limitEnd = new Date(started.getTime() + 900_000);
    const projected = new Date(Date.now() + 65_000);
    const report = new Date(Date.now() - 4_000);
    const serverClock = (at: Date, seconds = false) => clockText(at, null, seconds);  // the server's: with its date
    const end = { at: projected.toISOString(), source: 'progress' as const, report_at: report.toISOString(), fraction: 0.3,
                  text: `projected end ~${serverClock(projected)}, from its progress report of ${serverClock(report, true)}` };
    const stuck = { id: 'j-stuck', name: 'stuck', user: 'root', state: 'running' as const, started_at: started.toISOString(), time_limit_s: 900,
                    allocation: { node: 'vm', gpu_uuids: ['GPU-sim-vm-0'], gpu_milli: 1000 } };
    const said = new RegExp(`^projected end ~${clockText(projected)} \\(in 1m0[0-9]s\\), from its progress report of ${clockText(report, new Date(), true)} · `
                            + `at the latest ${clockText(limitEnd)} \\(in 13m[0-9]{2}s\\), its 15m time limit$`);
    const ends = (node: Element) => Object.fromEntries([...node.querySelectorAll('.jp-sched-job')].map(r => [r.getAttribute('data-job-id'), text(r.querySelector('.jp-sched-job-ends'))]));
    const server = new FakeSchedServer();
    server.queue = [queueRow({ ...stuck, projected_end: end }, { mine: true }),
                    queueRow({ ...stuck, id: 'j-bob', user: 'bob' }, { mine: false })];  // another user's: none sent
    const { model } = await startedModel(server, 'queue');
    const view = await mount(new QueueView(context(model)));
    const queued = ends(view.node);
    expect(queued['j-stuck']).toMatch(said);
    expect(queued['j-bob']).toMatch(/^ends by /);
    model.dispose();
    const mine = new FakeSchedServer();
    mine.jobs = [makeJob({ ...stuck, projected_end: end, submitted_at: '2026-12-01T10:00:03Z' })];
    const second = await startedModel(mine, 'jobs', 'inventory');
    const card = await mount(new MyWorkView(context(second.model)));
    expect(ends(card.node)['j-stuck']).toMatch(said);
    second.model.dispose();
  });

  it('test_s22_newuser22_n6_the_queue_card_of_my_idle_lease_says_its_reclaim: from GET idle, as My work; nothing while in use', async () => {
    const idleSince = new Date(Date.now() - 60_000);
    const deadline = new Date(Date.now() + 180_000);
    const lease = { id: 'l-cv', name: 'cvlease', user: 'alice', kind: 'lease' as const, state: 'running' as const, kernel_id: 'k-1',
                    started_at: new Date(Date.now() - 300_000).toISOString(), idle_release: { action: 'release', after_s: 240 },
                    allocation: { node: 'vm', gpu_uuids: ['GPU-sim-vm-2'], gpu_milli: 1000 } };
    const entry = { job_id: 'l-cv', user: 'alice', team: 'cv', kind: 'lease', gpu_uuids: ['GPU-sim-vm-2'], idle_since: idleSince.toISOString(),
                    warn_at: new Date(deadline.getTime() - 30_000).toISOString(), deadline: deadline.toISOString(), time_left_s: 180,
                    stage: 'idle', action: 'release', reason: '', state: '', grace_s: 0 };
    const server = new FakeSchedServer();
    server.queue = [queueRow(lease, { mine: true })];
    let idle = [entry];
    server.routes.set('GET idle', () => json(200, idle));
    const { model } = await startedModel(server, 'queue');
    const view = await mount(new QueueView(context(model)));
    expect(text(view.node.querySelector('.jp-sched-job-idle'))).toBe(
      `Idle since ${clockText(idleSince)}: if it stays idle, it is warned at ${clockText(new Date(deadline.getTime() - 30_000))} and its GPUs are released at ${clockText(deadline)}.`);
    idle = []; // in use again
    model.refresh('queue', { force: true });
    await act(async () => settle());
    expect(view.node.querySelector('.jp-sched-job-idle')).toBeNull();
    model.dispose();
  });

  it('new user 6 F22: shows the first 50 pending and mine further back, with "Show 50 more"', async () => {
    const server = new FakeSchedServer();
    server.queue = Array.from({ length: 120 }, (_, i) =>
      queueRow({ id: `p${i + 1}`, user: i >= 115 ? 'alice' : 'bob', state: 'pending' }, { position: i + 1, mine: i >= 115 })
    );
    const { model } = await startedModel(server, 'queue');
    const view = await mount(new QueueView(context(model)));
    const ids = () => [...view.node.querySelectorAll('.jp-sched-job')].map(r => r.getAttribute('data-job-id'));
    expect(ids()).toHaveLength(55);
    expect(ids().slice(48)).toEqual(['p49', 'p50', 'p116', 'p117', 'p118', 'p119', 'p120']);
    expect(text(view.node.querySelector('h4'))).toBe('Pending (120)');
    const more = () => view.node.querySelector('.jp-sched-more');
    expect(text(more())).toContain('65 more pending not shown');
    expect(text(more())).toContain('jupyter-sched queue --all');
    await act(async () => (more()?.querySelector('button') as HTMLButtonElement).click());
    await flush();
    expect(ids()).toHaveLength(105);
    await act(async () => (more()?.querySelector('button') as HTMLButtonElement).click());
    await flush();
    expect(ids()).toHaveLength(120);
    expect(more()).toBeNull();
    model.dispose();
  });

  it('lists pending work in queue order with reasons, then running work with its node and elapsed time', async () => {
    const { model, view } = await queueView();
    const headings = [...view.node.querySelectorAll('h4')].map(h => text(h));
    expect(headings).toEqual(['Pending (2)', 'Running (1)']);
    const rows = [...view.node.querySelectorAll('.jp-sched-job')];
    expect(rows.map(r => r.getAttribute('data-job-id'))).toEqual(['p1', 'p2', 'r1']);
    expect(text(rows[0].querySelector('.jp-sched-reason'))).toBe('#1 · 0 of 4 GPUs free, job needs 1 · ETA unknown');
    expect(text(rows[1].querySelector('.jp-sched-reason'))).toBe('#2 · 0 of 4 GPUs free, job needs 2 · ETA unknown');
    expect(text(rows[2])).toContain('Running on node-a');
    expect(text(rows[2])).toMatch(/elapsed 1m0[5-9]s/);
    expect(QueueView.badge(model, context(model).trans)).toBe('2 pending · 1 running');
    model.dispose();
  });

  it('"Mine only" filters to my rows, is a pressed toggle, and is kept in the section state', async () => {
    const { model, view, state } = await queueView();
    // in the section's body since newuser34 n4 (it was in the title bar)
    const button = () => view.node.querySelector<HTMLButtonElement>('button.jp-sched-mine-only')!;
    expect(button().getAttribute('aria-pressed')).toBe('false');
    button().click();
    await flush();
    expect(button().getAttribute('aria-pressed')).toBe('true');
    expect(state.values).toEqual({ mineOnly: true });
    expect([...view.node.querySelectorAll('.jp-sched-job')].map(r => r.getAttribute('data-job-id'))).toEqual(['p2']);
    // a new view on the same saved state starts filtered
    const again = await mount(new QueueView(context(model, undefined, state)));
    expect(again.node.querySelectorAll('.jp-sched-job')).toHaveLength(1);
    model.dispose();
  });

  it('case 027: a job the cluster holds back shows as pending (in the cluster) with its reason, not admitted', async () => {
    const server = new FakeSchedServer();
    const reason = { code: 'Unschedulable', message: '1 of 8 nodes has GPUs and none free; no lower-priority pod to preempt' };
    server.queue = [queueRow({ id: 'k1', name: 'gpu-small', state: 'admitted', reason,
                               allocation: { node: 'g1', gpu_uuids: ['GPU-1'], gpu_milli: 1000, workers: [] } })];
    const { model } = await startedModel(server, 'queue');
    const view = await mount(new QueueView(context(model)));
    const row = view.node.querySelector('.jp-sched-job[data-job-id="k1"]');
    expect(text(row?.querySelector('.jp-sched-state'))).toBe('Pending (in the cluster)');
    expect(text(row?.querySelector('.jp-sched-reason'))).toBe(
      'Pending (in the cluster): 1 of 8 nodes has GPUs and none free; no lower-priority pod to preempt.');
    model.dispose();
  });

  it('an error is one alert that the next identical render leaves alone (not re-announced)', async () => {
    const { server, model, view } = await queueView();
    server.failWith = { status: 503, code: 'unavailable', message: 'store is busy' };
    model.refresh('queue', { force: true });
    await settle();
    await flush();
    const alert = view.node.querySelector('[role="alert"]');
    expect(text(alert)).toBe('store is busy');
    const textNode = alert!.firstChild;
    view.update(); // e.g. the 5 s clock tick
    await flush();
    expect(view.node.querySelector('[role="alert"]')).toBe(alert);
    expect(alert!.firstChild).toBe(textNode);
    server.failWith = null;
    model.refresh('queue', { force: true });
    await settle();
    await flush();
    expect(view.node.querySelector('[role="alert"]')).toBeNull();
    model.dispose();
  });
});

describe('My work section', () => {
  it('names every action after its job, and each runs its command with the id', async () => {
    const server = new FakeSchedServer();
    server.jobs = [
      makeJob({ id: 'j-run', name: 'train', state: 'running', submitted_at: '2026-12-01T10:00:03Z', started_at: '2026-12-01T10:00:05Z', allocation: { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-0'], gpu_milli: 1000 } }),
      makeJob({ id: 'j-done', name: 'eval', state: 'failed', exit_code: 3, message: 'exit code 3 (see the log)', submitted_at: '2026-12-01T10:00:01Z' })
    ];
    server.leases = [makeJob({ id: 'l-1', name: 'nb-lease', kind: 'lease', state: 'running', submitted_at: '2026-12-01T10:00:04Z', allocation: { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-1'] } })];
    const { model } = await startedModel(server, 'jobs', 'inventory');
    const { commands, runs } = recordingCommands(CommandIDs.openLogs, CommandIDs.cancel, CommandIDs.keepalive, CommandIDs.resubmit);
    const view = await mount(new MyWorkView(context(model, commands)));
    const names = [...view.node.querySelectorAll('button')].map(b => b.getAttribute('aria-label'));
    expect(names).toEqual(['Keep lease nb-lease alive', 'Release lease nb-lease', 'Open logs of train', 'Cancel job train', 'Open logs of eval', 'Resubmit eval']);
    for (const button of view.node.querySelectorAll('button')) {
      button.click();
    }
    await settle();
    expect(runs.map(r => `${r.id} ${(r.args as { id: string }).id}`)).toEqual([
      'jupyter-sched:keepalive l-1',
      'jupyter-sched:cancel l-1',
      'jupyter-sched:open-logs j-run',
      'jupyter-sched:cancel j-run',
      'jupyter-sched:open-logs j-done',
      'jupyter-sched:resubmit j-done'
    ]);
    const rows = view.node.querySelectorAll('.jp-sched-job');
    expect(rows[1].hasAttribute('data-cancellable')).toBe(true);
    expect(rows[2].hasAttribute('data-resubmittable')).toBe(true);
    expect(text(rows[2].querySelector('.jp-sched-reason'))).toBe('exit code 3 (see the log)');
    expect(text(rows[1].querySelector('.jp-sched-reason'))).toBe('on node-a · GPU #0');
    expect(MyWorkView.badge(model, context(model).trans)).toBe('2 active');
    model.dispose();
  });

  it('test_issue20_progress_shown_in_my_work: a bar labelled with the report\'s words; nothing for a job that never reported', async () => {
    const server = new FakeSchedServer();
    const alloc = { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-0'], gpu_milli: 1000 };
    const at = new Date(Date.now() - 180_000);
    const started = new Date(Date.now() - 1_200_000).toISOString();
    const progress = { fraction: 0.42, done: 420, total: 1000, at: at.toISOString(), run_started_at: started, ran_s: 1020, reports: 3,
                       text: `42 % done, reported ${clockText(at, null)}` };
    server.jobs = [
      makeJob({ id: 'j-rep', name: 'train', state: 'running', submitted_at: '2026-12-01T10:00:03Z', started_at: started, allocation: alloc, progress }),
      makeJob({ id: 'j-quiet', name: 'quiet', state: 'running', submitted_at: '2026-12-01T10:00:02Z', started_at: started, allocation: { ...alloc, gpu_uuids: ['GPU-sim-node-a-1'] } })
    ];
    const { model } = await startedModel(server, 'jobs', 'inventory');
    const view = await mount(new MyWorkView(context(model)));
    const rows = view.node.querySelectorAll('.jp-sched-job');
    const bar = rows[0].querySelector('progress.jp-sched-progress') as HTMLProgressElement;
    expect(bar).not.toBeNull();
    expect([bar.value, bar.max]).toEqual([0.42, 1]);
    const label = view.node.querySelector(`#${bar.getAttribute('aria-labelledby')}`);
    expect(text(label)).toMatch(new RegExp(`^42 % done, reported ${clockText(at)} \\(3m(0[0-9]s)? ago\\)$`));
    expect(rows[1].querySelector('.jp-sched-job-progress')).toBeNull(); // never reported: no "no progress reported"
    expect(text(rows[1])).not.toContain('done');
    // a newer report arrives as a progress event (the jobs list is not re-read while the stream is up)
    const later = new Date(Date.now() - 10_000);
    server.stream.push('progress', { id: 'j-rep', user: server.me.user, kind: 'training', state: 'running', started_at: started,
                                     progress: { ...progress, fraction: 0.6, at: later.toISOString(), text: `60 % done, reported ${clockText(later, null)}` } });
    await settle();
    await flush();
    const updated = view.node.querySelector('.jp-sched-job progress.jp-sched-progress') as HTMLProgressElement;
    expect(updated.value).toBe(0.6);
    expect(text(view.node.querySelector('.jp-sched-progress-text'))).toMatch(new RegExp(`^60 % done, reported ${clockText(later)} \\(1[0-9]s ago\\)$`));
    // requeued (a job event without the report, started_at gone): the last run's report is no longer shown
    model.upsert(makeJob({ id: 'j-rep', name: 'train', state: 'pending', submitted_at: '2026-12-01T10:00:03Z' }));
    expect(model.find('j-rep')?.progress).toBeUndefined();
    model.dispose();
  });

  it('test_newuser21_n5_planned_preemption_on_the_card: the server\'s sentence with its clock as of now, from the queue where it is read', async () => {
    const at = new Date(Date.now() + 240_000);
    const plan = {
      at: at.toISOString(), for_job: 'j-norm2', for_name: 'norm2', for_owner: 'bob', for_priority: 'normal' as const, for_team: 'ml',
      same_team: true, verb: 'preempted' as const,
      text: `to be preempted at ~${clockText(at, null)} for bob's job "norm2" (j-norm2), normal priority of the same team, unless it ends first`
    };
    const alloc = { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-0'], gpu_milli: 1000 };
    const running = { id: 'j-low', name: 'lowml', state: 'running' as const, priority: 'low' as const, submitted_at: '2026-12-01T10:00:03Z',
                      started_at: new Date(Date.now() - 60_000).toISOString(), allocation: alloc };
    const said = `on node-a · GPU #0 · to be preempted at ~${clockText(at)} for bob's job "norm2" (j-norm2), normal priority of the same team, unless it ends first`;
    const server = new FakeSchedServer();
    server.jobs = [makeJob({ ...running, preemption_planned: plan })];
    const { model } = await startedModel(server, 'jobs', 'inventory');
    const view = await mount(new MyWorkView(context(model)));
    expect(text(view.node.querySelector('.jp-sched-job .jp-sched-reason'))).toBe(said);
    model.dispose();
    // the queue (re-read every interval) no longer plans it — the waiter was cancelled: the card says no plan
    const again = new FakeSchedServer();
    again.jobs = [makeJob({ ...running, preemption_planned: plan })];
    again.queue = [queueRow({ ...running })];
    const second = await startedModel(again, 'jobs', 'inventory', 'queue');
    const card = await mount(new MyWorkView(context(second.model)));
    expect(text(card.node.querySelector('.jp-sched-job .jp-sched-reason'))).toBe('on node-a · GPU #0');
    second.model.dispose();
  });

  it('new user 8 N13 remainder: the state badge says Stopping while stop_requested is set (it said Running)', async () => {
    const server = new FakeSchedServer();
    const text_ = 'stopping (cancel requested by ann at 04:08:01 UTC; killed at 04:08:11 UTC if still running)';
    const alloc = { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-0'], gpu_milli: 1000 };
    server.jobs = [
      makeJob({ id: 'j-stop', name: 'stubborn', state: 'running', submitted_at: '2026-12-01T10:00:03Z', allocation: alloc, stop_requested: { intent: 'cancel', by: 'ann', text: text_ } } as Parameters<typeof makeJob>[0]),
      makeJob({ id: 'j-run', name: 'train', state: 'running', submitted_at: '2026-12-01T10:00:02Z', allocation: { ...alloc, gpu_uuids: ['GPU-sim-node-a-1'] } })
    ];
    const { model } = await startedModel(server, 'jobs', 'inventory');
    const view = await mount(new MyWorkView(context(model)));
    const badges = [...view.node.querySelectorAll('.jp-sched-job .jp-sched-state')].map(b => [text(b), b.className]);
    expect(badges).toEqual([
      ['Stopping', 'jp-sched-state jp-sched-state-badge-stopping'],
      ['Running', 'jp-sched-state jp-sched-state-badge-running']
    ]);
    expect(text(view.node.querySelector('.jp-sched-job .jp-sched-reason'))).toContain(text_);
    model.dispose();
  });

  it('new user 17 N23: an ended lease reads Cancelled (as REST, the CLI and the magics say it) and a lease given no name is named by its notebook (N11)', async () => {
    const server = new FakeSchedServer();
    const alloc = { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-0'], gpu_milli: 1000 };
    server.leases = [
      makeJob({ id: 'l-nb', name: 'notebook lease', kind: 'lease', state: 'running', submitted_at: '2026-12-01T10:00:03Z', allocation: alloc, kernel_id: '0078d6ef-1111-2222-3333-444455556666', kernel_notebook: 'nb/explore.ipynb' } as Parameters<typeof makeJob>[0]),
      makeJob({ id: 'l-old', name: 'kernel-1a2b3c4d', kind: 'lease', state: 'cancelled', submitted_at: '2026-12-01T10:00:02Z', kernel_id: '1a2b3c4d-0000' } as Parameters<typeof makeJob>[0])
    ];
    server.jobs = [makeJob({ id: 'j-gone', name: 'train', state: 'cancelled', submitted_at: '2026-12-01T10:00:01Z' })];
    const { model } = await startedModel(server, 'jobs', 'inventory');
    const view = await mount(new MyWorkView(context(model)));
    const rows = [...view.node.querySelectorAll('.jp-sched-job')].map(row => [
      text(row.querySelector('.jp-sched-state')),
      text(row.querySelector('.jp-sched-job-name'))
    ]);
    expect(rows).toEqual([
      ['Running', 'lease for nb/explore.ipynb'],
      ['Cancelled', 'lease for kernel 1a2b3c4d'],
      ['Cancelled', 'train']
    ]);
    model.dispose();
  });

  it('new user 6 F23 remainder: a lease that used its keep-alive shows a disabled "Kept alive" saying until when, once per allocation', async () => {
    const server = new FakeSchedServer();
    server.leases = [makeJob({ id: 'l-1', name: 'nb-lease', kind: 'lease', state: 'running', attempts: 1, allocation: { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-1'] } })];
    const { model } = await startedModel(server, 'jobs', 'inventory');
    const { commands, runs } = recordingCommands(CommandIDs.cancel, CommandIDs.keepalive);
    const view = await mount(new MyWorkView(context(model, commands)));
    const keep = (): HTMLButtonElement => view.node.querySelectorAll('button')[0];
    expect(keep().disabled).toBe(false);
    expect(keep().title).toContain('once per allocation');
    model.noteKeepalive('l-1', '2026-12-01T10:30:00Z');
    await flush();
    expect(text(keep())).toBe('Kept alive');
    expect(keep().disabled).toBe(true);
    expect(keep().getAttribute('aria-label')).toBe('Lease nb-lease was kept alive: once per allocation');
    expect(keep().title).toBe('Kept alive until 10:30 UTC, its one keep-alive for this allocation; after that, using the GPUs keeps them');
    keep().click();
    await settle();
    expect(runs).toEqual([]);
    // granted again after a preemption: a new allocation, which may keep alive again
    model.upsert({ ...model.find('l-1')!, attempts: 2 });
    await flush();
    expect(text(keep())).toBe('Keep alive');
    expect(keep().disabled).toBe(false);
    model.dispose();
  });

  it('names GPUs by index with Inventory collapsed; a CPU-only job says "no GPUs" and is not tagged simulated (new user 5)', async () => {
    const server = new FakeSchedServer();
    server.jobs = [
      makeJob({ id: 'j-cpu', name: 'cpu-only', state: 'running', resources: { gpus: 0 }, simulated: true, submitted_at: '2026-12-01T10:00:01Z', allocation: { node: 'node-a', gpu_uuids: [] } })
    ];
    server.leases = [makeJob({ id: 'l-1', name: 'nb', kind: 'lease', state: 'running', simulated: true, submitted_at: '2026-12-01T10:00:02Z', allocation: { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-0'] } })];
    const { model } = await startedModel(server); // nothing else watches the inventory
    const view = await mount(new MyWorkView(context(model)));
    await settle();
    await flush();
    const rows = [...view.node.querySelectorAll('.jp-sched-job')];
    expect(rows.map(r => text(r.querySelector('.jp-sched-reason')))).toEqual(['on node-a · GPU #0', 'on node-a (no GPUs)']);
    expect(text(rows[1].querySelector('.jp-sched-job-meta'))).not.toContain('simulated');
    expect(text(rows[0].querySelector('.jp-sched-job-meta'))).toContain('simulated GPUs');
    model.dispose();
  });

  it('a running job shows its live GPU use; once finished it shows none', async () => {
    const server = new FakeSchedServer();
    const allocation = { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-0'], gpu_milli: 1000 };
    server.jobs = [makeJob({ id: 'j1', state: 'running', allocation, started_at: new Date().toISOString() })];
    const { model } = await startedModel(server, 'jobs');
    const view = await mount(new MyWorkView(context(model)));
    server.stream.push('telemetry', { gpus: [{ gpu_uuid: 'GPU-sim-node-a-0', timestamp: '2026-12-01T10:00:00Z', utilization_pct: 91 }] });
    await settle();
    await flush();
    expect(text(view.node)).toContain('GPU use 91%');
    server.stream.push('job', makeJob({ id: 'j1', state: 'succeeded', allocation, started_at: new Date().toISOString(), finished_at: new Date().toISOString() }));
    server.stream.push('telemetry', { gpus: [{ gpu_uuid: 'GPU-sim-node-a-0', timestamp: '2026-12-01T10:00:01Z', utilization_pct: 77 }] });
    await settle();
    await flush();
    expect(text(view.node)).not.toContain('GPU use');
    expect(view.node.querySelector('.jp-sched-bar-util')).toBeNull();
    model.dispose();
  });

  it('lists active work first, then the newest (new user 4: a cancelled lease hid the running one)', async () => {
    const server = new FakeSchedServer();
    server.leases = [
      makeJob({ id: 'l-old', kind: 'lease', state: 'cancelled', submitted_at: '2026-12-01T10:00:09Z' }),
      makeJob({ id: 'l-live', kind: 'lease', state: 'running', submitted_at: '2026-12-01T10:00:01Z', allocation: { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-1'] } })
    ];
    server.jobs = [makeJob({ id: 'j-wait', state: 'pending', submitted_at: '2026-12-01T10:00:05Z' })];
    const { model } = await startedModel(server, 'jobs', 'inventory');
    const view = await mount(new MyWorkView(context(model)));
    const ids = [...view.node.querySelectorAll('.jp-sched-job')].map(row => row.getAttribute('data-job-id'));
    expect(ids).toEqual(['j-wait', 'l-live', 'l-old']);
    model.dispose();
  });

  it('new user 6 F5: lists all active work and the 20 newest finished, with "Show more"; no Logs for work that never ran', async () => {
    const server = new FakeSchedServer();
    const at = (i: number) => `2026-12-01T10:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z`;
    server.jobs = [
      makeJob({ id: 'j-run', state: 'running', submitted_at: at(0), started_at: at(1), allocation: { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-0'], gpu_milli: 1000 } }),
      ...Array.from({ length: 45 }, (_, i) =>
        makeJob({ id: `j-c${i}`, name: `bulk${i}`, state: 'cancelled', submitted_at: at(100 + i), message: 'cancelled by root' })
      ),
      makeJob({ id: 'j-ran', name: 'ran', state: 'succeeded', submitted_at: at(10), started_at: at(11), finished_at: at(12) })
    ];
    const { model } = await startedModel(server, 'jobs', 'inventory');
    const view = await mount(new MyWorkView(context(model)));
    const ids = () => [...view.node.querySelectorAll('.jp-sched-job')].map(row => row.getAttribute('data-job-id'));
    const more = () => view.node.querySelector('.jp-sched-more');
    expect(ids()).toHaveLength(21);
    expect(ids()[0]).toBe('j-run');
    expect(ids()[1]).toBe('j-c44'); // newest finished first
    expect(text(more())).toContain('26 older finished jobs and leases not shown');
    expect(text(more()?.querySelector('button'))).toBe('Show 20 more');
    // cancelled while pending: never ran, no log to open; Resubmit stays
    const labels = [...view.node.querySelectorAll('[data-job-id="j-c44"] button')].map(b => text(b));
    expect(labels).toEqual(['Resubmit']);
    await act(async () => (more()?.querySelector('button') as HTMLButtonElement).click());
    await flush();
    expect(ids()).toHaveLength(41);
    expect(text(more()?.querySelector('button'))).toBe('Show 6 more');
    await act(async () => (more()?.querySelector('button') as HTMLButtonElement).click());
    await flush();
    expect(ids()).toHaveLength(47);
    expect(more()).toBeNull();
    const ran = [...view.node.querySelectorAll('[data-job-id="j-ran"] button')].map(b => text(b));
    expect(ran).toEqual(['Logs', 'Resubmit']);
    model.dispose();
  });

  it('new user 6 F22: every job holding GPUs, the first 50 waiting ones and a "Show more"', async () => {
    const server = new FakeSchedServer();
    server.jobs = [
      makeJob({ id: 'j-run', state: 'running', submitted_at: '2026-12-01T09:00:00Z', allocation: { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-0'], gpu_milli: 1000 } }),
      ...Array.from({ length: 70 }, (_, i) =>
        makeJob({ id: `j-w${i}`, state: 'pending', submitted_at: `2026-12-01T10:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z` })
      )
    ];
    const { model } = await startedModel(server, 'jobs', 'inventory');
    const view = await mount(new MyWorkView(context(model)));
    const ids = () => [...view.node.querySelectorAll('.jp-sched-job')].map(row => row.getAttribute('data-job-id'));
    expect(ids()).toHaveLength(51);
    expect(ids()).toContain('j-run'); // the running one, older than every pending one, is not cut
    expect(text(view.node.querySelector('.jp-sched-more'))).toContain('20 more waiting not shown');
    await act(async () => (view.node.querySelector('.jp-sched-more button') as HTMLButtonElement).click());
    await flush();
    expect(ids()).toHaveLength(71);
    model.dispose();
  });

  it('says how to start when there is nothing', async () => {
    const { model } = await startedModel(new FakeSchedServer(), 'jobs');
    const view = await mount(new MyWorkView(context(model)));
    expect(text(view.node)).toContain('No jobs or leases yet.');
    model.dispose();
  });
});

describe('Quota section', () => {
  it('shows my team line with usage as a labelled meter, and budgets', async () => {
    const server = new FakeSchedServer();
    server.me = {
      ...server.me,
      in_use: { gpus: 1.5, jobs: 1, leases: 1 },
      gpu_hours_7d: 12.345,
      gpu_hours_since: '2026-11-28T08:40:00Z',
      quotas: [{ team: 'team-ml', user: null, gpu_model: '*', guaranteed: 2, borrowing_limit: 1 }],
      budgets: [{ team: 'team-ml', user: null, gpu_hours: 100, period: 'month', used_gpu_hours: 25 }]
    };
    server.queue = [queueRow({ id: 'r', state: 'running', team: 'team-ml', allocation: { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-0'], gpu_milli: 1000 } })];
    const { model } = await startedModel(server, 'quotas', 'queue');
    const view = await mount(new QuotaView(context(model)));
    expect(text(view.node.querySelector('.jp-sched-me'))).toBe('alice · team team-ml · holding 1.5 GPUs (1 job, 1 lease) · 12.35 GPU-hours in the last 7 days (since Nov 28 08:40 UTC)');
    const meters = view.node.querySelectorAll('[role="meter"]');
    expect(meters[0].getAttribute('aria-label')).toBe('team-ml · any model: 1 used · 2 guaranteed · borrow up to 1 (max 3)');
    expect(meters[0].getAttribute('aria-valuenow')).toBe('1');
    expect(meters[1].getAttribute('aria-label')).toBe('25 of 100 GPU-hours');
    expect(text(view.node)).toContain('25 of 100 GPU-hours used this month');
    model.dispose();
  });

  it('new user 8 N13 remainder: my line says how many of my jobs are stopping (GET me in_use.stopping)', async () => {
    const server = new FakeSchedServer();
    server.me = { ...server.me, in_use: { gpus: 2, jobs: 2, leases: 0, stopping: 1 }, gpu_hours_7d: 1 };
    const { model } = await startedModel(server, 'quotas');
    const view = await mount(new QuotaView(context(model)));
    expect(text(view.node.querySelector('.jp-sched-me'))).toBe('alice · team team-ml · holding 2 GPUs (2 jobs, 1 stopping, 0 leases) · 1 GPU-hour in the last 7 days');
    model.dispose();
  });

  it("new user 17 N17: without lines it says the server's quota sentence (the CLI's and %gpu's), never \"preemptible\"", async () => {
    const server = new FakeSchedServer();
    server.quotas = { quotas: [], budgets: [], teams: [], user_teams: {} };
    const sentence = 'team team-ml has no GPUs set aside and no limit (no quota); 1 GPU in use by the team, 1 GPU of them yours';
    server.me = { ...server.me, quotas: [], quota_text: sentence };
    const { model } = await startedModel(server, 'quotas');
    const view = await mount(new QuotaView(context(model)));
    expect(text(view.node.querySelector('.jp-sched-quota-text'))).toBe(`${sentence}.`);
    expect(text(view.node)).not.toContain('preemptible');
    model.dispose();
  });

  it('new user 17 N17: with quota lines the same sentence is said above the meters', async () => {
    const server = new FakeSchedServer();
    const sentence = 'team team-ml: guaranteed 2 GPUs, borrowing limit 1 (at most 3); 0 GPUs in use by the team, 0 GPUs of them yours';
    server.me = { ...server.me, quotas: [{ team: 'team-ml', user: null, gpu_model: '*', guaranteed: 2, borrowing_limit: 1 }], quota_text: sentence };
    const { model } = await startedModel(server, 'quotas');
    const view = await mount(new QuotaView(context(model)));
    expect(text(view.node.querySelector('.jp-sched-quota-text'))).toBe(`${sentence}.`);
    expect(view.node.querySelectorAll('.jp-sched-quota-bar').length).toBe(1);
    model.dispose();
  });

  it('new user 17 N17: an older server without quota_text: no lines is said without a claim', async () => {
    const server = new FakeSchedServer();
    server.quotas = { quotas: [], budgets: [], teams: [], user_teams: {} };
    server.me = { ...server.me, quotas: [] };
    const { model } = await startedModel(server, 'quotas');
    const view = await mount(new QuotaView(context(model)));
    expect(text(view.node.querySelector('.jp-sched-quota-text'))).toBe('No quota lines for team-ml.');
    expect(text(view.node)).not.toContain('preemptible');
    model.dispose();
  });
});

describe('idle line (new user 11, N23)', () => {
  const trans = nullTranslator.load('jupyter_sched');
  const entry = {
    job_id: 'j-1', user: 'ann', team: 't', kind: 'training', gpu_uuids: ['GPU-1'], idle_since: '2026-12-03T14:16:00Z',
    warn_at: '2026-12-03T14:36:00Z', deadline: '2026-12-03T14:46:00Z', time_left_s: 1800, stage: 'idle', action: 'release',
    reason: '', state: '', grace_s: 0
  } as Parameters<typeof idleLine>[0];
  const now = new Date('2026-12-03T14:20:00Z');

  it('says the warning is ahead ("warned at 14:36" read as done)', () => {
    expect(idleLine(entry, now, trans)).toBe('Idle since 14:16 UTC: if it stays idle, it is warned at 14:36 UTC and its GPUs are released at 14:46 UTC.');
  });

  it('says nothing when the time limit ends the job before the warning or the reclaim', () => {
    const job = makeJob({ id: 'j-1', state: 'running', started_at: '2026-12-03T14:15:00Z', time_limit_s: 900 } as Parameters<typeof makeJob>[0]);
    expect(limitEnd(job)?.toISOString()).toBe('2026-12-03T14:30:00.000Z');
    expect(idleLine(entry, now, trans, false, limitEnd(job))).toBe('');
    expect(idleLine({ ...entry, stage: 'warned' }, now, trans, false, limitEnd(job))).toBe('');
    const long = makeJob({ id: 'j-1', state: 'running', started_at: '2026-12-03T14:15:00Z', time_limit_s: 7200 } as Parameters<typeof makeJob>[0]);
    expect(idleLine(entry, now, trans, false, limitEnd(long))).toContain('it is warned at 14:36 UTC');
  });

  it('newuser16 N8: its times as the CLI and the magics say them: another day\'s with its date, "in 9m30s"', () => {
    const warned = { ...entry, stage: 'warned', idle_since: '2026-12-02T23:50:00Z', deadline: '2026-12-03T14:29:30Z' };
    expect(idleLine(warned, now, trans)).toBe(
      'Idle since Dec 2 23:50 UTC: its GPUs are released at 14:29 UTC (in 9m30s) unless it is used — using its GPUs keeps them.'
    );
  });
});
