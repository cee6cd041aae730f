/**
 * newuser29 n12: an admin's Scheduled notebooks listed only the admin's own definitions ("No scheduled notebooks
 * yet") while 160 of users' existed (`jupyter-sched definitions list --all` listed them): an admin could not see or
 * pause a user's nightly GPU definition from the panel. Now an admin has an "All users" toggle (as the Queue's
 * "Mine only"): the list is `GET definitions?all=true`, each row names its owner, and Pause works on any of them.
 * A non-admin has no toggle and reads their own.
 */
import { describe, expect, it } from 'vitest';

import { FakeSchedServer, json } from './fakeserver';
import { mountedDefinitions } from './ui';

const base = {
  notebook: '/srv/nightly.ipynb', script: null, schedule: '0 3 * * *', timezone: 'UTC', schedule_description: 'At 03:00',
  paused: false, next_run_at: '2026-12-07T03:00:00Z', parameters: {}, job: { gpus: 1 }, last_run: null
};
const mine = { ...base, id: 'd-root', user: 'alice', name: 'root-report' };
const theirs = { ...base, id: 'd-ana', user: 'ana', name: 'nightly-gpu' };

async function view(admin: boolean) {
  const server = new FakeSchedServer();
  server.me = { ...server.me, is_admin: admin };
  const asked: string[] = [];
  server.routes.set('GET definitions', (_, query) => {
    asked.push(query.toString());
    return json(200, query.get('all') === 'true' ? [theirs, mine] : [mine]);
  });
  const paused: string[] = [];
  server.routes.set('POST definitions/d-ana/pause', () => {
    paused.push('d-ana');
    return json(200, { ...theirs, paused: true });
  });
  const { v, done, close } = await mountedDefinitions(server);
  const rows = (): string[] => [...v.node.querySelectorAll('.jp-sched-def')].map(
    row => `${row.querySelector('.jp-sched-def-name')?.textContent}${row.querySelector('.jp-sched-def-user') ? ` (${row.querySelector('.jp-sched-def-user')?.textContent})` : ''}`);
  return { v, asked, paused, done, close, rows };
}

describe('test_newuser29_n12 an admin sees and pauses every user\'s scheduled notebooks', () => {
  it('test_newuser29_n12 All users lists everyone\'s with their owner; Pause acts on a user\'s definition', async () => {
    const { v, asked, paused, done, close, rows } = await view(true);
    const toggle = v.node.querySelector<HTMLButtonElement>('.jp-sched-defs-all-users');
    expect(toggle?.textContent).toBe('All users');
    expect(toggle?.getAttribute('aria-pressed')).toBe('false');
    expect(rows()).toEqual(['root-report']); // my own, as before
    toggle!.click();
    await done();
    expect(asked[asked.length - 1]).toBe('all=true');
    expect(rows()).toEqual(['nightly-gpu (ana)', 'root-report']);
    expect(v.node.querySelector('.jp-sched-defs-all-users')?.getAttribute('aria-pressed')).toBe('true');
    v.node.querySelector<HTMLButtonElement>('[data-definition-id="d-ana"] .jp-sched-def-toggle')!.click();
    await done();
    expect(paused).toEqual(['d-ana']);
    expect(v.node.querySelector('.jp-sched-defs-notice')?.textContent).toBe('Paused "nightly-gpu"');
    expect(asked[asked.length - 1]).toBe('all=true'); // the re-read after the pause keeps everyone's
    v.node.querySelector<HTMLButtonElement>('.jp-sched-defs-all-users')!.click();
    await done();
    expect(rows()).toEqual(['root-report']);
    close();
  });

  it('test_newuser29_n12 a non-admin has no All users toggle and reads their own', async () => {
    const { v, asked, done, close, rows } = await view(false);
    await done();
    expect(v.node.querySelector('.jp-sched-defs-all-users')).toBeNull();
    expect(rows()).toEqual(['root-report']);
    expect(asked.every(q => !q.includes('all='))).toBe(true);
    close();
  });
});
