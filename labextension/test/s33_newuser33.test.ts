/**
 * newuser33 n1: the panel's Release toast said the server's raw ISO time ("released (held by you since
 * 2026-12-06T18:48:06Z)") where the CLI says "18:48 UTC". n2: the Queue section told a held job's owner to type
 * "release it: jupyter-sched release j-…" in a terminal; the panel's control is My work's Release button (the hold
 * toast's "release with: jupyter-sched release j-…" too). One wording, per surface: `releaseWords`.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { changedText, queueLine, setDisplayZone } from '../src/format';
import { QueueView } from '../src/sections';
import { FakeSchedServer, queueRow } from './fakeserver';
import { context, mount, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

const HELD = {
  code: 'Held', message: 'held by alice at 2026-12-06T18:48:06Z',
  details: { by: 'alice', at: '2026-12-06T18:48:06Z', admin: false, job: 'j-held' },
  unblock: 'release it: jupyter-sched release j-held', eta: null, eta_reason: 'held',
  text: { summary: 'held by alice at Dec 6 18:48 UTC.', eta: 'ETA unknown: held', unblock: 'Release it: jupyter-sched release j-held.' }
};

describe('newuser33 n1, n2', () => {
  it('test_newuser33_n1_the_release_toast_says_a_clock_not_an_iso_time', () => {
    const before = setDisplayZone('UTC');
    try {
      const now = new Date('2026-12-06T18:50:00Z');
      expect(changedText(['released (held by you since 2026-12-06T18:48:06Z): it queues again from now, behind work submitted while it was held'], now))
        .toBe('released (held by you since 18:48 UTC): it queues again from now, behind work submitted while it was held');
      // another day's time keeps its day, as every clock of the panel
      expect(changedText(['released (held by you since 2026-12-05T08:01:00+00:00): it queues again'], now)).toContain('since Dec 5 08:01 UTC');
    } finally {
      setDisplayZone(before);
    }
  });

  it('test_newuser33_n2_the_hold_toast_names_my_works_release_button_not_a_cli_command', () => {
    expect(changedText(['held (release with: jupyter-sched release j-1m96ax3vy-yeb2rp)']))
      .toBe('held (its Release button in My work lets it queue again)');
    // an admin's hold: its own words stand
    expect(changedText(["held (an admin's hold: only an admin releases it)"])).toBe("held (an admin's hold: only an admin releases it)");
  });

  it('test_newuser33_n2_the_queue_sections_line_of_my_held_job_points_to_my_work', async () => {
    const server = new FakeSchedServer();
    server.queue = [queueRow({ id: 'j-held', name: 'waiter', user: 'alice', state: 'pending', reason: HELD, held: { by: 'alice', at: '2026-12-06T18:48:06Z', admin: false } }, { position: 1 })];
    const { model } = await startedModel(server, 'queue');
    const view = await mount(new QueueView(context(model)));
    const said = text(view.node.querySelector('.jp-sched-job .jp-sched-reason'));
    expect(said).toContain('its Release button in My work lets it queue again');
    expect(said).not.toContain('jupyter-sched release');
    model.dispose();
    // another user's held job, and no reader: the server's words stand (the Queue has no button of theirs)
    const now = new Date('2026-12-06T18:50:00Z');
    expect(queueLine(server.queue[0], now)).toContain('release it: jupyter-sched release j-held');
    expect(queueLine(server.queue[0], now, undefined, 'alice', 'myWork')).toContain('its Release button in My work lets it queue again');
  });
});
