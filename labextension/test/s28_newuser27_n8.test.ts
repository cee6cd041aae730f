import { describe, expect, it } from 'vitest';

import { progressLine, setDisplayZone, staleAfterS } from '../src/format';
import { makeJob } from './fakeserver';

describe('newuser27 N8: a job whose reports stopped reads "no progress report since …" (the CLI\'s words)', () => {
  const job = (ranS: number, reports: number) =>
    makeJob({
      state: 'running',
      started_at: '2026-12-05T22:20:00Z',
      progress: { fraction: 0.6, done: 240, total: 400, at: '2026-12-05T22:27:38Z', run_started_at: '2026-12-05T22:20:00Z', ran_s: ranS, reports, text: '60 % done, reported Dec 5 22:27 UTC' }
    });

  it('within the stale bound: as reported; past it: since when', () => {
    const before = setDisplayZone('UTC');
    try {
      expect(staleAfterS(458, 45)).toBe(120);
      expect(staleAfterS(1800, 6)).toBe(900);
      expect(progressLine(job(458, 45), new Date('2026-12-05T22:28:48Z'))).toBe('60 % done, reported 22:27 UTC (1m10s ago)');
      expect(progressLine(job(458, 45), new Date('2026-12-05T22:30:48Z'))).toBe('60 % done, no progress report since 22:27:38 UTC (3m10s)');
      expect(progressLine(job(1800, 6), new Date('2026-12-05T22:37:38Z'))).toBe('60 % done, reported 22:27 UTC (10m ago)');
    } finally {
      setDisplayZone(before);
    }
  });
});
