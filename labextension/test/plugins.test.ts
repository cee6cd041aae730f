/**
 * The plugins wired into a stand-in application: a real command registry and state database, a
 * shell that records what is added, and the model on the API double. What JupyterLab itself does
 * (layout, menus from settings) is covered by the browser tests.
 */
import { Notification } from '@jupyterlab/apputils';
import { ServerConnection } from '@jupyterlab/services';
import { StateDB } from '@jupyterlab/statedb';
import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';
import { afterEach, describe, expect, it, vi } from 'vitest';

import plugins, { CommandIDs, DEFAULT_SETTINGS, ISchedModel, readSettings } from '../src/index';
import { fitToast, preemptorOf, SchedNotifier, TOAST_CHARS } from '../src/notify';
import { UPDATE_MS } from '../src/toasts';
import { SchedSections } from '../src/registry';
import type { SchedSidebar } from '../src/sidebar';
import { kernelGpuText, KernelGpuStatus } from '../src/statusbar';
import { FakeSchedServer, json, makeJob, settle } from './fakeserver';
import { flush, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
  vi.restoreAllMocks();
});

const [modelPlugin, sectionsPlugin, sidebarPlugin, statusPlugin] = plugins;

function fakeApp() {
  const added: { widget: Widget; area: string }[] = [];
  const activated: string[] = [];
  let hit: HTMLElement | null = null;
  return {
    added,
    activated,
    setHit: (node: HTMLElement | null) => {
      hit = node;
    },
    app: {
      commands: new CommandRegistry(),
      shell: {
        add: (widget: Widget, area: string) => {
          added.push({ widget, area });
          if (area === 'left') {
            Widget.attach(widget, document.body); // a shell attaches its open left area: the panel is visible
          }
        },
        activateById: (id: string) => void activated.push(id),
        currentWidget: null
      },
      serviceManager: { serverSettings: ServerConnection.makeSettings({ baseUrl: 'http://127.0.0.1:9/' }) },
      contextMenuHitTest: (test: (node: HTMLElement) => boolean) => (hit && test(hit) ? hit : null),
      restored: Promise.resolve()
    }
  };
}

async function activated(server: FakeSchedServer) {
  const { model } = await startedModel(server);
  const sections = new SchedSections();
  const fake = fakeApp();
  const palette = { items: [] as unknown[], addItem(item: unknown) { this.items.push(item); } };
  await sidebarPlugin.activate(fake.app as never, model, sections, nullTranslator, null, new StateDB(), null, palette, null, null);
  await settle();
  await flush();
  const sidebar = fake.added.find(a => a.area === 'left')!.widget as SchedSidebar;
  // sections appear once the state database answered (asynchronously)
  await vi.waitFor(() => expect(sidebar.sectionIds).toContain('submit'));
  await flush();
  return { model, sections, fake, sidebar, palette };
}

