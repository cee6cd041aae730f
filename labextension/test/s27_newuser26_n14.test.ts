/**
 * newuser26 n14: every time was UTC, whatever the user's zone (a user in Berlin converted every ETA);
 * the panel showed UTC too though the browser knows the user's zone. Now the panel's clocks are the
 * browser's zone's, each with the zone's label (`UTC+1`), and UTC (said) where the browser is on UTC.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { clockText, clockUTC, clocksAsOf, etaWithRelative, getDisplayZone, setDisplayZone } from '../src/format';

afterEach(() => {
  setDisplayZone('UTC');
});

describe('newuser26 n14: clocks in the browser\'s zone, named', () => {
  it('test_newuser26_n14_the_panel_says_clocks_in_the_browsers_zone_with_its_label', () => {
    const now = new Date('2026-12-05T18:40:00Z');
    const at = new Date('2026-12-05T19:47:00Z');
    expect(clockText(at, now)).toBe('19:47 UTC'); // the tests' zone: UTC, said
    setDisplayZone('Europe/Berlin');
    expect(getDisplayZone()).toBe('Europe/Berlin');
    expect(clockText(at, now)).toBe('20:47 UTC+1');
    expect(clockUTC(at.toISOString())).toBe('20:47 UTC+1');
    // the day is the zone's: 23:30 UTC is tomorrow in Berlin
    expect(clockText(new Date('2026-12-05T23:30:00Z'), now)).toBe('Dec 6 00:30 UTC+1');
    expect(clockText(new Date('2026-12-04T13:21:43Z'), null, true)).toBe('Dec 4 14:21:43 UTC+1');
    // summer time, and a half-hour zone
    expect(clockText(new Date('2026-07-01T12:00:00Z'), null)).toBe('Jul 1 14:00 UTC+2');
    setDisplayZone('Asia/Kolkata');
    expect(clockText(at, now)).toBe('01:17 UTC+5:30'); // Dec 6 there, as now is
    // the server's sentences (UTC) are said in the zone too
    setDisplayZone('Europe/Berlin');
    expect(clocksAsOf('reserved from Dec 5 19:05 UTC · ends by Dec 5 21:00 UTC', now)).toBe('reserved from 20:05 UTC+1 · ends by 22:00 UTC+1');
    expect(etaWithRelative('ETA Dec 5 19:47 UTC, when j-1 ends', at.toISOString(), now)).toBe('ETA 20:47 UTC+1 (in 1h07m), when j-1 ends');
  });

  it('an unknown zone is said as UTC', () => {
    setDisplayZone('Mars/Base');
    expect(getDisplayZone()).toBe('UTC');
    expect(clockText(new Date('2026-12-05T19:47:00Z'), new Date('2026-12-05T18:00:00Z'))).toBe('19:47 UTC');
  });
});
