import { describe, expect, it } from 'vitest';

import {
  agoText,
  asClause,
  cancelQuestion,
  cancelTitle,
  releasedText,
  clocksAsOf,
  clockText,
  compactDuration,
  relativeText,
  etaWithRelative,
  formatDuration,
  endedText,
  formatElapsed,
  formatEta,
  formatGpus,
  formatMiB,
  inCluster,
  endsLine,
  plannedLimitLine,
  plannedLine,
  projectedLine,
  progressLine,
  queueLine,
  recordTime,
  stoppingText,
  quotaFractions,
  reasonSentence,
  sentenceFromDetails,
  sparklinePath,
  idleNotice,
  stateWord,
  workName
} from '../src/format';
import { resourcesOf } from '../src/types';
import type { Job } from '../src/types';
import { makeJob } from './fakeserver';

type Reason = NonNullable<Parameters<typeof reasonSentence>[0]>;
function makeReason(overrides: Partial<Reason> = {}): Reason {
  return { code: 'WaitingForCapacity', message: '', details: {}, unblock: '', position: null, eta: null, eta_reason: '', per_flavor: [], ...overrides };
}
function makeResources(overrides: Record<string, unknown> = {}) {
  return resourcesOf({ resources: { gpus: 1, gpu_milli: 1000, gpu_models: [], workers: 1, ...overrides } });
}

const NOW = new Date('2026-11-29T12:00:00Z');

describe('formatEta', () => {
  it.each([
    ['no ETA is unknown', null, 'unknown'],
    ['an unparsable ETA is unknown', 'soon', 'unknown'],
    ['an ETA in the past is now', '2026-11-29T11:00:00Z', 'now'],
    ['an ETA under a second away is now', '2026-11-29T12:00:00.500Z', 'now'],
    ['4 s ahead', '2026-11-29T12:00:04Z', 'in 4s'],
    ['40 s ahead', '2026-11-29T12:00:40Z', 'in 40s'],
    ['12 minutes ahead', '2026-11-29T12:12:00Z', 'in 12m'],
    ['19 min 55 s ahead (new user 16, N8: the CLI\'s words)', '2026-11-29T12:19:55Z', 'in 19m55s'],
    ['2 h 5 min ahead', '2026-11-29T14:05:00Z', 'in 2h05m'],
    ['3 days 4 h ahead', '2026-12-02T16:00:00Z', 'in 3d04h'],
    ['an offset other than Z is read correctly', '2026-11-29T13:30:00+01:00', 'in 30m']
  ])('%s', (_name, eta, want) => {
    expect(formatEta(eta, NOW)).toBe(want);
  });
});

describe('formatDuration (new user 20, N27: the CLI\'s and the magics\' form, which --time-limit takes back)', () => {
  it.each([
    [0, '0s'],
    [59.4, '59s'],
    [61, '1m01s'],
    [122, '2m02s'],
    [1200, '20m'],
    [3600, '1h00m'],
    [90061, '25h01m'],
    [273600, '3d04h'],
    [-1, '–'],
    [NaN, '–']
  ])('%s s → %s', (s, want) => {
    expect(formatDuration(s)).toBe(want);
  });
});

describe('formatElapsed', () => {
  it('a running job counts from its start', () => {
    expect(formatElapsed(makeJob({ state: 'running', started_at: '2026-11-29T11:58:30Z' }), NOW)).toBe('1m30s');
  });
  it('a finished job counts start to finish', () => {
    expect(formatElapsed(makeJob({ state: 'succeeded', started_at: '2026-11-29T10:00:00Z', finished_at: '2026-11-29T10:00:07Z' }), NOW)).toBe('7s');
  });
  it('a pending job says how long it has waited', () => {
    expect(formatElapsed(makeJob({ state: 'pending', submitted_at: '2026-11-29T11:00:00Z' }), NOW)).toBe('waiting 1h00m');
  });
});

describe('sizes and requests', () => {
  it.each([
    [512, '512 MiB'],
    [81920, '80 GiB'],
    [1536, '1.5 GiB'],
    [143771, '140 GiB'],
    [null, '–']
  ])('formatMiB(%s) = %s', (mib, want) => {
    expect(formatMiB(mib)).toBe(want);
  });

  it.each([
    ['one GPU', makeResources({ gpus: 1 }), '1 GPU'],
    ['several GPUs', makeResources({ gpus: 4 }), '4 GPUs'],
    ['a shared GPU', makeResources({ gpus: 1, gpu_milli: 500 }), '0.5 GPU'],
    ['a model', makeResources({ gpus: 2, gpu_models: ['A100-80GB'] }), '2 × A100-80GB'],
    ['CPU only', makeResources({ gpus: 0 }), 'CPU only'],
    ['a gang of workers', makeResources({ gpus: 8, workers: 2 }), '8 GPUs × 2 workers']
  ])('formatGpus: %s', (_name, r, want) => {
    expect(formatGpus(r)).toBe(want);
  });

  // newuser18 N8: a 1-GPU launcher + 2-GPU trainer read "2 GPUs × 2 workers" (4 GPUs) in the panel
  it('newuser18 N8: a heterogeneous gang reads group by group as the CLI writes it, with its total', () => {
    const gang = makeJob({
      resources: {
        gpus: 2, gpu_milli: 1000, gpu_models: [], workers: 2,
        groups: [{ name: 'launcher', gpus: 1, workers: 1 }, { name: 'trainer', gpus: 2, workers: 1 }]
      } as Job['resources']
    });
    expect(formatGpus(resourcesOf(gang))).toBe('1 × 1 + 1 × 2 GPUs (3 GPUs, 2 workers)');
    const big = makeJob({
      resources: {
        gpus: 4, gpu_milli: 1000, gpu_models: ['A100'], workers: 3,
        groups: [{ name: 'ps', gpus: 0, workers: 1 }, { name: 'w', gpus: 4, workers: 2 }]
      } as Job['resources']
    });
    expect(formatGpus(resourcesOf(big))).toBe('1 × 0 + 2 × 4 GPUs (8 GPUs of A100, 3 workers)');
    expect(cancelQuestion(gang)).toContain('asks for 1 × 1 + 1 × 2 GPUs (3 GPUs, 2 workers)');
  });
});