describe('plugins', () => {
  it('newuser41 n10 the GPUs tab tooltip names the Show GPUs Panel keys and follows a rebinding', async () => {
    const server = new FakeSchedServer();
    const { model, fake, sidebar } = await activated(server);
    expect(sidebar.title.caption).toBe('GPUs: inventory, queue, my work, quotas');
    const binding = fake.app.commands.addKeyBinding({ command: CommandIDs.open, keys: ['Alt Shift G'], selector: 'body' });
    expect(sidebar.title.caption).toBe(`GPUs: inventory, queue, my work, quotas (${CommandRegistry.formatKeystroke('Alt Shift G')})`);
    expect(sidebar.title.caption).toContain('Shift+G');
    binding.dispose();
    expect(sidebar.title.caption).toBe('GPUs: inventory, queue, my work, quotas');
    model.dispose();
  });

  it('provide the model and the section registry; the sidebar needs no ILabShell (Notebook 7 has none)', () => {
    expect(modelPlugin.provides).toBe(ISchedModel);
    expect(modelPlugin.id).toBe('@jupyter-sched/labextension:model');
    const model = modelPlugin.activate(fakeApp().app as never) as ISchedModel;
    expect(model.status).toBe('idle');
    model.dispose();
    expect(sectionsPlugin.activate(fakeApp().app as never)).toBeInstanceOf(SchedSections);
    for (const plugin of plugins) {
      expect((plugin.requires ?? []).map(t => (t as { name: string }).name)).not.toContain('@jupyterlab/application:ILabShell');
    }
  });

  it('the sidebar goes to the left area with the built-in sections and palette entries', async () => {
    const { model, sidebar, palette } = await activated(new FakeSchedServer());
    expect(sidebar.id).toBe('jupyter-sched-panel');
    expect(sidebar.sectionIds).toEqual(['inventory', 'queue', 'mywork', 'quota', 'submit']);
    expect(palette.items.map(i => (i as { command: string }).command)).toEqual([CommandIDs.open, CommandIDs.refresh, CommandIDs.runNotebook]);
    model.dispose();
  });

  it('commands: open a section, run a file (prefills Submit), refresh, move sections', async () => {
    const server = new FakeSchedServer();
    server.routes.set('POST dryrun', () => json(200, { fits: true, never: false, allocation: null, reason: null, eta: null, would_preempt: [], job: makeJob() }));
    const { model, fake, sidebar } = await activated(server);
    const { commands } = fake.app;
    await commands.execute(CommandIDs.open, { section: 'quota' });
    expect(fake.activated).toContain('jupyter-sched-panel');
    expect(sidebar.isExpanded('quota')).toBe(true);
    await commands.execute(CommandIDs.runFile, { path: 'exp/run.py' });
    await settle();
    await flush();
    await vi.waitFor(() => expect((sidebar.node.querySelector('.jp-sched-submit-path') as HTMLInputElement | null)?.value).toBe('exp/run.py'));
    await commands.execute(CommandIDs.runNotebook, { path: 'a.ipynb' });
    await flush();
    expect((sidebar.node.querySelector('.jp-sched-submit-path') as HTMLInputElement).value).toBe('a.ipynb');
    const before = server.count('GET', 'jobs');
    await commands.execute(CommandIDs.refresh);
    await settle();
    expect(server.count('GET', 'jobs')).toBe(before + 1);
    const title = document.createElement('h3');
    title.dataset.section = 'queue';
    fake.setHit(title);
    await commands.execute(CommandIDs.moveSectionUp);
    expect(sidebar.sectionIds.slice(0, 2)).toEqual(['queue', 'inventory']);
    await commands.execute(CommandIDs.moveSectionDown, { id: 'queue' });
    expect(sidebar.sectionIds.slice(0, 2)).toEqual(['inventory', 'queue']);
    expect(commands.label(CommandIDs.runNotebook, { isPalette: true })).toBe('Run This Notebook on GPUs…');
    model.dispose();
  });

  it('test_red30_panel_cancel_dialog_and_toasts_escape_hidden_characters: the name in the question, its body and the toasts', async () => {
    const server = new FakeSchedServer();
    server.jobs = [makeJob({ id: 'j1', name: 'train\u200b', state: 'running', allocation: { node: 'node\u2060-a', gpu_uuids: [], gpu_milli: 1000 } })];
    server.routes.set('DELETE jobs/j1', () => json(409, { error: { code: 'conflict', message: 'train\u200b already ended', field: null, hint: null } }));
    const error = vi.spyOn(Notification, 'error').mockReturnValue('toast-1');
    const { model, fake } = await activated(server);
    await settle();
    const done = fake.app.commands.execute(CommandIDs.cancel, { id: 'j1' });
    await vi.waitFor(() => expect(text(document.querySelector('.jp-Dialog-header'))).toBe('Cancel job train\\u200b?'));
    expect(text(document.querySelector('.jp-Dialog-body'))).not.toMatch(/[\u200b\u2060]/);
    document.querySelector<HTMLButtonElement>('.jp-Dialog-button.jp-mod-warn')!.click();
    await done;
    expect(error).toHaveBeenCalledTimes(1);
    expect(error.mock.calls[0][0]).toBe('Could not cancel train\\u200b: train\\u200b already ended');
    model.dispose();
  });

  it('cancel asks first and names what it does; the row under the context menu is the target', async () => {
    const server = new FakeSchedServer();
    server.jobs = [makeJob({ id: 'j1', name: 'train', state: 'running' })];
    server.leases = [makeJob({ id: 'l1', name: 'nb', kind: 'lease', state: 'running' })];
    const cancelled: string[] = [];
    server.routes.set('DELETE jobs/j1', () => (cancelled.push('j1'), json(200, makeJob({ id: 'j1', name: 'train', state: 'cancelled' }))));
    server.routes.set('DELETE leases/l1', () => (cancelled.push('l1'), json(200, makeJob({ id: 'l1', name: 'nb', kind: 'lease', state: 'cancelled' }))));
    const { model, fake } = await activated(server);
    await settle();
    const { commands } = fake.app;
    expect(commands.label(CommandIDs.cancel, { id: 'l1' })).toBe('Release Lease');
    const row = document.createElement('li');
    row.dataset.jobId = 'j1';
    fake.setHit(row);
    expect(commands.label(CommandIDs.cancel)).toBe('Cancel Job');
    expect(commands.isEnabled(CommandIDs.cancel)).toBe(true);
    const done = commands.execute(CommandIDs.cancel);
    await vi.waitFor(() => expect(text(document.querySelector('.jp-Dialog-header'))).toBe('Cancel job train?'));
    document.querySelector<HTMLButtonElement>('.jp-Dialog-button.jp-mod-reject')!.click();
    await done;
    expect(cancelled).toEqual([]);
    const success = vi.spyOn(Notification, 'success');
    const again = commands.execute(CommandIDs.cancel, { id: 'l1' });
    await vi.waitFor(() => expect(text(document.querySelector('.jp-Dialog-header'))).toBe('Release lease nb?'));
    document.querySelector<HTMLButtonElement>('.jp-Dialog-button.jp-mod-warn')!.click();
    await again;
    expect(cancelled).toEqual(['l1']);
    // newuser33 n4: a toast says the release was done, as Keep alive's does
    expect(success.mock.calls.at(-1)?.[0]).toMatch(/^Released nb\u200b? \(l1\): its .* went back to the pool; the kernel keeps running without them\.$/);
    expect(model.leases[0].state).toBe('cancelled');
    fake.setHit(null);
    expect(commands.isEnabled(CommandIDs.cancel)).toBe(false);
    model.dispose();
  });

  it('open logs adds one tab per job; resubmit and keep alive call the API and notify', async () => {
    const server = new FakeSchedServer();
    server.jobs = [makeJob({ id: 'j1', name: 'train', state: 'failed' })];
    server.routes.set('GET jobs/j1/logs', () => json(200, { text: '', offset: 0, next_offset: 0, finished: true }));
    server.routes.set('GET jobs/j1', () => json(200, server.jobs[0]));
    server.routes.set('POST jobs', () => json(201, makeJob({ id: 'j2', name: 'train', state: 'pending' })));
    server.routes.set('POST leases/l1/keepalive', () => json(200, { ...makeJob({ id: 'l1', kind: 'lease' }), keepalive_until: null }));
    const info = vi.spyOn(Notification, 'info');
    const success = vi.spyOn(Notification, 'success');
    const error = vi.spyOn(Notification, 'error');
    const { model, fake } = await activated(server);
    await settle();
    const { commands } = fake.app;
    await commands.execute(CommandIDs.openLogs, { id: 'j1' });
    await commands.execute(CommandIDs.openLogs, { id: 'j1' });
    const tabs = fake.added.filter(a => a.area === 'main');
    expect(tabs).toHaveLength(1);
    expect(tabs[0].widget.title.label).toBe('Logs: train');
    expect(fake.activated.filter(id => id === tabs[0].widget.id)).toHaveLength(2);
    await commands.execute(CommandIDs.resubmit, { id: 'j1' });
    expect(info).toHaveBeenCalledWith('Submitted train (j1) again as a new job, j2.', { autoClose: 4000 });
    expect(model.jobs.map(j => j.id)).toEqual(['j2', 'j1']);
    await commands.execute(CommandIDs.keepalive, { id: 'l1' });
    // new user 6, F23: the toast says this was the lease's one keep-alive
    expect(success.mock.calls.at(-1)?.[0]).toMatch(/^Lease kept alive(: its GPUs are kept until \d\d:\d\d UTC even while idle)?\. This was its one keep-alive; after that, using the GPUs keeps them\.$/);
    await commands.execute(CommandIDs.keepalive, { id: 'l9' });
    expect(error.mock.calls[0][0]).toBe('Keep-alive failed: no route POST leases/l9/keepalive');
    tabs[0].widget.dispose();
    model.dispose();
  });

  it('red30 R4: a finished job whose env was kept as names only is not resubmitted half; the toast says why', async () => {
    const server = new FakeSchedServer();
    const why = 'env kept as names only after the job ended (60 KB of values not kept) — give --env again to run it again';
    server.jobs = [makeJob({ id: 'j1', name: 'train', state: 'succeeded', env: { TOKEN: '' }, not_kept: { env_bytes: 61440 }, not_kept_text: why })];
    server.routes.set('GET jobs/j1', () => json(200, server.jobs[0]));
    const posted: unknown[] = [];
    server.routes.set('POST jobs', body => {
      posted.push(body);
      return json(201, makeJob({ id: 'j2', name: 'train', state: 'pending' }));
    });
    const warning = vi.spyOn(Notification, 'warning').mockReturnValue('toast-cut');
    const { model, fake } = await activated(server);
    await settle();
    await fake.app.commands.execute(CommandIDs.resubmit, { id: 'j1' });
    expect(posted).toEqual([]);
    expect(warning).toHaveBeenCalledWith(`Cannot resubmit train as it was: ${why}.`, { autoClose: 8000 });
    model.dispose();
  });

  it('red24 R6: a keepalive answered with a notice (its owner left the team) shows it and marks nothing kept', async () => {
    const server = new FakeSchedServer();
    const notice = 'GPUs held by your lease l1; you left team ml (found 15:02 UTC): outside ml\'s guarantee, reclaimable by its members; it is not renewed';
    server.leases = [makeJob({ id: 'l1', name: 'nb1', kind: 'lease', state: 'running', attempts: 1, allocation: { node: 'vm', gpu_uuids: ['GPU-sim-vm-0'] } })];
    server.routes.set('POST leases/l1/keepalive', () => json(200, { ...server.leases[0], keepalive_until: null, notice }));
    const success = vi.spyOn(Notification, 'success');
    const warning = vi.spyOn(Notification, 'warning').mockReturnValue('toast-left');
    const { model, fake } = await activated(server);
    await settle();
    await fake.app.commands.execute(CommandIDs.keepalive, { id: 'l1' });
    expect(warning).toHaveBeenCalledWith(notice, { autoClose: false });
    expect(success).not.toHaveBeenCalled(); // before: "Lease kept alive" though nothing was extended
    expect(model.keptAlive(model.find('l1')!)).toBeNull();
    model.dispose();
  });

  it('new user 6 F23 remainder: Keep alive is once per allocation; once used (or refused as used) the command is off for that allocation', async () => {
    const server = new FakeSchedServer();
    const until = new Date(Date.now() + 30 * 60000).toISOString();
    const running = { kind: 'lease', state: 'running', attempts: 1 } as const;
    server.leases = [
      makeJob({ id: 'l1', name: 'nb1', ...running, allocation: { node: 'vm', gpu_uuids: ['GPU-sim-vm-0'] } }),
      makeJob({ id: 'l2', name: 'nb2', ...running, allocation: { node: 'vm', gpu_uuids: ['GPU-sim-vm-1'] } })
    ];
    server.routes.set('POST leases/l1/keepalive', () => json(200, { ...server.leases[0], keepalive_until: until }));
    server.routes.set('POST leases/l2/keepalive', () =>
      json(409, { error: { code: 'conflict', message: 'keepalive was already used for this allocation', field: 'keepalive', hint: 'use the GPUs' } })
    );
    vi.spyOn(Notification, 'success');
    vi.spyOn(Notification, 'error');
    const { model, fake } = await activated(server);
    await settle();
    const { commands } = fake.app;
    expect(commands.isEnabled(CommandIDs.keepalive, { id: 'l1' })).toBe(true);
    await commands.execute(CommandIDs.keepalive, { id: 'l1' });
    expect(model.keptAlive(model.find('l1')!)).toEqual({ until });
    expect(commands.isEnabled(CommandIDs.keepalive, { id: 'l1' })).toBe(false);
    // used from elsewhere (another page, %gpu keepalive): the server's 409 says so, and the page remembers
    expect(commands.isEnabled(CommandIDs.keepalive, { id: 'l2' })).toBe(true);
    await commands.execute(CommandIDs.keepalive, { id: 'l2' });
    expect(model.keptAlive(model.find('l2')!)).toEqual({ until: '' });
    expect(commands.isEnabled(CommandIDs.keepalive, { id: 'l2' })).toBe(false);
    // the lease granted again (a new attempt) may keep alive again
    expect(model.keptAlive({ ...model.find('l1')!, attempts: 2 })).toBeNull();
    // newuser38 n11: a lease waiting again (preempted) holds no GPUs to keep: the command is off
    model.upsert({ ...model.find('l1')!, state: 'preempted', attempts: 2 });
    expect(commands.isEnabled(CommandIDs.keepalive, { id: 'l1' })).toBe(false);
    model.dispose();
  });

  it('settings are read defensively', () => {
    expect(readSettings(null)).toBe(DEFAULT_SETTINGS);
    const values: Record<string, unknown> = { refreshInterval: -3, defaultViews: ['queue', 7], sectionOrder: 'x', notifyCompletion: false };
    const settings = { get: (key: string) => ({ composite: values[key] }) };
    expect(readSettings(settings as never)).toEqual({ refreshInterval: 10, defaultViews: ['queue'], sectionOrder: [], notifyCompletion: false });
  });
});

