/**
 * s36-edges (closing note 35): the panel asked the server for its zone's names (`GET zone-labels`, newuser35 n12)
 * once, at start; when the scheduler did not answer then (the hub's central service down, a server restarting), the
 * clocks said `UTC+1` until a page reload. Now a zone ask that met no answer is asked again once the server answers
 * a read again (or the event stream opens again); a refusal or an older server (404) is still not asked again.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { clockText, setDisplayZone } from '../src/format';
import { FakeSchedServer, json, settle } from './fakeserver';
import { startedModel } from './ui';

afterEach(() => {
  setDisplayZone('UTC');
});

const BERLIN = [{ offset_minutes: 60, label: 'CET' }, { offset_minutes: 120, label: 'CEST' }];
const UNREACHABLE = {
  error: { code: 'hub_service_unreachable', message: 'the scheduler service does not answer', field: null, hint: null }
};
const AT = new Date('2026-12-07T02:00:00Z');
const NOW = new Date('2026-12-07T01:40:00Z');

describe('s36-edges: the zone names are asked again when the server answers again', () => {
  it('test_s36_edges_zone_labels_asked_again_once_the_server_answers_after_being_down_at_start', async () => {
    setDisplayZone('Europe/Berlin');
    const server = new FakeSchedServer();
    let down = true;
    const asked: string[] = [];
    server.routes.set('GET zone-labels', (_body, query) => {
      asked.push(query.get('zone') ?? '');
      return down ? json(502, UNREACHABLE) : json(200, { zone: query.get('zone'), labels: BERLIN });
    });
    const { model } = await startedModel(server);
    expect(asked.length).toBeGreaterThan(0);
    expect(clockText(AT, NOW)).toBe('03:00 UTC+1'); // the server did not answer: the offset stands for now
    down = false;
    const watch = model.watch('jobs'); // the panel's next read: the server answers again
    await settle();
    await settle();
    expect(asked.at(-1)).toBe('Europe/Berlin');
    expect(clockText(AT, NOW)).toBe('03:00 CET');
    const after = asked.length;
    model.refresh('jobs', { force: true }); // named now: never asked again
    await settle();
    expect(asked.length).toBe(after);
    watch.dispose();
    model.dispose();
  });

  it('test_s36_edges_zone_labels_not_asked_again_after_a_refusal_or_an_older_server', async () => {
    setDisplayZone('Europe/Berlin');
    const server = new FakeSchedServer();
    let asks = 0;
    server.routes.set('GET zone-labels', () => {
      asks += 1;
      return json(400, { error: { code: 'validation', message: 'zone: unknown', field: 'zone', hint: null } });
    });
    const { model } = await startedModel(server);
    const watch = model.watch('jobs');
    await settle();
    model.refresh('jobs', { force: true });
    await settle();
    expect(asks).toBe(1);
    expect(clockText(AT, NOW)).toBe('03:00 UTC+1');
    watch.dispose();
    model.dispose();
  });
});