describe('newuser33 n4: the lease Release dialog and its toast', () => {
  const lease = makeJob({
    id: 'l-1', kind: 'lease', name: 'notebook lease', state: 'running', kernel_id: 'k1234567890',
    kernel_notebook: '/tmp/n33/repo/mywork/nb2.ipynb', resources: { gpus: 1, gpu_milli: 1000, gpu_models: [], workers: 1 } as Job['resources']
  });

  it('the title says the name the card and the body say, not the stored name', () => {
    expect(cancelTitle(lease)).toBe('Release lease for /tmp/n33/repo/mywork/nb2.ipynb?');
    expect(cancelQuestion(lease)).toContain('lease for /tmp/n33/repo/mywork/nb2.ipynb (l-1) holds 1 GPU');
    expect(cancelTitle(makeJob({ kind: 'lease', name: 'mylease' }))).toBe('Release lease mylease?');
    expect(cancelTitle(makeJob({ name: 'train' }))).toBe('Cancel job train?');
  });

  it('after Release a toast says it was done', () => {
    expect(releasedText(lease, { ...lease, state: 'cancelled' })).toBe(
      'Released lease for /tmp/n33/repo/mywork/nb2.ipynb (l-1): its 1 GPU went back to the pool; the kernel keeps running without them.');
    expect(releasedText(lease, lease)).toContain('Releasing lease for /tmp/n33/repo/mywork/nb2.ipynb (l-1): the pool gets its 1 GPU back');
    expect(releasedText({ ...lease, state: 'pending' }, { ...lease, state: 'cancelled' })).toBe(
      'Withdrew lease for /tmp/n33/repo/mywork/nb2.ipynb (l-1): it no longer waits for GPUs.');
  });
});

describe('reasons', () => {
  it("the server's message is the sentence, ending with a full stop", () => {
    const reason = makeReason({ code: 'ExceedsQuota', message: 'team-ml has 2 of 8 A100-80GB GPUs free (6 in use), job needs 4' });
    expect(reasonSentence(reason)).toBe('team-ml has 2 of 8 A100-80GB GPUs free (6 in use), job needs 4.');
  });

  it.each([
    ['quota names team, model and numbers', 'ExceedsQuota', { team: 'team-ml', used: 6, quota: 8, requested: 4, model: 'A100-80GB' }, 'Team-ml uses 6 of 8 A100-80GB GPUs; the job needs 4 more.'],
    ['borrowing limit says so', 'BorrowingLimitReached', { team: 'team-cv', used: 5, quota: 5, requested: 1 }, 'Team-cv uses 5 of 5 GPUs; the job needs 1 more (borrowing limit reached).'],
    ['capacity gives free of total', 'WaitingForCapacity', { free: 1, capacity: 4, requested: 2, model: 'H100' }, '1 of 4 H100 GPUs free, job needs 2.'],
    ['fragmentation explains the spread', 'Fragmented', { free: 4, capacity: 8, requested: 4 }, '4 of 8 GPUs free, job needs 4 on one node (free GPUs are spread over nodes).'],
    ['budget gives GPU-hours', 'BudgetExhausted', { team: 'team-ml', spent_gpu_hours: 100.04, budget_gpu_hours: 100 }, 'Team-ml has spent 100 of 100 GPU-hours this period.'],
    ['a MIG profile that is not here names it', 'NoMatchingMigProfile', { mig_profile: '1g.10gb', profiles: [] }, 'No GPU here has the MIG profile 1g.10gb.'],
    ['an unknown code keeps its numbers', 'OutsideTimeWindow', { opens_in_s: 600 }, 'Outside Time Window: opens in s 600.']
  ])('without a message, %s', (_name, code, details, want) => {
    expect(sentenceFromDetails(code, details)).toBe(want);
    expect(reasonSentence(makeReason({ code, details }))).toBe(want);
  });

  it('no reason, no sentence', () => {
    expect(reasonSentence(null)).toBe('');
  });

  it('never renders the bare "does not fit" (case 005)', () => {
    for (const code of ['ExceedsQuota', 'WaitingForCapacity', 'Fragmented', 'Whatever']) {
      expect(sentenceFromDetails(code, {}).toLowerCase()).not.toBe('does not fit.');
    }
  });
});

