import { readFileSync } from 'fs';
import { join } from 'path';
import { afterEach, describe, expect, it } from 'vitest';
import { act } from 'react';

import { SchedApiError } from '../src/client';
import { AdminView } from '../src/sections';
import { aggregateUsage, auditMatches, hours, idlePatch, idlePolicySentence, quotaErrorText, quotaLinesFrom } from '../src/sections/admin';
import { nullTranslator } from '@jupyterlab/translation';
import { dryRunSentence, offeredPriorities, offeredTeams, RESUBMIT_COPIED, RESUBMIT_NOT_COPIED, resubmitBody, submitBodyFrom, submitErrorSentence, SubmitView, EMPTY_VALUES } from '../src/sections/submit';
import { FakeSchedServer, json, makeJob, settle } from './fakeserver';
import type { Job } from '../src/types';
import { click, context, disposeMounted, flush, mount, startedModel, text } from './ui';

afterEach(() => {
  disposeMounted();
  document.body.replaceChildren();
});

/** Type into a React-controlled input or select the way a browser does. */
async function type(element: HTMLInputElement | HTMLSelectElement, value: string): Promise<void> {
  await act(async () => {
    const proto = element instanceof HTMLSelectElement ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, 'value')!.set!.call(element, value);
    element.dispatchEvent(new Event(element instanceof HTMLSelectElement ? 'change' : 'input', { bubbles: true }));
  });
}

describe('submit body', () => {
  const values = { ...EMPTY_VALUES, path: 'exp/train.py', gpus: '2' };

  it('keeps quoted arguments together (split like a shell)', () => {
    const body = submitBodyFrom({ ...values, args: `--title "two words" --glob '*.csv' plain\\ space` }, '/home/ann');
    expect(body).toEqual({
      name: 'train',
      gpus: 2,
      priority: 'normal',
      script: '/home/ann/exp/train.py',
      args: ['--title', 'two words', '--glob', '*.csv', 'plain space'],
      working_dir: '/home/ann/exp'
    });
  });

  it('a notebook runs as a notebook; a GPU model is sent as gpu_models; a time limit as given', () => {
    const body = submitBodyFrom({ ...values, path: 'a.ipynb', model: 'A100-80GB', timeLimit: '2h', name: 'nb', priority: 'high' });
    expect(body).toEqual({ name: 'nb', gpus: 2, priority: 'high', notebook: 'a.ipynb', gpu_models: ['A100-80GB'], time_limit: '2h' });
  });

  // new user 14, N27: a notebook's words went nowhere; they are its parameters, read as `-p NAME=VALUE` is
  it('newuser14 n27: a notebook takes NAME=VALUE words as its parameters, JSON where it parses', () => {
    const body = submitBodyFrom({ ...values, path: 'daily_report.ipynb', args: 'days=3 region=eu ratios=[0.5,1] "title=two words"' });
    expect(body.notebook).toBe('daily_report.ipynb');
    expect(body.parameters).toEqual({ days: 3, region: 'eu', ratios: [0.5, 1], title: 'two words' });
    expect(body.args).toBeUndefined();
    expect(submitBodyFrom({ ...values, path: 'daily_report.ipynb' }).parameters).toBeUndefined();
  });

  it.each([
    ['a word without =', 'days', 'Parameters: "days" is not NAME=VALUE — a notebook takes values for its cell tagged "parameters", e.g. days=3 region=eu.'],
    ['a name given twice', 'days=3 days=4', 'Parameters: days is given twice (days=3, days=4): give it once — a notebook takes values']
  ])('newuser14 n27: a notebook refuses %s, naming it', (_name, args, message) => {
    expect(() => submitBodyFrom({ ...values, path: 'daily_report.ipynb', args })).toThrow(message);
  });

  it('newuser14 n27: a resubmitted notebook keeps its parameters', () => {
    expect(resubmitBody(makeJob({ script: null, notebook: 'n.ipynb', parameters: { days: 3 } })).parameters).toEqual({ days: 3 });
    expect(resubmitBody(makeJob({ script: null, notebook: 'n.ipynb' })).parameters).toBeUndefined();
  });

  it('any other file is a command with its arguments', () => {
    expect(submitBodyFrom({ ...values, path: 'run.sh', args: 'a "b c"' }).command).toEqual(['run.sh', 'a', 'b c']);
  });

  it.each([
    ['no path', { path: ' ' }, 'Give the path of a script or notebook to run (e.g. train.py).'],
    // the server's, the CLI's and the magics' words (issue 20: --gpus two reads the same everywhere)
    ['GPUs not a number', { gpus: 'two' }, 'GPUs must be an integer (got "two"). Use a whole number such as 1 or 4, or a fraction below 1 such as 0.5.'],
    ['negative GPUs', { gpus: '-1' }, 'GPUs must be >= 0 (got -1). Use 0 for CPU-only work or a positive number of GPUs.'],
    ['an unclosed quote', { args: '--title "oops' }, 'Arguments: the double quote at position 9 is not closed.']
  ])('refuses %s naming the input', (_name, change, message) => {
    expect(() => submitBodyFrom({ ...values, ...change })).toThrow(message);
  });

  it('resubmits the same request, with gpu_models (never "model") and the script arguments', () => {
    const job = makeJob({
      name: 'again',
      resources: { gpus: 1, gpu_milli: 500, gpu_models: ['L4'], workers: 2, cpu_millis: 4000, memory_mib: 1024, min_memory_mib: 2048, mig_profile: '1g.10gb', nvlink: true },
      command: ['--epochs', '3'],
      working_dir: '/w',
      time_limit_s: 60,
      env: { A: '1' },
      profile: 'small'
    });
    expect(resubmitBody(job)).toEqual({
      name: 'again',
      kind: 'training',
      priority: 'normal',
      team: 'team-ml',
      gpus: 0.5,
      gpu_models: ['L4'],
      min_memory_mib: 2048,
      cpu_millis: 4000,
      memory_mib: 1024,
      workers: 2,
      mig_profile: '1g.10gb',
      nvlink: true,
      script: 'train.py',
      args: ['--epochs', '3'],
      working_dir: '/w',
      time_limit_s: 60,
      env: { A: '1' },
      profile: 'small'
    });
    expect(resubmitBody(makeJob({ script: null, notebook: 'n.ipynb' })).notebook).toBe('n.ipynb');
    expect(resubmitBody(makeJob({ script: null, command: ['echo', 'hi'] })).command).toEqual(['echo', 'hi']);
  });
});

