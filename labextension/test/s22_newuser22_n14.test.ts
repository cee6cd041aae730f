/**
 * New user 22, N14: the Admin › Usage report said root used 0.15 GPU-hours while `status` said 0.92 —
 * it was read once, when the panel opened (its effect depended only on `by`), its Reload was the
 * ETA line's, and it said neither its period nor when it was read. It now asks for `status`'s
 * window (the last 7 days), says `GPU-hours allocated in the last 7 days, as of 05:34 UTC`, and is
 * read again on its own Reload, on the panel's Refresh and when the section is shown again; the
 * other cards (ETA accuracy, audit log, the two editors) re-read on Refresh too, an editor only
 * when it holds no unsaved edits.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { act } from 'react';
import { MessageLoop } from '@lumino/messaging';

import { AdminView } from '../src/sections';
import { usagePeriodLine, USAGE_DAYS } from '../src/sections/admin';
import { nullTranslator } from '@jupyterlab/translation';
import { FakeSchedServer, json, settle } from './fakeserver';
import { click, context, flush, mount, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

function adminServer(): { server: FakeSchedServer; usage: { hours: number; since: string[] } } {
  const server = new FakeSchedServer();
  server.me = { ...server.me, is_admin: true };
  const usage = { hours: 0.15, since: [] as string[] };
  server.routes.set('GET usage/report', (_, q) => {
    usage.since.push(q.get('since') ?? '');
    return json(200, [{ user: 'root', gpu_hours: usage.hours, jobs: 3 }]);
  });
  server.routes.set('GET quotas', () => json(200, { quotas: [{ team: 'ml', user: null, gpu_model: '*', guaranteed: 2, borrowing_limit: 0 }], budgets: [], teams: [], user_teams: {} }));
  server.routes.set('GET audit', () => json(200, []));
  server.routes.set('GET eta-accuracy', () => json(200, { jobs: 0, coverage: null, median_abs_error_s: null, median_wait_s: null, error_of_wait: null }));
  return { server, usage };
}

const figure = (node: Element) => text(node.querySelector('.jp-sched-usage-table tbody tr td:nth-child(2)'));

describe('newuser22 N14: the Usage report is read now, for a said period', () => {
  it('test_s22_newuser22_n14 the report says its period and time and asks for status\'s 7 days', async () => {
    const { server, usage } = adminServer();
    const { model } = await startedModel(server);
    const before = Date.now();
    const view = await mount(new AdminView(context(model)));
    await settle();
    await flush();
    expect(figure(view.node)).toBe('0.15');
    // session 23: the period's start too (the one asked for: this answer's rows carry none)
    expect(text(view.node.querySelector('.jp-sched-usage-period'))).toMatch(/^GPU-hours allocated in the last 7 days \(since [A-Z][a-z]{2} \d{1,2} \d\d:\d\d UTC\), as of \d\d:\d\d UTC$/);
    const since = Date.parse(usage.since[0]);
    expect(before - since).toBeGreaterThanOrEqual(USAGE_DAYS * 86400 * 1000 - 1000);
    expect(Date.now() - since).toBeLessThanOrEqual(USAGE_DAYS * 86400 * 1000 + 60000);
    const trans = nullTranslator.load('jupyter_sched');
    expect(usagePeriodLine(new Date('2026-12-05T05:34:10Z'), new Date('2026-12-05T05:40:00Z'), trans)).toBe(
      'GPU-hours allocated in the last 7 days, as of 05:34 UTC'
    );
    expect(usagePeriodLine(new Date('2026-12-05T05:34:10Z'), new Date('2026-12-05T05:40:00Z'), trans, new Date('2026-11-28T05:34:10Z'))).toBe(
      'GPU-hours allocated in the last 7 days (since Nov 28 05:34 UTC), as of 05:34 UTC'
    );
    view.dispose();
  });

  it('test_s22_newuser22_n14 the report is read again on its Reload, on the panel\'s Refresh and when shown again', async () => {
    const { server, usage } = adminServer();
    const { model } = await startedModel(server);
    const view = await mount(new AdminView(context(model)));
    await settle();
    await flush();
    expect(figure(view.node)).toBe('0.15');
    usage.hours = 0.5;
    await click(view.node.querySelector('.jp-sched-usage-reload')!);
    expect(figure(view.node)).toBe('0.5');
    usage.hours = 0.92;
    await act(async () => {
      model.refreshAll();
    });
    await settle();
    await flush();
    expect(figure(view.node)).toBe('0.92');
    usage.hours = 1.25;
    view.hide();
    view.show();
    MessageLoop.flush();
    await settle();
    await flush();
    expect(figure(view.node)).toBe('1.25');
    expect(usage.since).toHaveLength(4);
    view.dispose();
  });

  it('test_s22_newuser22_n14 the other cards re-read on Refresh; an editor with unsaved edits keeps them and says so', async () => {
    const { server } = adminServer();
    const { model } = await startedModel(server);
    const view = await mount(new AdminView(context(model)));
    await settle();
    await flush();
    const reads = (path: string) => server.count('GET', path);
    const first = { audit: reads('audit'), eta: reads('eta-accuracy'), quotas: reads('quotas'), idle: reads('idle-policy') };
    await act(async () => {
      model.refreshAll();
    });
    await settle();
    await flush();
    expect(reads('audit')).toBe(first.audit + 1);
    expect(reads('eta-accuracy')).toBe(first.eta + 1);
    expect(reads('quotas')).toBeGreaterThan(first.quotas);
    // an unsaved edit in the quota editor: a Refresh leaves it and says why
    const guaranteed = view.node.querySelector('input[name="guaranteed"]') as HTMLInputElement;
    await act(async () => {
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(guaranteed, '5');
      guaranteed.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await act(async () => {
      model.refreshAll();
    });
    await settle();
    await flush();
    expect((view.node.querySelector('input[name="guaranteed"]') as HTMLInputElement).value).toBe('5');
    expect(text(view.node.querySelector('.jp-sched-feedback'))).toContain('Not re-read: these lines have edits not saved');
    view.dispose();
  });
});
