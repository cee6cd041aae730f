/**
 * New user 22, N7: one `cancel --mine` of 299 pending jobs put 299 toasts on the screen ("bulkN
 * cancelled: cancelled by root [Open logs]"), still there 9 minutes on, burying the Preempted and
 * Idle GPUs toasts. The rules, one test each: no toast for my own cancel of one job; one summary for
 * many; no "Open logs" for a job that never ran; a burst of any kind that toasts (ended, cancelled by
 * someone else, preempted, idle warnings, reclaims) is one toast; only a toast that needs action
 * stays until dismissed.
 */
import { Notification } from '@jupyterlab/apputils';
import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { CommandIDs } from '../src/commandids';
import { SchedNotifier } from '../src/notify';
import { ALERT_MS, NEWS_MS, ToastFolder, UPDATE_MS } from '../src/toasts';
import type { Job } from '../src/types';
import { FakeSchedServer, makeJob, settle } from './fakeserver';
import { startedModel } from './ui';

afterEach(() => {
  vi.restoreAllMocks();
});

/** The folder's coalesced updates sent ({@link UPDATE_MS}). */
const updated = () => new Promise(resolve => setTimeout(resolve, UPDATE_MS + 20));

type Options = { autoClose: number | false; actions: { label: string; callback: () => void }[] };

/** Every toast call, made or updated: which kind, the message and its options. */
function spyToasts() {
  let n = 0;
  const made: { type: string; message: string; options: Options; id: string }[] = [];
  for (const type of ['info', 'success', 'warning', 'error'] as const) {
    vi.spyOn(Notification, type).mockImplementation((message: string, options?: unknown) => {
      const id = `toast-${++n}`;
      made.push({ type, message, options: options as Options, id });
      return id;
    });
  }
  const updates: { id: string; message: string; autoClose: number | false; actions: unknown[] }[] = [];
  vi.spyOn(Notification, 'update').mockImplementation(args => {
    updates.push(args as (typeof updates)[number]);
    return true;
  });
  const dismissed: string[] = [];
  vi.spyOn(Notification, 'dismiss').mockImplementation(id => void dismissed.push(String(id)));
  /** What each toast says now (its latest update). */
  const now = () => made.map(t => {
    const last = updates.filter(u => u.id === t.id).pop();
    return { ...t, message: last?.message ?? t.message, autoClose: last ? last.autoClose : t.options.autoClose, dismissed: dismissed.includes(t.id) };
  });
  return { made, updates, dismissed, now };
}

function job(i: number, overrides: Partial<Job> = {}): Job {
  return makeJob({ id: `j${i}`, name: `bulk${i}`, state: 'pending', ...overrides });
}

async function notifierOn(jobs: Job[]) {
  const server = new FakeSchedServer();
  server.jobs = jobs;
  const { model } = await startedModel(server, 'jobs');
  const commands = new CommandRegistry();
  const ran: { command: string; args: unknown }[] = [];
  for (const id of [CommandIDs.openLogs, CommandIDs.keepalive]) {
    commands.addCommand(id, { execute: args => void ran.push({ command: id, args }) });
  }
  const notifier = new SchedNotifier(model, commands, nullTranslator.load('x'));
  return { server, model, notifier, ran };
}

