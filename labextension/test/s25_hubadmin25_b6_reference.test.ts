/**
 * hubadmin25 B6: a 5xx answer's hint asks the user to give an admin the answer's reference; the panel's one
 * error line (describeError) prints it, as the CLI and the magics do.
 */
import { describe, expect, it } from 'vitest';

import { SchedClient, describeError } from '../src/client';

const STORE_503 = {
  error: {
    code: 'store_error',
    message: "the scheduler's database failed to answer",
    field: null,
    hint: "retry in a moment; if it persists, give an admin this answer's reference: the server log has the cause",
    reference: '7bccb29d'
  }
};

describe('hubadmin25 B6: the reference of a 5xx answer', () => {
  it('test_hubadmin25_b6_panel_prints_the_reference', async () => {
    const client = new SchedClient({
      request: async () => new Response(JSON.stringify(STORE_503), { status: 503 })
    });
    let caught: unknown = null;
    try {
      await client.request('getMe');
    } catch (err) {
      caught = err;
    }
    expect(describeError(caught)).toBe(
      "the scheduler's database failed to answer — retry in a moment; if it persists, give an admin this " +
        "answer's reference: the server log has the cause (reference 7bccb29d)"
    );
  });
});
