/**
 * newuser33 N3: with the hub's central service hung (SIGSTOP: alive, not answering), the panel kept "● LIVE" and
 * two-minute-old ETAs, its alert said "attempt 1, next in 1 s" for 90 s, and Submit said "Submitting…" for 100 s with
 * no outcome (the job went in later, unknown to the user). Now the header says it as in the embedded case, the
 * reconnect line counts for real, and Submit re-sends with one idempotency key, then says its outcome is unknown.
 */
import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';

import { SchedClient, type Transport } from '../src/client';
import { EventStream } from '../src/events';
import { SubmitView } from '../src/sections/submit';
import { newSubmitKey, SUBMIT_TIMINGS, submitKeyed, SubmitOutcomeUnknown } from '../src/submitting';
import { type IReconnecting, reconnectingText } from '../src/types';
import { FakeSchedServer, json, makeJob, settle } from './fakeserver';
import { context, flush, mount, sidebarOn, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

const UNREACHABLE = {
  error: {
    code: 'hub_service_unreachable',
    message: 'the scheduler service does not answer: reconnecting to the central service (attempt 1, next in 1 s): timed out',
    field: null,
    hint: 'requests work again once it answers; if it keeps failing, tell your hub admin (your server\'s log has the details)',
    details: { reconnecting: { target: 'the central service', attempt: 1, next_in_s: 1, error: 'timed out' } }
  }
};

function central(attempt: number, nextInS: number): IReconnecting {
  return {
    target: 'the central service',
    attempt,
    next_in_s: nextInS,
    error: 'timed out',
    message: `reconnecting to the central service (attempt ${attempt}, next in ${nextInS} s): timed out`
  };
}

describe('newuser33 N3: a hung hub service', () => {
  it('test_newuser33_n3_the_header_is_not_live_while_the_central_service_reconnects_and_live_again_after', async () => {
    const server = new FakeSchedServer();
    const { model, sidebar } = await sidebarOn(server);
    const badge = () => sidebar.node.querySelector('.jp-sched-stream');
    expect(text(badge())).toBe('live');
    server.stream.push('connection', { central: central(1, 4) });
    await settle();
    await flush();
    // before: "live" over a stream that carried only the forwarder's reconnect line
    expect(text(badge())).toBe('reconnecting');
    expect(badge()?.getAttribute('data-status')).toBe('down');
    expect(model.live).toBe(false);
    expect(text(sidebar.node.querySelector('.jp-sched-server-down'))).toMatch(
      /^The scheduler service is not answering — showing what it said at \d\d:\d\d:\d\d UTC; retrying$/
    );
    expect(text(sidebar.node.querySelector('.jp-sched-reconnecting li'))).toBe('Reconnecting to the central service (attempt 1, next in 4 s): timed out');
    server.stream.push('connection', { central: central(2, 2) });
    await settle();
    await flush();
    expect(text(sidebar.node.querySelector('.jp-sched-reconnecting li'))).toBe('Reconnecting to the central service (attempt 2, next in 2 s): timed out');
    server.stream.push('connection', { central: null });
    await settle();
    await flush();
    expect(text(badge())).toBe('live');
    expect(text(sidebar.node.querySelector('.jp-sched-server-down'))).toBe('');
    expect(sidebar.node.querySelectorAll('.jp-sched-reconnecting li')).toHaveLength(0);
    model.dispose();
  });

  it('test_newuser33_n3_the_reconnect_line_counts_its_wait_down_from_when_it_came', () => {
    const state = { ...central(3, 4), receivedAt: 1_000_000 };
    expect(reconnectingText(state, 1_000_000)).toBe('reconnecting to the central service (attempt 3, next in 4 s): timed out');
    expect(reconnectingText(state, 1_002_500)).toBe('reconnecting to the central service (attempt 3, next in 2 s): timed out');
    // before: "next in 4 s" for as long as the next attempt's state took (a 5-s probe of a hung service, and more)
    expect(reconnectingText(state, 1_009_000)).toBe('reconnecting to the central service (attempt 3, trying again now): timed out');
  });

  it('test_newuser33_n3_a_forwarder_502_is_said_once_under_the_header_with_the_last_answer_time', async () => {
    const server = new FakeSchedServer();
    const { model, sidebar } = await sidebarOn(server);
    server.routes.set('GET queue', () => json(502, UNREACHABLE));
    model.refresh('queue', { force: true });
    await settle();
    await flush();
    // before: a red box in the section with the forwarder's "attempt 1, next in 1 s" of that moment, and LIVE
    expect(model.error('queue')).toBeNull();
    expect(model.serverDown).toMatch(/^the scheduler service is not answering — showing what it said at \d\d:\d\d:\d\d UTC; retrying$/);
    expect(text(sidebar.node.querySelector('.jp-sched-stream'))).toBe('reconnecting');
    server.routes.delete('GET queue');
    model.refresh('queue', { force: true });
    await settle();
    await flush();
    expect(model.serverDown).toBeNull();
    expect(text(sidebar.node.querySelector('.jp-sched-stream'))).toBe('live');
    model.dispose();
  });

  it('test_newuser33_n3_an_event_stream_silent_past_its_heartbeat_is_dropped_and_connected_again', async () => {
    const server = new FakeSchedServer();
    const statuses: string[] = [];
    const stream = new EventStream({ transport: server.transport, onEvent: () => undefined, onStatus: s => statuses.push(s), silenceMs: 50, setTimeout: () => undefined });
    stream.start();
    await settle();
    expect(statuses).toEqual(['connecting', 'open']);
    server.stream.raw(': keepalive\n\n');
    await new Promise(resolve => setTimeout(resolve, 30));
    await settle();
    expect(statuses).toEqual(['connecting', 'open']); // a keep-alive is heard
    await new Promise(resolve => setTimeout(resolve, 120));
    await settle();
    expect(statuses).toEqual(['connecting', 'open', 'down']);
    stream.dispose();
  });
});

describe('newuser33 N3: Submit with no answer', () => {
  /** The double, with `POST jobs` answered by `answers` in turn (null: never answered). */
  function submitting(answers: (Response | null)[]): { client: SchedClient; keys: (string | null)[] } {
    const server = new FakeSchedServer();
    const keys: (string | null)[] = [];
    const transport: Transport = {
      request: (path: string, init?: RequestInit) => {
        if (init?.method === 'POST' && path.startsWith('api/sched/jobs')) {
          keys.push(new URLSearchParams(path.split('?')[1] ?? '').get('idempotency_key'));
          const answer = answers.shift() ?? null;
          return answer ? Promise.resolve(answer) : new Promise<Response>(() => undefined);
        }
        return server.transport.request(path, init);
      }
    };
    return { client: new SchedClient(transport), keys };
  }

  it('test_newuser33_n3_submit_resends_with_one_key_and_says_so', async () => {
    const job = makeJob({ id: 'j-1', name: 'b-during' });
    const { client, keys } = submitting([null, json(502, UNREACHABLE), json(201, job)]);
    const retries: number[] = [];
    const key = newSubmitKey();
    const made = await submitKeyed(client, { gpus: 1, command: ['true'] }, key, {
      attemptMs: 30,
      giveUpMs: 60000,
      sleep: async () => undefined,
      onRetry: attempt => retries.push(attempt)
    });
    expect(made.id).toBe('j-1');
    expect(keys).toEqual([key, key, key]); // every send carries the one key: the server makes one job
    expect(key).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
    expect(retries).toEqual([2, 3]);
  });

  it('test_newuser33_n3_submit_gives_up_with_its_outcome_unknown_and_a_refusal_is_not_resent', async () => {
    const { client, keys } = submitting([]);
    const key = newSubmitKey();
    let clock = 0;
    const outcome = submitKeyed(client, { gpus: 1, command: ['true'] }, key, {
      attemptMs: 20,
      giveUpMs: 3000,
      now: () => clock,
      sleep: async ms => {
        clock += ms;
      }
    });
    // before: "Submitting…" for as long as the service was stopped, then nothing
    await expect(outcome).rejects.toBeInstanceOf(SubmitOutcomeUnknown);
    expect(keys.length).toBeGreaterThanOrEqual(2);
    expect(new Set(keys)).toEqual(new Set([key]));

    const refused = submitting([json(400, { error: { code: 'invalid', message: 'gpus must be >= 0', field: 'gpus', hint: null } })]);
    await expect(submitKeyed(refused.client, { gpus: -1, command: ['true'] }, newSubmitKey())).rejects.toThrow('gpus must be >= 0');
    expect(refused.keys).toHaveLength(1);
  });
});

describe('newuser33 N3: the Submit form', () => {
  it('test_newuser33_n3_submit_says_its_outcome_is_unknown_and_a_second_press_sends_the_same_key', async () => {
    const saved = { ...SUBMIT_TIMINGS };
    Object.assign(SUBMIT_TIMINGS, { attemptMs: 20, giveUpMs: 120, pauseMs: 1 });
    try {
      const server = new FakeSchedServer();
      const keys: string[] = [];
      let answering = false;
      server.routes.set('POST jobs', (_body, query) => {
        keys.push(query.get('idempotency_key') ?? '');
        // the hung service: no answer at all; then it answers with the job its key made
        return answering ? json(200, makeJob({ id: 'j-during', name: 'b-during' })) : (new Promise<Response>(() => undefined) as unknown as Response);
      });
      server.routes.set('POST dryrun', () => json(200, { fits: true, never: false, allocation: null, reason: null, eta: null, would_preempt: [], job: makeJob() }));
      const { model } = await startedModel(server);
      const view = await mount(new SubmitView(context(model), '', () => undefined));
      const form = view.node;
      const input = form.querySelector('.jp-sched-submit-path') as HTMLInputElement;
      await act(async () => {
        const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!;
        setter.call(input, 'train.py');
        input.dispatchEvent(new Event('input', { bubbles: true }));
      });
      const press = async () => {
        await act(async () => {
          form.querySelector('form')!.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
        });
      };
      const said = () => text(form.querySelector('[role="status"]'));
      await press();
      expect((form.querySelector('.jp-sched-submit-button') as HTMLButtonElement).disabled).toBe(true); // one in flight at a time
      await act(async () => {
        await new Promise(resolve => setTimeout(resolve, 400));
      });
      await flush();
      // before: "Submitting…" with no end
      expect(said()).toMatch(/^No answer from the scheduler in \d+ s: this job may or may not have been submitted\. Check My work before submitting again/);
      expect(keys.length).toBeGreaterThanOrEqual(2);
      expect(new Set(keys).size).toBe(1);
      answering = true;
      await press();
      await act(async () => {
        await new Promise(resolve => setTimeout(resolve, 50));
      });
      await flush();
      expect(said()).toMatch(/^Submitted b-during \(j-during\)/);
      expect(new Set(keys).size).toBe(1); // the second press sent the first one's key: one job at most
      await press();
      await act(async () => {
        await new Promise(resolve => setTimeout(resolve, 50));
      });
      expect(new Set(keys).size).toBe(2); // after an answer, a new Submit is a new job (a new key)
      model.dispose();
    } finally {
      Object.assign(SUBMIT_TIMINGS, saved);
    }
  });
});
