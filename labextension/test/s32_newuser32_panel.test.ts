/**
 * newuser32 (session 32) panel findings. n1: 99 GPUs said one sentence shape on every surface — what blocks it, a dash,
 * its fix as a clause — as `jupyter_sched/wording/reasons.py` `refusal_line` says it for the CLI and the magics
 * (tests/onboarding/test_newuser32_panel.py pins those on a real server). The reason below is the real server's
 * answer to `gpus: 99` on a 4-GPU node (POST jobs 422 details.reason; POST dryrun reason).
 */
import { describe, expect, it } from 'vitest';

import { SchedApiError } from '../src/client';
import { asClause, NULL_TRANS, refusalLine } from '../src/format';
import { dryRunSentence, requestNotes, submitErrorSentence } from '../src/sections/submit';
import { glossaryTerms } from '../src/glossary';
import { makeJob } from './fakeserver';

const MESSAGE = 'needs 99 GPUs of any model on one node but the largest node has 4';
const REASON = {
  code: 'Unschedulable',
  message: MESSAGE,
  details: { requested: 99, max_per_node: 4, model: 'any model', workers: 1, filters: [] },
  unblock: 'Ask for at most 4 GPUs.',
  position: null,
  eta: null,
  eta_reason: '',
  per_flavor: [],
  predicted_start: null,
  text: { summary: `${MESSAGE}.`, eta: '', unblock: 'Ask for at most 4 GPUs.', line: `${MESSAGE} · ask for at most 4 GPUs` }
};

describe('newuser32 n1', () => {
  it('test_newuser32_n1_submit_and_check_fit_say_99_gpus_in_one_shape_with_the_fix', () => {
    const refused = new SchedApiError(422, { code: 'unschedulable', message: MESSAGE, field: 'gpus', hint: 'ask for at most 4 GPUs', details: { reason: REASON } });
    const said = `${MESSAGE} — ask for at most 4 GPUs`; // refusal_line's, as the CLI's line has it before [unschedulable]
    expect(submitErrorSentence(refused)).toBe(`GPUs: ${said}.`);
    const never = { fits: false, never: true, allocation: null, reason: REASON, eta: null, would_preempt: [], job: makeJob({ id: 'dryrun' }) };
    expect(dryRunSentence(never)).toBe(`${said}. It can never start as requested.`);
  });
  it('test_newuser32_n1_clauses_join_as_the_servers_as_clause_does', () => {
    expect(asClause('Ask for at most 4 GPUs.')).toBe('ask for at most 4 GPUs');
    expect(asClause('GPU memory is short.')).toBe('GPU memory is short'); // a name in capitals keeps them
    expect(refusalLine('needs 3.', '')).toBe('needs 3');
    expect(refusalLine('needs 3.', 'Ask for 2.')).toBe('needs 3 — ask for 2');
  });
});

describe('newuser32 N2', () => {
  it('test_newuser32_n2_a_note_on_submits_options_in_the_arguments_keeps_them_as_typed', async () => {
    // the server's words (tests/onboarding/test_newuser32_panel.py pins them on a real server): the form says them
    // as its other notes, the option quoted as typed — not turned into the field's label ("'GPUs 2' in the arguments")
    const warnings = [
      "'--gpus 2' in the arguments goes to train.py, not to the scheduler: this job asks for 1 GPU",
      "'--time-limt 2m' in the arguments goes to train.py, not to the scheduler (did you mean --time-limit?): this job has no time limit"
    ];
    expect(requestNotes(warnings, NULL_TRANS)).toBe(
      " Note: '--gpus 2' in the arguments goes to train.py, not to the scheduler: this job asks for 1 GPU." +
        " Note: '--time-limt 2m' in the arguments goes to train.py, not to the scheduler (did you mean Time limit?): this job has no time limit."
    );
  });
});

describe('newuser32 n5', () => {
  it('test_newuser32_n5_the_glossary_explains_a_word_in_its_plural_too', () => {
    // the My work line newuser32 saw: "quotas" (its only form there) opened no quota entry
    const line = 'ask n32b to cancel some of them, or ask an admin to set quotas (c.SchedApp.quotas, or PUT api/sched/quotas)';
    expect(glossaryTerms(line).map(t => t.term)).toEqual(['quota']);
    const plurals = 'two reservations, their ETAs, both priorities, it borrows GPUs, the planned starts';
    expect(glossaryTerms(plurals).map(t => t.term)).toEqual(['ETA', 'reservation', 'borrowing limit', 'priority class']);
  });
});
