/**
 * hubadmin26 B21 (the panel's half): a usage row whose usage was partly on a GPU model with no price in force has
 * cost null (the server's warning names the model); the Admin › Usage report showed its total as '–', or — summed
 * with priced rows — as if complete. Now the server says the priced part (`priced_cost`) and the rest
 * (`unpriced_gpu_hours`), and the total says it is partial: "≥ 2.5; 3.25 GPU-hours unpriced".
 */
import { afterEach, describe, expect, it } from 'vitest';

import { AdminView } from '../src/sections';
import { aggregateUsage, costText, costUnitOf } from '../src/sections/admin';
import { NULL_TRANS } from '../src/format';
import { FakeSchedServer, json, settle } from './fakeserver';
import { context, flush, mount, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

const PERIOD = { since: '2026-11-28T08:40:00Z', until: '2026-12-05T08:40:00Z' };
const ROWS = [
  { user: 'ann', gpu_hours: 2, gpu_seconds: 7200, jobs: 1, cost: 5, cost_unit: 'USD', ...PERIOD },
  { user: 'bob', gpu_hours: 4.25, gpu_seconds: 15300, jobs: 2, cost: null, cost_unit: 'USD', priced_cost: 2.5, unpriced_gpu_hours: 3.25, ...PERIOD,
    warnings: ["no price per GPU-hour for GPU model 'H100-80GB' was in force for 3.250 of these GPU-hours: cost unknown"] },
  { user: 'cy', gpu_hours: 1, gpu_seconds: 3600, jobs: 1, cost: null, cost_unit: 'USD', priced_cost: 0, unpriced_gpu_hours: 1, ...PERIOD }
];

describe('hubadmin26 B21: partial cost totals in the panel', () => {
  it('test_hubadmin26_b21_panel_totals_say_they_are_partial_when_some_usage_is_unpriced', async () => {
    const server = new FakeSchedServer();
    server.me = { ...server.me, is_admin: true };
    server.routes.set('GET usage/report', () => json(200, ROWS));
    server.routes.set('GET quotas', () => json(200, { quotas: [], budgets: [], teams: [], user_teams: {} }));
    server.routes.set('GET audit', () => json(200, []));
    server.routes.set('GET eta-accuracy', () => json(200, { jobs: 0, coverage: null, median_abs_error_s: null, median_wait_s: null, error_of_wait: null }));
    const { model } = await startedModel(server);
    const view = await mount(new AdminView(context(model)));
    await settle();
    await flush();
    const heads = [...view.node.querySelectorAll('.jp-sched-usage-table th')].map(th => text(th));
    const column = heads.indexOf('Cost (USD)');
    expect(column).toBeGreaterThan(0);
    const cost = Object.fromEntries(
      [...view.node.querySelectorAll('.jp-sched-usage-table tbody tr')].map(tr => {
        const cells = [...tr.querySelectorAll('td')];
        return [text(cells[0]), text(cells[column])];
      })
    );
    expect(cost).toEqual({ ann: '5', bob: '≥ 2.5; 3.25 GPU-hours unpriced', cy: '≥ 0; 1 GPU-hour unpriced' });
    view.dispose();
  });

  it('test_hubadmin26_b21_team_totals_sum_the_priced_part_and_count_the_unpriced_hours', () => {
    const rows = [
      { team: 'cv', gpu_hours: 2, jobs: 1, cost: 4, cost_unit: 'USD' },
      { team: 'cv', gpu_hours: 3, jobs: 1, cost: null, priced_cost: 1.5, unpriced_gpu_hours: 2, cost_unit: 'USD' },
      { team: 'nlp', gpu_hours: 1, jobs: 1, cost: 2, cost_unit: 'USD' }
    ];
    const totals = aggregateUsage(rows, 'team');
    expect(totals).toEqual([
      { key: 'cv', gpuHours: 5, utilizedGpuHours: null, cost: 5.5, unpricedGpuHours: 2 },
      { key: 'nlp', gpuHours: 1, utilizedGpuHours: null, cost: 2, unpricedGpuHours: 0 }
    ]);
    expect(totals.map(t => costText(t, NULL_TRANS))).toEqual(['≥ 5.5; 2 GPU-hours unpriced', '2']);
    expect(costText({ key: 'x', gpuHours: 1, utilizedGpuHours: null, cost: null, unpricedGpuHours: 0 }, NULL_TRANS)).toBe('–');
    expect(costUnitOf([{ cost: null, priced_cost: 0, unpriced_gpu_hours: 1, cost_unit: 'USD' }])).toBe('USD');
  });
});
