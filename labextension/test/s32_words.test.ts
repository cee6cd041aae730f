/**
 * Session 32, s32-words: the panel's half of one wording per thing (newuser31 n15, n13, n12). The server's
 * half is tests/services/test_s32_words.py; these feed the panel the server's answers as it sends them.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { SchedApiError, SchedClient } from '../src/client';
import { LogViewer } from '../src/logviewer';
import { requestNotes, submitErrorSentence } from '../src/sections/submit';
import { FakeSchedServer, json, makeJob, settle } from './fakeserver';

afterEach(() => {
  document.body.replaceChildren();
});

const trans = { __: (s: string, ...a: unknown[]) => s.replace(/%(\d)/g, (_, i) => String(a[Number(i) - 1])) } as never;

describe('newuser31 n15: a missing script, said as the CLI and the magics say it, with the form\'s fix', () => {
  it('test_newuser31_n15 the panel says the server\'s fix for the form (details.fixes.panel)', () => {
    // the wire shape of POST jobs refusing a missing script (services/jobs.py refuse_missing_paths)
    const err = new SchedApiError(400, {
      code: 'validation_error',
      message: "script '/home/ann/nope.py' does not exist on this server",
      field: 'script',
      hint: 'give the path of an existing script on the server (a relative path is read in working_dir), or send its text as source',
      details: {
        fixes: {
          cli: 'give the path of the script to run, or check the spelling',
          magics: 'give the path of the script to run, or check the spelling',
          panel: 'give the path of a file the server can read (right-click it in the file browser → Run on GPUs)'
        }
      }
    } as never);
    expect(submitErrorSentence(err)).toBe(
      "Script or notebook: '/home/ann/nope.py' does not exist on this server — give the path of a file the server can read (right-click it in the file browser → Run on GPUs)."
    );
    // a program's refusal (field command) takes the form's fix too, where the server sends one
    const command = new SchedApiError(400, {
      code: 'validation_error',
      message: "script 'gone.py' is a directory, not a file",
      field: 'command',
      hint: 'give the path of the script file itself',
      details: { fixes: { panel: 'give the path of a file the server can read (right-click it in the file browser → Run on GPUs)' } }
    } as never);
    expect(submitErrorSentence(command)).toContain('— give the path of a file the server can read');
    expect(submitErrorSentence(command)).not.toContain('file itself');
  });
});

describe('newuser31 n13: Check fit says the notes its Submit says', () => {
  it('test_newuser31_n13 a dry run\'s warnings read as the submit\'s, in the form\'s words', () => {
    // before: Check fit with Time limit 90 said only "Dry run: Would start now on vm (1 GPU)."
    const warnings = ['time_limit 90 is 90 seconds (a bare number is seconds; 90m is 90 minutes)', 'memory 64 is read as 64 MiB (a bare number is MiB).'];
    expect(requestNotes(warnings, trans)).toBe(
      ' Note: Time limit 90 is 90 seconds (a bare number is seconds; 90m is 90 minutes). Note: memory 64 is read as 64 MiB (a bare number is MiB).'
    );
    expect(requestNotes([], trans)).toBe('');
    expect(requestNotes(undefined, trans)).toBe('');
  });
});

describe('newuser31 n12: the pace note below the output, once, in the past tense after the end', () => {
  it('test_newuser31_n12 the note shows under the log (as jupyter-sched logs prints it) and its past-tense words are not a second note', async () => {
    // before: the note was the view's first line (above `step 1`), the CLI's last; the past tense would show twice
    const server = new FakeSchedServer();
    const at = '2026-12-05T12:38:35Z';
    const live = { at, text: 'jupyter_sched: at this pace (16 % done after 33s) the job needs ~3m24s in all; its 1m time limit stops it at 12:39 UTC' };
    const past = { at, text: 'jupyter_sched: at 12:38:35 UTC its pace (16 % done after 33s) said the job needed ~3m24s in all; its 1m time limit was to stop it at 12:39 UTC' };
    const chunks = [
      { text: 'step 1\n', finished: false, notes: [live] },
      { text: 'step 2\n', finished: true, notes: [past] },
      { text: '', finished: true, notes: [past] }
    ];
    let offset = 0;
    server.routes.set('GET jobs/j12/logs', () => {
      const chunk = chunks.shift()!;
      const answer = { ...chunk, offset, next_offset: offset + chunk.text.length };
      offset += chunk.text.length;
      return json(200, answer);
    });
    server.routes.set('GET jobs/j12', () => json(200, makeJob({ id: 'j12', name: 'slowpoke', state: 'failed' })));
    const viewer = new LogViewer(new SchedClient(server.transport), 'j12', undefined, makeJob({ id: 'j12', name: 'slowpoke', state: 'running' }));
    for (let i = 0; i < 20 && viewer.node.dataset.finished !== 'true'; i++) {
      await settle();
    }
    const notes = viewer.node.querySelector('[role="note"]') as HTMLElement;
    const output = viewer.node.querySelector('[role="region"]') as HTMLElement;
    expect([...notes.querySelectorAll('.jp-sched-log-note')].map(n => n.textContent)).toEqual([live.text]);
    expect(output.compareDocumentPosition(notes) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    viewer.dispose();
    await viewer.done;

    // opened after the end: the note once, in the past tense, under the log
    const later = new FakeSchedServer();
    const reads = [{ text: 'step 1\nstep 2\n', finished: true, notes: [past] }, { text: '', finished: true, notes: [past] }];
    let at2 = 0;
    later.routes.set('GET jobs/j12/logs', () => {
      const chunk = reads.shift()!;
      const answer = { ...chunk, offset: at2, next_offset: at2 + chunk.text.length };
      at2 += chunk.text.length;
      return json(200, answer);
    });
    later.routes.set('GET jobs/j12', () => json(200, makeJob({ id: 'j12', name: 'slowpoke', state: 'failed' })));
    const reread = new LogViewer(new SchedClient(later.transport), 'j12', undefined, makeJob({ id: 'j12', name: 'slowpoke', state: 'failed' }));
    for (let i = 0; i < 20 && reread.node.dataset.finished !== 'true'; i++) {
      await settle();
    }
    expect([...reread.node.querySelectorAll('.jp-sched-log-note')].map(n => n.textContent)).toEqual([past.text]);
    reread.dispose();
    await reread.done;
  });
});
