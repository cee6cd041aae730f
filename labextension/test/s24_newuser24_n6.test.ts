/**
 * New user 24, N6 (admin): the audit search found nothing by a job's name — "lowB" → "0 matching records"
 * while the job had 15 — and rows showed ids only. The card now names each row's job (`reclaim lowB (j-…)`)
 * from the work the panel lists, matches the name, and asks the server for that job's id.
 */
import { act } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { AdminView } from '../src/sections';
import { auditMatches } from '../src/sections/admin';
import { FakeSchedServer, json, queueRow, settle } from './fakeserver';
import { context, flush, mount, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

const started = new Date(Date.now() - 60_000).toISOString();
const lowB = { id: 'j-1m931nj95-mvgqwc', name: 'lowB', user: 'root', state: 'running' as const, started_at: started,
               allocation: { node: 'vm', gpu_uuids: ['GPU-sim-vm-0'], gpu_milli: 1000 } };

describe('test_newuser24_n6 the audit search finds a job by its name', () => {
  it('names the rows and finds a job\'s records, older ones too, by its name', async () => {
    const server = new FakeSchedServer();
    server.me = { ...server.me, is_admin: true };
    server.queue = [queueRow(lowB, { mine: true })];
    const recent = [{ id: 30, at: '2026-12-05T12:09:10Z', actor: 'engine', action: 'requeued', job_id: lowB.id, message: 'back in the queue' },
                    { id: 29, at: '2026-12-05T12:09:09Z', actor: 'root', action: 'job_submitted', job_id: 'j-other', message: 'x' }];
    const old = { id: 3, at: '2026-12-05T11:00:00Z', actor: 'engine', action: 'reclaim', job_id: lowB.id, message: 'preempted' };
    const asked: string[] = [];
    server.routes.set('GET audit', (_, q) => {
      asked.push(q.toString());
      if (q.get('job_id')) {
        return json(200, q.get('job_id') === lowB.id ? [recent[0], old] : []);
      }
      return json(200, q.get('action') || q.get('user') ? [] : recent);
    });
    const { model } = await startedModel(server, 'queue');
    const view = await mount(new AdminView(context(model)));
    await settle();
    await flush();
    const node = view.node;
    const rows = () => [...node.querySelectorAll('.jp-sched-audit-record')].map(li => text(li.querySelector('div:last-child')));
    expect(rows()).toContain(`requeued lowB (${lowB.id}) — back in the queue`);
    const input = node.querySelector('.jp-sched-audit-search') as HTMLInputElement;
    await act(async () => {
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(input, 'lowB');
      input.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await vi.waitFor(async () => {
      await flush();
      expect(rows()).toEqual([`requeued lowB (${lowB.id}) — back in the queue`, `reclaim lowB (${lowB.id}) — preempted`]);
    });
    expect(asked).toContain(`job_id=${lowB.id}&limit=500`);
    view.dispose();
    model.dispose();
  });

  it('auditMatches reads a name from the id map', () => {
    const record = { id: 1, at: '2026-12-05T12:00:00Z', actor: 'engine', action: 'reclaim', job_id: 'j-1', message: 'x' };
    expect(auditMatches(record, 'lowb', new Map([['j-1', 'lowB']]))).toBe(true);
    expect(auditMatches(record, 'lowb')).toBe(false);
  });
});
