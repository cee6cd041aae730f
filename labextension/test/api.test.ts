import { describe, expect, it } from 'vitest';

import {
  describeError,
  ENABLE_FIX,
  isAdmin,
  listOf,
  query,
  resubmitBody,
  SchedApiError,
  SchedClient,
  ServerExtensionMissingError,
  supports
} from '../src/api';
import { json, makeJob, makeResources, recordingTransport } from './builders';

describe('SchedClient routes', () => {
  const cases: { name: string; call: (c: SchedClient) => Promise<unknown>; method: string; path: string; body?: unknown }[] = [
    { name: 'inventory is GET api/sched/inventory', call: c => c.inventory(), method: 'GET', path: 'api/sched/inventory' },
    { name: 'my jobs is GET jobs without filters', call: c => c.jobs(), method: 'GET', path: 'api/sched/jobs' },
    { name: 'job filters become a query string', call: c => c.jobs({ state: 'running', kind: 'training' }), method: 'GET', path: 'api/sched/jobs?state=running&kind=training' },
    { name: 'job ids are URL-encoded', call: c => c.job('a/b'), method: 'GET', path: 'api/sched/jobs/a%2Fb' },
    { name: 'cancel is DELETE jobs/{id}', call: c => c.cancel('j1'), method: 'DELETE', path: 'api/sched/jobs/j1' },
    { name: 'submit POSTs the body to jobs', call: c => c.submit({ gpus: 2, script: 't.py' }), method: 'POST', path: 'api/sched/jobs', body: { gpus: 2, script: 't.py' } },
    { name: 'dry run POSTs to dryrun', call: c => c.dryrun({ gpus: 1, script: 't.py' }), method: 'POST', path: 'api/sched/dryrun', body: { gpus: 1, script: 't.py' } },
    { name: 'logs carry offset, limit and follow', call: c => c.logs('j1', 42, { follow: true }), method: 'GET', path: 'api/sched/jobs/j1/logs?offset=42&limit=65536&follow=true' },
    { name: 'keepalive POSTs to the lease', call: c => c.keepalive('l1'), method: 'POST', path: 'api/sched/leases/l1/keepalive', body: {} },
    { name: 'release is DELETE leases/{id}', call: c => c.releaseLease('l1'), method: 'DELETE', path: 'api/sched/leases/l1' },
    { name: 'quotas are PUT whole', call: c => c.setQuotas({ quotas: [] }), method: 'PUT', path: 'api/sched/quotas', body: { quotas: [] } },
    { name: 'usage for everyone passes all=true', call: c => c.usage({ all: true }), method: 'GET', path: 'api/sched/usage?all=true' },
    { name: 'audit passes a limit', call: c => c.audit({ limit: 500 }), method: 'GET', path: 'api/sched/audit?limit=500' }
  ];
  it.each(cases)('$name', async ({ call, method, path, body }) => {
    const { calls, transport } = recordingTransport(() => json(200, []));
    await call(new SchedClient(transport));
    expect(calls).toEqual([{ path, method, body }]);
  });
});

