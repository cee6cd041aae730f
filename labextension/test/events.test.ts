import { describe, expect, it, vi } from 'vitest';

import { backoffDelay, EventStream, SseParser, Throttle } from '../src/events';

describe('SseParser', () => {
  it('reads the server framing: id, event and JSON data', () => {
    const p = new SseParser();
    const events = p.feed(': jupyter_sched event stream\nretry: 3000\n\nid: 1\nevent: job\ndata: {"id": "j1", "state": "running"}\n\n');
    expect(events).toEqual([{ type: 'job', data: { id: 'j1', state: 'running' } }]);
  });

  it('joins events split across chunks, including inside a line', () => {
    const p = new SseParser();
    expect(p.feed('event: telemetry\ndata: {"uuid": "GPU-')).toEqual([]);
    expect(p.feed('1", "utilization": 40}\n')).toEqual([]);
    expect(p.feed('\n')).toEqual([{ type: 'telemetry', data: { uuid: 'GPU-1', utilization: 40 } }]);
  });

  it('accepts CRLF line ends and ignores keep-alive comments', () => {
    const p = new SseParser();
    expect(p.feed(': keepalive\r\n\r\nevent: inventory\r\ndata: {}\r\n\r\n')).toEqual([{ type: 'inventory', data: {} }]);
  });

  it('takes a {type, data} body as it is when no event field names the type', () => {
    const p = new SseParser();
    expect(p.feed('data: {"type": "idle_warning", "data": {"lease_id": "l1"}}\n\n')).toEqual([{ type: 'idle_warning', data: { lease_id: 'l1' } }]);
  });

  it('joins multi-line data with newlines', () => {
    const p = new SseParser();
    expect(p.feed('event: job\ndata: {"id":\ndata: "j2"}\n\n')).toEqual([{ type: 'job', data: { id: 'j2' } }]);
  });

  it('keeps non-JSON data as text instead of throwing', () => {
    const p = new SseParser();
    expect(p.feed('event: note\ndata: hello\n\n')).toEqual([{ type: 'note', data: { text: 'hello' } }]);
  });
});

describe('backoffDelay', () => {
  it.each([
    [0, 1000],
    [1, 2000],
    [3, 8000],
    [10, 30000]
  ])('attempt %i waits about %i ms (capped at 30 s)', (attempt, base) => {
    expect(backoffDelay(attempt, 30000, () => 0.5)).toBe(base);
    expect(backoffDelay(attempt, 30000, () => 0)).toBe(Math.round(base * 0.8));
    expect(backoffDelay(attempt, 30000, () => 1)).toBe(Math.round(base * 1.2));
  });
});

/** A manual clock and timer queue: no real time passes in these tests. */
function fakeTimers() {
  let now = 0;
  const timers: { at: number; fn: () => void; id: number }[] = [];
  let next = 1;
  return {
    clock: () => now,
    schedule: (fn: () => void, ms: number) => {
      const id = next++;
      timers.push({ at: now + ms, fn, id });
      return id;
    },
    cancel: (id: unknown) => {
      const i = timers.findIndex(t => t.id === id);
      if (i >= 0) {
        timers.splice(i, 1);
      }
    },
    async advance(ms: number) {
      const until = now + ms;
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        const t = timers[0];
        if (!t || t.at > until) {
          break;
        }
        timers.shift();
        now = t.at;
        t.fn();
        await Promise.resolve();
      }
      now = until;
    },
    pending: () => timers.length
  };
}

describe('Throttle: at most one request per view per refresh interval', () => {
  it('the first request runs at once; a burst inside the window runs once at its end', async () => {
    const t = fakeTimers();
    let runs = 0;
    const throttle = new Throttle(() => void runs++, 10000, t.clock, t.schedule, t.cancel);
    throttle.request();
    await Promise.resolve();
    expect(runs).toBe(1);
    for (let i = 0; i < 50; i++) {
      throttle.request();
    }
    await t.advance(9999);
    expect(runs).toBe(1);
    await t.advance(1);
    expect(runs).toBe(2);
    await t.advance(60000);
    expect(runs).toBe(2);
  });

  it('over a minute of constant requests, a 10 s interval allows at most 7 runs', async () => {
    const t = fakeTimers();
    let runs = 0;
    const throttle = new Throttle(() => void runs++, 10000, t.clock, t.schedule, t.cancel);
    for (let ms = 0; ms <= 60000; ms += 100) {
      throttle.request();
      await t.advance(100);
    }
    expect(runs).toBeLessThanOrEqual(7);
    expect(runs).toBeGreaterThanOrEqual(6);
  });

  it('dispose cancels a deferred run', async () => {
    const t = fakeTimers();
    let runs = 0;
    const throttle = new Throttle(() => void runs++, 1000, t.clock, t.schedule, t.cancel);
    throttle.request();
    throttle.request();
    throttle.dispose();
    await t.advance(5000);
    expect(runs).toBe(1);
    expect(t.pending()).toBe(0);
  });
});

