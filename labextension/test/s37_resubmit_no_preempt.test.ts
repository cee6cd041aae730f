// newuser36 N6 follow-up (session 37): a job asked with --no-preempt (the quickstart's) is resubmitted as it was asked
// — waiting for free GPUs, never stopping a colleague's job — and schema.ts matches openapi.yaml again (no_preempt,
// reclaim_cooldown were added to the API without regenerating it, so schema.test.ts failed).
import { describe, expect, it } from 'vitest';

import { resubmitBody } from '../src/sections/submit';
import { makeJob } from './fakeserver';

describe('Resubmit of a no-preempt job', () => {
  it('sends no_preempt again, and only where the job had it', () => {
    expect(resubmitBody(makeJob({ no_preempt: true })).no_preempt).toBe(true);
    expect(resubmitBody(makeJob({})).no_preempt).toBeUndefined();
  });
});
