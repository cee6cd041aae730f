import { afterEach, describe, expect, it } from 'vitest';

import { AdminView } from '../src/sections';
import { FakeSchedServer, json, settle } from './fakeserver';
import { click, context, flush, mount, startedModel, text, type } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

/** An admin's server whose PUT idle-policy checks threshold_pct and window_s as the real one (400 naming each). */
function idleServer(): FakeSchedServer {
  const server = new FakeSchedServer();
  server.me = { ...server.me, is_admin: true };
  const policy = { enabled: true, threshold_pct: 5, window_s: 1800, warning_s: 300, grace_s: 300, busy_kernel_window_s: null,
    lease_mode: 'release', busy_kernel_mode: 'notify', job_mode: 'requeue', service_mode: 'notify', max_gap_s: 120, keepalive_max_s: 3600 };
  server.routes.set('GET quotas', () => json(200, { quotas: [], budgets: [], teams: [], user_teams: {} }));
  server.routes.set('GET idle-policy', () => json(200, { default: policy, by_priority: {}, active: true, retention_s: 3600 }));
  server.routes.set('PUT idle-policy', body => {
    const patch = (body as { default: Record<string, number> }).default;
    if (patch.threshold_pct > 100) {
      return json(400, { error: { code: 'validation_error', message: `threshold_pct must be a percentage above 0 and at most 100 (got ${patch.threshold_pct})`, field: 'default.threshold_pct', hint: 'e.g. 5' } });
    }
    if (patch.window_s < 0) {
      return json(400, { error: { code: 'validation_error', message: `window_s must be >= 0 (got ${patch.window_s})`, field: 'default.window_s', hint: 'seconds, e.g. 1800' } });
    }
    return json(200, { default: { ...policy, ...patch }, by_priority: {}, active: true, retention_s: 3600 });
  });
  server.routes.set('GET usage/report', () => json(200, []));
  server.routes.set('GET audit', () => json(200, []));
  return server;
}

describe('newuser38 n25: the idle policy form says each refusal in its own words and drops it at Reload', () => {
  it('test_newuser38_n25_reload_clears_a_refusal_and_a_negative_window_gets_the_panels_message', async () => {
    const { model } = await startedModel(idleServer());
    const view = await mount(new AdminView(context(model)));
    await settle();
    await flush();
    const node = view.node;
    const status = () => text(node.querySelector('.jp-sched-idle [role="status"]'));
    await type(node.querySelector('#jp-sched-idle-threshold_pct') as HTMLInputElement, '150');
    await click(node.querySelector('.jp-sched-idle-save')!);
    expect(status()).toBe('Not saved: Idle below (%) must be a percentage above 0 and at most 100 (got 150) — e.g. 5');
    await click([...node.querySelectorAll('.jp-sched-idle button')].find(b => text(b) === 'Reload')!);
    expect((node.querySelector('#jp-sched-idle-threshold_pct') as HTMLInputElement).value).toBe('5');
    expect(status()).toBe(''); // was: the refusal of 150 stayed, blaming a field that read 5
    // the browser's own check (min=0) stopped this Save with a bubble; the form is novalidate: the server's words
    expect(node.querySelector('form.jp-sched-idle-form')!.hasAttribute('novalidate')).toBe(true);
    await type(node.querySelector('#jp-sched-idle-window_s') as HTMLInputElement, '-5');
    await click(node.querySelector('.jp-sched-idle-save')!);
    expect(status()).toBe('Not saved: Idle window (s) must be >= 0 (got -5) — seconds, e.g. 1800');
    view.dispose();
    model.dispose();
  });
});
