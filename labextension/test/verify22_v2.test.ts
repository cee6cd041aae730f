/**
 * Verify 22, V2: an admin's cancel of my job showed no toast in the panel. The server's cancel
 * event (DELETE jobs/{id} by boss) carried `mine: false` — boss's view of the job, not mine — and
 * the model took that over my own rows, so the notifier read the job as someone else's and said
 * nothing (pending and running alike; a running job's later end event kept the stale flag). An
 * event's `mine` is the reader's: the model reads it from the job's owner and who I am.
 */
import { Notification } from '@jupyterlab/apputils';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { ALERT_MS } from '../src/toasts';
import { makeJob, settle } from './fakeserver';
import { notifierOn } from './ui';

afterEach(() => {
  vi.restoreAllMocks();
});

function spyWarnings(): { message: string; actions: unknown[]; autoClose: unknown }[] {
  const made: { message: string; actions: unknown[]; autoClose: unknown }[] = [];
  for (const type of ['info', 'success', 'warning', 'error'] as const) {
    vi.spyOn(Notification, type).mockImplementation((message: string, options?: unknown) => {
      const o = (options ?? {}) as { actions?: unknown[]; autoClose?: unknown };
      made.push({ message: `${type}: ${message}`, actions: o.actions ?? [], autoClose: o.autoClose });
      return `t${made.length}`;
    });
  }
  vi.spyOn(Notification, 'update').mockImplementation(() => true);
  vi.spyOn(Notification, 'dismiss').mockImplementation(() => undefined);
  return made;
}

describe('verify 22, V2: a cancel by an admin toasts', () => {
  it('test_verify22_v2_admin_cancel_of_my_pending_job_toasts: the event carries the admin\'s mine: false', async () => {
    const { server, model, notifier } = await notifierOn([makeJob({ id: 'j1', name: 'solo0', state: 'pending', mine: true })]);
    const made = spyWarnings();
    server.stream.push('job', { ...makeJob({ id: 'j1', name: 'solo0', state: 'cancelled', message: 'cancelled by boss' }), mine: false, cancelled_by: 'boss' });
    await settle();
    expect(model.isMine(model.find('j1')!)).toBe(true);
    expect(made).toEqual([{ message: 'warning: solo0 cancelled: cancelled by boss', actions: [], autoClose: ALERT_MS }]);
    notifier.dispose();
    model.dispose();
  });

  it('test_verify22_v2_admin_cancel_of_my_running_job_toasts_at_its_end: the stop event\'s mine: false does not stay', async () => {
    const running = { id: 'j2', name: 'runme', state: 'running', started_at: '2026-12-05T05:00:00Z' } as const;
    const { server, model, notifier } = await notifierOn([makeJob({ ...running, mine: true })]);
    const made = spyWarnings();
    server.stream.push('job', { ...makeJob({ ...running, stop_requested: { intent: 'cancel', by: 'boss' } }), mine: false });
    server.stream.push('job', makeJob({ ...running, state: 'cancelled', message: 'cancelled by boss' }));
    await settle();
    expect(made.map(t => t.message)).toEqual(['warning: runme cancelled: cancelled by boss']);
    expect(made[0].actions.map(a => (a as { label: string }).label)).toEqual(['Open logs']);
    notifier.dispose();
    model.dispose();
  });

  it('test_verify22_v2_event_of_another_users_job_is_not_mine: mine: true from its owner\'s view is not taken', async () => {
    const { server, model, notifier } = await notifierOn([]);
    const made = spyWarnings();
    server.stream.push('job', { ...makeJob({ id: 'j3', name: 'theirs', state: 'pending', user: 'bob' }), mine: true });
    server.stream.push('job', { ...makeJob({ id: 'j3', name: 'theirs', state: 'cancelled', user: 'bob' }), mine: true, cancelled_by: 'boss' });
    await settle();
    expect(model.jobs.some(j => j.id === 'j3')).toBe(false);
    expect(made).toEqual([]);
    notifier.dispose();
    model.dispose();
  });
});