describe('queueLine', () => {
  it('a pending job shows position, reason, ETA with its reason, and what unblocks it', () => {
    const job = makeJob({
      reason: makeReason({
        message: '1 of 4 GPUs free, job needs 2',
        position: 3,
        eta: '2026-11-29T12:12:00Z',
        eta_reason: 'reservation when job-7 reaches its time limit',
        unblock: 'job-7 finishing'
      })
    });
    expect(queueLine(job, NOW)).toBe(
      '#3 · 1 of 4 GPUs free, job needs 2 · ETA in 12m (reservation when job-7 reaches its time limit) · job-7 finishing'
    );
  });

  it("the row's own position wins over the reason's", () => {
    const job = makeJob({ position: 1, reason: makeReason({ message: 'x', position: 9 }) });
    expect(queueLine(job, NOW).startsWith('#1 · ')).toBe(true);
  });

  it('case 027: an admitted job the cluster holds back reads pending (in the cluster) with its reason, not admitted', () => {
    const held = makeJob({
      state: 'admitted',
      allocation: { node: 'g1', gpu_uuids: ['GPU-1'], gpu_milli: 1000 },
      reason: makeReason({ code: 'Unschedulable', message: '1 of 8 nodes has GPUs and none free; no lower-priority pod to preempt' })
    });
    expect(inCluster(held)).toBe(true);
    expect(queueLine(held, NOW)).toBe('Pending (in the cluster): 1 of 8 nodes has GPUs and none free; no lower-priority pod to preempt.');
    const starting = makeJob({ state: 'admitted', allocation: { node: 'g1', gpu_uuids: ['GPU-1'], gpu_milli: 1000 }, reason: null });
    expect(inCluster(starting)).toBe(false);
    expect(queueLine(starting, NOW)).toBe('Starting on g1'); // the CLI's and the magics' word (new user 11, N4)
  });

  it('new user 8 N13: work in the grace of a cancel reads stopping, in the server\'s words (the CLI\'s and magics\')', () => {
    const job = makeJob({ state: 'running', allocation: { node: 'vm', gpu_uuids: ['GPU-1'], gpu_milli: 1000 }, reason: null });
    const text = 'stopping (cancel requested by root at 04:08 UTC; killed at 04:08:11 UTC if still running)';
    expect(queueLine({ ...job, stop_requested: { text } } as typeof job, NOW)).toBe(
      'Stopping (cancel requested by root at 04:08 UTC; killed at 04:08:11 UTC if still running) on vm'
    );
    expect(queueLine(job, NOW)).toBe('Running on vm');
    expect(stoppingText({ ...job, stop_requested: { text } })).toBe(text);
    expect(stoppingText(job)).toBe('');
  });

  it('puts the relative time right after the clock and drops today\'s date (newuser3 finding 21)', () => {
    const reason = {
      ...makeReason({ message: 'needs 1 GPU, 0 free', eta: '2026-11-29T12:03:00Z' }),
      text: { summary: 'needs 1 GPU, 0 free', eta: 'ETA Nov 29 12:03 UTC, when j-7 ends (by its 4m time limit)', unblock: '', line: '' }
    };
    expect(queueLine(makeJob({ position: 1, reason }), NOW)).toBe(
      '#1 · needs 1 GPU, 0 free · ETA 12:03 UTC (in 3m), when j-7 ends (by its 4m time limit)'
    );
    expect(etaWithRelative('ETA Nov 30 12:03 UTC, when j-7 ends', '2026-11-30T12:03:00Z', NOW)).toBe(
      'ETA Nov 30 12:03 UTC (in 24h03m), when j-7 ends'
    );
    expect(etaWithRelative('ETA soon', '2026-11-29T12:03:00Z', NOW)).toBe('ETA soon (in 3m)');
  });

  it('says the year of an ETA more than half a year away (newuser14 N18)', () => {
    expect(etaWithRelative('ETA Nov 30 12:03 UTC, when j-7 ends', '2027-11-30T12:03:00Z', NOW)).toBe(
      'ETA Nov 30 2027 12:03 UTC (in 366d), when j-7 ends'
    );
    expect(etaWithRelative('ETA Nov 30 2027 12:03 UTC, when j-7 ends', '2027-11-30T12:03:00Z', NOW)).toBe(
      'ETA Nov 30 2027 12:03 UTC (in 366d), when j-7 ends'
    );
  });

  it('a pending job without ETA says unknown', () => {
    expect(queueLine(makeJob({ reason: makeReason({ message: 'waiting' }) }), NOW)).toBe('waiting · ETA unknown');
  });

  it('a GET queue row carries eta and eta_reason next to the reason', () => {
    const job = makeJob({ position: 2, eta: '2026-11-29T12:05:00Z', eta_reason: 'backfill reservation', reason: makeReason({ message: '0 of 4 GPUs free, job needs 1' }) });
    expect(queueLine(job, NOW)).toBe('#2 · 0 of 4 GPUs free, job needs 1 · ETA in 5m (backfill reservation)');
  });

  it('a preempted job waits in the queue like a pending one', () => {
    const job = makeJob({ state: 'preempted', position: 1, reason: makeReason({ code: 'Priority', message: 'preempted by j-9 (high)' }) });
    expect(queueLine(job, NOW)).toBe('#1 · preempted by j-9 (high) · ETA unknown');
  });

  it('a running job names its node', () => {
    const job = makeJob({ state: 'running', allocation: { node: 'sim-0', gpu_uuids: ['GPU-1'], gpu_milli: 1000, workers: [] } });
    expect(queueLine(job, NOW)).toBe('Running on sim-0');
  });
});

