import { describe, expect, it } from 'vitest';

import { limitThatStopped } from '../src/sections/submit';
import { makeJob } from './fakeserver';

describe('newuser32 n8: Resubmit of a job its time limit stopped', () => {
  it('test_newuser32_n8_a_failed_job_that_ran_its_whole_limit_is_named_as_stopped_by_it', () => {
    const stopped = makeJob({ state: 'failed', time_limit_s: 60, started_at: '2026-12-06T10:00:00Z', finished_at: '2026-12-06T10:01:02Z' });
    expect(limitThatStopped(stopped)).toBe(60);
  });

  it('test_newuser32_n8_other_ends_are_resubmitted_as_they_were', () => {
    const times = { started_at: '2026-12-06T10:00:00Z', finished_at: '2026-12-06T10:00:20Z' };
    expect(limitThatStopped(makeJob({ state: 'failed', time_limit_s: 60, ...times }))).toBeNull(); // failed early: its own fault
    expect(limitThatStopped(makeJob({ state: 'succeeded', time_limit_s: 10, ...times }))).toBeNull();
    expect(limitThatStopped(makeJob({ state: 'failed', time_limit_s: null, ...times }))).toBeNull(); // no limit
    expect(limitThatStopped(makeJob({ state: 'failed', time_limit_s: 60, started_at: null, finished_at: null }))).toBeNull();
  });
});
