import { describe, expect, it, vi } from 'vitest';

import { catchUpText, localTime, parseParameters, runReason, scheduleText, skippedText, triggerText } from '../src/definitions';
import { zoneText } from '../src/format';

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

describe('localTime (new user 20, N27: the CLI\'s and the magics\' clock, in the definition\'s zone)', () => {
  const NOW = new Date('2025-06-02T08:00:00Z');
  // the zone's name is the server's label for that time (next_run_zone, scheduled_zone, ...): session 22
  it.each([
    ['a winter instant in Berlin', '2025-01-06T06:00:00Z', 'Europe/Berlin', 'CET', 'Jan 6 07:00 CET'],
    ['a summer instant in Berlin, today there: the clock alone', '2025-06-02T10:00:00Z', 'Europe/Berlin', 'CEST', '12:00 CEST'],
    ['tomorrow in Berlin, though still today in UTC', '2025-06-02T22:30:00Z', 'Europe/Berlin', 'CEST', 'Jun 3 00:30 CEST'],
    ['New York', '2025-06-03T13:00:00Z', 'America/New_York', 'EDT', 'Jun 3 09:00 EDT'],
    ['UTC', '2025-06-05T10:00:00Z', 'UTC', 'UTC', 'Jun 5 10:00 UTC'],
    ['more than half a year away: with its year', '2026-03-01T10:00:00Z', 'UTC', 'UTC', 'Mar 1 2026 10:00 UTC']
  ])('%s', (_, iso, zone, label, want) => {
    expect(localTime(iso, zone, label, NOW)).toBe(want);
  });

  it('is empty without a time', () => {
    expect(localTime(null, 'UTC', null)).toBe('');
  });
});

describe('test_s22_words_zone_names_agree_with_the_cli (verify21: panel `GMT+5:30`, CLI `IST`)', () => {
  const NOW = new Date('2026-12-05T06:00:00Z');
  it.each([
    // before: `Dec 7 08:15 GMT+5:30` — the browser's name; the CLI says the tz database's `IST`
    ['Kolkata: the server\'s IST, not the browser\'s GMT+5:30', '2026-12-07T02:45:00Z', 'Asia/Kolkata', 'IST', 'Dec 7 08:15 IST'],
    ['Dubai: no letters in the tz database, the server says UTC+4', '2026-12-07T04:15:00Z', 'Asia/Dubai', 'UTC+4', 'Dec 7 08:15 UTC+4'],
    ['Tokyo: JST', '2026-12-06T23:15:00Z', 'Asia/Tokyo', 'JST', 'Dec 7 08:15 JST']
  ])('%s', (_, iso, zone, label, want) => {
    expect(localTime(iso, zone, label, NOW)).toBe(want);
  });

  it.each([
    // nothing sent: the offset as the server writes a zone without letters, never the browser's name
    ['Asia/Kolkata', '2026-12-07T02:45:00Z', 'UTC+5:30'],
    ['Asia/Kathmandu', '2026-12-07T02:30:00Z', 'UTC+5:45'],
    ['America/Sao_Paulo', '2026-12-07T11:15:00Z', 'UTC-3'],
    ['Europe/Berlin', '2026-12-07T07:15:00Z', 'UTC+1'],
    ['Europe/London', '2026-12-07T08:15:00Z', 'UTC'],
    ['UTC', '2026-12-07T08:15:00Z', 'UTC']
  ])('without a label: %s', (zone, iso, want) => {
    expect(zoneText(undefined, new Date(iso), zone)).toBe(want);
    expect(localTime(iso, zone, null, NOW)).toBe(`Dec 7 ${localTime(iso, zone, 'X', NOW).split(' ')[2]} ${want}`);
  });

  it('says nothing of a zone the browser does not know, and the time as given', () => {
    expect(zoneText(undefined, new Date(), 'No/Such_Zone')).toBe('');
    expect(localTime('2026-12-07T08:15:00Z', 'No/Such_Zone', 'IST', NOW)).toBe('2026-12-07T08:15:00Z');
  });
});

describe('scheduleText (new user 13, N20: the panel said "no schedule (UTC)")', () => {
  it('names the schedule and its time zone', () => {
    expect(scheduleText({ schedule: '0 7 * * *', schedule_description: 'At 07:00', timezone: 'Europe/Berlin' })).toBe('At 07:00 (Europe/Berlin)');
  });

  it('says how a definition with no schedule runs, without a time zone', () => {
    expect(scheduleText({ schedule: '', schedule_description: '', timezone: 'UTC' })).toBe('no schedule: runs only with Run now');
  });
});

