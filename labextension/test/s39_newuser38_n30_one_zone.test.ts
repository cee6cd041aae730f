/**
 * newuser38 n30: in a browser on America/Los_Angeles, Admin → Audit log read `Dec 7 03:01:30 PST · scheduler /
 * idle_warning A (j-…) — idle warning: … GPUs will be reported as idle at Dec 7 11:02:00 UTC unless activity resumes`:
 * one row, two zones, 8 h apart. The server writes its sentences in UTC (every client and the JSON read them); the
 * panel says every clock in them in the browser's zone (`serverText` / `clocksAsOf`) wherever it shows one — the audit
 * row, a toast, a refusal, a node's cordon, a job's or a lease's message — as the CLI and the magics say them in
 * theirs (tests/web/test_s39_newuser38_n30_one_zone.py). The browser's zone here is the process's: TZ set below.
 */
import { Notification } from '@jupyterlab/apputils';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { SchedApiError, describeError } from '../src/client';
import { errorText, runNowNotice, runReason, skippedText } from '../src/definitions';
import { clocksAsOf, drainLine, outcome, serverText, setDisplayZone, setZoneLabels, stoppingText, unhealthyLine } from '../src/format';
import { AdminView } from '../src/sections';
import { ToastFolder } from '../src/toasts';
import { FakeSchedServer, json, settle } from './fakeserver';
import { context, flush, mount, startedModel, text } from './ui';

const LA_LABELS = [{ offset_minutes: -480, label: 'PST' }, { offset_minutes: -420, label: 'PDT' }];
const ROW = {
  id: 41,
  at: '2026-12-07T11:01:30Z',
  actor: 'scheduler',
  action: 'idle_warning',
  job_id: 'j-a1',
  message: 'idle warning: GPU < 5 % for 1 min: GPUs will be reported as idle at Dec 7 11:02:00 UTC unless activity resumes (limit 1m)'
};
const tz = process.env.TZ;

beforeAll(() => {
  process.env.TZ = 'America/Los_Angeles';
});

afterAll(() => {
  process.env.TZ = tz;
});

/** The panel's zone as it starts in a browser: the one Intl reports (the process's TZ here). */
function browserOnLosAngeles(): void {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  expect(zone).toBe('America/Los_Angeles');
  setDisplayZone(zone);
  setZoneLabels(zone, LA_LABELS); // the server's `GET zone-labels` answer for it
}

afterEach(() => {
  setDisplayZone('UTC');
  document.body.replaceChildren();
});

