/**
 * Session 34, the panel's leftovers of newuser33 N3 and n9:
 * - n9's next step: Resubmit of a job its time limit stopped (or the out-of-memory killer ended — that one was sent
 *   again at once) offers "Edit in Submit form": the sidebar's Submit form filled with the job's request (its fields,
 *   and what the form has no field for — env, working dir, … — carried and named), the field to change focused; and
 *   "Resubmit anyway". Before, the toast only said "set a longer Time limit in the Submit form": the user retyped it all.
 * - newuser33 N3 nit: once the scheduler answered again and the job a Submit of unknown outcome made was in My work,
 *   the form still said "may or may not have been submitted"; it now asks by the submit's key and says which.
 * - N3 leftover: while the header says the scheduler is "not answering — showing what it said at T", the Queue's and
 *   My work's ETAs and "(now)"/"in 2m" were worked out against the browser's clock (a 2-minute-old "ETA 19:01 UTC
 *   (now)"); they are said as of T, the time of its last answer.
 */
import { Notification } from '@jupyterlab/apputils';
import { StateDB } from '@jupyterlab/statedb';
import { nullTranslator } from '@jupyterlab/translation';
import { ServerConnection } from '@jupyterlab/services';
import { CommandRegistry } from '@lumino/commands';
import { Widget } from '@lumino/widgets';
import { act } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';

import plugins, { CommandIDs } from '../src/index';
import { TOAST_CHARS } from '../src/notify';
import { SchedSections } from '../src/registry';
import { QueueView } from '../src/sections';
import { shownNow } from '../src/sections/base';
import { editedBody, jobEdit, outOfMemoryToast, resubmitBody, submitBodyFrom, SubmitView } from '../src/sections/submit';
import { SUBMIT_TIMINGS } from '../src/submitting';
import type { SchedSidebar } from '../src/sidebar';
import type { Job, SubmitRequest } from '../src/types';
import { FakeSchedServer, json, makeJob, queueRow, settle } from './fakeserver';
import { context, flush, mount, startedModel, text } from './ui';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  document.body.replaceChildren();
});

/** A job its 1m time limit stopped: a script with arguments, 2 GPUs of one model, CPU and memory, another team, env. */
function slowq(overrides: Partial<Job> = {}): Job {
  return makeJob({
    id: 'j-slowq', name: 'slowq', state: 'failed', team: 'team-cv', priority: 'low',
    script: '/srv/root/work/train.py', command: ['--epochs', '3', '--title', 'my run'], working_dir: '/srv/root/work',
    resources: { gpus: 2, gpu_milli: 1000, gpu_models: ['Simulated GPU 80GB'], workers: 1, cpu_millis: 4000, memory_mib: 16384 },
    env: { BATCH: '64', SEED: '1' }, time_limit_s: 60,
    started_at: '2026-12-06T19:00:00Z', finished_at: '2026-12-06T19:01:00Z',
    message: 'killed by SIGTERM (time limit 1m reached)',
    ...overrides
  });
}

/** A request with the API's second spellings as the first ones, so two requests that ask the same compare equal. */
function canonical(body: SubmitRequest): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body };
  const move = (from: string, to: string, read: (v: unknown) => unknown) => {
    if (from in out) {
      out[to] = read(out[from]);
      delete out[from];
    }
  };
  move('cpu', 'cpu_millis', v => Number(v) * 1000);
  move('memory', 'memory_mib', v => Number(String(v).replace(/GiB$/, '')) * (String(v).endsWith('GiB') ? 1024 : 1));
  move('time_limit', 'time_limit_s', v => ({ '1m': 60, '3m': 180 })[String(v)] ?? v);
  return out;
}