describe('quota bars', () => {
  it('usage inside the guarantee scales to guarantee + borrowing', () => {
    const f = quotaFractions(2, 4, 4);
    expect(f.max).toBe(8);
    expect(f.usedFraction).toBeCloseTo(0.25);
    expect(f.guaranteedFraction).toBeCloseTo(0.5);
    expect(f.text).toBe('2 used · 4 guaranteed · borrow up to 4 (max 8)');
  });

  it('unlimited borrowing is said in words', () => {
    const f = quotaFractions(6, 4, null);
    expect(f.max).toBeNull();
    expect(f.text).toBe('6 used · 4 guaranteed · borrowing unlimited');
    expect(f.usedFraction).toBeLessThanOrEqual(1);
  });
});

describe('sparklinePath', () => {
  it('maps 0..100 % onto the box, bottom to top', () => {
    expect(sparklinePath([0, 50, 100], 60, 16)).toBe('M0.0 16.0 L30.0 8.0 L60.0 0.0');
  });
  it('clamps out-of-range samples and handles a single point', () => {
    expect(sparklinePath([150], 60, 16)).toBe('M60.0 0.0');
    expect(sparklinePath([], 60, 16)).toBe('');
  });
});

describe('idleNotice', () => {
  it.each([
    ['a warning says what happens and when', { stage: 'warn', action: 'release', deadline: '2026-11-29T12:10:00Z', reason: 'kernel idle and GPU < 5% for 30 min' }, 'Idle GPUs: nb-lease is idle; its GPUs will be released at 12:10 UTC unless it is used or kept alive.'],
    ['a requeue warning for a batch job', { stage: 'warn', action: 'requeue', kind: 'training', deadline: '2026-11-29T12:00:30Z' }, 'Idle GPUs: nb-lease is idle; it will be stopped and put back in the queue at 12:00 UTC unless it is used.'],
    ['a past deadline is now', { stage: 'warn', action: 'release', deadline: '2026-11-29T11:00:00Z' }, 'Idle GPUs: nb-lease is idle; its GPUs will be released now unless it is used or kept alive.'],
    ['a reclaim says it happened', { stage: 'reclaim', action: 'release' }, "Idle GPUs reclaimed: nb-lease's GPUs were released."],
    // new user 19, N10: notify frees nothing — it said "Idle GPUs reclaimed: svc-ok's GPUs were reported as idle."
    ['newuser19 N10: a notify reclaim says nothing was freed', { stage: 'reclaim', action: 'notify', kind: 'inference', reason: 'low efficiency: GPU < 5 % for 2 min' },
      'Idle GPUs reported: nb-lease is idle (low efficiency: GPU < 5 % for 2 min); nothing was freed, it keeps its GPUs.'],
    ['newuser19 N10: a notify reclaim without a reason', { stage: 'reclaim', action: 'notify' }, 'Idle GPUs reported: nb-lease is idle; nothing was freed, it keeps its GPUs.'],
    ['newuser19 N10: a requeue reclaim says the job went back to the queue', { stage: 'reclaim', action: 'requeue', kind: 'training' },
      'Idle GPUs reclaimed: nb-lease was stopped and put back in the queue; its GPUs were freed.'],
    ['newuser19 N10: a stop reclaim says it was stopped', { stage: 'reclaim', action: 'stop', kind: 'inference' }, 'Idle GPUs reclaimed: nb-lease was stopped; its GPUs were freed.'],
    // session 20: a kernel still on its GPU after the reclaim is shut down, or holds the GPU out of use
    ['s20: a reclaim whose kernel may still hold the GPUs says they are freed once it lets go', { stage: 'reclaim', action: 'release', draining: true },
      "Idle GPUs reclaimed: nb-lease's GPUs were revoked; they are freed once its kernel lets go of them."],
    ['s20: a reclaim that shuts the idle kernel down says so', { stage: 'reclaim', action: 'shutdown', kind: 'lease' },
      "Idle GPUs reclaimed: nb-lease's kernel, still holding them, was shut down; they are freed once it exits."],
    ['s20: a reclaim that holds the GPU says it stays out of use', { stage: 'reclaim', action: 'hold', kind: 'lease' },
      "Idle GPUs reclaimed: nb-lease's kernel still holds them; they stay out of use until it restarts or exits."],
    ['newuser19 N10: a notify warning says its GPUs are not taken', { stage: 'warn', action: 'notify', kind: 'inference', deadline: '2026-11-29T12:01:00Z' },
      'Idle GPUs: nb-lease is idle; it will be reported as idle at 12:01 UTC unless it is used (its GPUs are not taken).'],
    ['newuser19 N10: a stop warning', { stage: 'warn', action: 'stop', kind: 'training', deadline: '2026-11-29T12:01:00Z' }, 'Idle GPUs: nb-lease is idle; it will be stopped at 12:01 UTC unless it is used.']
  ])('%s', (_name, data, want) => {
    const text = idleNotice(data, 'nb-lease', NOW);
    expect(text).toBe(want);
    expect((text ?? '').length).toBeLessThanOrEqual(140);
  });

  it('test_newuser20_n22: the unblock sentence is a clause of the line, said once', () => {
    const unblock = "It starts when ml's running jobs or kernel leases release GPUs, or when an admin raises ml's borrowing limit.";
    const reason = { ...makeReason({ eta: '2026-11-29T12:12:00Z' }), text: { summary: 'ml would use 4 GPUs, above its limit of 3 GPUs', eta: 'ETA 12:12 UTC', unblock, line: '' } };
    const line = queueLine(makeJob({ position: 1, reason }), NOW);
    expect(line).toBe("#1 · ml would use 4 GPUs, above its limit of 3 GPUs · ETA 12:12 UTC (in 12m) · it starts when ml's running jobs or kernel leases release GPUs, or when an admin raises ml's borrowing limit");
    expect(line).not.toContain('Unblocks when');
    expect(asClause('GPU 3 is free.')).toBe('GPU 3 is free');
  });

  it("the wording renderer's text (reason.text) wins over message and numbers", () => {
    const reason = { ...makeReason({ message: 'old words', eta: '2026-11-29T12:12:00Z' }), text: { summary: 'team-ml is at its quota (8 of 8 GPUs)', eta: 'ETA 12:12 UTC', unblock: 'when j-7 finishes', line: '' } };
    expect(reasonSentence(reason)).toBe('team-ml is at its quota (8 of 8 GPUs).');
    expect(queueLine(makeJob({ position: 2, reason }), NOW)).toBe('#2 · team-ml is at its quota (8 of 8 GPUs) · ETA 12:12 UTC (in 12m) · when j-7 finishes');
  });

  it('clear (activity resumed) announces nothing', () => {
    expect(idleNotice({ stage: 'clear' }, 'nb-lease', NOW)).toBeNull();
  });

  it('newuser19 N10: only release, requeue and stop say reclaimed; notify never does', () => {
    for (const action of ['notify', 'release', 'requeue', 'stop']) {
      const text = idleNotice({ stage: 'reclaim', action, kind: 'training' }, 'j', NOW) ?? '';
      expect(text.startsWith('Idle GPUs reclaimed:')).toBe(action !== 'notify');
      expect(/freed/.test(text)).toBe(action !== 'release');
    }
  });
});

