import { describe, expect, it } from 'vitest';
import { nullTranslator } from '@jupyterlab/translation';

import { etaAccuracyLine } from '../src/sections/admin';

const trans = nullTranslator.load('jupyter_sched');

describe('ETA accuracy in the admin view (GET eta-accuracy)', () => {
  it('says how far off the ETAs were against the wait, and their coverage', () => {
    const line = etaAccuracyLine(
      { window: 500, jobs: 40, coverage: 1, median_abs_error_s: 540, median_wait_s: 3600, error_of_wait: 0.15,
        p90_abs_error_s: 1800, max_abs_error_s: 3600, mean_signed_error_s: -60 },
      trans
    );
    expect(line).toBe('ETAs were off by 9m at the median, 15 % of the median wait (1h00m), over the last 40 jobs that waited; 100 % of them had an ETA when queued.');
  });

  it('new user 6 F6: sub-second figures keep a decimal, and a share of a sub-second wait is not said', () => {
    const base = { window: 500, jobs: 23, coverage: 1, p90_abs_error_s: 1, max_abs_error_s: 2, mean_signed_error_s: 0 };
    expect(etaAccuracyLine({ ...base, median_abs_error_s: 0.31, median_wait_s: 0.69, error_of_wait: 0.45 }, trans)).toBe(
      'ETAs were off by 0.3s at the median (the median wait was 0.7s), over the last 23 jobs that waited; 100 % of them had an ETA when queued.'
    );
    expect(etaAccuracyLine({ ...base, median_abs_error_s: 0.01, median_wait_s: 120, error_of_wait: 0.0001 }, trans)).toBe(
      'ETAs were off by under 0.1s at the median, 0 % of the median wait (2m), over the last 23 jobs that waited; 100 % of them had an ETA when queued.'
    );
  });

  it('newuser23 N8: no share of a median wait under a minute (was "4913 % of the median wait (5s)")', () => {
    const base = { window: 28, jobs: 10, coverage: 1, p90_abs_error_s: 300, max_abs_error_s: 400, mean_signed_error_s: 0 };
    expect(etaAccuracyLine({ ...base, median_abs_error_s: 230, median_wait_s: 4.7, error_of_wait: 49.13 }, trans)).toBe(
      'ETAs were off by 3m50s at the median (the median wait was 5s, under a minute: no share of it is said), over the last 10 jobs that waited; 100 % of them had an ETA when queued.'
    );
  });

  it('says there is nothing to check before any job waited', () => {
    const line = etaAccuracyLine(
      { window: 3, jobs: 0, coverage: 0, median_abs_error_s: null, median_wait_s: null, error_of_wait: null,
        p90_abs_error_s: null, max_abs_error_s: null, mean_signed_error_s: null },
      trans
    );
    expect(line).toBe(
      "No waiting job has started yet (the last 3 jobs started at once), so no ETA can be scored: an ETA is checked against its job's start, and a job waiting now counts once it starts."
    );
  });
});
