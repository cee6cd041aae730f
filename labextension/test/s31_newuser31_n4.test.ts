/**
 * newuser31 N4: the Submit form's Time limit "90" ran 90 seconds without a word, while the CLI and the
 * magics said "--time-limit 90 is 90 seconds …". The server now says it in the accepted job's warnings
 * (jupyter_sched.wording.flags.bare_seconds_note, option "time_limit"), and the form shows that note in
 * its own words: the field it names is the form's Time limit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { act } from 'react';

import { SubmitView } from '../src/sections/submit';
import { FakeSchedServer, json, makeJob, settle } from './fakeserver';
import { context, flush, mount, startedModel, text, type } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

describe('newuser31 N4', () => {
  it('test_newuser31_n4_submit_says_a_bare_time_limit_is_seconds_in_the_forms_words', async () => {
    const server = new FakeSchedServer();
    // the server's words (wording/flags.py bare_seconds_note("90", option="time_limit")), as the REST answer carries them
    const warning = 'time_limit 90 is 90 seconds (a bare number is seconds; 90m is 90 minutes)';
    const sent: unknown[] = [];
    server.routes.set('POST dryrun', () => json(200, { fits: true, never: false, allocation: null, reason: null, eta: null, would_preempt: [], job: makeJob({ id: 'dryrun' }) }));
    server.routes.set('POST jobs', body => {
      sent.push(body);
      return json(201, { ...makeJob({ id: 'j-ninety', name: 'ninety', state: 'pending' }), warnings: [warning] });
    });
    const { model } = await startedModel(server, 'inventory');
    const view = await mount(new SubmitView(context(model), '', () => undefined));
    view.prefill('train.py');
    await flush();
    await settle();
    const form = view.node;
    await type(form.querySelector('.jp-sched-submit-timelimit') as HTMLInputElement, '90');
    await act(async () => {
      form.querySelector('form')!.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    });
    await settle();
    await flush();
    expect(sent).toEqual([expect.objectContaining({ time_limit: '90' })]);
    expect(text(form.querySelector('[role="status"]')!)).toBe(
      'Submitted ninety (j-ninety): 1 GPU, pending. Note: Time limit 90 is 90 seconds (a bare number is seconds; 90m is 90 minutes).'
    );
    model.dispose();
  });
});