describe('cancelQuestion', () => {
  it('a pending job holds nothing: cancelling takes it out of the queue (new user 5)', () => {
    const pending = makeJob({ id: 'j-9', name: 'to-cancel', state: 'pending', resources: { gpus: 4 } });
    const said = cancelQuestion(pending);
    expect(said).toBe('to-cancel (j-9) is pending (asks for 4 GPUs); cancelling takes it out of the queue.');
    expect(said).not.toMatch(/holds|SIGTERM/);
  });
  it('running work holding GPUs is stopped; a lease keeps its kernel', () => {
    expect(cancelQuestion(makeJob({ id: 'j-1', name: 'train', state: 'running', resources: { gpus: 2 } }))).toBe(
      'train (j-1) holds 2 GPUs and is running. It is stopped (SIGTERM, then SIGKILL after the grace period).'
    );
    expect(cancelQuestion(makeJob({ id: 'l-1', name: 'nb', kind: 'lease', state: 'pending', resources: { gpus: 1 } }))).toBe(
      'nb (l-1) is waiting for 1 GPU; releasing withdraws the request.'
    );
  });
});

describe('workName and stateWord (new user 10: one wording with jupyter_sched.wording.jobs.work_name / state_word)', () => {
  it.each([
    ['a job keeps its name', { name: 'train', kind: 'training' }, 'train'],
    ['the owner reads the notebook of a lease given no name', { name: 'notebook lease', kind: 'lease', kernel_id: 'abcdef12-9', kernel_notebook: 'nb/a.ipynb' }, 'lease for nb/a.ipynb'],
    ['the owner of a kernel lease without a notebook reads its kernel', { name: 'kernel lease', kind: 'lease', kernel_id: 'abcdef12-9' }, 'lease for kernel abcdef12'],
    ['an old kernel-<8 hex> name reads the same for its owner', { name: 'kernel-abcdef12', kind: 'lease', kernel_id: 'abcdef12-9' }, 'lease for kernel abcdef12'],
    ['others read the public name (no kernel fields in their rows)', { name: 'notebook lease', kind: 'lease' }, 'notebook lease'],
    ['a lease the user named keeps its name', { name: 'my-gpu', kind: 'lease', kernel_id: 'abcdef12-9', kernel_notebook: 'nb/a.ipynb' }, 'my-gpu']
  ])('%s', (_, job, want) => {
    expect(workName(job)).toBe(want);
  });

  it('newuser17 N23: an ended lease is cancelled as REST says it, an ended job cancelled, work in a stop\'s grace stopping', () => {
    expect(stateWord({ kind: 'lease', state: 'cancelled' })).toBe('cancelled');
    expect(stateWord({ kind: 'training', state: 'cancelled' })).toBe('cancelled');
    expect(stateWord({ kind: 'training', state: 'admitted' })).toBe('starting');
    expect(stateWord({ kind: 'training', state: 'running', stop_requested: { text: 'stopping (…)' } } as { kind: string; state: string })).toBe('stopping');
  });
});

