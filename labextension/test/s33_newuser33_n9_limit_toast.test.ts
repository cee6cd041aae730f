import { describe, expect, it } from 'vitest';

import { TOAST_CHARS } from '../src/notify';
import { limitStoppedToast } from '../src/sections/submit';

describe('newuser33 n9: the Resubmit toast of a job its time limit stopped keeps its fix whole', () => {
  it('test_newuser33_n9_the_fix_is_whole_in_a_toast_whatever_the_name', () => {
    for (const name of ['slowq', 'train-resnet50-imagenet-full', 'x'.repeat(200)]) {
      const text = limitStoppedToast(name, '1m');
      expect(text.length).toBeLessThanOrEqual(TOAST_CHARS);
      expect(text.endsWith('set a longer Time limit in the Submit form.')).toBe(true);
    }
    expect(limitStoppedToast('slowq', '1m')).toBe(
      'slowq was stopped by its 1m time limit; as it was, it would stop again — set a longer Time limit in the Submit form.'
    );
  });
});
