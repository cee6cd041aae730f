// Session 40 (s40-params).
// newuser39 n3 (panel addendum): Parameters `regoin=eu` for notebooks/daily_report.ipynb (its parameters cell sets region,
// days) — Check fit said "Dry run: Would start now on c1 (0 GPUs)." and Scheduled notebooks → New said `Saved "p7"`,
// while the CLI said "did you mean 'region'?". The server now reads the notebook at a dry run, a submit and a
// definition's save and says it among the answer's warnings, in the CLI's words
// (jupyter_sched.definitions.parameters.parameters_text_note; tests/onboarding/test_s40_params.py pins the same text
// against a real server); the panel says the answer's warnings where it says the answer.
// s39 nbopen's left-over: a Scheduled notebooks run still going showed "Open notebook", which answered 404 until it
// ended; it says when it opens instead.
import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';

import { EXECUTED_LATER } from '../src/definitions';
import { formWords } from '../src/format';
import { jobEdit, SubmitView } from '../src/sections/submit';
import { FakeSchedServer, json, makeJob, settle } from './fakeserver';
import { context, flush, mount, mountedDefinitions, startedModel, text } from './ui';

/** The server's note, as parameters_note writes it (the Python test asserts this very text from a real server). */
export const MISSPELT =
  "parameter 'regoin' is not in daily_report.ipynb's parameters cell (region, days) — did you mean 'region'? It is " +
  "injected anyway; the notebook's own value of any name it sets is what runs.";
const AS_TEXT =
  "region is 'us' (str) in daily_report.ipynb's parameters cell; the value given, 1.1, is a float, and the notebook " +
  "gets it as it is. To pass it as text, quote it as a JSON string: -p 'region=\"…\"'.";

afterEach(() => {
  document.body.replaceChildren();
});

const definition = {
  id: 'd-1', user: 'alice', name: 'daily_report', notebook: '/home/alice/daily_report.ipynb', script: null, schedule: '0 6 * * *',
  timezone: 'UTC', schedule_description: 'At 06:00', paused: false, next_run_at: '2026-12-08T06:00:00Z', parameters: { regoin: 'eu' },
  job: { gpus: 0 }, last_run: null
};

function run(id: string, job: Record<string, unknown>) {
  return {
    definition_id: 'd-1', job_id: id, trigger: 'schedule', scheduled_for: '2026-12-07T06:00:00Z', parameters: {}, created_at: '2026-12-07T06:00:00Z',
    job: makeJob({ id, name: `daily_report @ ${id}`, script: null, notebook: '/home/alice/daily_report.ipynb', command: [], ...job })
  };
}

