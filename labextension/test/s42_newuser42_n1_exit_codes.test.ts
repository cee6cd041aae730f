/**
 * newuser42 n1: the panel said "exited with code 137" and nothing of SIGKILL. It now says a shell's 129-159 as the
 * CLI and the magics do: one table (exit_codes.json) that jupyter_sched/wording/exit_codes.py's test checks too.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { describe, expect, it } from 'vitest';

import { exitCodeWords, outcome } from '../src/format';

const TABLE = JSON.parse(readFileSync(join(__dirname, 'exit_codes.json'), 'utf8')) as Record<string, string>;

describe('test_newuser42_n1 exit codes 129-159 name their signal', () => {
  it('words every code as jupyter_sched.wording.exit_codes does', () => {
    expect(Object.keys(TABLE).length).toBeGreaterThan(30);
    for (const [code, words] of Object.entries(TABLE)) {
      expect(exitCodeWords(Number(code))).toBe(words);
    }
  });

  it("says the signal in a finished job's outcome, its message kept", () => {
    const sigkill = TABLE['137'];
    expect(sigkill).toContain('SIGKILL — out of memory (the OOM killer) or kill -9');
    expect(outcome({ exit_code: 137, message: 'exited with code 137; last lines: loading | epoch 3' })).toBe(
      `${sigkill}; last lines: loading | epoch 3`
    );
    expect(outcome({ exit_code: 137, message: null })).toBe(sigkill);
    expect(outcome({ exit_code: 1, message: 'exited with code 1: ValueError' })).toBe('exited with code 1: ValueError');
    expect(outcome({ exit_code: 1, message: null })).toBe('exit code 1');
  });
});