describe('notifications', () => {
  it('new user 6 F15: a warning already out when the page opens is shown once, and the lease card says it', async () => {
    const server = new FakeSchedServer();
    server.leases = [makeJob({ id: 'l1', name: 'mylease', kind: 'lease', state: 'running', allocation: { node: 'vm', gpu_uuids: ['GPU-sim-vm-0'] } })];
    const deadline = new Date(Date.now() + 10.2 * 60000); // "in 10m12s", less the seconds the test takes
    const entry = {
      job_id: 'l1', user: server.me.user, team: 'default', kind: 'lease', gpu_uuids: ['GPU-sim-vm-0'],
      idle_since: new Date(Date.now() - 20 * 60000).toISOString(), warn_at: new Date(Date.now() - 30000).toISOString(),
      deadline: deadline.toISOString(), time_left_s: 570, stage: 'warned', action: 'release',
      reason: 'idle for 20 min (limit: kernel idle and GPU < 5 % for 30 min): warned at …', state: 'allocated, 0 % (0 MiB held)',
      grace_s: 0, rule: 'kernel idle and GPU < 5 % for 30 min'
    };
    server.routes.set('GET idle', () => json(200, [entry, { ...entry, job_id: 'l-bob', user: 'bob' }]));
    const warning = vi.spyOn(Notification, 'warning').mockReturnValue('toast-idle');
    const { model } = await startedModel(server);
    const notifier = new SchedNotifier(model, new CommandRegistry(), nullTranslator.load('x'));
    model.refresh('jobs', { force: true });
    await settle();
    model.refresh('jobs', { force: true });
    await settle();
    expect(model.idleOf('l1')?.stage).toBe('warned');
    expect(model.idleOf('l-bob')).toBeUndefined(); // another user's entry (an admin's GET idle) is not mine
    // the CLI's and the magics' relative time (new user 16, N8), seconds and all
    expect(warning.mock.calls.map(c => c[0])).toEqual([
      expect.stringMatching(/^Idle GPUs: mylease is idle; its GPUs will be released at \d\d:\d\d UTC unless it is used or kept alive\.$/)
    ]);
    const { MyWorkView } = await import('../src/sections');
    const { context, mount } = await import('./ui');
    const view = await mount(new MyWorkView(context(model)));
    const hh = `${String(deadline.getUTCHours()).padStart(2, '0')}:${String(deadline.getUTCMinutes()).padStart(2, '0')} UTC`;
    const line = view.node.querySelector('.jp-sched-job-idle-warned');
    // a deadline past midnight UTC carries its day ("Dec 5 00:03 UTC"): the test may run 10 minutes before midnight
    expect(text(line)).toMatch(new RegExp(`its GPUs are released at (?:[A-Z][a-z]{2} \\d{1,2} )?${hh} \\(in 10m\\d\\ds\\) unless it is used — Keep alive keeps them\\.`));
    expect(line?.getAttribute('role')).toBe('alert');
    notifier.dispose();
    model.dispose();
  });

  it('issue 20 follow-up: a preemption names the preempting job by its name and id (preempted_by_name), not a bare id', async () => {
    const server = new FakeSchedServer();
    server.jobs = [makeJob({ id: 'j1', name: 'train', state: 'running' })];
    const { model } = await startedModel(server, 'jobs');
    const warning = vi.spyOn(Notification, 'warning').mockReturnValue('toast-1');
    const notifier = new SchedNotifier(model, new CommandRegistry(), nullTranslator.load('x'));
    server.stream.push('job', makeJob({ id: 'j1', name: 'train', state: 'preempted', preempted_by: 'j-9', preempted_by_name: 'mal3', attempts: 1 } as Parameters<typeof makeJob>[0]));
    await settle();
    expect(warning.mock.calls.map(c => c[0])).toEqual(['Preempted: train by mal3 (j-9). It was requeued and keeps its place by submit time.']);
    expect(preemptorOf('j-9', null)).toBe('j-9');
    expect(preemptorOf('j-9', 'j-9')).toBe('j-9');
    expect(preemptorOf(null, 'mal3')).toBeUndefined();
    warning.mockRestore();
    notifier.dispose();
    model.dispose();
  });

  it('new user 20, N16: an idle step moves the My work idle entry at once, as its toast says it', async () => {
    const server = new FakeSchedServer();
    server.jobs = [makeJob({ id: 'j1', name: 'idle2', state: 'running' })];
    const entry = {
      job_id: 'j1', user: server.me.user, team: 'default', kind: 'training', gpu_uuids: ['GPU-sim-vm-0'],
      idle_since: new Date(Date.now() - 60000).toISOString(), warn_at: new Date(Date.now() + 1000).toISOString(),
      deadline: new Date(Date.now() + 61000).toISOString(), time_left_s: 61, stage: 'idle', action: 'notify',
      reason: 'idle for 1 min', state: 'allocated, 0 % (0 MiB held)', grace_s: 60, rule: 'GPU < 5 % for 2 min'
    };
    server.routes.set('GET idle', () => json(200, [entry]));
    const { model } = await startedModel(server, 'jobs');
    await settle();
    expect(model.idleOf('j1')?.stage).toBe('idle');
    server.routes.set('GET idle', () => new Promise(() => undefined)); // the re-read has not answered yet
    const deadline = new Date(Date.now() + 60000).toISOString();
    server.stream.push('idle_warning', { job_id: 'j1', user: server.me.user, kind: 'training', stage: 'warn', action: 'notify', deadline });
    await settle();
    expect([model.idleOf('j1')?.stage, model.idleOf('j1')?.deadline]).toEqual(['warned', deadline]);
    server.stream.push('idle_warning', { job_id: 'j1', user: server.me.user, kind: 'training', stage: 'reclaim', action: 'notify', deadline });
    await settle();
    expect(model.idleOf('j1')?.stage).toBe('reclaimed');
    server.stream.push('idle_warning', { job_id: 'j1', user: 'bob', stage: 'clear' }); // another user's: not mine
    server.stream.push('idle_warning', { job_id: 'j1', user: server.me.user, stage: 'clear' });
    await settle();
    expect(model.idleOf('j1')).toBeUndefined();
    model.dispose();
  });

  it('new user 20, N20: a second preemption names its own preemptor, never the name of the one before', async () => {
    const server = new FakeSchedServer();
    // a full read said who preempted it the first time
    server.jobs = [makeJob({ id: 'j1', name: 'lowml', state: 'running', preempted_by: 'j-a', preempted_by_name: 'hi', attempts: 2 } as Parameters<typeof makeJob>[0])];
    const { model } = await startedModel(server, 'jobs');
    const warning = vi.spyOn(Notification, 'warning').mockReturnValue('toast-1');
    const notifier = new SchedNotifier(model, new CommandRegistry(), nullTranslator.load('x'));
    // the stop's job event brings the new preemptor without its name (job_to_dict), then the preempted event
    server.stream.push('job', makeJob({ id: 'j1', name: 'lowml', state: 'running', preempted_by: 'j-b', attempts: 2 } as Parameters<typeof makeJob>[0]));
    await settle();
    expect(model.find('j1')?.preempted_by).toBe('j-b');
    expect(model.find('j1')?.preempted_by_name).toBeUndefined();
    server.stream.push('preempted', { job_id: 'j1', user: 'alice', preempted_by: 'j-b', message: 'preempted: GPUs were needed elsewhere' });
    await settle();
    expect(warning.mock.calls.map(c => c[0])).toEqual([
      'Preempted: lowml (by j-b). preempted: GPUs were needed elsewhere. It was requeued and keeps its place by submit time.'
    ]);
    // this server's event says who and why in one clause (preempted_by_text): no "preempted: preempted by …" after it
    server.jobs = [makeJob({ id: 'j1', name: 'lowml', state: 'running', preempted_by: 'j-b', attempts: 3 } as Parameters<typeof makeJob>[0])];
    model.refresh('jobs', { force: true });
    await settle();
    server.stream.push('preempted', { job_id: 'j1', user: 'alice', preempted_by: 'j-c', preempted_by_name: 'norm1',
                                      preempted_by_text: 'by norm1 (j-c), a higher-priority normal job of team ml',
                                      message: 'preempted: preempted by higher-priority normal job j-c of team ml' });
    await settle();
    expect(warning.mock.calls.map(c => c[0])[1]).toBe(
      'Preempted: lowml by norm1 (j-c), a higher-priority normal job of team ml. It was requeued and keeps its place by submit time.'
    );
    warning.mockRestore();
    notifier.dispose();
    model.dispose();
  });

  it('test_newuser21_n9_preempted_toast_fits_and_ends_whole: a long preemptor clause never leaves the toast cut mid-word', async () => {
    const server = new FakeSchedServer();
    server.jobs = [makeJob({ id: 'j1', name: 'lowml2', state: 'running', attempts: 1 } as Parameters<typeof makeJob>[0])];
    const { model } = await startedModel(server, 'jobs');
    const warning = vi.spyOn(Notification, 'warning').mockReturnValue('toast-1');
    const notifier = new SchedNotifier(model, new CommandRegistry(), nullTranslator.load('x'));
    // new user 21, N9: "… It was requeued and keeps its place by submit t…" (JupyterLab shows 140 characters)
    server.stream.push('preempted', { job_id: 'j1', user: 'alice', preempted_by: 'j-1m91zjk12-ktdeck', preempted_by_name: 'second pre',
                                      preempted_by_text: 'by second pre (j-1m91zjk12-ktdeck), a higher-priority normal job of team ml', attempts: 1 });
    await settle();
    const [said] = warning.mock.calls.map(c => String(c[0]));
    expect(said).toBe('Preempted: lowml2 by second pre (j-1m91zjk12-ktdeck), a higher-priority normal job of team ml. Requeued; it keeps its place.');
    expect(said.length).toBeLessThanOrEqual(TOAST_CHARS);
    // a name so long nothing else fits: its head is cut at a word, the ending stays whole
    const long = fitToast([`Preempted: ${'very long name '.repeat(12)}by x (j-1).`], 'Requeued; it keeps its place.');
    expect(long.length).toBeLessThanOrEqual(TOAST_CHARS);
    expect(long.endsWith('… Requeued; it keeps its place.')).toBe(true);
    warning.mockRestore();
    notifier.dispose();
    model.dispose();
  });

  it('stop-at-once preemption toast: a preempted lease, ended at once, is said to have ended, not requeued', async () => {
    const server = new FakeSchedServer();
    server.leases = [makeJob({ id: 'l1', name: 'nb', kind: 'lease', state: 'running' })];
    const { model } = await startedModel(server, 'jobs');
    const warning = vi.spyOn(Notification, 'warning').mockReturnValue('toast-1');
    const notifier = new SchedNotifier(model, new CommandRegistry(), nullTranslator.load('x'));
    // the engine's two events of a lease's preemption (session 21): its end, then the preempted event
    server.stream.push('lease', makeJob({ id: 'l1', name: 'nb', kind: 'lease', state: 'cancelled', preempted_by: 'j-h' } as Parameters<typeof makeJob>[0]));
    server.stream.push('preempted', { id: 'l1', name: 'nb', kind: 'lease', state: 'cancelled', user: server.me.user, preempted_by: 'j-h',
                                      preempted_by_name: 'hi', preempted_by_text: 'by bob\'s job "hi" (j-h), a higher-priority high job of team ml' });
    await settle();
    expect(warning.mock.calls.map(c => c[0])).toEqual([
      // the long ending would pass the toast's 140 characters (new user 21, N9): the short one
      'Preempted: nb by bob\'s job "hi" (j-h), a higher-priority high job of team ml. It has ended; %gpu request asks for GPUs again.'
    ]);
    // a lease has no logs to open
    expect((warning.mock.calls[0][1] as { actions: unknown[] }).actions).toEqual([]);
    warning.mockRestore();
    notifier.dispose();
    model.dispose();
  });

  it('a finished job of mine notifies once with "Open logs"; preemptions and idle warnings too', async () => {
    const server = new FakeSchedServer();
    server.jobs = [makeJob({ id: 'j1', name: 'train', state: 'running' })];
    server.leases = [makeJob({ id: 'l1', name: 'nb', kind: 'lease', state: 'running' })];
    const { model } = await startedModel(server, 'jobs');
    const commands = new CommandRegistry();
    const opened: unknown[] = [];
    commands.addCommand(CommandIDs.openLogs, { execute: args => void opened.push(args) });
    const warning = vi.spyOn(Notification, 'warning').mockReturnValue('toast-1');
    const success = vi.spyOn(Notification, 'success').mockReturnValue('toast-2');
    const dismiss = vi.spyOn(Notification, 'dismiss').mockImplementation(() => undefined);
    const notifier = new SchedNotifier(model, commands, nullTranslator.load('x'));
    server.stream.push('job', makeJob({ id: 'j1', name: 'train', state: 'succeeded' }));
    server.stream.push('job', makeJob({ id: 'j1', name: 'train', state: 'succeeded' }));
    await settle();
    expect(success).toHaveBeenCalledTimes(1);
    expect(success.mock.calls[0][0]).toBe('train succeeded');
    (success.mock.calls[0][1] as { actions: { callback: () => void }[] }).actions[0].callback();
    expect(opened).toEqual([{ id: 'j1' }]);
    server.stream.push('job', makeJob({ id: 'j3', name: 'other', user: 'bob', state: 'failed' }));
    server.stream.push('preempted', { job_id: 'j1', preempted_by: 'j-9', message: 'a high-priority job needed the GPUs.' });
    server.stream.push('idle_warning', { lease_id: 'l1', stage: 'warn', action: 'release', deadline: new Date(Date.now() + 600000).toISOString() });
    server.stream.push('idle_warning', { lease_id: 'l1', user: 'bob', stage: 'warn' });
    await settle();
    expect(warning.mock.calls.map(c => c[0])).toEqual([
      'Preempted: train (by j-9). a high-priority job needed the GPUs. It was requeued and keeps its place by submit time.',
      expect.stringMatching(/^Idle GPUs: nb is idle; its GPUs will be released at \d\d:\d\d UTC unless it is used or kept alive\.$/)
    ]);
    expect((warning.mock.calls[1][1] as { actions: { label: string }[] }).actions.map(a => a.label)).toEqual(['Keep alive']);
    server.stream.push('idle_warning', { lease_id: 'l1', stage: 'clear' });
    await settle();
    expect(dismiss).toHaveBeenCalledWith('toast-1');
    notifier.notifyCompletion = false;
    server.stream.push('job', makeJob({ id: 'j1', name: 'train', state: 'running', attempts: 1 }));
    server.stream.push('job', makeJob({ id: 'j1', name: 'train', state: 'failed', attempts: 1 }));
    await settle();
    expect(success).toHaveBeenCalledTimes(1);
    expect(warning).toHaveBeenCalledTimes(2);
    notifier.dispose();
    model.dispose();
  });
});

