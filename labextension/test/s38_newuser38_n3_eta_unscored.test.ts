import { describe, expect, it } from 'vitest';
import { nullTranslator } from '@jupyterlab/translation';

import { etaAccuracyLine } from '../src/sections/admin';

const trans = nullTranslator.load('jupyter_sched');

/** GET eta-accuracy's answer with nothing scored: every figure null but what is given. */
const unscored = (over: { window: number; jobs: number; coverage: number | null }) => ({
  median_abs_error_s: null, median_wait_s: null, error_of_wait: null, p90_abs_error_s: null,
  max_abs_error_s: null, mean_signed_error_s: null, ...over
});

describe('newuser38 n3: the ETA line says why no ETA is scored, not that no job waited', () => {
  it('test_newuser38_n3_a_job_pending_now_is_not_denied: nothing started yet', () => {
    // newuser38's hub: "big" pending 3 min, no job admitted yet (window 0). Was: "No job has waited for GPUs yet".
    const line = etaAccuracyLine(unscored({ window: 0, jobs: 0, coverage: null }), trans);
    expect(line).not.toMatch(/No job has waited/);
    expect(line).toBe(
      "No job has started yet, so no ETA can be scored: an ETA is checked against its job's start, and a job waiting now counts once it starts."
    );
  });

  it('test_newuser38_n3_jobs_that_started_at_once_are_counted_as_such', () => {
    expect(etaAccuracyLine(unscored({ window: 1, jobs: 0, coverage: null }), trans)).toMatch(
      /^No waiting job has started yet \(the last job started at once\), so no ETA can be scored: /
    );
    expect(etaAccuracyLine(unscored({ window: 12, jobs: 0, coverage: null }), trans)).toMatch(
      /^No waiting job has started yet \(the last 12 jobs started at once\), so no ETA can be scored: /
    );
  });

  it('test_newuser38_n3_jobs_that_waited_without_an_eta_are_not_said_to_have_never_waited', () => {
    // coverage 0: jobs waited and started, none had an ETA when queued (the median error is null). Was also
    // "No job has waited for GPUs yet", false twice over.
    expect(etaAccuracyLine(unscored({ window: 5, jobs: 1, coverage: 0 }), trans)).toBe(
      'The last job that waited for GPUs had no ETA when queued, so no ETA can be scored yet.'
    );
    expect(etaAccuracyLine(unscored({ window: 9, jobs: 4, coverage: 0 }), trans)).toBe(
      'None of the last 4 jobs that waited for GPUs had an ETA when queued, so no ETA can be scored yet.'
    );
  });
});