// newuser18 N15: the panel's Resubmit turned a 1 + 2 GPU gang into 2 × 2 = 4 GPUs and dropped a
// service's port and checkpointable (a fixed list of fields): every field of the request round-trips.
describe('newuser18 N15: Resubmit sends the stored request', () => {
  const service = makeJob({
    name: 'svcP', kind: 'inference', priority: 'low', team: 'team-x', script: null,
    command: ['python3', '-m', 'http.server', '18971'], port: 18971, checkpointable: true, image: 'python:3.12',
    resources: {
      gpus: 2, gpu_milli: 1000, gpu_models: ['A100'], workers: 2, cpu_millis: 2000, memory_mib: 4096, min_memory_mib: 40960,
      mig_profile: '3g.40gb', nvlink: true, node_selector: { zone: 'a' }, tolerations: ['gpu=true:NoSchedule']
    } as Job['resources'],
    working_dir: '/w', time_limit_s: 300, env: { A: '1' }, profile: 'small'
  });
  const script = makeJob({ script: 'train.py', command: ['--epochs', '3'], parameters: { days: 3 } } as Partial<Job>);
  const notebook = makeJob({ script: null, notebook: 'n.ipynb' });
  const gangGroups = [{ name: 'launcher', gpus: 1, workers: 1, cpu_millis: 0, memory_mib: 0 }, { name: 'trainer', gpus: 2, workers: 1, cpu_millis: 4000, memory_mib: 0 }];
  const gang = makeJob({
    name: 'gangP', script: null, command: ['sleep', '400'],
    resources: { gpus: 2, gpu_milli: 1000, gpu_models: [], workers: 2, cpu_millis: 4000, memory_mib: 0, groups: gangGroups } as Job['resources']
  });
  const cases: Record<(typeof RESUBMIT_COPIED)[number], [Job, unknown]> = {
    name: [service, 'svcP'],
    kind: [service, 'inference'],
    priority: [service, 'low'],
    team: [service, 'team-x'],
    gpus: [service, 2],
    gpu_models: [service, ['A100']],
    min_memory_mib: [service, 40960],
    mig_profile: [service, '3g.40gb'],
    nvlink: [service, true],
    cpu_millis: [service, 2000],
    memory_mib: [service, 4096],
    workers: [service, 2],
    groups: [gang, [{ name: 'launcher', gpus: 1, workers: 1 }, { name: 'trainer', gpus: 2, workers: 1, cpu_millis: 4000 }]],
    node_selector: [service, { zone: 'a' }],
    tolerations: [service, ['gpu=true:NoSchedule']],
    time_limit_s: [service, 300],
    command: [service, ['python3', '-m', 'http.server', '18971']],
    script: [script, 'train.py'],
    args: [script, ['--epochs', '3']],
    notebook: [notebook, 'n.ipynb'],
    parameters: [script, { days: 3 }],
    working_dir: [service, '/w'],
    env: [service, { A: '1' }],
    image: [service, 'python:3.12'],
    port: [service, 18971],
    profile: [service, 'small'],
    checkpointable: [service, true]
  };

  it.each(Object.entries(cases))('newuser18 N15: resubmit round-trips %s', (field, [job, want]) => {
    expect((resubmitBody(job) as Record<string, unknown>)[field]).toEqual(want);
  });

  it('newuser18 N15: every field of SubmitJobRequest (schema.ts) is copied or named as not copied, with why', () => {
    const schema = readFileSync(join(__dirname, '..', 'src', 'schema.ts'), 'utf8');
    const block = schema.slice(schema.indexOf('        SubmitJobRequest: {'));
    const body = block.slice(0, block.indexOf('\n        };'));
    const fields = [...body.matchAll(/^ {12}([a-z_]+)\??:/gm)].map(m => m[1]);
    expect(fields).toContain('groups');
    expect(fields).toContain('port');
    const decided = new Set<string>([...RESUBMIT_COPIED, ...Object.keys(RESUBMIT_NOT_COPIED)]);
    expect(fields.filter(f => !decided.has(f))).toEqual([]);
    expect([...decided].filter(f => !fields.includes(f))).toEqual([]);
  });

  it('newuser19 N7: a job with no time limit at all resubmits with none (time_limit_s 0), not with the queue default', () => {
    const unlimited = makeJob({ time_limit_s: null, unlimited: true } as Partial<Job>);
    expect(resubmitBody(unlimited).time_limit_s).toBe(0);
    const defaulted = makeJob({ time_limit_s: null, unlimited: false } as Partial<Job>);
    expect(resubmitBody(defaulted)).not.toHaveProperty('time_limit_s');
    expect(resubmitBody(makeJob({ time_limit_s: 300 } as Partial<Job>)).time_limit_s).toBe(300);
  });

  it('newuser18 N15: a gang of groups goes back as its groups, with none of the per-worker fields beside them', () => {
    const body = resubmitBody(gang);
    expect(body.groups).toEqual(cases.groups[1]);
    for (const clash of ['gpus', 'workers', 'gpu_milli', 'mig_profile', 'cpu_millis', 'memory_mib']) {
      expect(body).not.toHaveProperty(clash);
    }
    expect(body.command).toEqual(['sleep', '400']);
  });
});

