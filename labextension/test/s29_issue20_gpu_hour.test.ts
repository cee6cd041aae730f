import { describe, expect, it } from 'vitest';

import { budgetStandingText, gpuHoursPhrase, sentenceFromDetails } from '../src/format';
import { nullTranslator } from '@jupyterlab/translation';

/**
 * issue 20 (words): "1 GPU-hours" — the panel says GPU-hours through one renderer (gpuHoursPhrase, as the
 * CLI's jupyter_sched.model.units `gpu_hours_phrase`): the unit agrees with the number as shown.
 */
describe('s29 issue 20 w1: GPU-hours agree with their number on the panel', () => {
  const trans = nullTranslator.load('jupyter_sched');

  it('says 1 GPU-hour, 0.5 GPU-hours, 2 GPU-hours', () => {
    expect([1, 1.001, 0.5, 2, 0.001].map(h => gpuHoursPhrase(h, trans))).toEqual([
      '1 GPU-hour',
      '1 GPU-hour',
      '0.5 GPU-hours',
      '2 GPU-hours',
      '<0.01 GPU-hours'
    ]);
    expect(gpuHoursPhrase(1000, trans, '1,000')).toBe('1,000 GPU-hours');
  });

  it('a budget of 1 GPU-hour reads so in its standing and in a reason built from numbers', () => {
    expect(budgetStandingText(0.5, 1, 'month', null, new Date('2026-12-05T22:40:00Z'), trans)).toBe('0.5 of 1 GPU-hour used this month');
    expect(sentenceFromDetails('BudgetExhausted', { team: 'nlp', spent_gpu_hours: 1.2, budget_gpu_hours: 1 })).toBe('Nlp has spent 1.2 of 1 GPU-hour this period.');
  });
});
