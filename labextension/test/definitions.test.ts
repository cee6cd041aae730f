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

describe('the New scheduled notebook form', () => {
  it('puts a visible label on every field (new user 5: "1" and "UTC" read as data of unknown meaning)', async () => {
    const { FakeSchedServer, json } = await import('./fakeserver');
    const { startedModel } = await import('./ui');
    const { DefinitionsView } = await import('../src/definitions');
    const { server } = { server: new FakeSchedServer() };
    server.routes.set('GET definitions', () => json(200, []));
    const { model } = await startedModel(server);
    const view = new DefinitionsView({ model, openPath: async () => undefined, saveNotebook: async () => undefined });
    const labelOf = (cls: string): string =>
      view.node.querySelector(`.jp-sched-defs-${cls}`)?.closest('label')?.querySelector('.jp-sched-defs-label')?.textContent ?? '';
    expect(['name', 'path', 'cron', 'tz', 'gpus', 'params'].map(labelOf)).toEqual([
      'Name', 'Notebook or script', 'Cron schedule', 'Time zone', 'GPUs per run', 'Parameters (NAME=VALUE per line)'
    ]);
    // the accessible name still contains the visible words (WCAG 2.5.3 label in name)
    expect(view.node.querySelector('.jp-sched-defs-cron')?.getAttribute('aria-label')).toContain('Cron schedule');
    view.dispose();
    model.dispose();
  });

  it('new user 6 F13: a refused cron is said once, beside the schedule, under its label', async () => {
    const { FakeSchedServer, json, settle } = await import('./fakeserver');
    const { startedModel, flush } = await import('./ui');
    const { DefinitionsView } = await import('../src/definitions');
    const server = new FakeSchedServer();
    const refusal = {
      error: {
        code: 'validation_error', field: 'schedule', message: "invalid cron expression '61 * * * *': Bad minute",
        hint: 'minute hour day-of-month month day-of-week, e.g. "0 12 * * 1-5"'
      }
    };
    server.routes.set('GET definitions', () => json(200, []));
    server.routes.set('POST definitions/preview', () => json(400, refusal));
    server.routes.set('POST definitions', () => json(400, refusal));
    const { model } = await startedModel(server);
    const view = new DefinitionsView({ model, openPath: async () => undefined, saveNotebook: async () => undefined });
    document.body.appendChild(view.node);
    const set = (cls: string, value: string) => {
      const input = view.node.querySelector<HTMLInputElement>(`.jp-sched-defs-${cls}`)!;
      input.value = value;
    };
    set('path', 'nu6/lease.ipynb');
    set('cron', '61 * * * *');
    view.node.querySelector<HTMLButtonElement>('.jp-sched-defs-create')!.click();
    await settle();
    await flush();
    const said = "Cron schedule: invalid cron expression '61 * * * *': Bad minute — minute hour day-of-month month day-of-week, e.g. \"0 12 * * 1-5\"";
    expect(view.node.querySelector('.jp-sched-defs-preview')?.textContent).toBe(said);
    expect(view.node.textContent?.split(said).length).toBe(2); // once, not above and below the button
    expect(view.node.querySelector('.jp-sched-defs-error')).toBeNull();
    view.dispose();
    model.dispose();
  });

  it('names other fields by their label, once', async () => {
    const { SchedApiError } = await import('../src/client');
    const { errorText } = await import('../src/definitions');
    const { formMessage } = await import('../src/format');
    const err = new SchedApiError(400, { code: 'validation_error', field: 'gpus', message: 'gpus must be a whole number or a fraction below 1 (got 1.5)', hint: 'use e.g. 1, 2 or 0.5' });
    expect(errorText(err)).toBe('GPUs per run: must be a whole number or a fraction below 1 (got 1.5) — use e.g. 1, 2 or 0.5');
    expect(formMessage('gpus must be a whole number (got 1.5)', 'gpus', 'GPUs')).toBe('must be a whole number (got 1.5)');
    expect(formMessage('time_limit: cannot parse', 'time_limit', 'Time limit')).toBe('cannot parse');
    expect(formMessage('no such file', 'notebook', undefined)).toBe('no such file');
  });
});