describe('dry-run and error sentences', () => {
  const base = { fits: false, never: false, allocation: null, reason: null, eta: null, would_preempt: [], job: makeJob() };
  it('where it would start', () => {
    expect(dryRunSentence({ ...base, fits: true, allocation: { node: 'n1', gpu_uuids: ['a', 'b'] } })).toBe('Would start now on n1 (2 GPUs).');
    expect(dryRunSentence({ ...base, fits: true, allocation: { node: 'n1', gpu_uuids: ['a'] }, would_preempt: ['j-3'] })).toBe('Would start now on n1 (1 GPU) by preempting j-3.');
    expect(dryRunSentence({ ...base, fits: true })).toBe('Would start now.');
  });
  it('newuser16 N13: a share reads as the share it would hold, not "(1 GPU)"', () => {
    const share = { node: 'vm', gpu_uuids: ['GPU-sim-vm-2'], gpu_milli: 500 };
    expect(dryRunSentence({ ...base, fits: true, allocation: share })).toBe('Would start now on vm (0.5 GPU).');
    expect(dryRunSentence({ ...base, fits: true, allocation: { ...share, gpu_milli: 1000 } })).toBe('Would start now on vm (1 GPU).');
  });
  it('why not and when, or never', () => {
    const reason = { message: 'team-ui has 2 of 2 GPUs free (0 in use), job needs 3', eta: null };
    expect(dryRunSentence({ ...base, reason })).toBe('team-ui has 2 of 2 GPUs free (0 in use), job needs 3. Estimated start: unknown.');
    expect(dryRunSentence({ ...base, reason, never: true })).toBe('team-ui has 2 of 2 GPUs free (0 in use), job needs 3. It can never start as requested.');
    expect(dryRunSentence({ ...base })).toBe('Would wait in the queue. Estimated start: unknown.');
  });
  it('a 422 with a reason adds its sentence to the message', () => {
    const err = new SchedApiError(422, { code: 'never_fits', message: 'can never run here', field: 'gpus', hint: null, details: { reason: { message: 'no node has 9 GPUs' } } });
    expect(submitErrorSentence(err)).toBe('GPUs: can never run here — no node has 9 GPUs.');
  });
  it("a refusal speaks the form's labels, with no [code] and advice the form can follow (new user 5)", () => {
    const time = new SchedApiError(400, { code: 'validation_error', message: "time_limit: cannot parse duration 'forever'", field: 'time_limit', hint: 'use e.g. 2h or 90m' });
    expect(submitErrorSentence(time)).toBe("Time limit: cannot parse duration 'forever' — use e.g. 2h or 90m.");
    const script = new SchedApiError(400, { code: 'validation_error', message: "script: script '/w/nothere.py' does not exist on this server", field: 'script', hint: 'give the path of an existing script on the server (a relative path is read in working_dir), or send its text as source' });
    const said = submitErrorSentence(script);
    expect(said.startsWith("Script or notebook: script '/w/nothere.py' does not exist on this server — give the path of a file")).toBe(true);
    expect(said).not.toMatch(/\[script\]|source/);
    const reason = { code: 'Unschedulable', message: 'needs 99 GPUs, largest node has 4', text: { summary: 'needs 99 GPUs, largest node has 4.', eta: '', unblock: 'Ask for at most 4 GPUs.', line: '' } };
    const gpus = new SchedApiError(422, { code: 'unschedulable', message: 'needs 99 GPUs, largest node has 4', field: 'gpus', hint: 'resubmit asking for fewer GPUs per worker or another GPU model', details: { reason } });
    // the fix as a clause after the dash, as the CLI and the magics say it (newuser32 n1: "— Ask for …")
    expect(submitErrorSentence(gpus)).toBe('GPUs: needs 99 GPUs, largest node has 4 — ask for at most 4 GPUs.');
  });
  it('new user 17 N10: "not executable" says its fix once, in what this form can do (it has no interpreter field)', () => {
    const body = {
      code: 'validation_error',
      message: "command: '/etc/passwd' is not executable on this server",
      field: 'command',
      hint: 'chmod +x it, or run it with its interpreter (CLI: -- python FILE)',
      details: { rule: 'not_executable' }
    };
    const said = submitErrorSentence(new SchedApiError(400, body));
    expect(said).toBe("Script or notebook: '/etc/passwd' is not executable on this server — choose a .py or .ipynb, or make the file executable (chmod +x).");
    expect(said.match(/executable/g)).toHaveLength(2);
    expect(said).not.toMatch(/interpreter|python FILE/);
    // another command refusal keeps the server's hint
    const missing = { ...body, message: "command: 'nosuch' is not a program on the job's PATH", hint: 'give its full path', details: {} };
    expect(submitErrorSentence(new SchedApiError(400, missing))).toBe("Script or notebook: 'nosuch' is not a program on the job's PATH — give its full path.");
  });
  it("new user 17 N10: the GPU ceiling's hint is the server's, as REST and the CLI say it", () => {
    const body = {
      code: 'validation_error',
      message: 'gpus must be <= 4 (got 1e+308)',
      field: 'gpus',
      hint: 'the largest node here has 4 GPUs: ask for at most 4 per worker',
      details: { rule: 'too_many_gpus' }
    };
    expect(submitErrorSentence(new SchedApiError(400, body))).toBe('GPUs: must be <= 4 (got 1e+308) — the largest node here has 4 GPUs: ask for at most 4 per worker.');
  });
});