describe('s20: an idle kernel still holding its GPU', () => {
  it('the reclaim, then the shutdown or the hold, each get a notification replacing the last', async () => {
    const server = new FakeSchedServer();
    server.leases = [makeJob({ id: 'l1', name: 'nb', kind: 'lease', state: 'running' })];
    const { model } = await startedModel(server, 'jobs');
    const warning = vi.spyOn(Notification, 'warning').mockImplementation(() => `toast-${warning.mock.calls.length}`);
    const dismiss = vi.spyOn(Notification, 'dismiss').mockImplementation(() => undefined);
    const notifier = new SchedNotifier(model, new CommandRegistry(), nullTranslator.load('x'));
    const reason = 'kernel idle and GPU < 5 % for 1 min';
    server.stream.push('idle_warning', { lease_id: 'l1', stage: 'reclaim', action: 'release', draining: true, reason, deadline: '2026-11-29T12:01:10Z' });
    server.stream.push('idle_warning', { lease_id: 'l1', stage: 'reclaim', action: 'shutdown', reason });
    server.stream.push('idle_warning', { lease_id: 'l1', stage: 'reclaim', action: 'hold', reason });
    server.stream.push('idle_warning', { lease_id: 'l1', stage: 'reclaim', action: 'hold', reason });
    await settle();
    expect(warning.mock.calls.map(c => c[0])).toEqual([
      "Idle GPUs reclaimed: nb's GPUs were revoked; they are freed once its kernel lets go of them.",
      "Idle GPUs reclaimed: nb's kernel, still holding them, was shut down; they are freed once it exits.",
      "Idle GPUs reclaimed: nb's kernel still holds them; they stay out of use until it restarts or exits."
    ]);
    expect(dismiss.mock.calls.map(c => c[0])).toEqual(['toast-1', 'toast-2']);
    notifier.dispose();
    model.dispose();
  });
});

