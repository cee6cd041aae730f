// s42-panel: what the GPUs panel left out (newuser41 n6, n8, n10; store41's unchecked 503/507 answers).
import { WidgetTracker } from '@jupyterlab/apputils';
import { StateDB } from '@jupyterlab/statedb';
import { CommandRegistry } from '@lumino/commands';
import { Signal } from '@lumino/signaling';
import { nullTranslator } from '@jupyterlab/translation';
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { OFF_RETRY_MS, SchedClient } from '../src/client';
import { contentsFiles, isExecutedCopyPath, keepCopiesKernelless } from '../src/executed';
import { elapsedText, restartedText, runNumber } from '../src/format';
import { SchedModel } from '../src/model';
import { MyWorkView, QueueView } from '../src/sections';
import { SubmitView } from '../src/sections/submit';
import { firstControl, sidebarCaption } from '../src/sidebar';
import { FakeSchedServer, json, makeJob, queueRow, settle } from './fakeserver';
import { click, context, disposeMounted, flush, mount, sidebarOn, startedModel, text, type } from './ui';

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

/** The 503 every api/sched/ request is answered while the store failed at start (errors.SchedulerOffError via
 * extension/store_off.py: its message and hint as the server writes them). */
const OFF = {
  status: 503, code: 'scheduler_off', reference: 'r-0ff',
  message: "the scheduler is not running: the default store /home/a/.local/share/jupyter/jupyter_sched/sched.sqlite cannot be used: the store's disk /home/a/.local/share/jupyter/jupyter_sched is full (0 bytes free of 16 MiB; ENOSPC)",
  hint: 'free space on /home/a/.local/share/jupyter/jupyter_sched, or set c.SchedApp.db_url to a store on another disk; then restart the server'
};