describe('Submit section', () => {
  it('prefill fills the path, checks the fit at once and focuses GPUs; submit POSTs and reports', async () => {
    const server = new FakeSchedServer();
    const dry: unknown[] = [];
    server.routes.set('POST dryrun', body => {
      dry.push(body);
      return json(200, { fits: true, never: false, allocation: { node: 'node-a', gpu_uuids: ['GPU-sim-node-a-0'] }, reason: null, eta: null, would_preempt: [], job: makeJob() });
    });
    const submitted: unknown[] = [];
    server.routes.set('POST jobs', body => {
      submitted.push(body);
      return json(201, makeJob({ id: 'j-new', name: 'steps', state: 'pending' }));
    });
    const { model } = await startedModel(server, 'inventory');
    const done: string[] = [];
    const view = await mount(new SubmitView(context(model), '', job => done.push(job.id)));
    view.prefill('steps.py');
    await flush();
    await settle();
    await flush();
    const form = view.node;
    expect((form.querySelector('.jp-sched-submit-path') as HTMLInputElement).value).toBe('steps.py');
    expect(document.activeElement).toBe(form.querySelector('.jp-sched-submit-gpus'));
    expect(dry).toEqual([{ name: 'steps', gpus: 1, priority: 'normal', script: 'steps.py' }]);
    const feedback = form.querySelector('[role="status"]')!;
    expect(text(feedback)).toBe('Dry run: Would start now on node-a (1 GPU).');
    expect(feedback.className).toContain('jp-sched-feedback-ok');
    await type(form.querySelector('.jp-sched-submit-args') as HTMLInputElement, '--msg "hello world"');
    await type(form.querySelector('.jp-sched-submit-model') as HTMLSelectElement, 'Simulated GPU 80GB');
    await act(async () => {
      form.querySelector('form')!.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    });
    await settle();
    await flush();
    expect(submitted).toEqual([{ name: 'steps', gpus: 1, priority: 'normal', script: 'steps.py', args: ['--msg', 'hello world'], gpu_models: ['Simulated GPU 80GB'] }]);
    expect(text(feedback)).toBe('Submitted steps (j-new): 1 GPU, pending.');
    expect(done).toEqual(['j-new']);
    expect(model.jobs.map(j => j.id)).toEqual(['j-new']);
    model.dispose();
  });

  it('newuser13 N1: an accepted submission says the server warnings (time limit 0 = no limit at all)', async () => {
    const server = new FakeSchedServer();
    const warning = 'time limit 0 = unlimited; this job can only start when nothing is reserved';
    server.routes.set('POST dryrun', () => json(200, { fits: true, never: false, allocation: null, reason: null, eta: null, would_preempt: [], job: makeJob({ id: 'dryrun' }) }));
    server.routes.set('POST jobs', () => json(201, { ...makeJob({ id: 'j-zero', name: 'steps', state: 'pending' }), warnings: [warning] }));
    const { model } = await startedModel(server, 'inventory');
    const view = await mount(new SubmitView(context(model), '', () => undefined));
    view.prefill('steps.py');
    await flush();
    await settle();
    const form = view.node;
    await type(form.querySelector('.jp-sched-submit-timelimit') as HTMLInputElement, '0');
    await act(async () => {
      form.querySelector('form')!.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    });
    await settle();
    await flush();
    const feedback = form.querySelector('[role="status"]')!;
    expect(text(feedback)).toBe(`Submitted steps (j-zero): 1 GPU, pending. Note: ${warning}.`);
    expect(feedback.className).toContain('jp-sched-feedback-warn');
    model.dispose();
  });

  it('a refused submission shows the server sentence as an error; Check fit shows input errors', async () => {
    const server = new FakeSchedServer();
    server.routes.set('POST jobs', () => json(422, { error: { code: 'never_fits', message: 'team-ui has 2 of 2 GPUs free (0 in use), job needs 3.', field: 'gpus', hint: null } }));
    server.routes.set('POST dryrun', () => json(200, { fits: false, never: true, allocation: null, reason: { message: 'team-ui has 2 of 2 GPUs free (0 in use), job needs 3' }, eta: null, would_preempt: [], job: makeJob() }));
    const { model } = await startedModel(server);
    const view = await mount(new SubmitView(context(model), '', () => undefined));
    const form = view.node;
    await click(form.querySelector('.jp-sched-dryrun-button')!);
    expect(text(form.querySelector('[role="status"]'))).toBe('Give the path of a script or notebook to run (e.g. train.py).');
    await type(form.querySelector('.jp-sched-submit-path') as HTMLInputElement, 'big.py');
    await type(form.querySelector('.jp-sched-submit-gpus') as HTMLInputElement, '3');
    await click(form.querySelector('.jp-sched-dryrun-button')!);
    expect(text(form.querySelector('[role="status"]'))).toBe('Dry run: team-ui has 2 of 2 GPUs free (0 in use), job needs 3. It can never start as requested.');
    expect(form.querySelector('[role="status"]')!.className).toContain('jp-sched-feedback-warn');
    await click(form.querySelector('.jp-sched-submit-button')!);
    expect(text(form.querySelector('[role="status"]'))).toBe('GPUs: team-ui has 2 of 2 GPUs free (0 in use), job needs 3.');
    expect(form.querySelector('[role="status"]')!.className).toContain('jp-sched-feedback-error');
    model.dispose();
  });
});