describe('notifications of a sweep', () => {
  it('successes within a minute share one notification; a failure still gets its own (new user 5)', async () => {
    const server = new FakeSchedServer();
    server.jobs = [1, 2, 3, 4, 5].map(i => makeJob({ id: `j${i}`, name: `sweep-${i}`, state: 'running' }));
    const { model } = await startedModel(server, 'jobs');
    const success = vi.spyOn(Notification, 'success').mockReturnValue('toast-s');
    const warning = vi.spyOn(Notification, 'warning').mockReturnValue('toast-w');
    const update = vi.spyOn(Notification, 'update').mockReturnValue(true);
    const notifier = new SchedNotifier(model, new CommandRegistry(), nullTranslator.load('x'));
    for (const i of [1, 2, 3, 4]) {
      server.stream.push('job', makeJob({ id: `j${i}`, name: `sweep-${i}`, state: 'succeeded' }));
    }
    server.stream.push('job', makeJob({ id: 'j5', name: 'sweep-5', state: 'failed', exit_code: 1 }));
    await settle();
    await new Promise(resolve => setTimeout(resolve, UPDATE_MS + 20)); // updates go out together (new user 22, N7)
    expect(success).toHaveBeenCalledTimes(1); // one toast, then updated
    expect(update.mock.calls.map(c => (c[0] as { id: string; message: string }).message)).toEqual([
      '4 jobs succeeded: sweep-1, sweep-2, sweep-3 and 1 more'
    ]);
    expect(update.mock.calls.every(c => (c[0] as { id: string }).id === 'toast-s')).toBe(true);
    expect(warning).toHaveBeenCalledTimes(1);
    expect(warning.mock.calls[0][0]).toMatch(/^sweep-5 failed/);
    notifier.dispose();
    model.dispose();
    vi.restoreAllMocks();
  });
});

