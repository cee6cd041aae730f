/**
 * New user 24, N2: a job whose idle deadline (12:06:12) fell after its own 4m time-limit end (12:06:10): the
 * My work and Queue cards said nothing of it (new user 23, N2), but the toast said "Idle GPUs: cvnorm is idle;
 * it will be reported as idle at 12:06 UTC unless it is used (its GPUs are not taken)." One rule on every
 * surface, the toast included: no idle warning when the deadline is at or after the time-limit end.
 */
import { Notification } from '@jupyterlab/apputils';
import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { idleAfterEnd } from '../src/format';
import { SchedNotifier } from '../src/notify';
import { UPDATE_MS } from '../src/toasts';
import { FakeSchedServer, makeJob, settle } from './fakeserver';
import { startedModel } from './ui';

afterEach(() => {
  vi.restoreAllMocks();
});

const updated = () => new Promise(resolve => setTimeout(resolve, UPDATE_MS + 20));

describe('test_s24_newuser24_n2_idle_toast_follows_the_cards_rule', () => {
  it('no toast for a warning whose deadline is at or after the time-limit end; one before it', async () => {
    const started = new Date(Date.now() - 150_000); // 4m limit: it ends in 90 s
    const end = started.getTime() + 240_000;
    const server = new FakeSchedServer();
    server.jobs = [makeJob({ id: 'j-cv', name: 'cvnorm', state: 'running', kind: 'training', started_at: started.toISOString(),
                              time_limit_s: 240 } as never),
                   makeJob({ id: 'j-long', name: 'longjob', state: 'running', kind: 'training', started_at: started.toISOString(),
                             time_limit_s: 3600 } as never)];
    const { model } = await startedModel(server, 'jobs');
    const made: string[] = [];
    for (const type of ['info', 'success', 'warning', 'error'] as const) {
      vi.spyOn(Notification, type).mockImplementation((message: string) => {
        made.push(message);
        return `t${made.length}`;
      });
    }
    vi.spyOn(Notification, 'update').mockImplementation(() => true);
    vi.spyOn(Notification, 'dismiss').mockImplementation(() => undefined);
    const notifier = new SchedNotifier(model, new CommandRegistry(), nullTranslator.load('x'));
    const after = new Date(end + 2_000).toISOString();
    server.stream.push('idle_warning', { job_id: 'j-cv', user: 'alice', kind: 'training', stage: 'warn', action: 'notify', deadline: after });
    server.stream.push('idle_warning', { job_id: 'j-cv', user: 'alice', kind: 'training', stage: 'warn', action: 'release',
                                         deadline: new Date(end).toISOString() });
    await settle();
    await updated();
    expect(made).toEqual([]);
    // the same deadline for a job that runs on past it: said, as its card says it
    server.stream.push('idle_warning', { job_id: 'j-long', user: 'alice', kind: 'training', stage: 'warn', action: 'notify', deadline: after });
    await settle();
    await updated();
    expect(made).toEqual([expect.stringMatching(/^Idle GPUs: longjob is idle; it will be reported as idle at \d\d:\d\d UTC unless it is used/)]);
    notifier.dispose();
    model.dispose();
  });

  it('idleAfterEnd: at or after the end only, and never without a time limit or a start', () => {
    const job = makeJob({ id: 'j', started_at: '2026-12-05T12:02:10Z', time_limit_s: 240 } as never);
    expect(idleAfterEnd('2026-12-05T12:06:12Z', job)).toBe(true);
    expect(idleAfterEnd('2026-12-05T12:06:10Z', job)).toBe(true);
    expect(idleAfterEnd('2026-12-05T12:06:09Z', job)).toBe(false);
    expect(idleAfterEnd('2026-12-05T12:06:12Z', makeJob({ id: 'k', started_at: '2026-12-05T12:02:10Z' }))).toBe(false);
    expect(idleAfterEnd('2026-12-05T12:06:12Z', undefined)).toBe(false);
    expect(idleAfterEnd(undefined, job)).toBe(false);
  });
});
