/**
 * New user 23, N17: a lease its owner released was listed `cancelled … released by root` — the reader's own name
 * for their own release; an admin's release of it read the same way. The panel's My work card now says who
 * released it as its reader reads it, in the words of the CLI's and the magics' lines
 * (jupyter_sched.wording.jobs.lease_end_words; tests/services/test_s24_newuser23_n17_lease_end_words.py):
 * `released by you`, `released by its owner`, `released by an admin (root)`; other ends keep their words.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { leaseEndWords, outcome } from '../src/format';
import { MyWorkView } from '../src/sections';
import { FakeSchedServer, makeJob } from './fakeserver';
import { context, mount, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

const ended = {
  id: 'l-own', name: 'l2', user: 'alice', kind: 'lease' as const, state: 'cancelled' as const, message: 'released by alice',
  submitted_at: '2026-12-05T06:00:00Z', started_at: '2026-12-05T06:00:01Z', finished_at: '2026-12-05T06:05:00Z',
  allocation: { node: 'vm', gpu_uuids: ['GPU-sim-vm-0'], gpu_milli: 1000 }
};

describe('new user 23 N17: an ended lease says who released it', () => {
  it('test_s24_newuser23_n17 leaseEndWords says the CLI\'s words', () => {
    expect(leaseEndWords({ ...ended, mine: true })).toBe('released by you');
    expect(leaseEndWords(ended, 'alice')).toBe('released by you');
    expect(leaseEndWords({ ...ended, mine: false })).toBe('released by its owner');
    expect(leaseEndWords({ ...ended, message: 'released by root' }, 'alice')).toBe('released by an admin (root)');
    expect(leaseEndWords({ ...ended, message: 'released by alice: granted only after its 5s timeout had passed' }, 'alice'))
      .toBe('released by you: granted only after its 5s timeout had passed');
    for (const kept of ['released by the server: its kernel was shut down', 'released by scheduler',
      'reclaimed while idle: kernel idle for 4 min', 'request withdrawn: no GPUs granted within its 5s timeout; nothing was held']) {
      expect(leaseEndWords({ ...ended, message: kept }, 'alice')).toBe(kept);
    }
    expect(outcome({ ...ended, kind: 'training', exit_code: null }, undefined, 'alice')).toBe('released by alice');
  });

  it('test_s24_newuser23_n17 the My work card says released by you / by an admin', async () => {
    const server = new FakeSchedServer();
    server.leases = [makeJob(ended), makeJob({ ...ended, id: 'l-adm', message: 'released by root' })];
    const { model } = await startedModel(server, 'jobs');
    const card = await mount(new MyWorkView(context(model)));
    const rows = Object.fromEntries([...card.node.querySelectorAll('.jp-sched-job')].map(
      r => [r.getAttribute('data-job-id'), text(r.querySelector('.jp-sched-reason'))]));
    expect(rows['l-own']).toBe('released by you'); // failed before: "released by alice"
    expect(rows['l-adm']).toBe('released by an admin (root)');
    model.dispose();
  });
});
