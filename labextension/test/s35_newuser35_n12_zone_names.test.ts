/**
 * newuser35 n12: the same clock was "03:00 UTC+1" on the panel and "03:00 CET" in the CLI (browser and shell both
 * Europe/Berlin). The panel now asks the server once for the tz database's names of its zone's offsets
 * (`GET zone-labels?zone=`, the names `jupyter_sched.model.units.zone_label` gives the CLI and the magics) and names
 * its clocks with them; a server without the route leaves the offset (`UTC+1`), as before.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { clockText, etaWithRelative, setDisplayZone, setZoneLabels } from '../src/format';
import { FakeSchedServer, json } from './fakeserver';
import { startedModel } from './ui';

afterEach(() => {
  setDisplayZone('UTC');
});

const BERLIN = [{ offset_minutes: 60, label: 'CET' }, { offset_minutes: 120, label: 'CEST' }];

describe('newuser35 n12: the panel names its zone as the CLI does', () => {
  it('test_newuser35_n12_the_panels_clocks_name_their_zone_by_the_servers_letters', () => {
    const now = new Date('2026-12-07T01:40:00Z');
    setDisplayZone('Europe/Berlin');
    expect(clockText(new Date('2026-12-07T02:00:00Z'), now)).toBe('03:00 UTC+1'); // nothing asked yet
    setZoneLabels('Europe/Berlin', BERLIN);
    expect(clockText(new Date('2026-12-07T02:00:00Z'), now)).toBe('03:00 CET');
    expect(clockText(new Date('2027-07-01T12:00:00Z'), null)).toBe('Jul 1 14:00 CEST');
    expect(etaWithRelative('ETA Dec 7 02:00 UTC, when tzblock ends', '2026-12-07T02:00:00Z', now))
      .toBe('ETA 03:00 CET (in 20m), when tzblock ends');
    // another zone's names are not this one's; a new zone forgets them until asked again
    setZoneLabels('America/New_York', [{ offset_minutes: -300, label: 'EST' }]);
    expect(clockText(new Date('2026-12-07T02:00:00Z'), now)).toBe('03:00 CET');
    setDisplayZone('America/New_York');
    expect(clockText(new Date('2026-12-07T02:00:00Z'), now)).toBe('21:00 UTC-5');
    setZoneLabels('America/New_York', [{ offset_minutes: -300, label: 'EST' }, { offset_minutes: -240, label: 'EDT' }]);
    expect(clockText(new Date('2026-12-07T02:00:00Z'), now)).toBe('21:00 EST');
    // London's winter is offset 0 and named GMT, as the CLI names it
    setDisplayZone('Europe/London');
    setZoneLabels('Europe/London', [{ offset_minutes: 0, label: 'GMT' }, { offset_minutes: 60, label: 'BST' }]);
    expect(clockText(new Date('2026-12-07T02:00:00Z'), now)).toBe('02:00 GMT');
  });

  it('test_newuser35_n12_the_model_asks_the_server_for_its_zones_names_once_at_start', async () => {
    setDisplayZone('Europe/Berlin');
    const server = new FakeSchedServer();
    const asked: string[] = [];
    server.routes.set('GET zone-labels', (_body, query) => {
      asked.push(query.get('zone') ?? '');
      return json(200, { zone: query.get('zone'), labels: BERLIN });
    });
    const { model } = await startedModel(server);
    expect(asked).toEqual(['Europe/Berlin']);
    expect(clockText(new Date('2026-12-07T02:00:00Z'), new Date('2026-12-07T01:40:00Z'))).toBe('03:00 CET');
    model.dispose();
    // a server without the route: the offset stands, nothing said
    setDisplayZone('Europe/Berlin');
    const { model: old } = await startedModel(new FakeSchedServer());
    expect(clockText(new Date('2026-12-07T02:00:00Z'), new Date('2026-12-07T01:40:00Z'))).toBe('03:00 UTC+1');
    old.dispose();
  });
});