describe('Admin section', () => {
  function adminServer(): FakeSchedServer {
    const server = new FakeSchedServer();
    server.me = { ...server.me, is_admin: true };
    let quotas = [{ team: 'team-ui', user: null, gpu_model: '*', guaranteed: 2, borrowing_limit: 0 }];
    server.routes.set('GET quotas', () => json(200, { quotas, budgets: [], teams: [], user_teams: {} }));
    server.routes.set('PUT quotas', body => {
      const lines = (body as { quotas: { guaranteed: number }[] }).quotas;
      if (lines.some(l => !(l.guaranteed >= 0))) {
        return json(400, { error: { code: 'validation_error', message: 'quotas[0].guaranteed must be >= 0 (got -1)', field: 'quotas[0].guaranteed', hint: 'a number of GPUs' } });
      }
      quotas = lines as typeof quotas;
      return json(200, { quotas, budgets: [], teams: [], user_teams: {} });
    });
    const policy = {
      enabled: true,
      threshold_pct: 5,
      window_s: 1800,
      warning_s: 300,
      grace_s: 300,
      busy_kernel_window_s: null,
      lease_mode: 'release',
      busy_kernel_mode: 'notify',
      job_mode: 'requeue',
      service_mode: 'notify',
      max_gap_s: 120,
      keepalive_max_s: 3600
    };
    let current = { ...policy };
    server.routes.set('GET idle-policy', () => json(200, { default: current, by_priority: { low: current }, active: true, retention_s: 3600 }));
    server.routes.set('PUT idle-policy', body => {
      const patch = (body as { default: Record<string, unknown> }).default;
      if (typeof patch.threshold_pct === 'number' && patch.threshold_pct > 100) {
        return json(400, { error: { code: 'validation_error', message: 'threshold_pct must be at most 100 (got 500)', field: 'default.threshold_pct', hint: 'a percentage' } });
      }
      current = { ...current, ...patch };
      return json(200, { default: current, by_priority: {}, active: true, retention_s: 3600 });
    });
    server.routes.set('GET usage/report', (_, q) =>
      json(200, q.get('by') === 'team' ? [{ team: 'team-ui', gpu_seconds: 7200, jobs: 2 }] : [
        { user: 'ann', gpu_hours: 1.5, utilized_gpu_hours: 0.5, jobs: 1 },
        { user: 'bob', gpu_hours: 3, jobs: 2, cost: 4.5 }
      ])
    );
    server.routes.set('GET audit', () =>
      json(200, [
        { id: 2, at: '2026-12-01T10:00:00Z', actor: 'admin', action: 'quotas_changed', message: 'guaranteed 2 → 3' },
        { id: 1, at: '2026-12-01T09:00:00Z', actor: 'engine', action: 'leader_acquired', message: 'engine leads' }
      ])
    );
    return server;
  }

  it('edits quotas with the server validating, edits the idle policy with PUT idle-policy, sorts usage and searches the audit log', async () => {
    const server = adminServer();
    const { model } = await startedModel(server);
    const view = await mount(new AdminView(context(model)));
    await settle();
    await flush();
    const node = view.node;
    // headings follow the section's h3 without a jump
    expect([...node.querySelectorAll('h2, h3, h5, h6')]).toHaveLength(0);
    expect([...node.querySelectorAll('h4')].map(h => text(h))).toEqual(['Quotas (GPUs)', 'Idle policy', 'Usage report (GPU-hours)', 'Audit log']);

    const guaranteed = node.querySelector('input[name="guaranteed"]') as HTMLInputElement;
    expect(guaranteed.value).toBe('2');
    expect(node.querySelector(`label[for="${guaranteed.id}"]`)?.textContent).toBe('Guaranteed');
    expect(node.querySelector('.jp-sched-q-remove')?.getAttribute('aria-label')).toBe('Remove quota line 1 (team-ui)');
    await type(guaranteed, '-1');
    await click(node.querySelector('.jp-sched-quota-save')!);
    const quotaStatus = node.querySelectorAll('[role="status"]')[0];
    expect(text(quotaStatus)).toBe('Not saved: Row 1 (team team-ui): Guaranteed must be >= 0 (got -1) — a number of GPUs');
    await type(node.querySelector('input[name="guaranteed"]') as HTMLInputElement, '3');
    await click(node.querySelector('.jp-sched-quota-add')!);
    await type(node.querySelectorAll<HTMLInputElement>('input[name="team"]')[1], 'team-b');
    await click(node.querySelector('.jp-sched-quota-save')!);
    expect(text(quotaStatus)).toBe('Saved 2 quota lines.');
    expect(server.calls.filter(c => c.method === 'PUT' && c.path === 'api/sched/quotas').pop()?.body).toEqual({
      quotas: [
        { team: 'team-ui', user: null, gpu_model: '*', guaranteed: 3, borrowing_limit: 0 },
        { team: 'team-b', user: null, gpu_model: '*', guaranteed: 0, borrowing_limit: null }
      ]
    });

    // idle policy: only what changed is sent; the server's validation message is shown
    const threshold = node.querySelector('#jp-sched-idle-threshold_pct') as HTMLInputElement;
    expect(threshold.value).toBe('5');
    expect(text(node.querySelector('.jp-sched-idle'))).toContain('1 override by priority class or job kind keeps its own values.');
    await type(threshold, '500');
    await click(node.querySelector('.jp-sched-idle-save')!);
    const idleStatus = node.querySelector('.jp-sched-idle [role="status"]')!;
    expect(text(idleStatus)).toBe('Not saved: Idle below (%) must be at most 100 (got 500) — a percentage'); // the form's label, once (new user 23, N13)
    await type(node.querySelector('#jp-sched-idle-threshold_pct') as HTMLInputElement, '7');
    await type(node.querySelector('#jp-sched-idle-lease_mode') as HTMLSelectElement, 'notify');
    await click(node.querySelector('.jp-sched-idle-save')!);
    expect(text(idleStatus)).toBe('Saved 2 changes; the server applies them at once.');
    expect(server.calls.filter(c => c.method === 'PUT' && c.path === 'api/sched/idle-policy').pop()?.body).toEqual({ default: { threshold_pct: 7, lease_mode: 'notify' } });
    await click(node.querySelector('.jp-sched-idle-save')!);
    expect(text(idleStatus)).toBe('Nothing changed.');

    // usage: a table with sortable column buttons
    const rows = () => [...node.querySelectorAll('.jp-sched-usage-table tbody tr')].map(r => text(r.querySelector('td')));
    expect(rows()).toEqual(['bob', 'ann']);
    const sortByWho = [...node.querySelectorAll<HTMLButtonElement>('.jp-sched-sort')][0];
    await click(sortByWho);
    expect(rows()).toEqual(['ann', 'bob']);
    expect(sortByWho.parentElement?.getAttribute('aria-sort')).toBe('ascending');
    expect([...node.querySelectorAll('.jp-sched-usage-table th')].map(th => text(th))).toEqual(['User ▲', 'GPU-h', 'Used GPU-h', 'Cost', 'Share']);
    await type(node.querySelector('#jp-sched-usage-by') as HTMLSelectElement, 'team');
    await settle();
    await flush();
    expect(rows()).toEqual(['team-ui']);
    expect(text(node.querySelector('.jp-sched-usage-table tbody tr'))).toContain('2');

    // audit: search filters the loaded records
    expect(node.querySelectorAll('.jp-sched-audit-record')).toHaveLength(2);
    // new user 17 N6: each row's time in the panel's one clock, with its date and seconds (it was the
    // browser's locale: "12/1/2026, 10:00:00 AM", no zone)
    expect([...node.querySelectorAll('.jp-sched-audit-record time')].map(t => text(t))).toEqual(['Dec 1 10:00:00 UTC', 'Dec 1 09:00:00 UTC']);
    await type(node.querySelector('.jp-sched-audit-search') as HTMLInputElement, 'quotas_changed');
    expect([...node.querySelectorAll('.jp-sched-audit-record')].map(r => text(r.querySelector('strong')))).toEqual(['quotas_changed']);
    expect(text(node.querySelector('.jp-sched-audit [role="status"]'))).toBe('1 matching record');
    model.dispose();
  });

  it('pure helpers', () => {
    expect(aggregateUsage([{ user: 'a', gpu_seconds: 3600, jobs: 1 }, { user: 'a', gpu_hours: 1, jobs: 1, utilized_gpu_seconds: 1800 }, { gpu_hours: 0.5, jobs: 1 }], 'user')).toEqual([
      { key: 'a', gpuHours: 2, utilizedGpuHours: 0.5, cost: null, unpricedGpuHours: 0 },
      { key: '(none)', gpuHours: 0.5, utilizedGpuHours: null, cost: null, unpricedGpuHours: 0 }
    ]);
    expect(aggregateUsage([{ model: 'L4', gpu_hours: 1, jobs: 1 }], 'gpu_model')[0].key).toBe('L4');
    expect(hours(0.00012)).toBe('0.0001');
    expect(hours(12.345)).toBe('12.35');
    expect(auditMatches({ id: 1, at: 'x', actor: 'ann', action: 'cancel', message: 'job j-1' }, ' J-1 ')).toBe(true);
    expect(auditMatches({ id: 1, at: 'x', actor: 'ann', action: 'cancel', message: '' }, 'bob')).toBe(false);
    expect(quotaLinesFrom([{ team: ' t ', user: '', gpu_model: '', guaranteed: 'x', borrowing_limit: '2' }])).toEqual([
      { team: 't', user: null, gpu_model: '*', guaranteed: Number.NaN, borrowing_limit: 2 }
    ]);
    const current = { enabled: true, threshold_pct: 5, window_s: 60, warning_s: 10, grace_s: 10, busy_kernel_window_s: null, lease_mode: 'release', busy_kernel_mode: 'notify', job_mode: 'requeue', service_mode: 'notify', max_gap_s: 30, keepalive_max_s: 0 } as const;
    expect(idlePatch(current, { enabled: false, window_s: 'soon', job_mode: 'requeue', max_gap_s: '' })).toEqual({ enabled: false, window_s: 'soon' });
  });

  it('says the idle policy with a grace only when one is set (new user 4: "and, 0 s later, reclaim")', () => {
    const trans = nullTranslator.load('jupyter_sched');
    const base = { enabled: true, threshold_pct: 5, window_s: 1800, warning_s: 600, grace_s: 0, busy_kernel_window_s: null, lease_mode: 'release', busy_kernel_mode: 'notify', job_mode: 'notify', service_mode: 'notify', max_gap_s: 600, keepalive_max_s: 7200 } as const;
    const noGrace = idlePolicySentence(base, trans);
    expect(noGrace).toBe('Idle below 5 % for 30 min: reclaim, with a warning 10 min before.');
    expect(noGrace).not.toMatch(/grace|later/);
    const grace = idlePolicySentence({ ...base, warning_s: 0, grace_s: 600 }, trans);
    expect(grace).toBe('Idle below 5 % for 30 min: a warning, then a 10 min grace, then reclaim.');
    expect(idlePolicySentence({ ...base, warning_s: 0 }, trans)).toContain('no warning');
    expect(idlePolicySentence({ ...base, grace_s: 300 }, trans)).toBe('Idle below 5 % for 30 min (a warning 10 min before that), then a 5 min grace, then reclaim.');
  });
});