describe('SchedClient answers', () => {
  it('returns the parsed JSON of a 2xx answer', async () => {
    const job = makeJob({ id: 'j9' });
    const { transport } = recordingTransport(() => json(201, job));
    await expect(new SchedClient(transport).submit({ gpus: 1, script: 'x.py' })).resolves.toEqual(job);
  });

  it('lists come back whether bare or wrapped', async () => {
    const rows = [makeJob({ id: 'a' }), makeJob({ id: 'b' })];
    for (const payload of [rows, { jobs: rows }, { queue: rows }, { items: rows }]) {
      const { transport } = recordingTransport(() => json(200, payload));
      expect((await new SchedClient(transport).queue()).map(j => j.id)).toEqual(['a', 'b']);
    }
  });

  it('an error body becomes SchedApiError with code, field and hint', async () => {
    const body = { error: { code: 'validation_error', message: 'gpus must be >= 0 (got -1)', field: 'gpus', hint: 'use 0 for CPU-only work' } };
    const { transport } = recordingTransport(() => json(400, body));
    const err = await new SchedClient(transport).submit({ gpus: -1 }).catch(e => e);
    expect(err).toBeInstanceOf(SchedApiError);
    expect(err.status).toBe(400);
    expect(err.code).toBe('validation_error');
    expect(err.field).toBe('gpus');
    expect(describeError(err)).toBe('gpus must be >= 0 (got -1) [gpus] — use 0 for CPU-only work');
  });

  it('a 422 keeps the reason details for the panel', async () => {
    const body = { error: { code: 'quota_exceeded', message: 'team-ml may use at most 2 GPUs; the job needs 4', field: 'gpus', hint: null, details: { reason: { code: 'ExceedsQuota' } } } };
    const { transport } = recordingTransport(() => json(422, body));
    const err = (await new SchedClient(transport).submit({ gpus: 4 }).catch(e => e)) as SchedApiError;
    expect(err.status).toBe(422);
    expect(err.body.details).toEqual({ reason: { code: 'ExceedsQuota' } });
  });

  it("a 404 that is not ours means the server extension is not enabled, with the fix", async () => {
    const { transport } = recordingTransport(() => new Response('<html>404 Not Found</html>', { status: 404 }));
    const err = await new SchedClient(transport).config().catch(e => e);
    expect(err).toBeInstanceOf(ServerExtensionMissingError);
    expect(err.message).toContain(ENABLE_FIX);
  });

  it('a 404 with our error body is a plain not-found, not a missing extension', async () => {
    const { transport } = recordingTransport(() => json(404, { error: { code: 'not_found', message: 'no job j1', field: 'id', hint: null } }));
    const err = await new SchedClient(transport).job('j1').catch(e => e);
    expect(err).toBeInstanceOf(SchedApiError);
    expect(err.code).toBe('not_found');
  });

  it('a 500 without a JSON body still says what failed', async () => {
    const { transport } = recordingTransport(() => new Response('boom', { status: 502, statusText: 'Bad Gateway' }));
    const err = await new SchedClient(transport).inventory().catch(e => e);
    expect(err).toBeInstanceOf(SchedApiError);
    expect(err.message).toBe('GET api/sched/inventory failed: 502 Bad Gateway');
  });
});

describe('helpers', () => {
  it('query skips empty values and encodes the rest', () => {
    expect(query({ a: 'x y', b: undefined, c: null, d: '', e: 0 })).toBe('?a=x%20y&e=0');
    expect(query({})).toBe('');
  });

  it('listOf finds the list under known keys, else empty', () => {
    expect(listOf([1], 'x')).toEqual([1]);
    expect(listOf({ records: [2] }, 'records')).toEqual([2]);
    expect(listOf({ nothing: 1 })).toEqual([]);
    expect(listOf(null)).toEqual([]);
  });

  it.each([
    [{ user: 'a', is_admin: true }, true],
    [{ user: 'a', admin: true }, true],
    [{ user: 'a', is_admin: false }, false],
    [null, false]
  ])('isAdmin(%j) is %s', (me, want) => {
    expect(isAdmin(me)).toBe(want);
  });

  it.each([
    ['a feature the config does not mention is on', { features: {} }, 'dryrun', true],
    ['features: {x: false} hides x', { features: { telemetry: false } }, 'telemetry', false],
    ['features: {x: true} shows x', { features: { audit: true } }, 'audit', true],
    ['unsupported: [x] hides x', { unsupported: ['quotas'] }, 'quotas', false],
    ['a top-level false hides x', { leases: false }, 'leases', false],
    ['no config at all shows everything', null, 'queue', true]
  ])('%s', (_name, config, feature, want) => {
    expect(supports(config as never, feature)).toBe(want);
  });

  it('resubmit keeps the spec: script, args, GPUs, model, priority, team and limit', () => {
    const job = makeJob({
      script: 'train.py',
      command: ['--epochs', '3'],
      priority: 'low',
      time_limit_s: 3600,
      resources: makeResources({ gpus: 2, gpu_models: ['A100'] })
    });
    expect(resubmitBody(job)).toEqual({
      name: 'train',
      kind: 'training',
      priority: 'low',
      team: 'team-ml',
      gpus: 2,
      gpu_models: ['A100'],
      script: 'train.py',
      args: ['--epochs', '3'],
      time_limit_s: 3600
    });
  });

  it('resubmit of a shared GPU asks for the same fraction', () => {
    const job = makeJob({ script: null, notebook: 'a.ipynb', resources: makeResources({ gpus: 1, gpu_milli: 500 }) });
    const body = resubmitBody(job);
    expect(body.gpus).toBe(0.5);
    expect(body.notebook).toBe('a.ipynb');
    expect(body.script).toBeUndefined();
  });
});