describe('newuser16 N8: one time, one spelling — the CLI\'s and the magics\' words', () => {
  it('compactDuration and relativeText mirror format_duration and relative_text', () => {
    // the table of tests/onboarding/test_newuser16_words.py::test_newuser16_n8_one_relative_time_style
    const table: [number, string][] = [[0.4, 'now'], [-5, 'now'], [45, 'in 45s'], [1195, 'in 19m55s'], [1200, 'in 20m'], [7500, 'in 2h05m'], [3 * 86400, 'in 3d']];
    expect(table.map(([s]) => relativeText(s))).toEqual(table.map(([, want]) => want));
    expect([59.5, 60.5, 3600, 90061].map(compactDuration)).toEqual(['1m', '1m', '1h00m', '25h01m']);
  });

  it('new user 17 N6: a record\'s time with its date and seconds; a server sentence\'s seconds are kept', () => {
    const now = new Date('2026-12-04T13:30:00Z');
    expect(recordTime('2026-12-04T13:21:43.376737Z')).toBe('Dec 4 13:21:43 UTC');
    expect(recordTime('not a time')).toBe('not a time');
    expect(clockText(new Date('2026-12-04T13:51:35Z'), now, true)).toBe('13:51:35 UTC');
    expect(clockText(new Date('2026-12-04T13:51:35Z'), null)).toBe('Dec 4 13:51 UTC');
    // the idle warning's kept deadline ("Dec 4 13:51:35 UTC") read today keeps its seconds
    expect(clocksAsOf('GPUs will be released at Dec 4 13:51:35 UTC unless activity resumes', now)).toBe('GPUs will be released at 13:51:35 UTC unless activity resumes');
  });

  it('every clock of a line is said as of now: today\'s without its date, as the ETA beside it', () => {
    const now = new Date('2026-12-04T10:45:05Z');
    expect(clockText(new Date('2026-12-04T11:05:00Z'), now)).toBe('11:05 UTC');
    expect(clockText(new Date('2026-12-05T11:05:00Z'), now)).toBe('Dec 5 11:05 UTC');
    expect(clockText(new Date('2027-12-05T11:05:00Z'), now)).toBe('Dec 5 2027 11:05 UTC');
    expect(clocksAsOf('reserved from Dec 4 11:05 UTC; retries from Dec 5 09:00 UTC', now)).toBe('reserved from 11:05 UTC; retries from Dec 5 09:00 UTC');
    expect(clocksAsOf('since Dec 31 23:50 UTC', new Date('2027-01-01T00:10:00Z'))).toBe('since Dec 31 23:50 UTC'); // last year's, not next
    // newuser16's line, from REST's sentences (absolute clocks) to the CLI's words
    const summary = 'needs 2 Simulated GPU 80GB, 1 free; without a time limit of its own it cannot start ahead of waiter (j-w), whose GPUs are reserved from Dec 4 11:05 UTC.';
    const reason = {
      ...makeReason({ message: summary, eta: '2026-12-04T11:05:00Z', position: 2 }),
      text: { summary, eta: 'ETA Dec 4 11:05 UTC, when big (j-b) ends', unblock: '', line: '' }
    };
    expect(queueLine(makeJob({ state: 'pending', reason }), now)).toBe(
      '#2 · needs 2 Simulated GPU 80GB, 1 free; without a time limit of its own it cannot start ahead of waiter (j-w), ' +
        'whose GPUs are reserved from 11:05 UTC · ETA 11:05 UTC (in 19m55s), when big (j-b) ends'
    );
  });
});

describe('issue 20: a running job\'s own progress report', () => {
  const now = new Date('2026-12-05T02:13:00Z');
  const progress = { fraction: 0.42, done: 420, total: 1000, at: '2026-12-05T02:10:00.000000Z', run_started_at: '2026-12-05T01:50:00.000000Z', ran_s: 1200, reports: 3 };

  it('test_issue20_progress_shown_in_the_panel_as_the_cli_says_it: the server\'s words with the clock as of now and how long ago', () => {
    const job = makeJob({ state: 'running', started_at: '2026-12-05T01:50:00Z', progress: { ...progress, text: '42 % done, reported Dec 5 02:10 UTC' } });
    // jupyter_sched.wording.reported.progress_text(job, now): "42 % done, reported 02:10 UTC (3m ago)"
    expect(progressLine(job, now)).toBe('42 % done, reported 02:10 UTC (3m ago)');
    // a day without a report is past its run's stale bound: when reports stopped (newuser27 N8)
    expect(progressLine(job, new Date('2026-12-06T02:13:00Z'))).toBe('42 % done, no progress report since Dec 5 02:10:00 UTC (24h03m)');
    expect([agoText(0.4), agoText(45), agoText(3600)]).toEqual(['just now', '45s ago', '1h00m ago']);
  });

  it('says nothing for a job that never reported, a report of an earlier run (text ""), or work that no longer runs', () => {
    expect(progressLine(makeJob({ state: 'running' }), now)).toBe('');
    expect(progressLine(makeJob({ state: 'running', progress: null }), now)).toBe('');
    expect(progressLine(makeJob({ state: 'running', progress: { ...progress, text: '' } }), now)).toBe('');
    expect(progressLine(makeJob({ state: 'pending', progress: { ...progress, text: '42 % done, reported Dec 5 02:10 UTC' } }), now)).toBe('');
    expect(progressLine(makeJob({ state: 'succeeded', progress: { ...progress, text: '42 % done, reported Dec 5 02:10 UTC' } }), now)).toBe('');
  });
});

