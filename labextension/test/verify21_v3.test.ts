/**
 * Verify 21, V3: the Submit form's Check fit said the CLI's and REST's words — "or submit with
 * --model <one you have a line for: A100-80GB>; gpu_models is another name for model" — in a form
 * whose field is "GPU model". Every refusal and dry-run sentence the form shows now speaks its fields.
 */
import { describe, expect, it } from 'vitest';

import { SchedApiError } from '../src/client';
import { formWords } from '../src/format';
import { dryRunSentence, submitErrorSentence } from '../src/sections/submit';
import type { DryRun } from '../src/types';

describe('verify21 V3: Check fit in the form\'s words', () => {
  it('test_verify21_v3 a quota refusal offers "pick GPU model …", with no --model and no second spelling', () => {
    const err = new SchedApiError(403, {
      code: 'quota_exceeded',
      message: 'your quota line in team ghost (user root) is for A100-80GB only: on H100-80GB you may use 0 GPUs (c.SchedApp.unlisted_team_borrowing_limit)',
      field: 'gpu_models',
      hint: 'ask an admin to add a quota line for team ghost on gpu_models H100-80GB with PUT quotas (…), or submit with --model <one you have a line for: A100-80GB>; gpu_models is another name for model'
    });
    const said = submitErrorSentence(err);
    expect(said).toContain('or pick GPU model A100-80GB.');
    expect(said).toContain('on model H100-80GB');
    expect(said.startsWith('GPU model: your quota line in team ghost')).toBe(true);
    expect(said).not.toMatch(/--model|gpu_models|another name/);
  });
  it('test_verify21_v3 every option and second spelling becomes the form\'s words', () => {
    expect(formWords('or submit with --team <one of yours with a line: ml, nlp>')).toBe('or pick Team ml or nlp');
    expect(formWords('resubmit with --time-limit 2h; time_limit_s is time_limit in seconds')).toBe('resubmit with Time limit 2h');
    expect(formWords('use --gpus 1; gpu_milli counts thousandths of one GPU: gpu_milli 500 is gpus 0.5')).toBe('use GPUs 1');
    expect(formWords('the --models-file and --model-x stay')).toBe('the --models-file and --model-x stay');
  });
  it('test_verify21_v3 a dry run that would wait speaks the form\'s words too', () => {
    const result = {
      fits: false,
      never: true,
      reason: { code: 'QuotaExceeded', message: 'x', text: { summary: 'team vision may use 0 GPUs on H100-80GB, or submit with --model <one team vision has a line for: A100-80GB>.', eta: '', unblock: '', line: '' } }
    } as unknown as DryRun;
    const said = dryRunSentence(result);
    expect(said).toContain('or pick GPU model A100-80GB');
    expect(said).not.toMatch(/--model/);
  });
});
