/**
 * newuser41 n2: a job log's own `[jupyter_sched]` lines kept UTC (`preempted at 20:24:21 UTC by …`) while everything
 * else was said in the reader's zone. The panel's log viewer now says the clocks of the scheduler's lines in the
 * browser's zone, as `jupyter-sched logs` and `%schedule logs` do (tests/web/test_s39_newuser38_n30_one_zone.py); the
 * job's own lines, and the text the viewer keeps (its byte offsets, the downloaded log), stay as written. The server
 * is the tests' FakeSchedServer (the real wire format of `GET jobs/{id}/logs`); the browser's zone is the process's TZ.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { SchedClient } from '../src/client';
import { logLineClocks, setDisplayZone, setZoneLabels } from '../src/format';
import { LogViewer } from '../src/logviewer';
import { FakeSchedServer, json, makeJob, settle } from './fakeserver';

const LA_LABELS = [{ offset_minutes: -480, label: 'PST' }, { offset_minutes: -420, label: 'PDT' }];
const LOG = 'epoch 1 done at 20:24:21 UTC\n' +
  '[jupyter_sched] preempted at 20:24:21 UTC by higher-priority normal job j-1 (it waits in the queue again)\n' +
  '[jupyter_sched] parameters injected: {"since": "2026-12-07T20:24:21Z"}\n';
const tz = process.env.TZ;

beforeAll(() => {
  process.env.TZ = 'America/Los_Angeles';
});

afterAll(() => {
  process.env.TZ = tz;
});

afterEach(() => {
  setDisplayZone('UTC');
  document.body.replaceChildren();
});

describe('newuser41 n2: the scheduler\'s log lines in the browser\'s zone', () => {
  it('test_newuser41_n2_log_viewer_says_the_schedulers_clocks_in_the_browsers_zone', async () => {
    setDisplayZone('America/Los_Angeles');
    setZoneLabels('America/Los_Angeles', LA_LABELS);
    const now = new Date('2026-12-07T21:00:00Z');
    expect(logLineClocks('[jupyter_sched] preempted at 20:24:21 UTC by x', now)).toBe('[jupyter_sched] preempted at 12:24:21 PST by x');
    expect(logLineClocks('epoch 1 done at 20:24:21 UTC', now)).toBe('epoch 1 done at 20:24:21 UTC');
    const server = new FakeSchedServer();
    let sent = false;
    server.routes.set('GET jobs/j9/logs', () => {
      const text = sent ? '' : LOG;
      sent = true;
      return json(200, { text, offset: 0, next_offset: LOG.length, finished: true });
    });
    server.routes.set('GET jobs/j9', () => json(200, makeJob({ id: 'j9', name: 'victim', state: 'succeeded' })));
    const viewer = new LogViewer(new SchedClient(server.transport), 'j9', undefined, makeJob({ id: 'j9', name: 'victim', state: 'running' }));
    for (let i = 0; i < 20 && viewer.node.dataset.finished !== 'true'; i++) {
      await settle();
    }
    const lines = [...viewer.node.querySelectorAll('.jp-sched-log-line')].map(n => n.textContent ?? '');
    expect(lines[0]).toBe('epoch 1 done at 20:24:21 UTC'); // the job's own words
    expect(lines[1]).toMatch(/^\[jupyter_sched\] preempted at (\w+ \d+ )?12:24:21 PST by higher-priority/); // was 20:24:21 UTC
    expect(lines[2]).toBe('[jupyter_sched] parameters injected: {"since": "2026-12-07T20:24:21Z"}'); // data, as written
    expect(viewer.text).toBe(LOG); // what the viewer keeps (and downloads) is the log as written
    viewer.dispose();
    await viewer.done;
  });
});