describe('new user 22, N7: toasts', () => {
  it('test_newuser22_n7_own_cancel_of_one_pending_job_says_nothing: the cancel event names me as its actor', async () => {
    const { server, model, notifier } = await notifierOn([job(1)]);
    const toasts = spyToasts();
    server.stream.push('job', { ...job(1, { state: 'cancelled', message: 'cancelled by alice' }), cancelled_by: 'alice' });
    await settle();
    expect(model.find('j1')?.state).toBe('cancelled');
    expect(toasts.made).toEqual([]);
    notifier.dispose();
    model.dispose();
    // the panel's own Cancel answers the job: upserted with me as the actor, it says nothing either
    const panel = await notifierOn([job(2, { state: 'running', started_at: '2026-12-05T05:00:00Z' })]);
    panel.model.upsert({ ...job(2, { state: 'cancelled' }), cancelled_by: 'alice' } as Job);
    await settle();
    expect(toasts.made).toEqual([]);
    panel.notifier.dispose();
    panel.model.dispose();
  });

  it('test_newuser22_n7_bulk_cancel_of_299_is_one_summary_toast: "299 of your pending jobs were cancelled (by you, …)", closing by itself', async () => {
    const jobs = Array.from({ length: 299 }, (_, i) => job(i));
    const { server, model, notifier } = await notifierOn(jobs);
    const toasts = spyToasts();
    // more than PER_JOB_EVENTS: the server sends one event per owner, and the panel re-reads its jobs
    server.jobs = jobs.map(j => ({ ...j, state: 'cancelled', message: 'cancelled by alice' }));
    server.stream.push('job', { user: 'alice', cancelled: 299, by: 'alice', pending: 299 });
    await settle();
    model.refresh('jobs', { force: true });
    await settle();
    expect(model.jobs.filter(j => j.state === 'cancelled')).toHaveLength(299);
    // the summary says the server's number from the first (s29: a count of the ends seen said 57 of 60);
    // the 299 ends of the re-read join it, in one update once JupyterLab has it up
    expect(toasts.made.map(t => t.message)).toEqual([expect.stringMatching(/^299 of your pending jobs were cancelled \(by you, /)]);
    await updated();
    expect(toasts.updates).toHaveLength(1);
    const shown = toasts.now();
    expect(shown).toHaveLength(1);
    expect(shown[0].type).toBe('info');
    expect(shown[0].message).toMatch(/^299 of your pending jobs were cancelled \(by you, \d\d:\d\d UTC\)\.$/);
    expect(shown[0].autoClose).toBe(NEWS_MS);
    expect(shown[0].options.actions).toEqual([]); // nothing ran: no logs to open
    notifier.dispose();
    model.dispose();
  });

  it('test_newuser22_n7_cancel_by_another_of_a_pending_job_has_no_open_logs: it never ran', async () => {
    const { server, model, notifier } = await notifierOn([job(1), job(2, { state: 'running', started_at: '2026-12-05T05:00:00Z' })]);
    const toasts = spyToasts();
    server.stream.push('job', { ...job(1, { state: 'cancelled', message: 'cancelled by ann' }), cancelled_by: 'ann' });
    await settle();
    expect(toasts.made.map(t => [t.type, t.message, t.options.actions, t.options.autoClose])).toEqual([
      ['warning', 'bulk1 cancelled: cancelled by ann', [], ALERT_MS]
    ]);
    notifier.dispose();
    model.dispose();
    // one that ran has its logs: a stop asked for by ann (stop_requested.by), then its end
    const second = await notifierOn([job(2, { state: 'running', started_at: '2026-12-05T05:00:00Z' })]);
    const more = spyToasts();
    second.server.stream.push('job', job(2, { state: 'running', started_at: '2026-12-05T05:00:00Z', stop_requested: { intent: 'cancel', by: 'ann' } }));
    second.server.stream.push('job', job(2, { state: 'cancelled', started_at: '2026-12-05T05:00:00Z', message: 'cancelled by ann' }));
    await settle();
    expect(more.made.map(t => t.options.actions.map(a => a.label))).toEqual([['Open logs']]);
    more.made[0].options.actions[0].callback();
    expect(second.ran).toEqual([{ command: CommandIDs.openLogs, args: { id: 'j2' } }]);
    second.notifier.dispose();
    second.model.dispose();
  });

  it('test_newuser22_n7_bursts_fold: failures, cancels by another, preemptions, idle warnings and reclaims each show one toast', async () => {
    const running = (i: number) => job(i, { state: 'running', started_at: '2026-12-05T05:00:00Z', attempts: 1 });
    const { server, model, notifier, ran } = await notifierOn([...[1, 2, 3, 4, 5].map(running), ...[6, 7, 8].map(i => job(i))]);
    server.leases = [10, 11, 12].map(i => makeJob({ id: `l${i}`, name: `nb${i}`, kind: 'lease', state: 'running' }));
    model.refresh('jobs', { force: true });
    await settle();
    const toasts = spyToasts();
    for (const i of [1, 2, 3]) {
      server.stream.push('job', job(i, { state: 'failed', started_at: '2026-12-05T05:00:00Z', attempts: 1, exit_code: 1 }));
    }
    for (const i of [6, 7, 8]) {
      server.stream.push('job', { ...job(i, { state: 'cancelled' }), cancelled_by: 'ann' });
    }
    for (const i of [4, 5]) {
      server.stream.push('preempted', { job_id: `j${i}`, user: 'alice', preempted_by: 'j-big', preempted_by_name: 'big',
                                        preempted_by_text: 'by big (j-big), a higher-priority job of team ml', attempts: 1 });
    }
    const deadline = new Date(Date.now() + 600_000).toISOString();
    for (const i of [10, 11, 12]) {
      server.stream.push('idle_warning', { lease_id: `l${i}`, user: 'alice', kind: 'lease', stage: 'warn', action: 'release', deadline });
    }
    await settle();
    await updated();
    const shown = toasts.now();
    expect(shown.map(t => t.message)).toEqual([
      '3 jobs failed: bulk1, bulk2, bulk3',
      expect.stringMatching(/^3 of your jobs were cancelled by ann \(\d\d:\d\d UTC\): bulk6, bulk7, bulk8$/),
      'Preempted: 2 of your jobs (bulk4, bulk5) by big (j-big), a higher-priority job of team ml. Requeued; they keep their places.',
      expect.stringMatching(/^Idle GPUs: 3 of your leases are idle \(nb10, nb11 and 1 more\); their GPUs will be released at \d\d:\d\d UTC unless they are used or kept alive\.$/)
    ]);
    expect(shown.every(t => t.message.length <= 140)).toBe(true);
    // only the idle warning needs action (Keep alive, before its deadline): it stays; the rest close by themselves
    expect(shown.map(t => t.autoClose)).toEqual([ALERT_MS, ALERT_MS, ALERT_MS, false]);
    const idle = toasts.updates.filter(u => u.id === shown[3].id).pop() as unknown as Options;
    const keep = idle.actions.find(a => a.label === 'Keep alive');
    keep?.callback();
    expect(ran.map(r => r.args)).toEqual([{ id: 'l10' }, { id: 'l11' }, { id: 'l12' }]);
    // one lease used again: the toast says the other two; all of them: it goes
    server.stream.push('idle_warning', { lease_id: 'l10', user: 'alice', stage: 'clear' });
    await settle();
    await updated();
    expect(toasts.now()[3].message).toMatch(/^Idle GPUs: 2 of your leases are idle \(nb11, nb12\);/);
    // then the other two are reclaimed: the warning goes, one reclaim toast for both, which needs nothing
    for (const i of [11, 12]) {
      server.stream.push('idle_warning', { lease_id: `l${i}`, user: 'alice', kind: 'lease', stage: 'reclaim', action: 'release' });
    }
    await settle();
    await updated();
    const after = toasts.now();
    expect(after[3].dismissed).toBe(true);
    expect(after.slice(4).map(t => [t.message, t.autoClose])).toEqual([
      ['Idle GPUs reclaimed: the GPUs of 2 of your leases (nb11, nb12) were released.', ALERT_MS]
    ]);
    notifier.dispose();
    model.dispose();
  });

  it('test_newuser22_n7_a_group_is_new_after_a_quiet_minute: updates go out together; a later burst gets its own toast; a closed toast is not updated', () => {
    let now = 0;
    const toasts = spyToasts();
    const timers: (() => void)[] = [];
    const folder = new ToastFolder<{ id: string }>(() => now, undefined, fn => timers.push(fn));
    const render = (items: readonly { id: string }[]) => ({ type: 'warning' as const, message: `${items.length}`, autoClose: ALERT_MS, actions: [] });
    folder.add('k', { id: 'a' }, render);
    now = 30_000;
    folder.add('k', { id: 'b' }, render);
    folder.add('k', { id: 'c' }, render);
    expect([toasts.made.map(t => t.message), toasts.updates.length, timers.length]).toEqual([['1'], 0, 1]);
    timers.shift()?.();
    expect(toasts.updates.map(u => u.message)).toEqual(['3']); // one update for both
    now = 95_000; // more than a minute after the last
    folder.add('k', { id: 'd' }, render);
    expect(toasts.made.map(t => t.message)).toEqual(['1', '1']);
    vi.mocked(Notification.update).mockReturnValue(false); // the user closed it
    folder.add('k', { id: 'e' }, render);
    timers.shift()?.();
    expect(toasts.made.map(t => t.message)).toEqual(['1', '1', '1']); // e alone, in a toast of its own
  });
});
