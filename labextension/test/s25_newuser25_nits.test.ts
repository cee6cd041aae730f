/**
 * newuser25 n2: the panel said "cancelled by root (killed by SIGTERM; …)" of root's own job on a single-user lab,
 * beside "released by you" for a lease — now "cancelled by you", as the CLI's lines (wording/jobs.lease_end_words).
 */
import { describe, expect, it } from 'vitest';

import { leaseEndWords, outcome } from '../src/format';

describe('newuser25 n2: my own cancel', () => {
  it('test_newuser25_nit_n2_panel_says_cancelled_by_you', () => {
    const job = { kind: 'training', user: 'root', mine: true, exit_code: -15, message: 'cancelled by root (killed by SIGTERM; it ran 4s)' };
    expect(leaseEndWords(job)).toBe('cancelled by you (killed by SIGTERM; it ran 4s)');
    expect(outcome(job)).toContain('cancelled by you (killed by SIGTERM');
    expect(leaseEndWords({ ...job, mine: false })).toBe('cancelled by its owner (killed by SIGTERM; it ran 4s)');
    expect(leaseEndWords({ ...job, mine: null }, 'root')).toBe('cancelled by you (killed by SIGTERM; it ran 4s)');
    expect(leaseEndWords({ ...job, message: 'cancelled by boss (killed by SIGTERM)' })).toBe('cancelled by boss (killed by SIGTERM)');
    expect(leaseEndWords({ ...job, user: null })).toBe(job.message); // owner unknown: as it is
    expect(leaseEndWords({ kind: 'lease', user: 'root', mine: true, message: 'released by root' })).toBe('released by you');
  });
});
