/**
 * red29 R2 (panel): a hub user name with a zero-width space (`amy\u200b`) or a right-to-left override
 * (`\u202e` + the name reversed) was drawn as `amy` in the audit card and the jobs list. The panel now
 * writes every hidden or reordering character as its escape, as the CLI's tables do.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { shownText } from '../src/format';
import { AdminView } from '../src/sections';
import { FakeSchedServer, json, settle } from './fakeserver';
import { context, flush, mount, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

describe('test_red29_r2_panel_escapes_hidden_characters_in_names', () => {
  it('escapes zero-width, bidi and control characters and keeps every other letter', () => {
    expect(shownText('r2937a464\u200b')).toBe('r2937a464\\u200b');
    expect(shownText('\u202e464a7392r')).toBe('\\u202e464a7392r');
    expect(shownText('a\u2060b\ufeffc\u200ed\u2066e\u0007f')).toBe('a\\u2060b\\ufeffc\\u200ed\\u2066e\\u0007f');
    expect(shownText('jos\u00e9 \u5c71\u7530 \u0430\u0441\u0435 line\nnext\ttab')).toBe('jos\u00e9 \u5c71\u7530 \u0430\u0441\u0435 line\nnext\ttab');
  });

  it('the audit card shows the actor and message escaped', async () => {
    const server = new FakeSchedServer();
    server.me = { ...server.me, is_admin: true };
    server.routes.set('GET audit', () =>
      json(200, [{ id: 1, at: '2026-12-06T05:33:00Z', actor: 'r2937a464\u200b', action: 'squat_refused', user: '\u202e464a7392r',
        job_id: null, message: "\u202e464a7392r's Jupyter server says it refused", details: {} }]));
    const { model } = await startedModel(server);
    const view = await mount(new AdminView(context(model)));
    await settle();
    await flush();
    const rows = [...view.node.querySelectorAll('.jp-sched-audit-record')].map(li => text(li));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain('r2937a464\\u200b');
    expect(rows[0]).toContain("\\u202e464a7392r's Jupyter server says it refused");
    expect(rows[0]).not.toMatch(/[\u200b\u202e]/);
  });
});
