import { describe, expect, it } from 'vitest';

import { localTime, parseParameters, runReason } from '../src/definitions';

describe('parseParameters', () => {
  it('reads NAME=VALUE lines, keeping JSON values typed and the rest as text', () => {
    expect(parseParameters('region=eu\nlimit=10\n\nratios=[0.5, 1]\nok=true\nnote=a=b')).toEqual({
      region: 'eu',
      limit: 10,
      ratios: [0.5, 1],
      ok: true,
      note: 'a=b'
    });
  });

  it('refuses a line without a name and value, naming it', () => {
    expect(() => parseParameters('region')).toThrow('parameters: "region" is not NAME=VALUE');
  });
});

describe('localTime', () => {
  it.each([
    ['a winter instant in Berlin', '2025-01-06T06:00:00Z', 'Europe/Berlin', '2025-01-06 07:00'],
    ['a summer instant in Berlin', '2025-06-02T10:00:00Z', 'Europe/Berlin', '2025-06-02 12:00'],
    ['UTC', '2025-06-02T10:00:00Z', 'UTC', '2025-06-02 10:00']
  ])('%s', (_, iso, zone, want) => {
    expect(localTime(iso, zone)).toContain(want);
  });

  it('is empty without a time', () => {
    expect(localTime(null, 'UTC')).toBe('');
  });
});

describe('runReason', () => {
  const run = (job: Record<string, unknown> | null) =>
    ({ definition_id: 'd-1', job_id: 'j-1', trigger: 'schedule', scheduled_for: '2025-06-02T10:00:00Z', parameters: {}, created_at: '2025-06-02T10:00:00Z', job }) as never;

  it('a failed run says why (the failing cell)', () => {
    expect(runReason(run({ state: 'failed', message: 'cell 3 raised ValueError: x', reason: null }))).toBe('cell 3 raised ValueError: x');
  });

  it('a waiting run shows its pending reason', () => {
    expect(runReason(run({ state: 'pending', message: '', reason: { message: 'waits for 1 GPU: 0 of 4 free' } }))).toBe('waits for 1 GPU: 0 of 4 free');
  });

  it('a run whose job is gone says so', () => {
    expect(runReason(run(null))).toBe('its job was removed');
  });
});
