import { afterEach, describe, expect, it } from 'vitest';

import { SchedClient } from '../src/client';
import { LogViewer, notStartedText } from '../src/logviewer';
import { FakeSchedServer, json, makeJob, settle } from './fakeserver';

afterEach(() => {
  document.body.replaceChildren();
});

// the server's Held reason with its rendered text (wording.reasons), as GET jobs/{id} answers it
const held = {
  code: 'Held',
  message: 'held by alice at 2026-12-07T08:00:00Z',
  details: { by: 'alice', at: '2026-12-07T08:00:00Z', admin: false },
  unblock: 'release it: jupyter-sched release j-wide',
  eta: null,
  eta_reason: 'held',
  text: {
    summary: 'held by alice at Dec 7 08:00 UTC.',
    eta: 'ETA unknown: held',
    unblock: 'Release it: jupyter-sched release j-wide.',
    line: 'held by alice at Dec 7 08:00 UTC · ETA unknown: held · release it: jupyter-sched release j-wide'
  }
};

const status = (viewer: LogViewer) => viewer.node.querySelector('[role="status"]')?.textContent;

describe('newuser37 N2: the log view of a job that has not started says its state and why, not "Connecting…"', () => {
  it('test_newuser37_n2_notStartedText: state, the renderer\'s reason and its fix, and that output follows once it starts', () => {
    const job = makeJob({ id: 'j-wide', state: 'pending', reason: held as never });
    expect(notStartedText(job)).toBe(
      'Pending: no output yet — held by alice at Dec 7 08:00 UTC. Release it: jupyter-sched release j-wide. ' +
        'Its output follows here once it starts.'
    );
    expect(notStartedText(makeJob({ state: 'admitted' }))).toBe('Starting: no output yet. Its output follows here once it starts.');
    expect(notStartedText(makeJob({ state: 'running' }))).toBeNull();
    expect(notStartedText(makeJob({ state: 'cancelled' }))).toBeNull();
  });

  it('test_newuser37_n2_held_then_started_then_ended: waits said while pending, follows once running, says the end', async () => {
    const server = new FakeSchedServer();
    let job = makeJob({ id: 'j-wide', name: 'wide-e', state: 'pending', reason: held as never });
    // each follow of the pending job answers empty (the server's 25 s ceiling) with its state; then it starts
    const answers = [
      { text: '', finished: false, state: 'pending' },
      { text: '', finished: false, state: 'pending' },
      { text: '', finished: false, state: 'running' },
      { text: 'step 1\n', finished: false, state: 'running' },
      { text: '', finished: true, state: 'succeeded' }
    ];
    const said: (string | null | undefined)[] = [];
    let offset = 0;
    let shown: LogViewer | null = null; // the first request goes out while the viewer is being made
    server.routes.set('GET jobs/j-wide/logs', () => {
      said.push(shown ? status(shown) : 'made');
      const answer = answers.shift()!;
      if (answer.state === 'running') {
        job = makeJob({ ...job, state: 'running', reason: null });
      } else if (answer.state === 'succeeded') {
        job = makeJob({ ...job, state: 'succeeded', reason: null });
      }
      const chunk = { ...answer, offset, next_offset: offset + answer.text.length };
      offset += answer.text.length;
      return json(200, chunk);
    });
    server.routes.set('GET jobs/j-wide', () => json(200, job));
    const viewer = new LogViewer(new SchedClient(server.transport), 'j-wide', undefined, job);
    shown = viewer;
    const waiting = 'Pending: no output yet — held by alice at Dec 7 08:00 UTC. Release it: jupyter-sched release j-wide. ' +
      'Its output follows here once it starts.';
    expect(status(viewer)).toBe(waiting); // at once, from the job the panel has
    for (let i = 0; i < 30 && viewer.node.dataset.finished !== 'true'; i++) {
      await settle();
    }
    // before: "Connecting…", then "Following live output…" over an empty page for ever
    expect(said[0]).toBe('made');
    expect(said[1]).toBe(waiting);
    expect(said[2]).toBe(waiting);
    expect(said[3]).toBe('Following live output…');
    expect(viewer.text).toBe('step 1\n');
    expect(status(viewer)).toBe('Succeeded — end of output');
    viewer.dispose();
    await viewer.done;
  });

  it('test_newuser37_n2_cancelled_while_held: the end says it ended with no output', async () => {
    const server = new FakeSchedServer();
    let job = makeJob({ id: 'j-c', name: 'held-c', state: 'pending', reason: held as never });
    const answers = [
      { text: '', finished: false, state: 'pending' },
      { text: '', finished: true, state: 'cancelled' }
    ];
    server.routes.set('GET jobs/j-c/logs', () => {
      const answer = answers.shift()!;
      if (answer.finished) {
        job = makeJob({ ...job, state: 'cancelled', reason: null });
      }
      return json(200, { ...answer, offset: 0, next_offset: 0 });
    });
    server.routes.set('GET jobs/j-c', () => json(200, job));
    const viewer = new LogViewer(new SchedClient(server.transport), 'j-c', undefined, null);
    for (let i = 0; i < 20 && viewer.node.dataset.finished !== 'true'; i++) {
      await settle();
    }
    expect(status(viewer)).toBe('Cancelled — no output');
    viewer.dispose();
    await viewer.done;
  });
});