describe('newuser16 N13: the Priority list offers the classes granted to the user', () => {
  it('from GET me, for the team the form charges', () => {
    const all = ['high', 'normal', 'low'];
    expect(offeredPriorities(all, { team: 'default', priorities: { default: ['normal', 'low'] } })).toEqual(['normal', 'low']);
    expect(offeredPriorities(all, { team: 'ml', priorities: { default: ['normal'], ml: ['high', 'normal', 'low'] } })).toEqual(all);
    expect(offeredPriorities(all, null)).toEqual(all); // no answer from me yet: the server's list
    expect(offeredPriorities(undefined, { team: 'default', priorities: { default: ['low'] } })).toEqual(['low']);
  });

  it('the form shows only those', async () => {
    const server = new FakeSchedServer();
    server.me = { ...server.me, team: 'team-ml', priorities: { 'team-ml': ['normal', 'low'] } } as typeof server.me;
    const { model } = await startedModel(server, 'inventory');
    const view = await mount(new SubmitView(context(model), '', () => undefined));
    await settle();
    await flush();
    const options = [...view.node.querySelectorAll('.jp-sched-submit-priority option')].map(o => (o as HTMLOptionElement).value);
    expect(options).toEqual(['normal', 'low']);
    model.dispose();
  });
});

describe('new user 20, N7 (panel half): the Submit form charges the team its member picks', () => {
  it('test_newuser20_n7_panel_team_offered_teams: the default team first; none to pick for a member of one team', () => {
    expect(offeredTeams({ team: 'ml', teams: ['vision', 'ml'] })).toEqual(['ml', 'vision']);
    expect(offeredTeams({ team: 'ml', teams: ['ml'] })).toEqual([]);
    expect(offeredTeams(null)).toEqual([]);
    expect(submitBodyFrom({ ...EMPTY_VALUES, path: 'a.py', team: 'vision' }).team).toBe('vision');
    expect('team' in submitBodyFrom({ ...EMPTY_VALUES, path: 'a.py' })).toBe(false); // the server's default
    // the classes offered follow the team chosen
    const me = { team: 'ml', priorities: { ml: ['high', 'normal', 'low'], vision: ['normal', 'low'] } } as Parameters<typeof offeredPriorities>[1];
    expect(offeredPriorities(['high', 'normal', 'low'], me, 'vision')).toEqual(['normal', 'low']);
    expect(offeredPriorities(['high', 'normal', 'low'], me, '')).toEqual(['high', 'normal', 'low']);
  });

  it('test_newuser20_n7_panel_team_select: lists my teams, the default first and chosen at first; the pick is sent, with a class granted in it', async () => {
    const server = new FakeSchedServer();
    server.me = { ...server.me, team: 'ml', teams: ['ml', 'vision'], priorities: { ml: ['high', 'normal', 'low'], vision: ['normal', 'low'] } } as typeof server.me;
    const sent: unknown[] = [];
    server.routes.set('POST dryrun', () => json(200, { fits: true, never: false, allocation: null, reason: null, eta: null, would_preempt: [], job: makeJob({ id: 'dryrun' }) }));
    server.routes.set('POST jobs', body => {
      sent.push(body);
      return json(201, makeJob({ id: `j-${sent.length}`, name: 'steps', state: 'pending' }));
    });
    const { model } = await startedModel(server, 'inventory');
    const view = await mount(new SubmitView(context(model), '', () => undefined));
    await settle();
    await flush();
    const form = view.node;
    const select = form.querySelector('.jp-sched-submit-team') as HTMLSelectElement;
    expect(text(form.querySelector('label[for="jp-sched-submit-team"]'))).toBe('Team');
    expect([...select.options].map(o => [o.value, o.textContent])).toEqual([['', 'ml (your default)'], ['vision', 'vision']]);
    expect(select.value).toBe('');
    await type(form.querySelector('.jp-sched-submit-path') as HTMLInputElement, 'steps.py');
    await type(form.querySelector('.jp-sched-submit-priority') as HTMLSelectElement, 'high');
    const submit = async () => {
      await act(async () => {
        form.querySelector('form')!.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
      });
      await settle();
      await flush();
    };
    await submit();
    expect(sent[0]).toEqual({ name: 'steps', gpus: 1, priority: 'high', script: 'steps.py' }); // the default team: left to the server
    await type(select, 'vision');
    // high is not granted in vision: the list offers what is, and the form sends what it shows
    expect([...form.querySelectorAll('.jp-sched-submit-priority option')].map(o => (o as HTMLOptionElement).value)).toEqual(['normal', 'low']);
    expect((form.querySelector('.jp-sched-submit-priority') as HTMLSelectElement).value).toBe('normal');
    await submit();
    expect(sent[1]).toEqual({ name: 'steps', gpus: 1, priority: 'normal', script: 'steps.py', team: 'vision' });
    model.dispose();
  });

  it('a member of one team sees no Team field', async () => {
    const server = new FakeSchedServer();
    server.me = { ...server.me, team: 'ml', teams: ['ml'] } as typeof server.me;
    const { model } = await startedModel(server, 'inventory');
    const view = await mount(new SubmitView(context(model), '', () => undefined));
    await settle();
    await flush();
    expect(view.node.querySelector('.jp-sched-submit-team')).toBeNull();
    expect(view.node.querySelector('.jp-sched-submit-priority')).not.toBeNull();
    model.dispose();
  });
});

