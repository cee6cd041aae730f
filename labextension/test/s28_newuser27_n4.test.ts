import { afterEach, describe, expect, it } from 'vitest';

import { budgetStandingText, setDisplayZone } from '../src/format';
import { QuotaView } from '../src/sections';
import { nullTranslator } from '@jupyterlab/translation';
import { FakeSchedServer } from './fakeserver';
import { context, mount, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

describe('newuser27 n4: a day budget says "today", and a spent one says "spent" as the CLI does', () => {
  const trans = nullTranslator.load('jupyter_sched');

  it('budgetStandingText says the CLI status line (wording.status.budget_lines)', () => {
    const before = setDisplayZone('UTC');
    try {
      const now = new Date('2026-12-05T22:40:00Z');
      const reset = new Date('2026-12-06T00:00:00Z');
      expect(budgetStandingText(0.21, 0.1, 'day', reset, now, trans)).toBe(
        '0.21 of 0.1 GPU-hours used today — spent: new GPU jobs wait until Dec 6 00:00 UTC (or until an admin raises it); CPU-only jobs run'
      );
      expect(budgetStandingText(0.05, 0.1, 'week', reset, now, trans)).toBe('0.05 of 0.1 GPU-hours used this week, resets Dec 6 00:00 UTC');
      expect(budgetStandingText(0.001, 2, 'month', null, now, trans)).toBe('<0.01 of 2 GPU-hours used this month');
    } finally {
      setDisplayZone(before);
    }
  });

  it("the Quota section's budget row reads it, unrounded", async () => {
    const before = setDisplayZone('UTC');
    const server = new FakeSchedServer();
    server.me = {
      ...server.me,
      budgets: [{ team: 'default', user: null, gpu_hours: 0.1, period: 'day', used_gpu_hours: 0.21, resets_at: '2099-12-06T00:00:00Z' }]
    };
    try {
      const { model } = await startedModel(server, 'quotas', 'queue');
      const view = await mount(new QuotaView(context(model)));
      const row = text(view.node.querySelector('.jp-sched-budget'));
      expect(row).toContain('0.21 of 0.1 GPU-hours used today — spent: new GPU jobs wait until Dec 6 2099 00:00 UTC');
      expect(row).not.toContain('this day');
      model.dispose();
    } finally {
      setDisplayZone(before);
    }
  });
});