describe('new user 21, N5: the planned preemption of running work', () => {
  const now = new Date('2026-12-05T02:07:00Z');
  const plan = {
    at: '2026-12-05T02:11:00Z', for_job: 'j-n', for_name: 'norm2', for_owner: null, for_priority: 'normal' as const, for_team: 'ml',
    same_team: true, verb: 'preempted' as const,
    text: 'to be preempted at ~Dec 5 02:11 UTC for norm2 (j-n), normal priority of the same team, unless it ends first'
  };

  it('test_newuser21_n5_planned_line_as_the_cli_says_it: the server\'s words with the clock as of now', () => {
    const job = makeJob({ state: 'running', preemption_planned: plan });
    // jupyter_sched.wording.preemption.planned_preemption_text(plan, now)
    expect(plannedLine(job, now)).toBe('to be preempted at ~02:11 UTC for norm2 (j-n), normal priority of the same team, unless it ends first');
    expect(plannedLine(job, new Date('2026-12-04T23:00:00Z'))).toContain('at ~Dec 5 02:11 UTC for');
  });

  it('says nothing with no plan, for work no longer running, or stopping already', () => {
    expect(plannedLine(makeJob({ state: 'running' }), now)).toBe('');
    expect(plannedLine(makeJob({ state: 'running', preemption_planned: null }), now)).toBe('');
    expect(plannedLine(makeJob({ state: 'succeeded', preemption_planned: plan }), now)).toBe('');
    expect(plannedLine(makeJob({ state: 'running', preemption_planned: plan, stop_requested: { intent: 'preempt', text: 'stopping (preempted)' } }), now)).toBe('');
  });
});

describe('newuser28 N8 / verify28 V9: the limit a pending job that gave none is planned with', () => {
  const planned = { seconds: 1800, source: 'queue default' as const, max_s: 3600, text: 'time limit 30m (queue default; none given)' };

  it('test_newuser28_n8_planned_limit_line: the server\'s phrase on a waiting job\'s line, nothing once it has its own', () => {
    expect(plannedLimitLine(makeJob({ state: 'pending', time_limit_s: null, planned_time_limit: planned }))).toBe('time limit 30m (queue default; none given)');
    expect(plannedLimitLine(makeJob({ state: 'preempted', time_limit_s: null, planned_time_limit: planned }))).toBe('time limit 30m (queue default; none given)');
    expect(plannedLimitLine(makeJob({ state: 'pending', time_limit_s: null }))).toBe('');
    expect(plannedLimitLine(makeJob({ state: 'pending', time_limit_s: 2400, planned_time_limit: planned }))).toBe('');
    expect(plannedLimitLine(makeJob({ state: 'running', time_limit_s: 1800, planned_time_limit: planned }))).toBe('');
  });

  it('test_newuser28_n8_running_limit_from_its_queue: the ends-by line says where a limit it did not give came from', () => {
    const now = new Date('2026-12-05T05:12:52Z');
    expect(endsLine(makeJob({ state: 'running', started_at: '2026-12-05T05:12:20Z', time_limit_s: 1800, time_limit_source: 'queue default' }), now))
      .toBe('ends by 05:42 UTC (in 29m28s), its 30m time limit (queue default; none given)');
    expect(endsLine(makeJob({ state: 'running', started_at: '2026-12-05T05:12:20Z', time_limit_s: 1800 }), now))
      .toBe('ends by 05:42 UTC (in 29m28s), its 30m time limit');
  });
});

describe('endsLine (new user 22, N5: the CLI\'s ends-by words, jupyter_sched.wording.jobs.ends_by)', () => {
  const now = new Date('2026-12-05T05:12:52Z');
  const lease = { id: 'l-1', kind: 'lease' as const, state: 'running' as const, name: 'cvlease', kernel_id: 'k', started_at: '2026-12-05T05:10:00Z' };

  it('test_s22_newuser22_n5_ends_line_words: a time limit, none, and each way a lease gives its GPUs back', () => {
    expect(endsLine(makeJob({ state: 'running', started_at: '2026-12-05T05:12:20Z', time_limit_s: 600 }), now)).toBe('ends by 05:22 UTC (in 9m28s), its 10m time limit');
    expect(endsLine(makeJob({ state: 'running', started_at: '2026-12-05T05:12:20Z', time_limit_s: null }), now)).toBe('no time limit');
    expect(endsLine(makeJob({ state: 'pending', time_limit_s: 600 }), now)).toBe('');
    expect(endsLine(makeJob({ state: 'running', time_limit_s: 600, started_at: '2026-12-05T05:12:20Z', stop_requested: { intent: 'cancel', text: 'stopping (cancel requested)' } }), now)).toBe('');
    expect(endsLine(makeJob({ ...lease, idle_release: { action: 'release', after_s: 240, kernel: 'shutdown' } }), now)).toBe(
      "a kernel's GPUs: held until released (%gpu release) or reclaimed after 4m idle, no time limit; if the kernel still holds them then (a CUDA context), it is shut down");
    // newuser39 n11: a kept lease says until when
    expect(endsLine(makeJob({ ...lease, idle_release: { action: 'release', after_s: 1800, keepalive_until: '2026-12-05T06:16:00Z' } }), now)).toBe(
      "a kernel's GPUs: held until released (%gpu release) or reclaimed after 30m idle, not before 06:16 UTC: kept while idle until then (its keepalive), no time limit");
    expect(endsLine(makeJob({ ...lease, idle_release: { action: 'notify' } }), now)).toBe(
      "a kernel's GPUs: held until released (%gpu release), no time limit; this server reports idle leases, it does not reclaim them");
    expect(endsLine(makeJob({ ...lease, kernel_id: null, idle_release: { action: 'off' } }), now)).toBe(
      'GPUs held for no kernel: Release releases them, no time limit; this server does not reclaim idle leases');
    expect(endsLine(makeJob({ ...lease, kernel_id: null, parent_job_id: 'j-7' }), now)).toBe(
      'GPUs held for job j-7: released when it ends (Release releases them sooner), no time limit');
    expect(endsLine({ ...makeJob({ ...lease, name: 'lease', kernel_id: null }), mine: false }, now)).toBe(
      "a lease's GPUs: held until its owner releases them or they are reclaimed when idle, no time limit");
  });

  it('test_red39_r8_panel_lease_line_says_how_long_busy_keeps_idle_gpus', () => {
    // the hub's default: a busy kernel defers reclaim for the bound only (busy_action release)
    expect(endsLine(makeJob({ ...lease, idle_release: { action: 'release', after_s: 1800, busy_after_s: 14400, busy_action: 'release' } }), now)).toBe(
      "a kernel's GPUs: held until released (%gpu release) or reclaimed after 30m idle (kept while its kernel is busy, up to 4h00m with idle GPUs), no time limit");
    // embedded: reported, not reclaimed
    expect(endsLine(makeJob({ ...lease, idle_release: { action: 'release', after_s: 1800, busy_after_s: 14400, busy_action: 'notify' } }), now)).toBe(
      "a kernel's GPUs: held until released (%gpu release) or reclaimed after 30m idle (kept while its kernel is busy; 4h00m with idle GPUs is reported, not reclaimed), no time limit");
    expect(endsLine(makeJob({ ...lease, idle_release: { action: 'release', after_s: 1800, busy_after_s: 14400, busy_action: 'release', keepalive_until: '2026-12-05T06:16:00Z' } }), now)).toBe(
      "a kernel's GPUs: held until released (%gpu release) or reclaimed after 30m idle (kept while its kernel is busy, up to 4h00m with idle GPUs), not before 06:16 UTC: kept while idle until then (its keepalive), no time limit");
  });
});

