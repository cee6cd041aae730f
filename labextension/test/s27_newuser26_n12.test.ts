/**
 * newuser26 n12: during a restart the panel showed the same alert three times, in Inventory, Queue
 * and My work ("the server is not answering (restarting?) — showing what it said at 19:15:34 UTC;
 * retrying", each role="alert": a screen reader read it thrice). Now one line under the header says
 * it; a section still shows an error of its own (a refusal of that resource).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

import type { SchedSidebar } from '../src/sidebar';
import { FakeSchedServer, json, settle } from './fakeserver';
import { flush, sidebarOn, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

function alerts(sidebar: SchedSidebar): string[] {
  return [...sidebar.node.querySelectorAll('[role="alert"]')].map(n => text(n)).filter(t => t);
}

describe('newuser26 n12: one alert for a server that does not answer', () => {
  it('test_newuser26_n12_a_restart_is_said_once_under_the_header_not_in_each_section', async () => {
    const server = new FakeSchedServer();
    let down = false;
    const transport = server.transport;
    const { model, sidebar } = await sidebarOn({
      ...server,
      transport: {
        request: async (path: string, init?: RequestInit) => {
          if (down && !path.startsWith('api/sched/events')) {
            throw new TypeError('Failed to fetch');
          }
          return transport.request(path, init);
        }
      }
    } as FakeSchedServer);
    expect(alerts(sidebar)).toEqual([]);
    down = true;
    for (const resource of ['inventory', 'queue', 'jobs'] as const) {
      model.refresh(resource, { force: true });
    }
    await settle();
    await flush();
    // before: three identical alerts, one per section
    const said = alerts(sidebar);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^The server is not answering \(restarting\?\) — showing what it said at \d\d:\d\d:\d\d UTC; retrying$/);
    expect(sidebar.node.querySelector('.jp-sched-server-down')?.getAttribute('role')).toBe('alert');
    expect(model.serverDown).toMatch(/^the server is not answering/);
    expect(model.error('queue')).toBeNull();

    down = false;
    for (const resource of ['inventory', 'queue', 'jobs'] as const) {
      model.refresh(resource, { force: true });
    }
    await settle();
    await flush();
    expect(alerts(sidebar)).toEqual([]);
    expect(model.serverDown).toBeNull();
    model.dispose();
  });

  it('a stopping server (503 stopping) is said once too; a refusal of one resource stays in its section', async () => {
    const server = new FakeSchedServer();
    const { model, sidebar } = await sidebarOn(server);
    const stopping = () =>
      json(503, { error: { code: 'stopping', message: 'the server is stopping (shutdown): this request was not carried out', field: null, hint: 'retry in 5 s or so' } });
    server.routes.set('GET inventory', stopping);
    server.routes.set('GET queue', stopping);
    model.refresh('inventory', { force: true });
    model.refresh('queue', { force: true });
    await settle();
    await flush();
    expect(alerts(sidebar)).toEqual(['The server is stopping (shutdown): this request was not carried out — retry in 5 s or so']);
    server.routes.set('GET queue', () => json(403, { error: { code: 'forbidden', message: 'you may not read the queue', field: null, hint: null } }));
    server.routes.delete('GET inventory');
    model.refresh('inventory', { force: true });
    model.refresh('queue', { force: true });
    await settle();
    await flush();
    // the two refreshes answer in either order under load: wait for both to be drawn
    await vi.waitFor(async () => {
      await flush();
      expect(alerts(sidebar)).toEqual(['you may not read the queue']);
    });
    expect(model.serverDown).toBeNull();
    model.dispose();
  });
});
