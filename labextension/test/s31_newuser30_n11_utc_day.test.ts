import { describe, expect, it } from 'vitest';

import { budgetStandingText, clocksAsOf, setDisplayZone, thisPeriodText } from '../src/format';
import { nullTranslator } from '@jupyterlab/translation';

describe('newuser30 n11: a day budget is "today" only where the browser is on UTC', () => {
  const trans = nullTranslator.load('jupyter_sched');
  const now = new Date('2026-12-06T18:00:00Z');
  const reset = new Date('2026-12-07T00:00:00Z');

  it('says "this UTC day" where the browser is elsewhere, with the reset in its zone', () => {
    const before = setDisplayZone('America/Los_Angeles');
    try {
      expect(thisPeriodText('day', trans)).toBe('this UTC day');
      expect(thisPeriodText('month', trans)).toBe('this month');
      expect(budgetStandingText(0.26, 1, 'day', reset, now, trans)).toBe('0.26 of 1 GPU-hour used this UTC day, resets 16:00 UTC-8');
      // the server's reason (its words, read in every zone) is said as given
      expect(clocksAsOf('nlp has spent its GPU-hour budget: 0.21 of 0.1 GPU-hours this UTC day', now)).toBe(
        'nlp has spent its GPU-hour budget: 0.21 of 0.1 GPU-hours this UTC day'
      );
    } finally {
      setDisplayZone(before);
    }
  });

  it('says "today" on UTC, the server\'s "this UTC day" too (jupyter_sched.model.periods said_to_reader)', () => {
    const before = setDisplayZone('UTC');
    try {
      expect(thisPeriodText('day', trans)).toBe('today');
      expect(budgetStandingText(0.26, 1, 'day', reset, now, trans)).toBe('0.26 of 1 GPU-hour used today, resets Dec 7 00:00 UTC');
      expect(clocksAsOf('nlp has spent its GPU-hour budget: 0.21 of 0.1 GPU-hours this UTC day', now)).toBe(
        'nlp has spent its GPU-hour budget: 0.21 of 0.1 GPU-hours today'
      );
    } finally {
      setDisplayZone(before);
    }
  });
});