// newuser18 N18: Admin › Quotas said "[quotas[0].borrowing_limit] — … or leave borrowing_limit out": the
// form has columns Guaranteed and Borrow, no row numbers in JSON, and no field a row can leave out.
describe('newuser18 N18: a refused quota Save speaks of the form', () => {
  const trans = nullTranslator.load('jupyter_sched');
  const rows = [{ team: 'x', user: '', gpu_model: 'H100', guaranteed: '-1', borrowing_limit: '-3' }];
  const refused = (message: string, field: string, hint: string) => new SchedApiError(400, { code: 'validation_error', message, field, hint });
  it.each([
    ['Guaranteed -1', refused('quotas[0].guaranteed must be at least 0 (got -1)', 'quotas[0].guaranteed', 'give a number from 0 to 1000000, or leave guaranteed out (default: 0)'),
      'Row 1 (team x): Guaranteed must be at least 0 (got -1) — give a number from 0 to 1000000'],
    ['Borrow -3', refused('quotas[0].borrowing_limit must be at least 0 (got -3)', 'quotas[0].borrowing_limit', 'give a number from 0 to 1000000, or leave borrowing_limit out'),
      'Row 1 (team x): Borrow must be at least 0 (got -3) — give a number from 0 to 1000000, or leave it empty for unlimited'],
    ['Borrow -3, as the ledger says it', refused('quota[x, H100].borrowing_limit must be >= 0 or null (got -3)', 'borrowing_limit', 'use null for unlimited, 0 for no borrowing'),
      'Row 1 (team x): Borrow must be >= 0 (got -3) — leave it empty for unlimited, 0 for no borrowing'],
    ['Model H100', refused("quota[x, H100]: no GPUs of model 'H100' exist", 'gpu_model', "use one of Simulated GPU 80GB or '*'"),
      "Row 1 (team x): Model: no GPUs of model 'H100' exist — use one of Simulated GPU 80GB or '*'"],
    ['Guaranteed 5 of 4', refused('teams are guaranteed 5 GPUs of any model but only 4 exist', 'guaranteed', 'lower the guarantees so that their sum is at most the GPUs that exist'),
      'Guaranteed: teams are guaranteed 5 GPUs of any model but only 4 exist — lower the guarantees so that their sum is at most the GPUs that exist']
  ])('newuser18 N18: %s', (_name, err, want) => {
    const shown = quotaErrorText(err, rows, trans);
    expect(shown).toBe(want);
    expect(shown).not.toMatch(/quotas?\[|borrowing_limit|leave \w+ out|null/);
  });

  it('newuser18 N18: a user line is named by its team and user; an error that is no SchedApiError is shown as it is', () => {
    const err = refused('quota[x/ann, *]: no GPUs of model \'*\' exist', 'gpu_model', '');
    expect(quotaErrorText(err, [{ team: 'y', user: '', gpu_model: '*', guaranteed: '1', borrowing_limit: '' }, { team: 'x', user: 'ann', gpu_model: '*', guaranteed: '1', borrowing_limit: '' }], trans))
      .toBe("Row 2 (team x, user ann): Model: no GPUs of model '*' exist");
    expect(quotaErrorText(new Error('network down'), rows, trans)).toBe('network down');
  });
});
