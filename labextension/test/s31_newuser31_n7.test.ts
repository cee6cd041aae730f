/**
 * newuser31 n7: My work's line of a held job said "release it: jupyter-sched release j-…" — a command to
 * type in a terminal — beside its own Release button. Where the row offers Release, the line says what the
 * button does; where it does not (the Queue section; an admin's hold the owner may not release), the
 * server's words stand.
 */
import { describe, expect, it } from 'vitest';

import { MyWorkView } from '../src/sections';
import { queueLine } from '../src/format';
import { FakeSchedServer, makeJob } from './fakeserver';
import { context, mount, startedModel } from './ui';

const HELD = {
  code: 'Held', message: 'held by alice at 2026-12-01T10:00:09Z',
  details: { by: 'alice', at: '2026-12-01T10:00:09Z', admin: false, job: 'j-held' },
  unblock: 'release it: jupyter-sched release j-held', eta: null, eta_reason: 'held'
};

describe('newuser31 n7', () => {
  it('test_newuser31_n7_my_work_says_the_release_button_not_a_cli_command', async () => {
    const server = new FakeSchedServer();
    server.jobs = [makeJob({ id: 'j-held', name: 'nightly', state: 'pending', submitted_at: '2026-12-01T10:00:02Z', reason: HELD, held: { by: 'alice', at: '2026-12-01T10:00:09Z', admin: false } })];
    const { model } = await startedModel(server, 'jobs', 'inventory');
    const view = await mount(new MyWorkView(context(model)));
    const said = view.node.textContent ?? '';
    expect(said).toContain('its Release button lets it queue again');
    expect(said).not.toContain('jupyter-sched release');
    expect([...view.node.querySelectorAll('button')].map(b => b.getAttribute('aria-label'))).toContain('Release job nightly');
    model.dispose();
  });

  it('test_newuser31_n7_without_a_release_button_the_servers_words_stand', () => {
    const job = makeJob({ id: 'j-held', state: 'pending', reason: HELD, held: { by: 'alice', at: '2026-12-01T10:00:09Z', admin: false } });
    expect(queueLine(job, new Date('2026-12-01T10:01:00Z'))).toContain('release it: jupyter-sched release j-held');
    expect(queueLine(job, new Date('2026-12-01T10:01:00Z'), undefined, 'alice', true)).toContain('its Release button lets it queue again');
  });

  it('test_newuser31_n7_the_servers_sentence_form_is_replaced_too', () => {
    // what the real server sends in reason.text (newuser31's re-check: capital R and a full stop)
    const sentence = { ...HELD, text: { summary: 'held by alice', eta: 'ETA unknown: held', unblock: 'Release it: jupyter-sched release j-held.' } };
    const job = makeJob({ id: 'j-held', state: 'pending', reason: sentence, held: { by: 'alice', at: '2026-12-01T10:00:09Z', admin: false } });
    const said = queueLine(job, new Date('2026-12-01T10:01:00Z'), undefined, 'alice', true);
    expect(said).toContain('its Release button lets it queue again');
    expect(said).not.toContain('jupyter-sched release');
  });
});
