/**
 * Session 29 (s29-ui): the panel's leftovers and the bulk cancel's summary.
 * - toasts.spec newuser22 N7 under load: a bulk cancel of 60 pending jobs said "57 of your pending jobs
 *   were cancelled" — the summary counted the ends the page's re-read happened to show (3 jobs were new
 *   to the page: no end seen). It says the server's number (the bulk event's `cancelled`, `pending`).
 * - red28 R6 paged GET definitions (100 a page, Link: rel="next"): the Definitions view read page 1 only.
 * - newuser28 N5: the owner of a job an admin held was offered a Release that is refused 403.
 */
import { Notification } from '@jupyterlab/apputils';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { MAX_PAGES, nextCursor, SchedClient } from '../src/client';
import { CommandIDs } from '../src/commandids';
import { MyWorkView } from '../src/sections';
import { UPDATE_MS } from '../src/toasts';
import { holdAction, type Job } from '../src/types';
import { FakeSchedServer, json, makeJob, settle } from './fakeserver';
import { context, flush, mount, notifierOn, recordingCommands, startedModel } from './ui';

afterEach(() => {
  vi.restoreAllMocks();
});

/** Every toast made, with its latest words (updates applied) and whether it was dismissed. */
function spyToasts() {
  let n = 0;
  const made: { id: string; message: string; dismissed: boolean }[] = [];
  for (const type of ['info', 'success', 'warning', 'error'] as const) {
    vi.spyOn(Notification, type).mockImplementation((message: string) => {
      const id = `toast-${++n}`;
      made.push({ id, message, dismissed: false });
      return id;
    });
  }
  vi.spyOn(Notification, 'update').mockImplementation(args => {
    const toast = made.find(t => t.id === args.id);
    if (toast) {
      toast.message = args.message;
    }
    return !!toast;
  });
  vi.spyOn(Notification, 'dismiss').mockImplementation(id => {
    const toast = made.find(t => t.id === id);
    if (toast) {
      toast.dismissed = true;
    }
  });
  return { shown: () => made.filter(t => !t.dismissed) };
}

const updated = () => new Promise(resolve => setTimeout(resolve, UPDATE_MS + 20));

function job(i: number, overrides: Partial<Job> = {}): Job {
  return makeJob({ id: `j${i}`, name: `burst${i}`, state: 'pending', ...overrides });
}