describe('s34 newuser33 N3 leftover: clocks while the scheduler does not answer', () => {
  it('test_s34_n3_times_are_said_as_of_the_last_answer_while_the_scheduler_does_not_answer', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const t0 = Date.parse('2026-12-06T19:00:00Z');
    vi.setSystemTime(t0);
    const eta = new Date(t0 + 120_000).toISOString();
    const server = new FakeSchedServer();
    const reason = {
      code: 'InsufficientGpus', message: 'needs 2 GPUs, 0 free', details: {}, unblock: '', eta, eta_reason: '',
      text: { summary: 'needs 2 GPUs, 0 free.', eta: 'ETA 19:02 UTC', unblock: '' }
    };
    server.queue = [queueRow({ id: 'j-wait', name: 'b-wait2', state: 'pending', reason }, { position: 1 })];
    const { model } = await startedModel(server, 'queue');
    const view = await mount(new QueueView(context(model)));
    const line = () => text(view.node.querySelector('.jp-sched-job .jp-sched-reason'));
    expect(line()).toContain('(in 2m)');
    // the hub's central service hangs: the forwarder says its loop reconnects
    server.stream.push('connection', { central: { target: 'the central service', attempt: 1, next_in_s: 1, error: 'timed out', message: 'reconnecting' } });
    await settle();
    await flush();
    expect(model.serverDown).not.toBeNull();
    vi.setSystemTime(t0 + 5 * 60_000);
    view.update();
    await flush();
    // before: "(now)" — the browser's clock against an answer five minutes old
    expect(line()).toContain('(in 2m)');
    expect(line()).not.toContain('(now)');
    server.stream.push('connection', { central: null });
    await settle();
    await flush();
    expect(model.serverDown).toBeNull();
    view.update();
    await flush();
    expect(line()).not.toContain('(in 2m)');
    model.dispose();
  });

  it('test_s34_n3_the_shown_now_is_the_wall_clock_while_answering_and_never_later_than_it', () => {
    const wall = new Date('2026-12-06T19:05:00Z');
    const last = new Date('2026-12-06T19:01:00Z');
    expect(shownNow({ serverDown: null, lastAnswerAt: last }, wall)).toBe(wall);
    expect(shownNow({ serverDown: 'not answering', lastAnswerAt: last }, wall)).toBe(last);
    expect(shownNow({ serverDown: 'not answering', lastAnswerAt: null }, wall)).toBe(wall);
    expect(shownNow({ serverDown: 'not answering', lastAnswerAt: new Date('2026-12-06T19:06:00Z') }, wall)).toBe(wall);
  });
});

