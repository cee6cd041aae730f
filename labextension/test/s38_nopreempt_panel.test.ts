// s38 (session 37's no_preempt gaps, item 2): the panel can set no_preempt and shows it where it is set.
// Session 37 added --no-preempt to the CLI and the magics (the README's quickstart uses it) and Resubmit copied it, but
// the Submit form had no way to ask for it, an edited job's no_preempt was carried without a word, no row said a job
// had it, and a cancel or release whose work took GPUs back by reclaim said nothing of the cool-down it starts (the
// CLI and the magics say the server's reclaim_cooldown.text).
import { afterEach, describe, expect, it } from 'vitest';
import { act } from 'react';

import { definitionRequestParts, formStart, requestFields } from '../src/definitions';
import { cooldownNews } from '../src/format';
import { MyWorkView } from '../src/sections';
import { EMPTY_VALUES, jobEdit, NO_PREEMPT_HELP, submitBodyFrom, SubmitView } from '../src/sections/submit';
import { FakeSchedServer, json, makeJob, settle } from './fakeserver';
import { context, flush, mount, mountedDefinitions, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

describe('no_preempt in the panel', () => {
  it('test_s38_nopreempt_submit_form_sends_no_preempt_only_when_ticked', async () => {
    const values = { ...EMPTY_VALUES, path: 'train.py' };
    expect(submitBodyFrom(values).no_preempt).toBeUndefined();
    expect(submitBodyFrom({ ...values, noPreempt: true }).no_preempt).toBe(true);

    const server = new FakeSchedServer();
    const submitted: unknown[] = [];
    const checked: unknown[] = [];
    server.routes.set('POST dryrun', body => {
      checked.push(body);
      return json(200, { fits: true, never: false, allocation: null, reason: null, eta: null, would_preempt: [], job: makeJob({ id: 'dryrun' }) });
    });
    server.routes.set('POST jobs', body => {
      submitted.push(body);
      return json(201, makeJob({ id: 'j-np', name: 'train', state: 'pending', no_preempt: true }));
    });
    const { model } = await startedModel(server, 'inventory');
    const view = await mount(new SubmitView(context(model), '', () => undefined));
    view.prefill('train.py');
    await flush();
    await settle();
    await flush();
    const box = view.node.querySelector('.jp-sched-submit-nopreempt') as HTMLInputElement;
    expect(box.type).toBe('checkbox');
    expect(box.checked).toBe(false);
    expect(text(view.node.querySelector('#jp-sched-submit-nopreempt-help'))).toBe(NO_PREEMPT_HELP);
    expect(NO_PREEMPT_HELP).toContain('--no-preempt');
    await act(async () => {
      box.click();
    });
    await settle();
    await flush();
    expect(box.checked).toBe(true);
    // Check fit after the tick asks for the same request: would it start on free GPUs, preempting nobody
    await act(async () => {
      (view.node.querySelector('.jp-sched-dryrun-button') as HTMLButtonElement).click();
    });
    await settle();
    await flush();
    expect(checked[checked.length - 1]).toMatchObject({ script: 'train.py', no_preempt: true });
    await act(async () => {
      view.node.querySelector('form')!.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    });
    await settle();
    await flush();
    expect(submitted).toEqual([{ name: 'train', gpus: 1, priority: 'normal', script: 'train.py', no_preempt: true }]);
    model.dispose();
  });

  it('test_s38_nopreempt_edit_in_submit_form_ticks_the_box_instead_of_carrying_it_unsaid', () => {
    const edit = jobEdit(makeJob({ state: 'failed', script: '/home/a/train.py', command: [], no_preempt: true }));
    expect(edit.values.noPreempt).toBe(true);
    expect(edit.carried.no_preempt).toBeUndefined(); // the form's own field now, not a silent carried one
    expect(submitBodyFrom(edit.values).no_preempt).toBe(true);
    const plain = jobEdit(makeJob({ state: 'failed', script: '/home/a/train.py', command: [] }));
    expect(plain.values.noPreempt).toBe(false);
    expect(submitBodyFrom(plain.values).no_preempt).toBeUndefined();
  });

  it('test_s38_nopreempt_my_work_row_says_free_gpus_only_where_it_is_set', async () => {
    const server = new FakeSchedServer();
    server.jobs = [
      makeJob({ id: 'j-np', name: 'waits', state: 'pending', no_preempt: true, submitted_at: '2026-12-01T10:00:03Z' }),
      makeJob({ id: 'j-plain', name: 'takes', state: 'pending', submitted_at: '2026-12-01T10:00:02Z' })
    ];
    const { model } = await startedModel(server, 'jobs', 'inventory');
    const card = await mount(new MyWorkView(context(model)));
    const meta = (id: string) => card.node.querySelector(`[data-job-id="${id}"] .jp-sched-job-meta`);
    expect(text(meta('j-np'))).toContain('free GPUs only');
    expect(meta('j-np')!.querySelector('.jp-sched-nopreempt')!.getAttribute('title')).toContain('no running job is preempted or reclaimed');
    expect(text(meta('j-plain'))).not.toContain('free GPUs only');
    model.dispose();
  });

  it('test_s38_nopreempt_cancel_answer_says_the_reclaim_cooldown_as_the_cli_does', () => {
    const words = "team vision's reclaims of other teams' borrowed GPUs wait until 04:52 UTC (a reclaim cool-down: the GPUs you took back were used for 2s)";
    const answer = makeJob({
      state: 'cancelled',
      reclaim_cooldown: { team: 'vision', until: '2026-12-07T04:52:00+00:00', took_at: '2026-12-07T04:37:00+00:00', held_s: 2, cooldown_s: 900, text: words }
    });
    expect(cooldownNews(answer)).toBe(`T${words.slice(1)}.`);
    expect(cooldownNews(makeJob({ state: 'cancelled' }))).toBe('');
    expect(cooldownNews(makeJob({ state: 'cancelled', reclaim_cooldown: null }))).toBe('');
  });

  it('test_s38_nopreempt_definitions_form_sets_it_edit_unsets_it_and_the_card_says_it', async () => {
    // the card, in `definitions show`'s words (jupyter_sched.wording.definitions.NO_PREEMPT_WORDS)
    expect(definitionRequestParts({ job: { gpus: 1, priority: 'low', no_preempt: true }, team: 'ml' } as never))
      .toEqual(['priority low', "no preempt: free GPUs only, never stops another's job", 'team ml']);
    expect(definitionRequestParts({ job: { gpus: 1 }, team: 'ml' } as never)).toEqual(['team ml']);
    expect(formStart({ job: { no_preempt: true } } as never, null).noPreempt).toBe(true);
    expect(formStart(null, null).noPreempt).toBe(false);
    const base = { model: '', team: '', priority: 'normal' };
    expect(requestFields({ ...base, noPreempt: false }, formStart(null, null), false)).toEqual({});
    expect(requestFields({ ...base, noPreempt: true }, formStart(null, null), false)).toEqual({ no_preempt: true });
    expect(requestFields({ ...base, noPreempt: false }, { ...base, noPreempt: true }, true)).toEqual({ no_preempt: false });
    expect(requestFields({ ...base, noPreempt: true }, { ...base, noPreempt: true }, true)).toEqual({});

    const server = new FakeSchedServer();
    const made = {
      id: 'd-1', name: 'nightly', user: 'alice', team: 'default', notebook: '/srv/r.ipynb', script: null, args: [],
      schedule: '0 3 * * *', timezone: 'UTC', schedule_description: 'At 03:00', paused: false, parameters: {},
      job: { gpus: 1, no_preempt: true }, next_run_at: null
    };
    let list: unknown[] = [];
    server.routes.set('GET definitions', () => json(200, list));
    server.routes.set('POST definitions', () => json(201, made));
    server.routes.set('PATCH definitions/d-1', () => json(200, made));
    const { v, done, close } = await mountedDefinitions(server);
    const box = v.node.querySelector<HTMLInputElement>('.jp-sched-defs-nopreempt')!;
    expect(box.type).toBe('checkbox');
    expect(box.checked).toBe(false);
    box.checked = true;
    v.node.querySelector<HTMLInputElement>('.jp-sched-defs-path')!.value = 'r.ipynb';
    list = [made];
    v.node.querySelector<HTMLButtonElement>('.jp-sched-defs-create')!.click();
    await done();
    const post = server.calls.find(c => c.method === 'POST' && c.path.endsWith('definitions'))!.body as Record<string, unknown>;
    expect(post.no_preempt).toBe(true);
    expect([...v.node.querySelectorAll('.jp-sched-def-request')].map(x => x.textContent))
      .toContain("no preempt: free GPUs only, never stops another's job");
    // Edit starts ticked; unticked, the PATCH says no_preempt false (its runs may preempt again)
    v.node.querySelector<HTMLButtonElement>('.jp-sched-def-edit')!.click();
    expect(box.checked).toBe(true);
    box.checked = false;
    v.node.querySelector<HTMLButtonElement>('.jp-sched-defs-create')!.click();
    await done();
    const patch = server.calls.filter(c => c.method === 'PATCH').pop()!.body as Record<string, unknown>;
    expect(patch.no_preempt).toBe(false);
    close();
  });
});