describe('EventStream', () => {
  function streamResponse(text: string): Response {
    return new Response(text, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
  }

  it('delivers events and reconnects with growing backoff while connections fail or close at once', async () => {
    const t = fakeTimers();
    const seen: string[] = [];
    const statuses: string[] = [];
    const paths: string[] = [];
    let connects = 0;
    const stream = new EventStream({
      transport: {
        request: async (path, init) => {
          paths.push(`${init?.method} ${path} ${JSON.stringify(init?.headers)}`);
          connects++;
          if (connects === 2) {
            return new Response('', { status: 503 });
          }
          return streamResponse(`event: job\ndata: {"id": "j${connects}"}\n\n`);
        }
      },
      onEvent: e => seen.push(`${e.type}:${(e.data as { id: string }).id}`),
      onStatus: s => statuses.push(s),
      setTimeout: t.schedule,
      now: t.clock
    });
    stream.start();
    await vi.waitFor(() => expect(statuses).toEqual(['connecting', 'open', 'down']), { timeout: 10000 });
    expect(seen).toEqual(['job:j1']);
    expect(paths[0]).toBe('GET api/sched/events {"Accept":"text/event-stream"}');
    // first retry about 1 s later
    await t.advance(700);
    expect(connects).toBe(1);
    await t.advance(600);
    await vi.waitFor(() => expect(connects).toBe(2), { timeout: 10000 });
    await vi.waitFor(() => expect(statuses.length).toBe(5), { timeout: 10000 });
    // the failed (503) try doubles the wait: 1.6-2.4 s after it failed (somewhere in 0.8-1.3 s)
    await t.advance(1000);
    expect(connects).toBe(2);
    await t.advance(1500);
    await vi.waitFor(() => expect(seen).toEqual(['job:j1', 'job:j3']), { timeout: 10000 });
    expect(connects).toBe(3);
    // the third closed at once too: no reset, 3.2-4.8 s after it (which was at 2.4-3.8 s)
    await vi.waitFor(() => expect(statuses.length).toBe(8), { timeout: 10000 });
    await t.advance(1500);
    expect(connects).toBe(3);
    await t.advance(3500);
    await vi.waitFor(() => expect(connects).toBe(4), { timeout: 10000 });
    stream.dispose();
  });

  it('a reconnect sends the last event id, so the server resumes after it', async () => {
    const t = fakeTimers();
    const asked: string[] = [];
    const statuses: string[] = [];
    let connects = 0;
    const stream = new EventStream({
      transport: {
        request: async (_path, init) => {
          asked.push(JSON.stringify(init?.headers));
          connects++;
          return streamResponse(connects === 1 ? 'id: ab12-7\nevent: job\ndata: {"id": "j1"}\n\n: keepalive\n\n' : '');
        }
      },
      onEvent: () => undefined,
      onStatus: s => statuses.push(s),
      setTimeout: t.schedule,
      now: t.clock
    });
    stream.start();
    await vi.waitFor(() => expect(statuses).toEqual(['connecting', 'open', 'down']), { timeout: 10000 });
    await t.advance(1300);
    await vi.waitFor(() => expect(connects).toBe(2), { timeout: 10000 });
    expect(asked[0]).toBe('{"Accept":"text/event-stream"}');
    expect(asked[1]).toBe('{"Accept":"text/event-stream","Last-Event-ID":"ab12-7"}');
    stream.dispose();
  });

  it('a connection that stayed open resets the backoff to about 1 s', async () => {
    const t = fakeTimers();
    let connects = 0;
    let close: () => void = () => undefined;
    const statuses: string[] = [];
    const stream = new EventStream({
      transport: {
        request: async () => {
          connects++;
          const body = new ReadableStream<Uint8Array>({
            start(controller) {
              close = () => controller.close();
            }
          });
          return new Response(body, { status: 200 });
        }
      },
      onEvent: () => undefined,
      onStatus: s => statuses.push(s),
      setTimeout: t.schedule,
      now: t.clock
    });
    stream.start();
    await vi.waitFor(() => expect(statuses).toEqual(['connecting', 'open']), { timeout: 10000 });
    await t.advance(60000); // open for a minute: well past stableMs (10 s)
    close();
    await vi.waitFor(() => expect(statuses).toEqual(['connecting', 'open', 'down']), { timeout: 10000 });
    await t.advance(1300);
    await vi.waitFor(() => expect(connects).toBe(2), { timeout: 10000 });
    stream.dispose();
  });
});