describe('newuser38 n30: one zone per line, the browser\'s', () => {
  it('test_newuser38_n30_server_clocks_in_the_browsers_zone', () => {
    browserOnLosAngeles();
    const now = new Date('2026-12-07T11:05:00Z');
    // dated (an audit row, as its time), its seconds kept; today's form of the day it was written
    expect(serverText(ROW.message, null, new Date(ROW.at))).toContain('reported as idle at Dec 7 03:02:00 PST unless');
    expect(clocksAsOf('asked to shut down at 11:02:05 UTC', now, new Date('2026-12-07T11:02:09Z'))).toBe('asked to shut down at 03:02:05 PST');
    // an undated clock is of the UTC day it was written, not the reader's: 23:30 UTC Dec 6 is 15:30 PST Dec 6
    expect(clocksAsOf('from 23:30 UTC', now, new Date('2026-12-06T20:00:00Z'))).toBe('from Dec 6 15:30 PST');
    // a year said, a zone's own name with an offset left as meant, no such day left as written
    expect(clocksAsOf('next Dec 4 2027 23:58 UTC; fires 12:00 UTC+4; due Feb 30 10:00 UTC', now)).toBe(
      'next Dec 4 2027 15:58 PST; fires 12:00 UTC+4; due Feb 30 10:00 UTC');
    // a refusal's ISO example is what to type: kept; its clock said
    const refused = new SchedApiError(409, {
      code: 'conflict', message: "team vision's reclaims wait until Dec 7 11:15 UTC", field: 'since', hint: 'use e.g. 2025-03-30T06:30:00Z'
    });
    expect(describeError(refused)).toBe("team vision's reclaims wait until 03:15 PST [since] — use e.g. 2025-03-30T06:30:00Z");
    // a lease's message, said as it ended
    expect(outcome({ exit_code: null, message: 'released by the server: asked to shut down at 11:02:05 UTC', finished_at: '2026-12-07T11:02:09Z' }, undefined, null, now))
      .toBe('released by the server: asked to shut down at 03:02:05 PST');
  });

  it('test_newuser38_n30_the_audit_row_says_one_zone', async () => {
    browserOnLosAngeles();
    const server = new FakeSchedServer();
    server.me = { ...server.me, is_admin: true };
    server.routes.set('GET audit', () => json(200, [ROW]));
    server.routes.set('GET zone-labels', (_body, query) => json(200, { zone: query.get('zone'), labels: LA_LABELS }));
    const { model } = await startedModel(server);
    const view = await mount(new AdminView(context(model)));
    await settle();
    await flush();
    const row = text(view.node.querySelector('.jp-sched-audit-record'));
    expect(row).toContain('Dec 7 03:01:30 PST');
    expect(row).toContain('reported as idle at Dec 7 03:02:00 PST unless activity resumes');
    expect(row).not.toContain('UTC');
    view.dispose();
    model.dispose();
  });

  it('test_newuser38_n30_a_toast_says_the_servers_clock_in_the_browsers_zone', () => {
    browserOnLosAngeles();
    const folder = new ToastFolder<{ id: string }>();
    folder.add('cooldown', { id: 'j-1' }, () => ({ type: 'warning', message: "Team vision's reclaims wait until Dec 7 11:15 UTC.", autoClose: false, actions: [] }));
    const shown = Notification.manager.notifications.map(n => n.message);
    expect(shown.some(m => /until (Dec 7 )?03:15 PST\./.test(m))).toBe(true); // its date unsaid on Dec 7 there
    expect(shown.some(m => m.includes('11:15 UTC'))).toBe(false);
  });

  it('test_newuser38_n30_a_definitions_run_says_its_reason_in_the_definitions_zone', () => {
    browserOnLosAngeles(); // the browser's zone is not the definition's: its output keeps the definition's (n20)
    const now = new Date('2026-12-07T10:05:00Z');
    const run = {
      job_id: 'j-d1', scheduled_for: '2026-12-07T10:00:00Z', scheduled_zone: 'CET', trigger: 'schedule',
      job: { id: 'j-d1', state: 'pending', reason: { code: 'InsufficientGpus', message: 'waits for 1 GPU: reserved from 2026-12-07T11:30:00Z; ETA Dec 7 11:30 UTC' } }
    } as never;
    expect(runReason(run, 'Europe/Berlin', now)).toBe('waits for 1 GPU: reserved from 12:30 CET; ETA 12:30 CET.');
    expect(runReason(run)).toContain('ETA Dec 7 11:30 UTC'); // no zone asked: the server's words
    expect(runNowNotice({ job: { state: 'pending', reason: { message: 'budget spent; resets Dec 8 00:00 UTC' } } } as never, 'nightly', 'Asia/Tokyo'))
      .toMatch(/^Queued a run of "nightly" \(pending: budget spent; resets (Dec 8 )?09:00 UTC\+9\)$/); // its date unsaid on Dec 8 there
    const d = { timezone: 'Europe/Berlin', skipped: { count: 1, first: '2026-12-07T10:02:00Z', last: '2026-12-07T10:02:00Z',
      why: 'its run j-1 waits for a budget that resets Dec 8 00:00 UTC', cause: 'waiting' as const, job_id: 'j-1' } };
    // the Scheduled notebooks form's refusal, as every error line
    expect(errorText(new SchedApiError(409, { code: 'conflict', message: "team ml's budget is spent until Dec 8 2026 00:00 UTC", field: null, hint: null })))
      .toMatch(/spent until (Dec 7 )?16:00 PST$/);
    expect(skippedText(d, now)).toContain('(11:02 UTC+1) since its last scheduled run: its run j-1 waits for a budget that resets Dec 8 01:00 UTC+1');
  });

  it('test_newuser38_n30_a_cards_server_lines_say_the_browsers_zone', () => {
    browserOnLosAngeles();
    const running = { state: 'running' } as const;
    // dated, so the test holds on any day: the card's drain, stop and unhealthy lines are the server's sentences
    expect(drainLine({ ...running, drain: { text: 'node-a is being drained by boss: this job is stopped at Dec 7 2026 18:37 UTC and requeued' } } as never))
      .toMatch(/stopped at (Dec 7 )?10:37 PST and requeued$/);
    expect(stoppingText({ stop_requested: { text: 'cancel requested by ivan at Dec 7 2026 11:02:05 UTC' } })).toMatch(/at (Dec 7 )?03:02:05 PST$/);
    expect(unhealthyLine({ ...running, unhealthy_gpus: [{ text: 'GPU-1: Xid 94, since 2026-12-07T11:00:00Z' }] } as never)).toMatch(/since (Dec 7 )?03:00 PST$/);
  });
});
