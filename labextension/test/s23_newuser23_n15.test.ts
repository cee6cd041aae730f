/**
 * New user 23, N15: the idle-warning toast said "released in 1m57s" and kept saying it while it stayed
 * on screen (a minute later the card beside it said "in 57s"). The toast says the clock, as the cards.
 */
import { describe, expect, it } from 'vitest';

import { idleDeadlineText, idleNotice } from '../src/format';
import { idleBurstNotice } from '../src/notify';

const warning = { stage: 'warn', action: 'release', kind: 'lease', deadline: '2026-12-05T09:09:41Z' };

describe('test_s23_newuser23_n15_idle_toast_says_a_clock_that_does_not_go_stale', () => {
  it('one lease: the same true words at the warning and a minute later', () => {
    const said = 'Idle GPUs: cvlease is idle; its GPUs will be released at 09:09 UTC unless it is used or kept alive.';
    expect(idleNotice(warning, 'cvlease', new Date('2026-12-05T09:07:44Z'))).toBe(said);
    expect(idleNotice(warning, 'cvlease', new Date('2026-12-05T09:08:47Z'))).toBe(said);
  });

  it('several leases: the first deadline as a clock', () => {
    const items = ['a', 'b'].map((name, i) => ({ name, data: { ...warning, deadline: `2026-12-05T09:1${i}:00Z` } }));
    expect(idleBurstNotice(items, true, new Date('2026-12-05T09:07:44Z'), { __: (s: string, ...a: unknown[]) => a.reduce<string>((t, v, i) => t.replace(`%${i + 1}`, String(v)), s) } as never))
      .toBe('Idle GPUs: 2 of your leases are idle (a, b); their GPUs will be released at 09:10 UTC unless they are used or kept alive.');
  });

  it('a deadline already past says now; none says soon', () => {
    expect(idleDeadlineText('2026-12-05T09:00:00Z', new Date('2026-12-05T09:07:44Z'))).toBe('now');
    expect(idleDeadlineText(undefined, new Date())).toBe('soon');
  });
});
