import { afterEach, describe, expect, it } from 'vitest';

import { queueLine, setDisplayZone } from '../src/format';
import { MyWorkView } from '../src/sections';
import { nullTranslator } from '@jupyterlab/translation';
import { FakeSchedServer, makeJob } from './fakeserver';
import { context, mount, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

// the server's Held reason (scheduling.gates.held_reason) with its rendered text (wording.reasons): the command in `unblock` only
const held = (by: string, id: string) => ({
  code: 'Held',
  message: `held by ${by} at 2026-12-05T22:14:15Z`,
  details: { by, at: '2026-12-05T22:14:15Z', admin: false },
  unblock: `release it: jupyter-sched release ${id}`,
  eta: null,
  eta_reason: 'held',
  text: {
    summary: `held by ${by} at Dec 5 22:14 UTC.`,
    eta: 'ETA unknown: held',
    unblock: `Release it: jupyter-sched release ${id}.`,
    line: `held by ${by} at Dec 5 22:14 UTC · ETA unknown: held · release it: jupyter-sched release ${id}`
  }
});

describe('newuser27 n2: the row of my own hold says "held by you" and the release command once', () => {
  const trans = nullTranslator.load('jupyter_sched');

  it('queueLine: held by you, one release command; another reader sees the holder named', () => {
    const before = setDisplayZone('UTC');
    try {
      const job = makeJob({ id: 'j-own', user: 'root', state: 'pending', reason: held('root', 'j-own') });
      const now = new Date('2026-12-05T22:20:00Z');
      const mine = queueLine(job, now, trans, 'root');
      expect(mine).toBe('held by you at 22:14 UTC · ETA unknown: held · release it: jupyter-sched release j-own');
      expect(mine.split('jupyter-sched release').length - 1).toBe(1);
      expect(queueLine(job, now, trans, 'ann')).toContain('held by root at 22:14 UTC');
    } finally {
      setDisplayZone(before);
    }
  });

  it('My work shows it so', async () => {
    const server = new FakeSchedServer();
    server.jobs = [makeJob({ id: 'j-own', name: 'nightly', state: 'pending', reason: held('alice', 'j-own'), held: { by: 'alice', at: '2026-12-05T22:14:15Z', admin: false } })];
    const { model } = await startedModel(server, 'jobs', 'inventory');
    const view = await mount(new MyWorkView(context(model)));
    const row = text(view.node);
    expect(row).toContain('held by you at');
    // beside its Release button the row says what the button does, not the command (newuser31 n7)
    expect(row).toContain('its Release button lets it queue again');
    expect(row).not.toContain('jupyter-sched release j-own');
    model.dispose();
  });
});
