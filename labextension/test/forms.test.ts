import { describe, expect, it } from 'vitest';

import { aggregateUsage, auditMatches } from '../src/admin';
import { SchedApiError } from '../src/api';
import { dryRunSentence, submitBodyFrom, submitErrorSentence } from '../src/submit';
import { makeReason } from './builders';

const BLANK = { path: '', args: '', gpus: '1', model: '', priority: 'normal', timeLimit: '', name: '' };

describe('submitBodyFrom', () => {
  it.each([
    ['a script runs as script with args', { path: 'work/train.py', args: '--epochs 3' }, { name: 'train', gpus: 1, priority: 'normal', script: 'work/train.py', args: ['--epochs', '3'] }],
    ['a notebook runs as notebook', { path: 'a.ipynb', gpus: '2', model: 'A100' }, { name: 'a', gpus: 2, priority: 'normal', notebook: 'a.ipynb', model: 'A100' }],
    ['another file runs as a command', { path: 'run.sh', args: 'x' }, { name: 'run', gpus: 1, priority: 'normal', command: ['run.sh', 'x'] }],
    ['a fraction asks for a shared GPU', { path: 't.py', gpus: '0.5', timeLimit: '2h', name: 'small' }, { name: 'small', gpus: 0.5, priority: 'normal', script: 't.py', time_limit: '2h' }]
  ])('%s', (_name, values, want) => {
    expect(submitBodyFrom({ ...BLANK, ...values })).toEqual(want);
  });

  it('with the server root, paths become absolute and the job runs in the file directory', () => {
    expect(submitBodyFrom({ ...BLANK, path: 'work/train.py' }, '/home/ana/')).toEqual({
      name: 'train',
      gpus: 1,
      priority: 'normal',
      script: '/home/ana/work/train.py',
      working_dir: '/home/ana/work'
    });
    expect(submitBodyFrom({ ...BLANK, path: 'a.ipynb' }, '/srv')).toMatchObject({ notebook: '/srv/a.ipynb', working_dir: '/srv' });
  });

  it.each([
    ['no path', { path: ' ' }, 'Give the path of a script or notebook to run (e.g. train.py).'],
    ['negative GPUs', { path: 't.py', gpus: '-1' }, 'GPUs must be a number >= 0 (got "-1").'],
    ['empty GPUs', { path: 't.py', gpus: '' }, 'GPUs must be a number >= 0 (got "").']
  ])('rejects %s', (_name, values, message) => {
    expect(() => submitBodyFrom({ ...BLANK, ...values })).toThrow(message);
  });
});

describe('dryRunSentence', () => {
  const NOW = new Date('2026-11-29T12:00:00Z');
  it('a fit names the node and GPU count', () => {
    expect(dryRunSentence({ fits: true, allocation: { node: 'sim-0', gpu_uuids: ['a', 'b'], gpu_milli: 1000, workers: [] } }, NOW)).toBe('Would start now on sim-0 (2 GPUs).');
  });
  it('a wait gives the reason and the ETA with its reason', () => {
    const reason = makeReason({ message: '0 of 4 GPUs free, job needs 2', eta: '2026-11-29T12:30:00Z', eta_reason: 'job-3 reaches its time limit' });
    expect(dryRunSentence({ fits: false, reason }, NOW)).toBe('0 of 4 GPUs free, job needs 2. Estimated start: in 30 min (job-3 reaches its time limit).');
  });
  it('a request that can never run says so (never: true)', () => {
    expect(dryRunSentence({ fits: false, never: true, reason: makeReason({ message: 'needs 8 GPUs, 4 exist' }) }, NOW)).toBe('needs 8 GPUs, 4 exist. It can never start as requested.');
  });
  it('a fit that needs preemption names the victims', () => {
    expect(dryRunSentence({ fits: true, allocation: { node: 'n', gpu_uuids: ['a'], gpu_milli: 1000, workers: [] }, would_preempt: ['j-3'] }, NOW)).toBe('Would start now on n (1 GPU) by preempting 1 job (j-3).');
  });
  it('the ETA at the top level is used when the reason has none', () => {
    expect(dryRunSentence({ fits: false, reason: makeReason({ message: 'waiting' }), eta: '2026-11-29T13:00:00Z' }, NOW)).toBe('waiting. Estimated start: in 1 h 00 min.');
  });
});

describe('submitErrorSentence', () => {
  it('adds the reason sentence a 422 carries when the message lacks it', () => {
    const err = new SchedApiError(422, {
      code: 'quota_exceeded',
      message: 'over quota',
      field: 'gpus',
      hint: 'ask for fewer GPUs',
      details: { reason: makeReason({ code: 'ExceedsQuota', message: 'team-ml may use 2 GPUs, job needs 4' }) }
    });
    expect(submitErrorSentence(err)).toBe('over quota [gpus] — ask for fewer GPUs team-ml may use 2 GPUs, job needs 4.');
  });
  it('does not repeat a reason already in the message', () => {
    const err = new SchedApiError(422, { code: 'quota_exceeded', message: 'team-ml may use 2 GPUs, job needs 4', details: { reason: makeReason({ message: 'team-ml may use 2 GPUs, job needs 4' }) } });
    expect(submitErrorSentence(err)).toBe('team-ml may use 2 GPUs, job needs 4');
  });
});

describe('usage report', () => {
  const rows = [
    { user: 'alice', team: 'ml', gpu_model: 'A100', gpu_seconds: 7200, utilized_gpu_seconds: 3600, cost: 4 },
    { user: 'bob', team: 'ml', gpu_model: 'A100', gpu_seconds: 3600, cost: 2 },
    { user: 'alice', team: 'ml', gpu_model: 'T4', gpu_hours: 3 }
  ];
  it('sums GPU-hours by user, largest first', () => {
    expect(aggregateUsage(rows, 'user')).toEqual([
      { key: 'alice', gpuHours: 5, utilizedGpuHours: 1, cost: 4 },
      { key: 'bob', gpuHours: 1, utilizedGpuHours: null, cost: 2 }
    ]);
  });
  it('groups by model', () => {
    expect(aggregateUsage(rows, 'gpu_model').map(t => [t.key, t.gpuHours])).toEqual([
      ['A100', 3],
      ['T4', 3]
    ]);
  });
  it('audit search matches any field, case-insensitively', () => {
    expect(auditMatches({ actor: 'root', action: 'set_quotas' }, 'QUOTA')).toBe(true);
    expect(auditMatches({ actor: 'root', action: 'set_quotas' }, 'preempt')).toBe(false);
    expect(auditMatches({ actor: 'root' }, '  ')).toBe(true);
  });
});