describe('runReason', () => {
  const run = (job: Record<string, unknown> | null) =>
    ({ definition_id: 'd-1', job_id: 'j-1', trigger: 'schedule', scheduled_for: '2025-06-02T10:00:00Z', parameters: {}, created_at: '2025-06-02T10:00:00Z', job }) as never;

  it('a failed run says why (the failing cell)', () => {
    expect(runReason(run({ state: 'failed', message: 'cell 3 raised ValueError: x', reason: null }))).toBe('cell 3 raised ValueError: x');
  });

  it('a waiting run shows its pending reason', () => {
    expect(runReason(run({ state: 'pending', message: '', reason: { message: 'waits for 1 GPU: 0 of 4 free' } }))).toBe('waits for 1 GPU: 0 of 4 free.');
  });

  it("a waiting run says the shared renderer's sentence, not the core's message (new user 15, N6)", () => {
    const reason = {
      code: 'WaitingForCapacity',
      message: 'needs 0.5 of a Simulated GPU 80GB GPU; no Simulated GPU 80GB GPU has that much free; it has no time limit ' +
        '(none given), so it cannot start ahead of j-1, reserved from 2026-12-04T05:50:54.496979+00:00',
      details: {},
      text: { summary: 'needs 0.5 of a Simulated GPU 80GB; … cannot start ahead of the job whose GPUs are reserved from Dec 4 05:50 UTC', eta: '', unblock: '', line: '' }
    };
    const said = runReason(run({ state: 'pending', message: '', reason }));
    expect(said).toBe('needs 0.5 of a Simulated GPU 80GB; … cannot start ahead of the job whose GPUs are reserved from Dec 4 05:50 UTC.');
    expect(said).not.toContain('GPU GPU');
    expect(said).not.toContain('+00:00');
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

  it('new user 16 N4: an empty "Notebook or script" is refused in the form, naming it, and nothing is sent', async () => {
    const { FakeSchedServer, json, settle } = await import('./fakeserver');
    const { startedModel, flush } = await import('./ui');
    const { DefinitionsView, REQUIRED_PATH } = await import('../src/definitions');
    const server = new FakeSchedServer();
    const posted: unknown[] = [];
    server.routes.set('GET definitions', () => json(200, []));
    server.routes.set('POST definitions', (request: unknown) => {
      posted.push(request);
      return json(400, { error: { code: 'validation_error', field: 'notebook', message: "'/srv' is not a .ipynb file", hint: null } });
    });
    const { model } = await startedModel(server);
    const view = new DefinitionsView({ model, openPath: async () => undefined, saveNotebook: async () => undefined });
    document.body.appendChild(view.node);
    view.node.querySelector<HTMLInputElement>('.jp-sched-defs-path')!.value = '   ';
    view.node.querySelector<HTMLInputElement>('.jp-sched-defs-gpus')!.value = '1';
    view.node.querySelector<HTMLButtonElement>('.jp-sched-defs-create')!.click();
    await settle();
    await flush();
    expect(posted).toEqual([]);
    expect(view.node.querySelector('.jp-sched-defs-path-note')?.textContent).toBe(REQUIRED_PATH);
    expect(REQUIRED_PATH.startsWith('Notebook or script: required')).toBe(true);
    expect(view.node.textContent).not.toContain('not a .ipynb file');
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


describe('deleting a definition (new user 8 N3, panel)', () => {
  const definition = {
    id: 'd-1', user: 'ann', name: 'daily_report', notebook: 'daily_report.ipynb', script: null, schedule: '* * * * *', timezone: 'UTC',
    schedule_description: 'every minute', paused: false, next_run_at: '2026-12-03T04:00:00Z', parameters: {}, job: { gpus: 1 }, last_run: null
  };
  const run = (id: string, state: string) => ({
    definition_id: 'd-1', job_id: id, trigger: 'schedule', scheduled_for: '2026-12-03T03:54:00Z', parameters: {}, created_at: '2026-12-03T03:54:00Z',
    job: { id, name: `daily_report @ ${id}`, state, message: '', reason: null }
  });

  it.each([
    ['also cancels them when the box is ticked', true, 'Deleted "daily_report": it fires no more; cancelled its 2 waiting runs; the others stay in My work'],
    ['keeps them, saying they will run, when it is not', false, 'Deleted "daily_report": it fires no more; 2 runs are still queued and will run: j-w1 (daily_report @ j-w1), j-w2 (daily_report @ j-w2) — cancel them in My work']
  ])('the confirmation lists the waiting runs and offers "also cancel its 2 waiting runs"; %s', async (_, tick, notice) => {
    const { FakeSchedServer, json, settle } = await import('./fakeserver');
    const { startedModel, flush, text } = await import('./ui');
    const { DefinitionsView } = await import('../src/definitions');
    const server = new FakeSchedServer();
    const deletes: string[] = [];
    server.routes.set('GET definitions', () => json(200, deletes.length ? [] : [definition]));
    server.routes.set('GET definitions/d-1/runs', () => json(200, [run('j-w2', 'pending'), run('j-w1', 'preempted'), run('j-done', 'succeeded')]));
    server.routes.set('DELETE definitions/d-1', (_body, query) => {
      deletes.push(query.toString());
      const state = query.get('cancel_runs') === 'true' ? 'cancelled' : 'pending';
      return json(200, { id: 'd-1', deleted: true, waiting_total: 2, waiting_runs: [{ id: 'j-w1', name: 'daily_report @ j-w1', state }, { id: 'j-w2', name: 'daily_report @ j-w2', state }] });
    });
    const { model } = await startedModel(server);
    const view = new DefinitionsView({ model, openPath: async () => undefined, saveNotebook: async () => undefined });
    document.body.appendChild(view.node);
    await settle();
    await flush();
    view.node.querySelector<HTMLButtonElement>('.jp-sched-def-delete')!.click();
    await vi.waitFor(() => expect(text(document.querySelector('.jp-Dialog-header'))).toBe('Delete "daily_report"?'));
    const listed = [...document.querySelectorAll('.jp-sched-def-delete-waiting li')].map(li => text(li));
    expect(listed).toEqual(['j-w2 (daily_report @ j-w2): pending', 'j-w1 (daily_report @ j-w1): preempted']);
    expect(text(document.querySelector('.jp-sched-def-delete-cancel-label'))).toBe('Also cancel its 2 waiting runs');
    const box = document.querySelector<HTMLInputElement>('.jp-sched-def-delete-cancel-runs')!;
    expect(box.checked).toBe(false);
    box.checked = tick;
    document.querySelector<HTMLButtonElement>('.jp-Dialog-button.jp-mod-warn')!.click();
    await vi.waitFor(() => expect(deletes.length).toBe(1));
    expect(deletes).toEqual([tick ? 'cancel_runs=true' : '']);
    await vi.waitFor(() => expect(text(view.node.querySelector('.jp-sched-defs-notice'))).toBe(notice));
    view.dispose();
    model.dispose();
  });
});

describe('catchUpText (hub admin 22: the one run after an outage says it stands for the missed firings)', () => {
  const NOW = new Date('2026-12-05T06:09:30Z');
  const base = { definition_id: 'd-1', job_id: 'j-1', trigger: 'schedule', scheduled_for: '2026-12-05T06:09:00Z',
    scheduled_zone: 'UTC', parameters: {}, created_at: '2026-12-05T06:09:05Z', job: null } as const;

  it('says how late it started and which earlier firings got no run, as the CLI does', () => {
    const run = { ...base, catch_up: true, late_s: 5, missed: 1, missed_from: '2026-12-05T06:08:00Z', missed_to: '2026-12-05T06:08:00Z' };
    expect(catchUpText(run, 'UTC', NOW)).toBe('catch-up, 5s late: 1 earlier firing (06:08 UTC) got no run while no server was running');
  });

  it('a late run with nothing else missed, and a capped count', () => {
    expect(catchUpText({ ...base, catch_up: true, late_s: 1800, missed: 0 }, 'UTC', NOW))
      .toBe('catch-up, 30m late: no server was running at its time');
    const many = { ...base, catch_up: true, late_s: 0.2, missed: 1000, missed_from: '2026-11-28T06:01:00Z', missed_to: '2026-12-05T06:08:00Z' };
    expect(catchUpText(many, 'UTC', NOW)).toBe('catch-up: 1000 or more earlier firings (Nov 28 06:01 UTC to 06:08 UTC) got no run while no server was running');
  });

  it('an ordinary run says nothing', () => {
    expect(catchUpText({ ...base, catch_up: false }, 'UTC', NOW)).toBe('');
    expect(catchUpText({ ...base }, 'UTC', NOW)).toBe('');
  });
});

describe('triggerText (new user 23, N7: a run\'s trigger was worded three ways on panel, CLI and magics)', () => {
  const base = { definition_id: 'd-1', job_id: 'j-1', scheduled_for: '2026-12-05T08:49:00Z', scheduled_zone: 'UTC',
    parameters: {}, created_at: '2026-12-05T08:49:00Z', job: null } as const;

  it("says the server's words, which the CLI and the magics print (tests/definitions/test_s24_words_n7_trigger_words.py)", () => {
    expect(triggerText({ ...base, trigger: 'manual', trigger_text: 'run now' })).toBe('run now');
    expect(triggerText({ ...base, trigger: 'schedule', trigger_text: 'scheduled' })).toBe('scheduled');
    expect(triggerText({ ...base, trigger: 'schedule', catch_up: true, trigger_text: 'catch-up' })).toBe('catch-up');
  });

  it('an older server that sends no words: the trigger as sent', () => {
    expect(triggerText({ ...base, trigger: 'manual' })).toBe('manual');
  });
});

describe('skippedText (newuser34 n1: a firing skipped behind a waiting run is said, as the CLI says it)', () => {
  const NOW = new Date('2026-12-07T10:03:30Z');

  it('says how many firings got no run, which run holds them and how to change it', () => {
    const d = { timezone: 'UTC', skipped: { count: 2, first: '2026-12-07T10:02:00Z', last: '2026-12-07T10:03:00Z',
      why: 'its run j-1 still waits to start', cause: 'waiting' as const, job_id: 'j-1' } };
    expect(skippedText(d, NOW)).toBe('skipped 2 firings (10:02 UTC to 10:03 UTC) since its last scheduled run: its run j-1 ' +
      'still waits to start; by default a firing is skipped while the previous run still waits, so runs do not pile up ' +
      'behind it (--overlap allow queues a run for each firing)');
  });

  it('says nothing when none were skipped', () => {
    expect(skippedText({ timezone: 'UTC', skipped: null }, NOW)).toBe('');
  });
});
