import { StateDB } from '@jupyterlab/statedb';
import { nullTranslator } from '@jupyterlab/translation';
import type { AccordionPanel } from '@lumino/widgets';
import { Widget } from '@lumino/widgets';
import { afterEach, describe, expect, it } from 'vitest';

import { SchedClient } from '../src/client';
import { SchedModel } from '../src/model';
import { QueueView } from '../src/sections';
import { type SchedSidebar, SIDEBAR_STATE_KEY } from '../src/sidebar';
import { FakeSchedServer, queueRow, settle } from './fakeserver';
import { flush, sidebarOn, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

const trans = nullTranslator.load('jupyter_sched');

function titles(sidebar: SchedSidebar): string[] {
  return [...sidebar.node.querySelectorAll('.lm-AccordionPanel-title')].map(t => text(t.querySelector('.lm-AccordionPanel-titleLabel')));
}

describe('GPUs sidebar', () => {
  it('is titled "GPUs" (an h2), shows the built-in sections in order, and Admin only to admins', async () => {
    const server = new FakeSchedServer();
    const { model, sidebar } = await sidebarOn(server, new StateDB());
    expect(text(sidebar.node.querySelector('h2'))).toBe('GPUs');
    expect(sidebar.sectionIds).toEqual(['inventory', 'queue', 'mywork', 'quota', 'submit']);
    expect(titles(sidebar)).toEqual(['Inventory', 'Queue', 'My work', 'Quota', 'Submit']);
    // section titles are h3 under the h2: no jump in the heading levels
    expect([...sidebar.node.querySelectorAll('.lm-AccordionPanel-title')].every(t => t.tagName === 'H3')).toBe(true);
    expect(text(sidebar.node.querySelector('.jp-sched-stream'))).toBe('live');
    expect(sidebar.node.querySelector('.jp-sched-stream')?.getAttribute('role')).toBe('status');
    // becoming an admin adds the Admin section
    server.me = { ...server.me, is_admin: true };
    model.refresh('quotas', { force: true });
    await settle();
    await flush();
    expect(sidebar.sectionIds).toEqual(['inventory', 'queue', 'mywork', 'quota', 'submit', 'admin']);
    expect(sidebar.isExpanded('admin')).toBe(false);
    expect(text(sidebar.node.querySelector('.lm-AccordionPanel-title[data-section="inventory"] .jp-sched-badge'))).toBe('4/4 free');
    model.dispose();
  });

  it('the Queue header says no count it has not read (new user 5: "0 running" beside "1 active")', async () => {
    const server = new FakeSchedServer();
    server.queue = [queueRow({ id: 'l-run', state: 'running' })];
    const model = new SchedModel({ client: new SchedClient(server.transport) });
    await model.start(); // nothing watches the queue: a collapsed Queue section, Inventory and Quota too
    await settle();
    expect(model.loaded('queue')).toBe(false);
    expect(QueueView.badge(model, trans)).toBe('');
    model.refresh('queue', { force: true });
    await settle();
    expect(model.loaded('queue')).toBe(true);
    expect(QueueView.badge(model, trans)).toBe('0 pending · 1 running');
    model.dispose();
  });

  it('takes sections from other plugins through the registry, in settings order, and removes them again', async () => {
    const server = new FakeSchedServer();
    const { model, sections, sidebar } = await sidebarOn(server, new StateDB(), { order: ['mywork', 'charts'] });
    const handle = sections.add({
      id: 'charts',
      title: 'Utilization',
      rank: 150,
      create: ctx => {
        const widget = new Widget();
        widget.node.textContent = `charts for ${ctx.model.me?.user}`;
        ctx.state.set('range', '1h');
        return { widget, badge: () => 'live' };
      }
    });
    await flush();
    expect(sidebar.sectionIds).toEqual(['mywork', 'charts', 'inventory', 'queue', 'quota', 'submit']);
    expect(text(sidebar.sectionContent('charts')?.node)).toBe('charts for alice');
    expect(() => sections.add({ id: 'charts', title: 'again', create: () => ({ widget: new Widget() }) })).toThrow(/already registered/);
    sidebar.setOrder([]);
    expect(sidebar.sectionIds).toEqual(['inventory', 'charts', 'queue', 'mywork', 'quota', 'submit']);
    expect(sidebar.movedOrder('charts', -1)).toEqual(['charts', 'inventory', 'queue', 'mywork', 'quota', 'submit']);
    expect(sidebar.movedOrder('inventory', -1)).toEqual(sidebar.sectionIds);
    handle.dispose();
    expect(sidebar.sectionIds).toEqual(['inventory', 'queue', 'mywork', 'quota', 'submit']);
    expect(sections.items().map(s => s.id)).not.toContain('charts');
    model.dispose();
  });

  it('saves which sections are collapsed and their filters, and a reload restores them', async () => {
    const server = new FakeSchedServer();
    server.queue = [queueRow({ id: 'mine', state: 'pending' }), queueRow({ id: 'theirs', user: 'bob', state: 'pending' }, { mine: false })];
    const db = new StateDB();
    const first = await sidebarOn(server, db);
    const accordion = first.sidebar.content as AccordionPanel;
    // the user folds Inventory and opens Quota (clicks on the titles)
    (accordion.titles[0] as HTMLElement).click();
    (accordion.titles[3] as HTMLElement).click();
    // "Mine only" is in the Queue's body (newuser34 n4): there once React has rendered it, which may take more than one turn
    const mineOnly = async (sidebar: SchedSidebar): Promise<HTMLButtonElement> => {
      for (let i = 0; i < 50 && !sidebar.node.querySelector('button.jp-sched-mine-only'); i++) {
        await flush();
      }
      return sidebar.node.querySelector<HTMLButtonElement>('button.jp-sched-mine-only')!;
    };
    (await mineOnly(first.sidebar)).click();
    await first.state.flushed();
    const saved = (await db.fetch(SIDEBAR_STATE_KEY)) as { expanded: Record<string, boolean>; filters: Record<string, unknown> };
    expect(saved.expanded).toEqual({ inventory: false, quota: true });
    expect(saved.filters).toEqual({ queue: { mineOnly: true } });
    first.model.dispose();
    first.sidebar.dispose();

    const second = await sidebarOn(server, db);
    expect(['inventory', 'queue', 'mywork', 'quota', 'submit'].map(id => second.sidebar.isExpanded(id))).toEqual([false, true, true, true, true]);
    const queue = second.sidebar.sectionContent('queue') as QueueView;
    expect(queue.mineOnly).toBe(true);
    expect((await mineOnly(second.sidebar)).getAttribute('aria-pressed')).toBe('true');
    await flush();
    expect([...queue.node.querySelectorAll('.jp-sched-job')].map(r => r.getAttribute('data-job-id'))).toEqual(['mine']);
    second.model.dispose();
  });

  it('showSection expands and remembers; a broken saved state is ignored', async () => {
    const db = new StateDB();
    await db.save(SIDEBAR_STATE_KEY, 'not an object');
    const { model, sidebar, state } = await sidebarOn(new FakeSchedServer(), db, { open: [] });
    expect(sidebar.isExpanded('submit')).toBe(false);
    sidebar.showSection('submit');
    expect(sidebar.isExpanded('submit')).toBe(true);
    await state.flushed();
    expect(((await db.fetch(SIDEBAR_STATE_KEY)) as { expanded: object }).expanded).toEqual({ submit: true });
    sidebar.showSection('nope');
    model.dispose();
  });

  it('without the server extension it says so with the command that fixes it, and Retry starts again', async () => {
    const server = new FakeSchedServer();
    server.routes.set('GET config', () => new Response('<h1>404 : Not Found</h1>', { status: 404 }));
    const { model, sidebar } = await sidebarOn(server, new StateDB());
    const notice = sidebar.node.querySelector('.jp-sched-notice')!;
    expect(notice.getAttribute('role')).toBe('alert');
    expect(text(notice)).toContain('Server extension not enabled');
    expect(text(notice.querySelector('code'))).toBe('jupyter server extension enable jupyter_sched');
    expect(sidebar.sectionIds).toEqual([]);
    server.routes.delete('GET config');
    notice.querySelector('button')!.click();
    await settle();
    await flush();
    expect(model.status).toBe('ready');
    expect(notice.getAttribute('role')).toBeNull();
    expect(sidebar.sectionIds).toContain('inventory');
    model.dispose();
  });

  it('another start failure shows the message; the stream status reads reconnecting while down', async () => {
    const server = new FakeSchedServer();
    server.failWith = { status: 500, code: 'internal', message: 'database is locked' };
    const { model, sidebar } = await sidebarOn(server, new StateDB());
    const notice = sidebar.node.querySelector('.jp-sched-notice')!;
    expect(text(notice.querySelector('strong'))).toBe('Scheduler unavailable');
    expect(text(notice.querySelector('p'))).toBe('database is locked');
    server.failWith = null;
    await model.start();
    await settle();
    server.eventsStatus = 503;
    server.stream.close();
    await settle();
    expect(text(sidebar.node.querySelector('.jp-sched-stream'))).toBe('reconnecting');
    expect(sidebar.node.querySelector('.jp-sched-stream')?.getAttribute('title')).toBe('Event stream down; refreshing every 10 s');
    model.dispose();
  });

  it("shows the server's database reconnecting event until the database is back, and then re-reads", async () => {
    const server = new FakeSchedServer();
    const { model, sidebar } = await sidebarOn(server, new StateDB());
    const node = () => sidebar.node.querySelector('.jp-sched-reconnecting');
    expect(node()?.children.length).toBe(0);
    expect(node()?.getAttribute('role')).toBe('status');
    server.stream.push('connection', {
      database: {
        target: 'the database',
        attempt: 3,
        next_in_s: 4,
        error: 'connection refused',
        message: 'reconnecting to the database (attempt 3, next in 4 s): connection refused'
      },
      attempt: 3
    });
    await settle();
    await flush();
    expect(text(node()?.querySelector('li[data-loop="database"]'))).toBe(
      'Reconnecting to the database (attempt 3, next in 4 s): connection refused'
    );
    expect(model.reconnecting.get('database')?.attempt).toBe(3);
    const queueReads = server.count('GET', 'queue');
    server.stream.push('connection', { database: null });
    await settle();
    await flush();
    expect(node()?.children.length).toBe(0);
    expect(model.reconnecting.size).toBe(0);
    expect(server.count('GET', 'queue')).toBeGreaterThan(queueReads); // what changed meanwhile is re-read
    model.dispose();
  });
});