describe('s34 newuser33 n9: Resubmit → the Submit form filled with the job', () => {
  it('test_s34_n9_a_jobs_edit_fills_the_forms_fields_and_carries_the_rest_so_nothing_of_its_request_is_lost', () => {
    const job = slowq({ image: 'python:3.11', port: 8000 });
    const edit = jobEdit(job, '/srv/root', 'team-ml', 'timeLimit');
    expect(edit.values).toEqual({
      path: 'work/train.py', args: "--epochs 3 --title 'my run'", gpus: '2', model: 'Simulated GPU 80GB', priority: 'low',
      timeLimit: '1m', name: 'slowq', team: 'team-cv', cpu: '4', memory: '16GiB',
      noPreempt: false // the form's "Free GPUs only" box (s38-nopreempt c53fe3ee): a job that did not ask it, unticked
    });
    expect(edit.carriedWords).toEqual(['env BATCH, SEED', 'working dir /srv/root/work', 'image python:3.11', 'port 8000']);
    // unchanged, the form sends what Resubmit sends (in the form's spellings)
    const sent = editedBody(submitBodyFrom(edit.values, '/srv/root'), edit.carried);
    expect(canonical(sent)).toEqual(canonical(resubmitBody(job)));
    // a notebook's parameters come back as the words that give them again; a 0 limit ("none") as 0
    const nb = jobEdit(makeJob({ script: null, notebook: '/srv/root/a.ipynb', parameters: { days: 3, region: 'eu', tag: '7' }, time_limit_s: 0, unlimited: true } as Partial<Job>), '/srv/root');
    expect(nb.values.args).toBe('days=3 region=eu \'tag="7"\'');
    expect(submitBodyFrom(nb.values, '/srv/root').parameters).toEqual({ days: 3, region: 'eu', tag: '7' });
    expect(nb.values.timeLimit).toBe('0');
    // a limit with seconds is said exactly (the compact "1h05m" would shorten it)
    expect(jobEdit(slowq({ time_limit_s: 3930 })).values.timeLimit).toBe('1h5m30s');
  });

  it('test_s34_n9_resubmit_of_a_time_limit_stop_opens_the_filled_form_with_time_limit_focused_and_sends_the_edit', async () => {
    const server = new FakeSchedServer();
    server.me = { ...server.me, teams: ['team-ml', 'team-cv'] } as typeof server.me;
    server.jobs = [slowq()];
    server.routes.set('GET jobs/j-slowq', () => json(200, server.jobs[0]));
    const posted: SubmitRequest[] = [];
    server.routes.set('POST jobs', body => {
      posted.push(body as SubmitRequest);
      return json(201, makeJob({ id: 'j-new', name: 'slowq', state: 'pending' }));
    });
    server.routes.set('POST dryrun', () => json(200, { fits: true, never: false, allocation: null, reason: null, eta: null, would_preempt: [], job: makeJob() }));
    const warning = vi.spyOn(Notification, 'warning').mockReturnValue('toast-1');
    const { model, sidebar, fake } = await activated(server);
    await fake.app.commands.execute(CommandIDs.resubmit, { id: 'j-slowq' });
    expect(posted).toEqual([]); // asked first (newuser32 n8)
    const [said, options] = warning.mock.calls.at(-1)!;
    expect(said.length).toBeLessThanOrEqual(TOAST_CHARS);
    expect(said.endsWith('set a longer Time limit in the Submit form.')).toBe(true);
    const actions = (options as Notification.IOptions<unknown>).actions ?? [];
    // before: one action, "Resubmit with the same limit"; the form was left empty
    expect(actions.map(a => a.label)).toEqual(['Edit in Submit form', 'Resubmit anyway']);
    await act(async () => {
      actions[0].callback(new MouseEvent('click'));
    });
    await flush();
    const input = (cls: string) => sidebar.node.querySelector(`.jp-sched-submit-${cls}`) as HTMLInputElement;
    expect(input('path').value).toBe('/srv/root/work/train.py');
    expect(input('args').value).toBe("--epochs 3 --title 'my run'");
    expect(input('gpus').value).toBe('2');
    expect(input('timelimit').value).toBe('1m');
    expect(input('cpu').value).toBe('4');
    expect(input('memory').value).toBe('16GiB');
    expect(input('name').value).toBe('slowq');
    expect((sidebar.node.querySelector('.jp-sched-submit-team') as HTMLSelectElement).value).toBe('team-cv');
    expect(document.activeElement).toBe(input('timelimit'));
    expect(text(sidebar.node.querySelector('.jp-sched-submit-carried'))).toBe(
      'From slowq (j-slowq): also sends env BATCH, SEED; working dir /srv/root/work. Leave these out'
    );
    await act(async () => {
      const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!;
      setter.call(input('timelimit'), '3m');
      input('timelimit').dispatchEvent(new Event('input', { bubbles: true }));
    });
    await act(async () => {
      sidebar.node.querySelector('form.jp-sched-submit')!.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    });
    await vi.waitFor(() => expect(posted).toHaveLength(1));
    expect(posted[0]).toMatchObject({
      script: '/srv/root/work/train.py', args: ['--epochs', '3', '--title', 'my run'], gpus: 2, gpu_models: ['Simulated GPU 80GB'],
      cpu: 4, memory: '16GiB', time_limit: '3m', team: 'team-cv', priority: 'low', name: 'slowq',
      env: { BATCH: '64', SEED: '1' }, working_dir: '/srv/root/work'
    });
    model.dispose();
  });

  it('test_s34_n9_resubmit_of_a_job_killed_out_of_memory_asks_first_and_focuses_memory', async () => {
    const server = new FakeSchedServer();
    const listed = slowq({ time_limit_s: 3600, message: 'killed by SIGKILL (likely out of memory: its memory cgroup counted 1 out-of-memory kill; memory limit 16.0 GiB)' });
    server.jobs = [listed];
    // GET jobs/{id} says it (the list does not)
    server.routes.set('GET jobs/j-slowq', () => json(200, { ...listed, ended_out_of_memory: true }));
    const posted: unknown[] = [];
    server.routes.set('POST jobs', body => {
      posted.push(body);
      return json(201, makeJob({ id: 'j-new', name: 'slowq', state: 'pending' }));
    });
    const warning = vi.spyOn(Notification, 'warning').mockReturnValue('toast-1');
    const { model, sidebar, fake } = await activated(server);
    await fake.app.commands.execute(CommandIDs.resubmit, { id: 'j-slowq' });
    // before: sent again at once, to be killed the same way
    expect(posted).toEqual([]);
    const [said, options] = warning.mock.calls.at(-1)!;
    expect(said).toBe('slowq ran out of memory (its memory 16GiB); as it was, it would again — ask for more Memory in the Submit form.');
    const actions = (options as Notification.IOptions<unknown>).actions ?? [];
    expect(actions.map(a => a.label)).toEqual(['Edit in Submit form', 'Resubmit anyway']);
    await act(async () => {
      actions[0].callback(new MouseEvent('click'));
    });
    await flush();
    const memory = sidebar.node.querySelector('.jp-sched-submit-memory') as HTMLInputElement;
    expect(memory.value).toBe('16GiB');
    expect(document.activeElement).toBe(memory);
    await act(async () => {
      actions[1].callback(new MouseEvent('click'));
    });
    await vi.waitFor(() => expect(posted).toHaveLength(1)); // "Resubmit anyway" sends it as it was
    model.dispose();
  });

  it('test_s34_n9_the_out_of_memory_toast_keeps_its_fix_whole_whatever_the_name', () => {
    for (const name of ['oomy', 'x'.repeat(200)]) {
      const said = outOfMemoryToast(name, '16GiB');
      expect(said.length).toBeLessThanOrEqual(TOAST_CHARS);
      expect(said.endsWith('ask for more Memory in the Submit form.')).toBe(true);
    }
  });
});

