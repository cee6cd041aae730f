/**
 * New user 23, N13: the Idle policy card's refusals said the API's field path twice
 * (`idle.default.threshold_pct must be … [idle.default.threshold_pct]`) and `window_s`; they say the
 * form's label once, as the quota editor beside it does.
 */
import { describe, expect, it } from 'vitest';
import { nullTranslator } from '@jupyterlab/translation';

import { SchedApiError } from '../src/client';
import { idleErrorText } from '../src/sections/admin';

const trans = nullTranslator.load('jupyter_sched');
const labels = { threshold_pct: 'Idle below (%)', window_s: 'Idle window (s)', warning_s: 'Warning before reclaim (s)' };
const refusal = (field: string, message: string, hint: string | null): SchedApiError =>
  new SchedApiError(400, { code: 'validation_error', field, message, hint });

describe('test_s23_newuser23_n13_idle_policy_errors_in_the_forms_words', () => {
  it.each([
    [
      refusal('idle.default.threshold_pct', 'idle.default.threshold_pct must be a percentage above 0 and at most 100 (got 150)', 'e.g. 5'),
      'Idle below (%) must be a percentage above 0 and at most 100 (got 150) — e.g. 5'
    ],
    [
      refusal('idle.default.warning_s', 'idle.default.warning_s must be at least 0 and less than window_s (240 s) (got 100000)', 'e.g. 120 (less than the 240 s window)'),
      'Warning before reclaim (s) must be at least 0 and less than the idle window (240 s) (got 100000) — e.g. 120 (less than the 240 s window)'
    ],
    [refusal('default.nosuch', 'unknown field nosuch', 'one of threshold_pct, window_s'), 'unknown field nosuch [default.nosuch] — one of Idle below (%), the idle window']
  ])('%#', (err, want) => {
    const said = idleErrorText(err, labels, trans);
    expect(said).toBe(want);
    expect(said).not.toContain('idle.default.');
  });
});
