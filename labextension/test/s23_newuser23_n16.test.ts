/**
 * New user 23, N16 (admin): the audit search said "0 matching records" for `preempt` while the log had
 * 2 (older than the newest 500 the card reads), and "100 matching records" for the list's cap. The card
 * now also asks the server for the word as an action, user or job, and the count says what was searched.
 */
import { act } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { nullTranslator } from '@jupyterlab/translation';

import { AdminView } from '../src/sections';
import { auditCountText } from '../src/sections/admin';
import { FakeSchedServer, json, settle } from './fakeserver';
import { context, flush, mount, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

const trans = nullTranslator.load('jupyter_sched');

describe('test_s23_newuser23_n16_audit_search_counts_what_it_searched', () => {
  it('finds preempt records older than the newest 500, and says the count of what it searched', async () => {
    const server = new FakeSchedServer();
    server.me = { ...server.me, is_admin: true };
    const at = (i: number) => new Date(Date.UTC(2026, 11, 5, 9, 0, 0) - i * 1000).toISOString();
    const recent = Array.from({ length: 500 }, (_, i) => ({ id: 5000 - i, at: at(i), actor: 'root', action: 'job_submitted', message: `bulk${i}` }));
    const old = [
      { id: 12, at: '2026-12-05T08:55:03Z', actor: 'engine', action: 'preempt', message: 'lowml preempted for cvtake' },
      { id: 7, at: '2026-12-05T08:37:04Z', actor: 'engine', action: 'preempt', message: 'lowml preempted for cvnorm' }
    ];
    const asked: string[] = [];
    server.routes.set('GET audit', (_, q) => {
      asked.push(q.toString());
      if (q.get('action')) {
        return json(200, old.filter(r => r.action === q.get('action')));
      }
      return json(200, q.get('user') || q.get('job_id') ? [] : recent);
    });
    const { model } = await startedModel(server);
    const view = await mount(new AdminView(context(model)));
    await settle();
    await flush();
    const node = view.node;
    const status = () => text(node.querySelector('.jp-sched-audit [role="status"]'));
    expect(status()).toBe('500 records (the newest 500 read; older ones: search, or jupyter-sched audit --since …); the newest 100 are listed');
    const input = node.querySelector('.jp-sched-audit-search') as HTMLInputElement;
    await act(async () => {
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(input, 'preempt');
      input.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await vi.waitFor(async () => {
      await flush();
      expect(status()).toBe('2 matching records in the newest 500 records, or with action, user or job "preempt" in the whole log');
    });
    expect(asked).toContain('action=preempt&limit=500');
    expect([...node.querySelectorAll('.jp-sched-audit-record')].map(li => text(li))).toHaveLength(2);
    view.dispose();
    model.dispose();
  });

  it('auditCountText: a capped list and a log read whole', () => {
    expect(auditCountText(250, 500, 'job_submitted', true, trans)).toBe(
      '250 matching records in the newest 500 records, or with action, user or job "job_submitted" in the whole log; the newest 100 are listed');
    expect(auditCountText(0, 40, 'nothing', true, trans)).toBe('0 matching records');
    expect(auditCountText(40, 40, '', false, trans)).toBe('40 records');
  });
});