const [, , sidebarPlugin] = plugins;

/** The sidebar plugin in a stand-in application (as test/plugins.test.ts): real commands, model on the API double. */
async function activated(server: FakeSchedServer) {
  const { model } = await startedModel(server);
  const added: { widget: Widget; area: string }[] = [];
  const app = {
    commands: new CommandRegistry(),
    shell: {
      add: (widget: Widget, area: string) => {
        added.push({ widget, area });
        if (area === 'left') {
          Widget.attach(widget, document.body); // a shell attaches its open left area: the panel is visible
        }
      },
      activateById: () => undefined,
      currentWidget: null
    },
    serviceManager: { serverSettings: ServerConnection.makeSettings({ baseUrl: 'http://127.0.0.1:9/' }) },
    contextMenuHitTest: () => null,
    restored: Promise.resolve()
  };
  const palette = { addItem: () => undefined };
  await sidebarPlugin.activate(app as never, model, new SchedSections(), nullTranslator, null, new StateDB(), null, palette, null, null);
  await settle();
  await flush();
  const sidebar = added.find(a => a.area === 'left')!.widget as SchedSidebar;
  await vi.waitFor(() => expect(sidebar.sectionIds).toContain('submit'));
  await flush();
  return { model, sidebar, fake: { app } };
}