describe('store41: the panel says scheduler_off and store_full, polls slowly while off, and comes back by itself', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('test_store41_panel_a_start_answered_scheduler_off_says_why_and_the_fix_and_recovers_by_itself', async () => {
    vi.useFakeTimers();
    const server = new FakeSchedServer();
    server.failWith = OFF;
    const model = new SchedModel({ client: new SchedClient(server.transport), refreshInterval: 10 });
    await model.start();
    expect(model.status).toBe('failed');
    expect(model.startError).toBe(`${OFF.message} — ${OFF.hint} (reference r-0ff)`);
    expect(model.startError).not.toContain('Unhandled');
    expect(model.retryStartInS).toBe(OFF_RETRY_MS / 1000);
    const asked = server.count('GET', 'config');
    await vi.advanceTimersByTimeAsync(OFF_RETRY_MS - 1000);
    expect(server.count('GET', 'config')).toBe(asked); // not asked again at the refresh interval
    // the server is restarting (no answer at all): still failed, still asked again
    server.failWith = null;
    const transport = server.transport.request;
    server.transport.request = async () => {
      throw new TypeError('Failed to fetch');
    };
    await vi.advanceTimersByTimeAsync(1000);
    await settle();
    expect(model.status).toBe('failed');
    expect(model.startError).toContain('the server is not answering');
    expect(model.retryStartInS).toBe(OFF_RETRY_MS / 1000);
    // back, its store fixed: the panel starts by itself, no click
    server.transport.request = transport;
    await vi.advanceTimersByTimeAsync(OFF_RETRY_MS);
    await settle();
    expect(model.status).toBe('ready');
    expect(model.retryStartInS).toBeNull();
    model.dispose();
  });

  it('test_store41_panel_a_refusal_that_does_not_pass_is_not_retried_by_itself', async () => {
    vi.useFakeTimers();
    const server = new FakeSchedServer();
    server.failWith = { status: 403, code: 'forbidden', message: 'not allowed' };
    const model = new SchedModel({ client: new SchedClient(server.transport), refreshInterval: 10 });
    await model.start();
    expect(model.status).toBe('failed');
    expect(model.retryStartInS).toBeNull();
    const asked = server.count('GET', 'config');
    await vi.advanceTimersByTimeAsync(3 * OFF_RETRY_MS);
    expect(server.count('GET', 'config')).toBe(asked);
    model.dispose();
  });

  it('test_store41_panel_reads_answered_scheduler_off_say_it_once_and_poll_slowly_until_it_runs', async () => {
    vi.useFakeTimers();
    const server = new FakeSchedServer();
    server.eventsStatus = 503; // the stream is refused too: the queue is polled
    const model = new SchedModel({ client: new SchedClient(server.transport), refreshInterval: 10, maxBackoffMs: 60_000 });
    model.watch('queue');
    model.watch('jobs');
    await model.start();
    await settle();
    expect(model.serverDown).toBeNull();
    server.failWith = OFF; // the server restarted on a full disk while the page stayed open
    await vi.advanceTimersByTimeAsync(10_000);
    await settle();
    // one line under the header with the cause and the fix, no alert per section
    expect(model.serverDown).toBe(`${OFF.message} — ${OFF.hint} (reference r-0ff)`);
    expect(model.error('queue')).toBeNull();
    expect(model.error('jobs')).toBeNull();
    const before = server.count('GET', 'queue');
    await vi.advanceTimersByTimeAsync(60_000);
    await settle();
    const polled = server.count('GET', 'queue') - before;
    expect(polled).toBeGreaterThan(0);
    expect(polled).toBeLessThanOrEqual(60_000 / OFF_RETRY_MS); // not every 10 s (6 a minute)
    server.failWith = null;
    await vi.advanceTimersByTimeAsync(OFF_RETRY_MS);
    await settle();
    expect(model.serverDown).toBeNull();
    model.dispose();
  });

  it('test_store41_panel_the_sidebar_shows_the_cause_the_fix_and_that_it_comes_back_by_itself', async () => {
    vi.useFakeTimers();
    const server = new FakeSchedServer();
    server.failWith = OFF;
    const { model, sidebar } = await sidebarOn(server, new StateDB());
    const notice = sidebar.node.querySelector('.jp-sched-notice')!;
    expect(notice.getAttribute('role')).toBe('alert');
    expect(text(notice)).toContain(OFF.message);
    expect(text(notice)).toContain(OFF.hint);
    expect(text(notice)).not.toContain('Unhandled');
    expect(text(notice.querySelector('.jp-sched-retrying'))).toBe('Asked again every 30 s: the panel comes back by itself once the scheduler runs.');
    expect(sidebar.sectionIds).not.toContain('inventory');
    server.failWith = null;
    await vi.advanceTimersByTimeAsync(OFF_RETRY_MS);
    await settle();
    await flush();
    expect(notice.getAttribute('role')).toBeNull();
    expect(sidebar.sectionIds).toContain('inventory');
    model.dispose();
    sidebar.dispose();
  });

  it('test_store41_panel_a_submit_answered_507_store_full_says_nothing_was_saved_and_the_fix', async () => {
    const server = new FakeSchedServer();
    const full = {
      code: 'store_full', field: null, reference: 'r-507',
      message: "the scheduler's database is out of disk space: nothing of this request was saved",
      hint: "free space on the disk of the scheduler's store (jupyter-sched doctor names it and exits 1), then send it again; work accepted before is kept"
    };
    server.routes.set('POST jobs', () => json(507, { error: full }));
    const { model } = await startedModel(server);
    const view = await mount(new SubmitView(context(model), '', () => undefined));
    await type(view.node.querySelector('.jp-sched-submit-path') as HTMLInputElement, 'train.py');
    await click(view.node.querySelector('.jp-sched-submit-button')!);
    await settle();
    await flush();
    const feedback = view.node.querySelector('[role="status"]')!;
    expect(text(feedback)).toContain(full.message);
    expect(text(feedback)).toContain('then send it again; work accepted before is kept');
    expect(text(feedback)).not.toContain('Unhandled');
    expect(feedback.className).toContain('jp-sched-feedback-error');
    expect(server.count('POST', 'jobs')).toBe(1); // not resent: nothing passes until space is freed
    model.dispose();
  });
});

