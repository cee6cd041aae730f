/**
 * Session 23 (s23-acct): the panel's usage words agree with the CLI's and the server's.
 * - hubadmin22 H10: the Admin › Usage report read GET usage, whose rows have no cost, so its Cost column never
 *   showed; it now reads GET usage/report and heads the column with the rows' `cost_unit` (`Cost (EUR)`).
 * - one usage period: the report and the quota summary say the period's start, as `jupyter-sched status` and
 *   `jupyter-sched usage` do (`in the last 7 days (since Nov 28 08:40 UTC)`), from the server's `since` /
 *   GET me's `gpu_hours_since`.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { AdminView } from '../src/sections';
import { costUnitOf } from '../src/sections/admin';
import { lastDaysText, NULL_TRANS } from '../src/format';
import { FakeSchedServer, json, settle } from './fakeserver';
import { context, flush, mount, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

function adminServer(): FakeSchedServer {
  const server = new FakeSchedServer();
  server.me = { ...server.me, is_admin: true };
  server.routes.set('GET usage/report', () =>
    json(200, [
      { user: 'ann', gpu_hours: 2, gpu_seconds: 7200, jobs: 1, cost: 5, cost_unit: 'EUR', since: '2026-11-28T08:40:00Z', until: '2026-12-05T08:40:00Z' }
    ])
  );
  server.routes.set('GET quotas', () => json(200, { quotas: [], budgets: [], teams: [], user_teams: {} }));
  server.routes.set('GET audit', () => json(200, []));
  server.routes.set('GET eta-accuracy', () => json(200, { jobs: 0, coverage: null, median_abs_error_s: null, median_wait_s: null, error_of_wait: null }));
  return server;
}

describe('s23-acct: cost unit and the one usage period in the panel', () => {
  it('test_s23_acct_h10 the usage report shows the cost with its unit, from GET usage/report', async () => {
    const server = adminServer();
    const { model } = await startedModel(server);
    const view = await mount(new AdminView(context(model)));
    await settle();
    await flush();
    expect(server.count('GET', 'usage/report')).toBeGreaterThan(0);
    const heads = [...view.node.querySelectorAll('.jp-sched-usage-table th')].map(th => text(th));
    expect(heads).toContain('Cost (EUR)');
    const cells = [...view.node.querySelectorAll('.jp-sched-usage-table tbody tr td')].map(td => text(td));
    expect(cells[heads.indexOf('Cost (EUR)')]).toBe('5');
    expect(text(view.node.querySelector('.jp-sched-usage-period'))).toMatch(/^GPU-hours allocated in the last 7 days \(since Nov 28 08:40 UTC\), as of /);
    view.dispose();
  });

  it('test_s23_acct_period the words of the period and the unit', () => {
    const now = new Date('2026-12-05T08:41:00Z');
    expect(lastDaysText(new Date('2026-11-28T08:40:00Z'), now, NULL_TRANS)).toBe('in the last 7 days (since Nov 28 08:40 UTC)');
    expect(lastDaysText(null, now, NULL_TRANS)).toBe('in the last 7 days');
    expect(costUnitOf([{ cost: 1, cost_unit: 'USD' }, { cost: null, cost_unit: null }])).toBe('USD');
    expect(costUnitOf([{ cost: null }])).toBeNull();
  });
});