describe('s34 newuser33 N3 nit: a Submit of unknown outcome is told once the scheduler answers', () => {
  const central = (state: unknown) => ({ central: state });
  const hung = { target: 'the central service', attempt: 1, next_in_s: 1, error: 'timed out', message: 'reconnecting' };

  for (const made of [true, false]) {
    it(`test_newuser33_n3_nit_the_submit_status_says_whether_it_was_made_once_the_scheduler_answers_${made ? 'made' : 'not_made'}`, async () => {
      const saved = { ...SUBMIT_TIMINGS };
      Object.assign(SUBMIT_TIMINGS, { attemptMs: 20, giveUpMs: 120, pauseMs: 1 });
      try {
        const server = new FakeSchedServer();
        const posted: string[] = [];
        const asked: string[] = [];
        const job = makeJob({ id: 'j-during', name: 'b-during', state: 'pending' });
        server.routes.set('POST jobs', (_body, query) => {
          posted.push(query.get('idempotency_key') ?? '');
          return new Promise<Response>(() => undefined) as unknown as Response; // the hung service: no answer
        });
        server.routes.set('GET jobs', (_body, query) => {
          const key = query.get('idempotency_key');
          if (key === null) {
            return json(200, server.jobs);
          }
          asked.push(key);
          return json(200, made && key === posted[0] ? [job] : []);
        });
        const { model } = await startedModel(server, 'jobs');
        const view = await mount(new SubmitView(context(model), '', () => undefined));
        const form = view.node;
        server.stream.push('connection', central(hung));
        await settle();
        await flush();
        const path = form.querySelector('.jp-sched-submit-path') as HTMLInputElement;
        await act(async () => {
          const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!;
          setter.call(path, 'train.py');
          path.dispatchEvent(new Event('input', { bubbles: true }));
        });
        await act(async () => {
          form.querySelector('form')!.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
        });
        const said = () => text(form.querySelector('[role="status"]'));
        await vi.waitFor(() => expect(said()).toMatch(/may or may not have been submitted/));
        expect(asked).toEqual([]); // not asked while the scheduler does not answer
        // the scheduler answers again (the job went in, or not)
        server.stream.push('connection', central(null));
        await settle();
        await flush();
        await vi.waitFor(() => expect(asked).toEqual([posted[0]]));
        await flush();
        // before: "may or may not have been submitted" for good
        if (made) {
          expect(said()).toBe('The scheduler answers again: it was submitted — b-during (j-during): pending. No need to submit it again.');
          expect(model.find('j-during')?.name).toBe('b-during');
        } else {
          expect(said()).toBe('The scheduler answers again: it was not submitted (no job was made) — press Submit to send it again.');
          await act(async () => {
            form.querySelector('form')!.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
          });
          await vi.waitFor(() => expect(posted.length).toBeGreaterThan(1));
          expect(new Set(posted).size).toBe(1); // sent again with its key: one job at most, whatever came of the first
        }
        model.dispose();
      } finally {
        Object.assign(SUBMIT_TIMINGS, saved);
      }
    });
  }
});

describe('newuser35 n9: Resubmit → Edit of a CLI `-- python short.py` job', () => {
  it('test_newuser35_n9_a_python_script_command_fills_script_and_arguments_and_keeps_its_interpreter', () => {
    const venvPython = '/srv/root/.venv/bin/python';
    const job = slowq({ script: null, command: [venvPython, 'short.py', '--n', '3'], env: { PATH: '/srv/root/.venv/bin', VIRTUAL_ENV: '/srv/root/.venv' } });
    const edit = jobEdit(job, '/srv/root', 'team-ml', 'timeLimit');
    expect(edit.values.path).toBe('work/short.py');
    expect(edit.values.args).toBe('--n 3');
    expect(edit.carriedWords).toEqual(['interpreter .venv/bin/python', 'env PATH, VIRTUAL_ENV', 'working dir /srv/root/work']);
    // unchanged, it sends the job's own command again: the same interpreter, the script by its full path
    const sent = editedBody(submitBodyFrom(edit.values, '/srv/root'), edit.carried);
    expect(sent.command).toEqual([venvPython, '/srv/root/work/short.py', '--n', '3']);
    expect(sent.script).toBeUndefined();
    expect(sent.args).toBeUndefined();
    expect(sent.working_dir).toBe('/srv/root/work');
    // another file chosen in the form runs with it too; a notebook goes as a notebook
    const other = editedBody(submitBodyFrom({ ...edit.values, path: 'work/long.py', args: '' }, '/srv/root'), edit.carried);
    expect(other.command).toEqual([venvPython, '/srv/root/work/long.py']);
    const nb = editedBody(submitBodyFrom({ ...edit.values, path: 'a.ipynb', args: '' }, '/srv/root'), edit.carried);
    expect(nb.command).toBeUndefined();
    expect(nb.notebook).toBe('/srv/root/a.ipynb');
    // a bare `python` (a hub's job Python by its name) is not carried: the form's script runs with the job Python
    const bare = jobEdit(slowq({ script: null, command: ['python3', '/srv/root/work/short.py'], env: {} }), '/srv/root');
    expect(bare.values.path).toBe('work/short.py');
    expect(bare.carried.command).toBeUndefined();
    expect(editedBody(submitBodyFrom(bare.values, '/srv/root'), bare.carried).script).toBe('/srv/root/work/short.py');
    // any other program stays a program
    const other2 = jobEdit(slowq({ script: null, command: ['/usr/bin/bash', 'run.sh'], env: {} }), '/srv/root');
    expect(other2.values.path).toBe('/usr/bin/bash');
    expect(other2.values.args).toBe('run.sh');
  });
});