describe('newuser41 n10: Show GPUs Panel puts the keyboard in the panel; its keys are in the tab tooltip', () => {
  it('test_newuser41_n10_activating_the_panel_focuses_its_first_control', async () => {
    const server = new FakeSchedServer();
    const { model, sidebar } = await sidebarOn(server, new StateDB());
    // the keyboard in a notebook's cell (stood for by an editor outside the panel), as the tester had it
    const cell = document.createElement('textarea');
    document.body.appendChild(cell);
    cell.focus();
    expect(document.activeElement).toBe(cell);
    MessageLoop.sendMessage(sidebar, Widget.Msg.ActivateRequest); // what shell.activateById → widget.activate() sends
    const first = firstControl(sidebar.node);
    expect(first).not.toBeNull();
    // its Refresh button, the toolbar's first control (once React drew it), else its first section's title
    const toolbar = first!.closest('.jp-SidePanel-toolbar') !== null;
    expect(toolbar || first!.matches('.lm-AccordionPanel-title[data-section="inventory"]')).toBe(true);
    expect(document.activeElement).toBe(first);
    expect(sidebar.node.contains(document.activeElement)).toBe(true);
    // focus already in the panel stays where the user put it
    const later = [...sidebar.node.querySelectorAll<HTMLElement>('button')].pop()!;
    later.focus();
    MessageLoop.sendMessage(sidebar, Widget.Msg.ActivateRequest);
    expect(document.activeElement).toBe(later);
    model.dispose();
    sidebar.dispose();
  });

  it('test_newuser41_n10_while_unavailable_the_first_control_is_retry', async () => {
    vi.useFakeTimers();
    const server = new FakeSchedServer();
    server.failWith = OFF;
    const { model, sidebar } = await sidebarOn(server, new StateDB());
    const skipped = firstControl(sidebar.node);
    expect(text(skipped)).toBe('Retry');
    // a control hidden from view is passed over
    const hidden = document.createElement('div');
    hidden.className = 'lm-mod-hidden';
    hidden.innerHTML = '<button type="button">hidden</button>';
    sidebar.node.prepend(hidden);
    expect(firstControl(sidebar.node)).toBe(skipped);
    MessageLoop.sendMessage(sidebar, Widget.Msg.ActivateRequest);
    expect(document.activeElement).toBe(skipped);
    model.dispose();
    sidebar.dispose();
    vi.useRealTimers();
  });

  it('test_newuser41_n10_the_tab_tooltip_names_the_keys_as_the_file_browsers_does', () => {
    const trans = nullTranslator.load('jupyter_sched');
    expect(sidebarCaption(trans, 'Alt+Shift+G')).toBe('GPUs: inventory, queue, my work, quotas (Alt+Shift+G)');
    expect(sidebarCaption(trans, '')).toBe('GPUs: inventory, queue, my work, quotas');
  });
});

/** A notebook tab as the notebook tracker holds it: its path, and its session (null: no kernel). */
class OpenedNotebook extends Widget {
  session: unknown = null;
  readonly sessionChanged = new Signal<this, unknown>(this);
  readonly context: { path: string };
  readonly sessionContext: { ready: Promise<void>; readonly session: unknown; sessionChanged: Signal<OpenedNotebook, unknown> };

  constructor(path: string) {
    super();
    this.context = { path };
    const tab = this; // eslint-disable-line @typescript-eslint/no-this-alias
    this.sessionContext = { ready: Promise.resolve(), get session() { return tab.session; }, sessionChanged: this.sessionChanged };
  }
}

/** JupyterLab's notebook tracker as notebook-extension makes it: namespace `notebook`, restored with `docmanager:open`
 * and `{path, factory}` (read in the 4.6 bundle), on a state database; `opened` records what a restore runs. */
async function notebookTracker(state: StateDB): Promise<{ tracker: WidgetTracker<OpenedNotebook>; opened: unknown[] }> {
  const opened: unknown[] = [];
  const registry = new CommandRegistry();
  registry.addCommand('docmanager:open', { execute: args => void opened.push(args) });
  const tracker = new WidgetTracker<OpenedNotebook>({ namespace: 'notebook' });
  await tracker.restore({
    command: 'docmanager:open', connector: state, registry,
    args: panel => ({ path: panel.context.path, factory: 'Notebook' }), name: panel => panel.context.path
  });
  return { tracker, opened };
}