describe('status-bar item', () => {
  it("shows the current kernel's GPUs, waiting, or No GPU, and opens the panel", async () => {
    const server = new FakeSchedServer();
    server.leases = [makeJob({ id: 'l1', name: 'nb', kind: 'lease', kernel_id: 'k1', state: 'running', resources: { gpus: 2, gpu_milli: 1000, gpu_models: ['A100-80GB'], workers: 1 }, allocation: { node: 'node-a', gpu_uuids: ['a', 'b'] } })];
    const { model } = await startedModel(server, 'jobs');
    const trans = nullTranslator.load('x');
    expect(kernelGpuText(model, 'k1', trans).text).toBe('GPU: 2 × A100-80GB');
    expect(kernelGpuText(model, 'k1', trans).detail).toBe('Lease nb holds 2 × A100-80GB on node-a');
    expect(kernelGpuText(model, 'k2', trans).text).toBe('No GPU');
    expect(kernelGpuText(model, null, trans).text).toBe('No GPU');
    const changed = new Signal<unknown, void>({});
    let kernel: string | null = 'k1';
    const opened: number[] = [];
    const item = new KernelGpuStatus(model, () => kernel, changed, trans, () => void opened.push(1));
    document.body.appendChild(item.node);
    item.update();
    await flush();
    expect(text(item.node)).toBe('GPU: 2 × A100-80GB');
    kernel = 'k2';
    changed.emit();
    await flush();
    expect(text(item.node)).toBe('No GPU');
    item.node.querySelector('button')!.click();
    expect(opened).toEqual([1]);
    server.stream.push('lease', makeJob({ id: 'l2', name: 'wait', kind: 'lease', kernel_id: 'k2', state: 'pending' }));
    await settle();
    await flush();
    expect(text(item.node)).toBe('GPU: waiting');
    model.dispose();
  });

  it('registers with the status bar and follows the current notebook', async () => {
    const { model } = await startedModel(new FakeSchedServer());
    const currentChanged = new Signal<unknown, unknown>({});
    const panel = { sessionContext: { session: { kernel: { id: 'k1' } }, kernelChanged: new Signal<unknown, unknown>({}) } };
    const notebooks = { currentWidget: panel, currentChanged };
    const items: { id: string; item: { isActive: () => boolean } }[] = [];
    const statusBar = { registerStatusItem: (id: string, item: { isActive: () => boolean }) => void items.push({ id, item }) };
    const fake = fakeApp();
    statusPlugin.activate(fake.app as never, model, nullTranslator, statusBar, notebooks);
    expect(items.map(i => i.id)).toEqual(['@jupyter-sched/labextension:status']);
    expect(items[0].item.isActive()).toBe(true);
    currentChanged.emit(panel);
    statusPlugin.activate(fake.app as never, model, null, null, null);
    model.dispose();
  });
});
