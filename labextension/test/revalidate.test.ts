/**
 * The client sends a GET's last ETag back (`If-None-Match`) and answers a `304 Not Modified`
 * with the body it kept (issue 17: most polls of me, jobs and queue find them unchanged).
 */
import { describe, expect, it } from 'vitest';

import { REVALIDATED_ANSWERS, SchedClient, type Transport } from '../src/client';

/** A server whose answer to every path is `state.body` with ETag `state.etag`, 304 when it matches. */
function server(state: { body: string; etag: string | null }): { transport: Transport; sent: Array<[string, string, string | null]> } {
  const sent: Array<[string, string, string | null]> = [];
  const transport: Transport = {
    request: async (path, init = {}) => {
      const match = new Headers(init.headers).get('If-None-Match');
      sent.push([init.method ?? 'GET', path, match]);
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      if (state.etag) {
        headers.ETag = state.etag;
      }
      if (match && match === state.etag) {
        return new Response(null, { status: 304, headers });
      }
      return new Response(state.body, { status: 200, headers });
    }
  };
  return { transport, sent };
}

describe('GET revalidation', () => {
  it('sends the kept ETag and answers a 304 with the kept body; a changed body is read again', async () => {
    const state = { body: JSON.stringify({ user: 'ivan', pending: 1 }), etag: '"a"' as string | null };
    const { transport, sent } = server(state);
    const client = new SchedClient(transport);
    expect((await client.me()).pending).toBe(1);
    expect((await client.me()).pending).toBe(1); // a 304: the kept body
    state.body = JSON.stringify({ user: 'ivan', pending: 2 });
    state.etag = '"b"';
    expect((await client.me()).pending).toBe(2);
    expect((await client.me()).pending).toBe(2);
    expect(sent.map(s => s[2])).toEqual([null, '"a"', '"a"', '"b"']);
  });

  it('keeps one ETag per path (query included), none for writes, and no more than its bound', async () => {
    const state = { body: '[]', etag: '"x"' as string | null };
    const { transport, sent } = server(state);
    const client = new SchedClient(transport);
    await client.jobs({ limit: 5 });
    await client.jobs({ limit: 6 });
    await client.jobs({ limit: 5 });
    expect(sent.map(s => [s[1], s[2]])).toEqual([
      ['api/sched/jobs?limit=5', null],
      ['api/sched/jobs?limit=6', null],
      ['api/sched/jobs?limit=5', '"x"']
    ]);
    state.body = JSON.stringify({ id: 'j1' });
    await client.request('submitJob', { body: { gpus: 1, command: ['true'] } as never });
    expect(sent[sent.length - 1][2]).toBeNull();
    for (let n = 0; n <= REVALIDATED_ANSWERS; n++) {
      await client.jobs({ limit: 100 + n });
    }
    state.body = '[]';
    await client.jobs({ limit: 5 }); // the oldest kept path was dropped past the bound
    expect(sent[sent.length - 1][2]).toBeNull();
  });

  it('an answer without an ETag is not kept', async () => {
    const state = { body: JSON.stringify({ user: 'ivan' }), etag: null as string | null };
    const { transport, sent } = server(state);
    const client = new SchedClient(transport);
    await client.me();
    await client.me();
    expect(sent.map(s => s[2])).toEqual([null, null]);
  });
});