describe('newuser41 n8: an executed copy opened with no kernel gets none at the next page load', () => {
  const COPY = 'scheduled-runs/daily_report (executed j-1m9934yeg-byhhj7).ipynb';

  it('test_newuser41_n8_which_paths_are_executed_copies', () => {
    expect(isExecutedCopyPath(COPY)).toBe(true);
    expect(isExecutedCopyPath('scheduled-runs/a (b) (executed j-1).ipynb')).toBe(true);
    expect(isExecutedCopyPath('scheduled-runs/fail (executed j-1)-2.ipynb')).toBe(true);
    expect(isExecutedCopyPath('daily_report (executed j-1).ipynb')).toBe(false); // not where the panel saves them
    expect(isExecutedCopyPath('scheduled-runs/sub/x (executed j-1).ipynb')).toBe(false);
    expect(isExecutedCopyPath('scheduled-runs/daily_report.ipynb')).toBe(false);
  });

  it('test_newuser41_n8_the_open_and_the_restore_both_ask_docmanager_for_no_kernel', async () => {
    // the click: docmanager:open with kernelPreference {shouldStart: false} (JupyterLab 4's own argument)
    const runs: { id: string; args: unknown }[] = [];
    const app = { commands: { execute: async (id: string, args: unknown) => void runs.push({ id, args }) } };
    await contentsFiles(app as never).openPath(COPY);
    expect(runs).toEqual([{ id: 'docmanager:open', args: { path: COPY, kernelPreference: { shouldStart: false } } }]);

    // the tracker saves the tab's restore entry; the panel adds the preference to it
    const state = new StateDB();
    const { tracker } = await notebookTracker(state);
    keepCopiesKernelless(tracker, state);
    const copy = new OpenedNotebook(COPY);
    const mine = new OpenedNotebook('nb/analysis.ipynb');
    await tracker.add(copy);
    await tracker.add(mine);
    await vi.waitFor(async () => expect(await state.fetch(`notebook:${COPY}`)).toEqual({ data: { path: COPY, factory: 'Notebook', kernelPreference: { shouldStart: false } } }));
    expect(await state.fetch('notebook:nb/analysis.ipynb')).toEqual({ data: { path: 'nb/analysis.ipynb', factory: 'Notebook' } });

    // the next page load: JupyterLab's restore runs docmanager:open with what was saved — no kernel for the copy
    const reloaded = await notebookTracker(state);
    expect(reloaded.opened).toContainEqual({ path: COPY, factory: 'Notebook', kernelPreference: { shouldStart: false } });
    expect(reloaded.opened).toContainEqual({ path: 'nb/analysis.ipynb', factory: 'Notebook' });

    // and again after that load: the restored tab is added (its entry saved plain), the preference comes back
    keepCopiesKernelless(reloaded.tracker, state);
    const again = new OpenedNotebook(COPY);
    await reloaded.tracker.add(again);
    await vi.waitFor(async () => expect((await state.fetch(`notebook:${COPY}`)) as unknown).toMatchObject({ data: { kernelPreference: { shouldStart: false } } }));

    // a kernel the user picks for it is restored as any notebook's
    again.session = { id: 's-1' };
    again.sessionChanged.emit(again.session);
    await vi.waitFor(async () => expect(await state.fetch(`notebook:${COPY}`)).toEqual({ data: { path: COPY, factory: 'Notebook' } }));
    // and none again (its kernel shut down): no kernel at the next load
    again.session = null;
    again.sessionChanged.emit(null);
    await vi.waitFor(async () => expect((await state.fetch(`notebook:${COPY}`)) as unknown).toMatchObject({ data: { kernelPreference: { shouldStart: false } } }));
    for (const w of [copy, mine, again]) {
      w.dispose();
    }
  });
});