describe('projectedLine (new user 22, N10: the end my waiters are given, jupyter_sched.wording.projected.projected_end_text)', () => {
  const now = new Date('2026-12-05T05:08:34Z');
  const end = { at: '2026-12-05T05:09:39Z', source: 'progress' as const, report_at: '2026-12-05T05:08:30Z', fraction: 0.3,
                text: 'projected end ~Dec 5 05:09 UTC, from its progress report of Dec 5 05:08:30 UTC' };
  const stuck = { state: 'running' as const, started_at: '2026-12-05T05:08:00Z', time_limit_s: 900, projected_end: end };

  it('test_s23_newuser22_n10_projected_line_words: the CLI\'s words, then the limit as the latest', () => {
    expect(projectedLine(makeJob(stuck), now)).toBe('projected end ~05:09 UTC (in 1m05s), from its progress report of 05:08:30 UTC');
    expect(endsLine(makeJob(stuck), now)).toBe(
      'projected end ~05:09 UTC (in 1m05s), from its progress report of 05:08:30 UTC · at the latest 05:23 UTC (in 14m26s), its 15m time limit');
    expect(endsLine(makeJob({ ...stuck, time_limit_s: null }), now)).toBe(
      'projected end ~05:09 UTC (in 1m05s), from its progress report of 05:08:30 UTC · no time limit');
    const learnt = { ...end, source: 'history' as const, report_at: null, runs: 'same' as const,
                     text: 'projected end ~Dec 5 05:09 UTC, if it runs as long as similar past runs did' };
    expect(projectedLine(makeJob({ ...stuck, projected_end: learnt }), now)).toBe(
      'projected end ~05:09 UTC (in 1m05s), if it runs as long as similar past runs did');
  });

  it('test_newuser26_n5_a_100_percent_report_reads_finishing_not_a_projected_end', () => {
    const done = { ...end, at: '2026-12-05T05:08:35Z', fraction: 1,
                   text: 'finishing: all done by its progress report of Dec 5 05:08:30 UTC' };
    expect(projectedLine(makeJob({ ...stuck, projected_end: done }), now)).toBe(
      'finishing: all done by its progress report of 05:08:30 UTC');
    expect(endsLine(makeJob({ ...stuck, projected_end: done }), now)).toBe(
      'finishing: all done by its progress report of 05:08:30 UTC · at the latest 05:23 UTC (in 14m26s), its 15m time limit');
  });

  it('test_s23_newuser22_n10_no_projection_where_none_is_sent_or_it_stops', () => {
    expect(endsLine(makeJob({ ...stuck, projected_end: null }), now)).toBe('ends by 05:23 UTC (in 14m26s), its 15m time limit');
    expect(projectedLine(makeJob({ ...stuck, stop_requested: { intent: 'cancel', text: 'stopping (cancel requested)' } }), now)).toBe('');
    expect(projectedLine(makeJob({ ...stuck, state: 'succeeded' }), now)).toBe('');
  });
});

describe('endedText (newuser27 N5)', () => {
  it('says when a finished job ended and how long it ran, as the CLI does', () => {
    const done = makeJob({ state: 'succeeded', started_at: '2026-11-29T11:55:00Z', finished_at: '2026-11-29T11:59:02Z' });
    expect(endedText(done, NOW)).toBe('ended 11:59 UTC (ran 4m02s)');
    expect(endedText(makeJob({ state: 'cancelled', started_at: null, finished_at: '2026-11-28T09:00:00Z' }), NOW)).toBe('ended Nov 28 09:00 UTC');
    expect(endedText(makeJob({ state: 'running', started_at: '2026-11-29T11:58:30Z' }), NOW)).toBe('');
  });
});