describe('newuser39 n3: a parameter the notebook does not set is said in Check fit, Submit and Scheduled notebooks', () => {
  it('test_newuser39_n3_check_fit_says_the_servers_parameter_note_in_the_forms_words', async () => {
    const server = new FakeSchedServer();
    const checked: unknown[] = [];
    server.routes.set('POST dryrun', body => {
      checked.push(body);
      return json(200, { fits: true, never: false, allocation: { node: 'c1', gpu_indices: [], gpu_uuids: [] }, reason: null, eta: null,
        would_preempt: [], job: makeJob({ id: 'dryrun' }), warnings: [MISSPELT] });
    });
    const { model } = await startedModel(server, 'inventory');
    const view = await mount(new SubmitView(context(model), '', () => undefined));
    view.edit(jobEdit(makeJob({ state: 'failed', script: null, notebook: '/home/alice/daily_report.ipynb', command: [], gpus: 0, parameters: { regoin: 'eu' } })));
    await flush();
    await settle();
    await act(async () => {
      (view.node.querySelector('.jp-sched-dryrun-button') as HTMLButtonElement).click();
    });
    await settle();
    await flush();
    expect(checked[checked.length - 1]).toMatchObject({ notebook: '/home/alice/daily_report.ipynb', parameters: { regoin: 'eu' } });
    const said = text(view.node.querySelector('.jp-sched-feedback'));
    expect(said).toContain(`Note: ${MISSPELT}`);
    expect(said).toContain("did you mean 'region'?");
    // a note is not "all clear": the line is a warning, not the green one
    expect(view.node.querySelector('.jp-sched-feedback-warn')).not.toBeNull();
    model.dispose();
  });

  it('test_newuser39_n3_the_notes_cli_spelling_of_a_parameter_reads_as_the_parameters_field', () => {
    expect(formWords(AS_TEXT)).toBe(AS_TEXT.replace(`-p 'region="…"'`, 'region="…" in Parameters'));
    expect(formWords(MISSPELT)).toBe(MISSPELT); // nothing of the CLI in it
    expect(formWords("a word -pre 'x'")).toBe("a word -pre 'x'"); // only the option itself
  });

  it('test_newuser39_n3_scheduled_notebooks_save_says_the_servers_notes', async () => {
    const server = new FakeSchedServer();
    const posted: unknown[] = [];
    server.routes.set('GET definitions', () => json(200, posted.length ? [definition] : []));
    server.routes.set('POST definitions', body => {
      posted.push(body);
      return json(201, { ...definition, warnings: [MISSPELT] });
    });
    const { v, done, close } = await mountedDefinitions(server);
    v.node.querySelector<HTMLInputElement>('.jp-sched-defs-path')!.value = '/home/alice/daily_report.ipynb';
    v.node.querySelector<HTMLInputElement>('.jp-sched-defs-gpus')!.value = '0';
    v.node.querySelector<HTMLTextAreaElement>('.jp-sched-defs-params')!.value = 'regoin=eu';
    v.node.querySelector<HTMLButtonElement>('.jp-sched-defs-create')!.click();
    await done();
    expect(posted).toEqual([expect.objectContaining({ parameters: { regoin: 'eu' } })]);
    expect(text(v.node.querySelector('.jp-sched-defs-notice'))).toBe(`Saved "daily_report": At 06:00 Note: ${MISSPELT}`);
    close();
  });
});

describe('s39 nbopen left-over: a run still going has no executed notebook yet', () => {
  it('test_s40_executed_a_running_run_says_when_its_notebook_opens_an_ended_one_opens_it', async () => {
    const server = new FakeSchedServer();
    server.routes.set('GET definitions', () => json(200, [definition]));
    const ran = { submitted_at: '2026-12-07T06:00:00Z', started_at: '2026-12-07T06:00:02Z' };
    server.routes.set('GET definitions/d-1/runs', () => json(200, [
      run('j-going', { state: 'running', ...ran, finished_at: null }),
      run('j-failed', { state: 'failed', ...ran, finished_at: '2026-12-07T06:01:00Z', exit_code: 1 }),
      run('j-never', { state: 'cancelled', submitted_at: '2026-12-07T06:00:00Z', started_at: null })
    ]));
    const fetched: string[] = [];
    server.routes.set('GET jobs/j-going/notebook', () => {
      fetched.push('j-going');
      return json(404, { error: { code: 'not_found', message: 'no executed notebook yet', field: null, hint: null } });
    });
    const { v, done, close } = await mountedDefinitions(server);
    v.node.querySelector<HTMLButtonElement>('.jp-sched-def-expand')!.click();
    await done();
    const row = (id: string) => v.node.querySelector(`li.jp-sched-run[data-job-id="${id}"]`)!;
    expect(row('j-going').querySelector('.jp-sched-run-open')).toBeNull();
    expect(row('j-going').querySelector('.jp-sched-run-download')).toBeNull();
    expect(text(row('j-going').querySelector('.jp-sched-run-opens-later'))).toBe(EXECUTED_LATER);
    expect(EXECUTED_LATER).toBe('running — its notebook opens here when it ends');
    expect(text(row('j-failed').querySelector('.jp-sched-run-open'))).toBe('Open notebook');
    expect(row('j-failed').querySelector('.jp-sched-run-opens-later')).toBeNull();
    // cancelled before it started: nothing ran, nothing to open and nothing to wait for
    expect(row('j-never').querySelector('.jp-sched-run-actions')).toBeNull();
    expect(fetched).toEqual([]);
    close();
  });
});
