/**
 * newuser34 n4: the Queue's title bar cut its counts at the default sidebar width ("QUEUE 167 PENDING · 0 RUNNI…"),
 * "Mine only" beside them taking the room. "Mine only" is now in the Queue's body (same class, aria-pressed and
 * section-state key), the title bar holds the counts alone, and a badge wraps only at its " · " into whole parts.
 * (jsdom draws nothing: the widths themselves are checked by ui-tests/tests/layout.spec.ts at 300 and 250 px.)
 */
import { StateDB } from '@jupyterlab/statedb';
import { nullTranslator } from '@jupyterlab/translation';
import { afterEach, describe, expect, it } from 'vitest';

import { SchedClient } from '../src/client';
import { SchedModel } from '../src/model';
import { QueueView } from '../src/sections';
import { badgeParts } from '../src/sidebar';
import { FakeSchedServer, queueRow, settle } from './fakeserver';
import { flush, sidebarOn, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

describe('newuser34 n4: the Queue title bar keeps its counts', () => {
  it('newuser34 n4 the Queue title bar holds only its counts, "Mine only" is a pressed toggle in its body', async () => {
    const server = new FakeSchedServer();
    server.queue = [
      ...Array.from({ length: 167 }, (_, i) => queueRow({ id: `p${i}`, user: 'bob', state: 'pending' }, { position: i + 1, mine: false })),
      queueRow({ id: 'mine', state: 'pending' }, { position: 168 })
    ];
    const { model, sidebar } = await sidebarOn(server, new StateDB());
    await flush();
    const title = sidebar.node.querySelector('.lm-AccordionPanel-title[data-section="queue"]')!;
    // the toolbar: the badge and nothing else (no button takes the counts' room)
    const items = [...title.querySelectorAll('.jp-AccordionPanel-toolbar .jp-Toolbar-item')];
    expect(items.map(i => i.classList.contains('jp-sched-badge-item'))).toEqual([true]);
    expect(title.querySelector('button')).toBeNull();
    const badge = title.querySelector('.jp-sched-badge')!;
    expect(text(badge)).toBe('168 pending · 0 running');
    // two whole parts, the wrap only between them
    expect([...badge.querySelectorAll('.jp-sched-badge-part')].map(p => p.textContent)).toEqual(['168 pending ·', '0 running']);
    expect(badge.getAttribute('title')).toBe('168 pending · 0 running');
    // "Mine only": in the Queue's body, above "Pending (N)", a pressed toggle that filters and is kept
    const body = sidebar.sectionContent('queue')!.node;
    for (let i = 0; i < 50 && !body.querySelector('button.jp-sched-mine-only'); i++) {
      await flush(); // 168 rows: React's render may take more than one turn
    }
    const toggle = body.querySelector<HTMLButtonElement>('button.jp-sched-mine-only')!;
    expect(toggle.classList.contains('jp-sched-toggle')).toBe(true);
    expect(toggle.getAttribute('aria-pressed')).toBe('false');
    expect(toggle.compareDocumentPosition(body.querySelector('.jp-sched-subhead')!) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    toggle.click();
    await flush();
    const pressed = body.querySelector<HTMLButtonElement>('button.jp-sched-mine-only')!;
    expect(pressed.getAttribute('aria-pressed')).toBe('true');
    expect([...body.querySelectorAll('.jp-sched-job')].map(r => r.getAttribute('data-job-id'))).toEqual(['mine']);
    // the title bar still counts the whole queue (as the CLI's queue header does)
    expect(text(badge)).toBe('168 pending · 0 running');
    model.dispose();
  });

  it('newuser34 n4 a badge splits into whole parts only at " · ", its text unchanged', () => {
    const text1 = '0/4 free · 1 GPU held off the inventory (a·b, c)';
    const parts = badgeParts(text1);
    const span = document.createElement('span');
    span.append(...parts);
    expect(span.textContent).toBe(text1);
    expect([...span.querySelectorAll('.jp-sched-badge-part')].map(p => p.textContent)).toEqual(['0/4 free ·', '1 GPU held off the inventory (a·b, c)']);
    const one = document.createElement('span');
    one.append(...badgeParts('3 in use'));
    expect(one.innerHTML).toBe('<span class="jp-sched-badge-part">3 in use</span>');
  });

  it('newuser34 n4 the Queue badge says "0 pending · 0 running" on the queue\'s first read, with no other signal after it', async () => {
    // queueChanged came before the queue counted as read: the badge asked then, got "" and an empty Queue's title bar
    // said "QUEUE" alone until another resource's signal happened to come (found while rewriting the n4 screenshots)
    const model = new SchedModel({ client: new SchedClient(new FakeSchedServer().transport), refreshInterval: 10 });
    const said: string[] = [];
    model.queueChanged.connect(() => said.push(QueueView.badge(model, nullTranslator.load('jupyter_sched'))));
    await model.start();
    const watch = model.watch('queue');
    await settle();
    expect(said).toEqual(['0 pending · 0 running']);
    watch.dispose();
    model.dispose();
  });
});
