/**
 * s40-views (session 39's n30 left-over): a job definition's output says every clock in the definition's zone
 * (`inItsZone`, as the CLI's `in_its_zone`), but where the server sent no label with the time — a clock inside a
 * run's reason, a skip's why — the panel named the zone by its offset (`20:02 UTC+9`) where the CLI says `JST`, and
 * cut the seconds the server said (`asked to shut down at 11:02:05 UTC` → `20:02 UTC+9`; the CLI: `20:02:05 JST`).
 * The Scheduled notebooks view now asks the server the names of each definition's zone (`GET zone-labels?zone=`,
 * the tz database's names the CLI uses: jupyter_sched.model.units.zone_labels) and says them, and keeps seconds.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { inItsZone, localTime } from '../src/definitions';
import { endsLine, setDisplayZone, setZoneLabels } from '../src/format';
import { FakeSchedServer, json, makeJob } from './fakeserver';
import { mountedDefinitions } from './ui';

const TOKYO = [{ offset_minutes: 540, label: 'JST' }];

afterEach(() => {
  setDisplayZone('UTC'); // also forgets every zone's names
  document.body.replaceChildren();
});

describe('s40-views: a definition\'s clocks name its zone and keep their seconds', () => {
  it('test_s40_views_definition_zone_named_and_seconds_kept', () => {
    const now = new Date('2026-12-07T11:05:00Z');
    const said = 'kernel k-1 was asked to shut down at 11:02:05 UTC; ETA Dec 7 11:30 UTC';
    // the server sent no names yet: the offset, but the seconds already kept
    expect(inItsZone(said, 'Asia/Tokyo', {}, now)).toBe('kernel k-1 was asked to shut down at 20:02:05 UTC+9; ETA 20:30 UTC+9');
    setZoneLabels('Asia/Tokyo', TOKYO); // the server's `GET zone-labels?zone=Asia/Tokyo`
    expect(inItsZone(said, 'Asia/Tokyo', {}, now)).toBe('kernel k-1 was asked to shut down at 20:02:05 JST; ETA 20:30 JST');
    expect(localTime('2026-12-07T11:02:05Z', 'Asia/Tokyo', null, now)).toBe('20:02 JST'); // a firing: minutes
    expect(localTime('2026-12-07T11:02:05Z', 'Asia/Tokyo', null, now, true)).toBe('20:02:05 JST');
    expect(localTime('2026-12-07T11:02:05Z', 'Asia/Tokyo', 'XYZ', now)).toBe('20:02 XYZ'); // a label sent wins
  });

  it('test_s40_views_scheduled_notebooks_view_asks_its_zones_names', async () => {
    const server = new FakeSchedServer();
    const asked: string[] = [];
    const definition = {
      id: 'd-1', user: 'ann', name: 'nightly', notebook: '/srv/nightly.ipynb', script: null, schedule: '0 9 * * *',
      timezone: 'Asia/Tokyo', schedule_description: 'At 09:00', paused: false, next_run_at: '2026-12-08T00:00:00Z',
      next_run_zone: 'JST', parameters: {}, job: { gpus: 1 }, last_run: null,
      skipped: { count: 1, first: '2026-12-07T00:00:00Z', last: '2026-12-07T00:00:00Z', cause: 'budget', job_id: 'j-1',
        why: 'its run j-1 waits for a budget that resets Dec 8 2026 00:00:30 UTC' }
    };
    server.routes.set('GET definitions', () => json(200, [definition]));
    server.routes.set('GET zone-labels', (_body, query) => {
      const zone = query.get('zone') ?? '';
      asked.push(zone);
      return json(200, { zone, labels: zone === 'Asia/Tokyo' ? TOKYO : [] });
    });
    const { v, done, close } = await mountedDefinitions(server);
    try {
      await v.reload();
      await done();
      const skipped = v.node.querySelector('.jp-sched-def-skipped')?.textContent ?? '';
      // failed before: `… resets Dec 8 09:00 UTC+9` (its zone by offset, its seconds cut)
      expect(skipped).toMatch(/resets (Dec 8 (2026 )?)?09:00:30 JST/); // its date unsaid on Dec 8 in Tokyo
      expect(skipped).not.toContain('UTC+9');
      expect(asked.filter(z => z === 'Asia/Tokyo')).toEqual(['Asia/Tokyo']); // once, however often it re-reads
    } finally {
      close();
    }
  });
});

describe('s40-views: a keepalive over says nothing', () => {
  it('test_s40_views_a_keepalive_over_is_not_said', () => {
    // a lease row read (or kept by the server, or by the panel) while its keepalive lasted, shown after it ended:
    // failed before — "not before 06:16 UTC: kept while idle until then" of a time already past
    const lease = makeJob({ id: 'l-1', kind: 'lease', state: 'running', name: 'cvlease', kernel_id: 'k', started_at: '2026-12-05T05:10:00Z',
      idle_release: { action: 'release', after_s: 1800, keepalive_until: '2026-12-05T06:16:00Z' } });
    expect(endsLine(lease, new Date('2026-12-05T06:00:00Z'))).toContain('not before 06:16 UTC: kept while idle until then');
    expect(endsLine(lease, new Date('2026-12-05T06:16:01Z'))).toBe(
      "a kernel's GPUs: held until released (%gpu release) or reclaimed after 30m idle, no time limit");
  });
});
