/**
 * newuser25 N13: during a server restart the panel's Inventory section showed the browser's raw
 * "Failed to fetch" (Firefox: "NetworkError when attempting to fetch resource.", Safari: "Load
 * failed"). Now: "the server is not answering (restarting?) — showing what it said at HH:MM:SS UTC;
 * retrying" for the panel's polls, and the first half for a one-off action.
 */
import { describe, expect, it } from 'vitest';

import { SchedClient, ServerNotAnsweringError, describeError } from '../src/client';
import { clockText } from '../src/format';

describe('newuser25 N13: a server that does not answer', () => {
  it('test_newuser25_n13_failed_to_fetch_is_said_as_not_answering_with_the_last_answer_time', async () => {
    let down = false;
    const client = new SchedClient({
      request: async () => {
        if (down) {
          throw new TypeError('Failed to fetch');
        }
        return new Response(JSON.stringify({ user: 'ann' }), { status: 200 });
      }
    });
    await client.request('getMe');
    const answered = new Date();
    down = true;
    let caught: unknown = null;
    try {
      await client.request('getMe');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ServerNotAnsweringError);
    const said = describeError(caught, { retrying: true });
    expect(said).not.toContain('Failed to fetch');
    expect(said).toMatch(/^the server is not answering \(restarting\?\) — showing what it said at \d\d:\d\d:\d\d UTC; retrying$/);
    expect(said).toContain(clockText(answered, new Date(), true).slice(0, 5)); // its hour and minute
    expect(describeError(caught)).toBe('the server is not answering (restarting?)'); // a click: no "retrying"
  });

  it('test_newuser25_n13_every_browsers_words_are_replaced_and_other_errors_kept', () => {
    for (const words of ['Failed to fetch', 'NetworkError when attempting to fetch resource.', 'Load failed']) {
      expect(describeError(new TypeError(words), { retrying: true })).toBe('the server is not answering (restarting?); retrying');
    }
    expect(describeError(new TypeError("Cannot read properties of undefined (reading 'gpus')"))).toBe(
      "Cannot read properties of undefined (reading 'gpus')"
    );
    expect(describeError(new Error('network down'))).toBe('network down');
  });
});
