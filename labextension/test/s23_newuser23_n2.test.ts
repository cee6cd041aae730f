/**
 * New user 23, N2: the panel said of a running job "if it stays idle, it is warned at 08:39 UTC and it is
 * reported as idle at 08:41 UTC" — after its 08:40 time-limit end, for work only reported when idle
 * (notify) — while the CLI (wording.jobs.idle_note) said nothing. One rule for both now.
 */
import { describe, expect, it } from 'vitest';
import { nullTranslator } from '@jupyterlab/translation';

import { idleLine } from '../src/sections/jobs';

const trans = nullTranslator.load('jupyter_sched');
const entry = {
  job_id: 'j-1', user: 'root', team: 'cv', kind: 'training', gpu_uuids: ['GPU-1'], idle_since: '2026-12-05T08:37:00Z',
  warn_at: '2026-12-05T08:39:00Z', deadline: '2026-12-05T08:41:00Z', time_left_s: 220, stage: 'idle', action: 'notify',
  reason: '', state: '', grace_s: 0
} as Parameters<typeof idleLine>[0];
const now = new Date('2026-12-05T08:37:20Z');
const endsAt = new Date('2026-12-05T08:40:10Z'); // its 3m time limit

describe('test_s23_newuser23_n2_the_panels_idle_line_follows_the_clis_rule', () => {
  it('work only reported when idle (notify) says nothing before it is reported', () => {
    expect(idleLine(entry, now, trans)).toBe('');
    expect(idleLine(entry, now, trans, false, endsAt)).toBe('');
  });

  it('an idle deadline at or after the time-limit end is not said, though the warning comes before it', () => {
    expect(idleLine({ ...entry, action: 'release' }, now, trans, false, endsAt)).toBe('');
    expect(idleLine({ ...entry, action: 'release' }, now, trans, false, new Date('2026-12-05T09:00:00Z'))).toBe(
      'Idle since 08:37 UTC: if it stays idle, it is warned at 08:39 UTC and its GPUs are released at 08:41 UTC.');
  });

  it('a reclaim is said only where the work runs on (notify)', () => {
    expect(idleLine({ ...entry, stage: 'reclaimed', action: 'release' }, now, trans)).toBe('');
    expect(idleLine({ ...entry, stage: 'reclaimed' }, now, trans)).toBe('Idle since 08:37 UTC: reported as idle at 08:41 UTC.');
  });
});