describe('s29: a bulk cancel says the server\'s number, not the ends this page saw', () => {
  it('test_s29_toasts_bulk_cancel_of_60_says_60_when_the_page_knew_57', async () => {
    // the page has seen 57 of the 60 submits: the last 3 are new to it when the re-read shows them cancelled
    const all = Array.from({ length: 60 }, (_, i) => job(i));
    const { server, model, notifier } = await notifierOn(all.slice(0, 57));
    const toasts = spyToasts();
    server.jobs = all.map(j => ({ ...j, state: 'cancelled', message: 'cancelled by alice' }));
    server.stream.push('job', { user: 'alice', cancelled: 60, by: 'alice', pending: 60 });
    await settle();
    model.refresh('jobs', { force: true });
    await settle();
    await updated();
    expect(model.jobs.filter(j => j.state === 'cancelled')).toHaveLength(60);
    expect(toasts.shown().map(t => t.message)).toEqual([expect.stringMatching(/^60 of your pending jobs were cancelled \(by you, \d\d:\d\d UTC\)\.$/)]);
    notifier.dispose();
    model.dispose();
  });

  it('test_s29_toasts_bulk_cancel_event_after_the_reread_claims_its_ends: one toast, the server\'s number', async () => {
    const all = Array.from({ length: 60 }, (_, i) => job(i));
    const { server, model, notifier } = await notifierOn(all);
    const toasts = spyToasts();
    // a periodic re-read shows the ends before the cancel's event arrives (a loaded page)
    server.jobs = all.map(j => ({ ...j, state: 'cancelled', message: 'cancelled by alice' }));
    model.refresh('jobs', { force: true });
    await settle();
    server.stream.push('job', { user: 'alice', cancelled: 60, by: 'alice', pending: 60 });
    await settle();
    await updated();
    expect(toasts.shown().map(t => t.message)).toEqual([expect.stringMatching(/^60 of your pending jobs were cancelled \(by you, /)]);
    notifier.dispose();
    model.dispose();
  });

  it('test_s29_toasts_bulk_cancel_by_an_admin: the server\'s number, the names the page saw; stopped jobs ending later add nothing', async () => {
    const running = (i: number, extra: Partial<Job> = {}) => job(i, { state: 'running', started_at: '2026-12-06T05:00:00Z', attempts: 1, ...extra });
    const waiting = Array.from({ length: 55 }, (_, i) => job(i));
    const { server, model, notifier } = await notifierOn([...waiting.slice(0, 52), running(90), running(91)]);
    const toasts = spyToasts();
    const stop = { intent: 'cancel', by: 'boss', at: '2026-12-06T05:01:00Z', kill_at: '2026-12-06T05:01:30Z' };
    server.jobs = [...waiting.map(j => ({ ...j, state: 'cancelled' as const })), running(90, { stop_requested: stop } as Partial<Job>), running(91, { stop_requested: stop } as Partial<Job>)];
    server.stream.push('job', { user: 'alice', cancelled: 57, by: 'boss', pending: 55 });
    await settle();
    model.refresh('jobs', { force: true });
    await settle();
    await updated();
    const said = /^57 of your jobs were cancelled by boss \(\d\d:\d\d UTC\): burst0, burst1, burst2 and 54 more$/;
    expect(toasts.shown().map(t => t.message)).toEqual([expect.stringMatching(said)]);
    // the two running ones end after their grace: still 57, no other toast
    server.jobs = server.jobs.map(j => (j.state === 'running' ? { ...j, state: 'cancelled' as const } : j));
    model.refresh('jobs', { force: true });
    await settle();
    await updated();
    expect(toasts.shown().map(t => t.message)).toEqual([expect.stringMatching(said)]);
    notifier.dispose();
    model.dispose();
  });
});

describe('s29: the Definitions view reads every page of GET definitions (red28 R6 paged it)', () => {
  const definition = (i: number) => ({
    id: `d-${i}`, user: 'ann', name: `report${i}`, notebook: `report${i}.ipynb`, script: null, schedule: '0 6 * * *', timezone: 'UTC',
    schedule_description: 'at 06:00', paused: false, next_run_at: '2026-12-07T06:00:00Z', parameters: {}, job: { gpus: 1 }, last_run: null
  });

  /** GET definitions as the server pages it: 100 a page, the next behind `Link: <definitions?limit=100&cursor=…>; rel="next"`. */
  function paged(server: FakeSchedServer, total: number): string[] {
    const asked: string[] = [];
    const rows = Array.from({ length: total }, (_, i) => definition(i));
    server.routes.set('GET definitions', (_body, query) => {
      asked.push(query.toString());
      const start = Number(query.get('cursor') ?? '0');
      const page = rows.slice(start, start + 100);
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      if (start + 100 < total) {
        headers.Link = `<definitions?limit=100&cursor=${start + 100}>; rel="next"`;
      }
      return new Response(JSON.stringify(page), { status: 200, headers });
    });
    return asked;
  }

  it('test_s29_defs_panel_follows_pages: 230 definitions in three pages are all listed', async () => {
    const server = new FakeSchedServer();
    const asked = paged(server, 230);
    const { model } = await startedModel(server);
    const { DefinitionsView } = await import('../src/definitions');
    const view = new DefinitionsView({ model, openPath: async () => undefined, saveNotebook: async () => undefined });
    await view.reload();
    await flush();
    expect(asked).toEqual(['', 'cursor=100', 'cursor=200']);
    const names = [...view.node.querySelectorAll('.jp-sched-def-name')].map(n => n.textContent);
    expect(names).toHaveLength(230);
    expect(names.at(-1)).toBe('report229');
    view.dispose();
    model.dispose();
  });

  it('test_s29_client_request_all: follows Link to the end (a 304 keeps its page\'s Link), at most MAX_PAGES pages', async () => {
    expect(nextCursor('<definitions?all=true&limit=100&cursor=abc%3D>; rel="next"')).toBe('abc=');
    expect(nextCursor('<jobs?cursor=x>; rel="prev", <jobs?cursor=y>; rel=next')).toBe('y');
    expect(nextCursor(null)).toBeNull();
    expect(nextCursor('<definitions?limit=100>; rel="next"')).toBeNull();
    const server = new FakeSchedServer();
    let etags = 0;
    server.routes.set('GET definitions', (_body, query) => {
      const cursor = query.get('cursor');
      const body = JSON.stringify([definition(cursor ? 1 : 0)]);
      const headers: Record<string, string> = { 'Content-Type': 'application/json', ETag: `"e-${cursor ?? 'first'}"` };
      if (!cursor) {
        headers.Link = '<definitions?limit=100&cursor=c1>; rel="next"';
      }
      etags += 1;
      // the second read of page 1 is answered 304 (unchanged): no body, no Link
      return etags === 3 ? new Response(null, { status: 304 }) : new Response(body, { status: 200, headers });
    });
    const client = new SchedClient(server.transport);
    expect((await client.requestAll('listDefinitions')).map(d => d.id)).toEqual(['d-0', 'd-1']);
    expect((await client.requestAll('listDefinitions')).map(d => d.id)).toEqual(['d-0', 'd-1']);
    // a server whose every page names a next one: bounded
    const endless = new FakeSchedServer();
    endless.routes.set('GET definitions', (_body, query) =>
      new Response(JSON.stringify([definition(0)]), { status: 200, headers: { Link: `<definitions?cursor=${Number(query.get('cursor') ?? 0) + 1}>; rel="next"` } }));
    expect(await new SchedClient(endless.transport).requestAll('listDefinitions')).toHaveLength(MAX_PAGES);
  });
});

describe('s29: an admin\'s hold offers its owner no Release (newuser28 N5: PATCH answers 403)', () => {
  const heldBy = (by: string, admin: boolean) => ({
    reason: { code: 'Held', message: `held by ${by} at 2026-12-06T02:06:39Z`, details: { by, at: '2026-12-06T02:06:39Z', admin, job: 'j-held' }, unblock: '', eta: null, eta_reason: 'held' },
    held: { by, at: '2026-12-06T02:06:39Z', admin }
  });

  it('test_s29_nu2_admin_held_job_owner_has_no_release: the owner sees Cancel only; an admin reader sees Release', async () => {
    expect(holdAction({ held: null }, false)).toBe('hold');
    expect(holdAction({ held: { by: 'alice', at: '', admin: false } }, false)).toBe('release');
    expect(holdAction({ held: { by: 'boss', at: '', admin: true } }, false)).toBeNull();
    expect(holdAction({ held: { by: 'boss', at: '', admin: true } }, true)).toBe('release');
    for (const [admin, wanted] of [[false, ['Cancel job nightly']], [true, ['Release job nightly', 'Cancel job nightly']]] as const) {
      const server = new FakeSchedServer();
      server.me = { ...server.me, is_admin: admin };
      server.jobs = [makeJob({ id: 'j-held', name: 'nightly', state: 'pending', submitted_at: '2026-12-06T02:00:00Z', ...heldBy('boss', true) } as Partial<Job>)];
      const { model } = await startedModel(server, 'jobs', 'inventory');
      const { commands } = recordingCommands(CommandIDs.hold, CommandIDs.cancel, CommandIDs.openLogs);
      const view = await mount(new MyWorkView(context(model, commands)));
      const labels = [...view.node.querySelectorAll('button')].map(b => b.getAttribute('aria-label') ?? '').filter(l => /job nightly$/.test(l));
      expect(labels).toEqual(wanted);
      view.dispose();
      model.dispose();
    }
    await settle();
  });
});
