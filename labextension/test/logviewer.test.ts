import { afterEach, describe, expect, it } from 'vitest';

import { quoteArg, splitArgs } from '../src/args';
import { SchedClient } from '../src/client';
import { createLogWidget, LogViewer } from '../src/logviewer';
import { palette256, runAttributes, TerminalText } from '../src/terminal';
import { FakeSchedServer, json, makeJob, settle } from './fakeserver';
import { flush } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

describe('splitArgs (POSIX shell quoting)', () => {
  it.each([
    ['blanks separate words', '--epochs 3  --lr\t0.1', ['--epochs', '3', '--lr', '0.1']],
    ['double quotes keep spaces', '--title "two words"', ['--title', 'two words']],
    ['single quotes are literal', `--glob '*.csv' '$HOME \\n'`, ['--glob', '*.csv', '$HOME \\n']],
    ['backslash escapes outside quotes', 'a\\ b c\\"d', ['a b', 'c"d']],
    ['inside double quotes only $ ` " \\ are escaped', '"a\\"b\\\\c\\nd"', ['a"b\\c\\nd']],
    ['adjacent quoted parts join', `pre"mid"'post'`, ['premidpost']],
    ['an empty quoted argument survives', `'' ""`, ['', '']],
    ['a backslash-newline continues the line', 'a\\\nb', ['ab']],
    ['nothing gives nothing', '   ', []]
  ])('%s', (_name, input, want) => {
    expect(splitArgs(input)).toEqual(want);
  });

  it.each([
    ['--x "open', 'the double quote at position 5 is not closed'],
    ["--x 'open", 'the single quote at position 5 is not closed'],
    ['trailing \\', 'a backslash at the end (position 10) escapes nothing']
  ])('refuses %s', (input, message) => {
    expect(() => splitArgs(input)).toThrow(message);
  });

  it('quoteArg round-trips through splitArgs', () => {
    const args = ['plain', 'two words', "it's", '', '$HOME', '--x=1'];
    expect(splitArgs(args.map(quoteArg).join(' '))).toEqual(args);
    expect(quoteArg('--x=1')).toBe('--x=1');
  });
});

describe('TerminalText', () => {
  it('a carriage return redraws the line (tqdm) and a newline keeps it', () => {
    const t = new TerminalText();
    t.write('epoch 1\n');
    t.write(' 10%|#   |\r 50%|##  |');
    t.write('\r100%|####|\n');
    t.write('done');
    expect(t.text()).toBe('epoch 1\n100%|####|\ndone');
  });

  it('a shorter redraw leaves the rest of the line, as a terminal does; ESC[K erases it', () => {
    const t = new TerminalText();
    t.write('loading.....\rok');
    expect(t.lineText(0)).toBe('okading.....');
    t.write('\x1b[K');
    expect(t.lineText(0)).toBe('ok');
    t.write('\r\x1b[2Kfresh\bH');
    expect(t.lineText(0)).toBe('fresH');
  });

  it('reports which lines a chunk changed (mostly the last one)', () => {
    const t = new TerminalText();
    expect(t.write('a\nb\nc')).toEqual({ firstChanged: 0, lineCount: 3, dropped: 0 });
    expect(t.write('\rC')).toEqual({ firstChanged: 2, lineCount: 3, dropped: 0 });
    expect(t.write('\nd\n')).toEqual({ firstChanged: 2, lineCount: 5, dropped: 0 });
  });

  it('ANSI colours and bold become styled runs; reset ends them', () => {
    const t = new TerminalText();
    t.write('\x1b[1;31mERROR\x1b[0m plain \x1b[38;5;208mo\x1b[38;2;1;2;3mt\x1b[39;44mb\x1b[49;4;7mu\x1b[22;23;24;27m.');
    expect(t.runs(0)).toEqual([
      { text: 'ERROR', style: { bold: true, fg: 1 } },
      { text: ' plain ', style: {} },
      { text: 'o', style: { fg: 208 } },
      { text: 't', style: { fg: '#010203' } },
      { text: 'b', style: { bg: 4 } },
      { text: 'u', style: { underline: true, inverse: true } },
      { text: '.', style: {} }
    ]);
  });

  it('an escape sequence split across chunks is completed by the next chunk; unknown ones are dropped', () => {
    const t = new TerminalText();
    t.write('a\x1b[3');
    t.write('2mb\x1b');
    t.write(']0;title\x07c\x1b[2Ad\x1b=e\x1b[6Gf');
    expect(t.text()).toBe('abcdef');
    expect(t.runs(0)[1]).toEqual({ text: 'bcdef', style: { fg: 2 } });
  });

  it('bright colours, tabs and a cap on kept lines', () => {
    const t = new TerminalText(3);
    t.write('\x1b[92mx\x1b[0m\ty\n1\n2\n3');
    expect(t.lineCount).toBe(3);
    expect(t.text()).toBe('1\n2\n3');
    const u = new TerminalText();
    u.write('\x1b[92;103mx\x1b[2;3my');
    expect(u.runs(0)).toEqual([
      { text: 'x', style: { fg: 10, bg: 11 } },
      { text: 'y', style: { fg: 10, bg: 11, faint: true, italic: true } }
    ]);
  });

  it('maps styles to JupyterLab ANSI classes and 256-colour values', () => {
    expect(runAttributes({ fg: 1, bold: true, underline: true })).toEqual({ className: 'jp-sched-ansi-fg-1 jp-sched-ansi-bold jp-sched-ansi-underline', css: {} });
    expect(runAttributes({ fg: 208, bg: '#102030', italic: true, faint: true })).toEqual({
      className: 'jp-sched-ansi-faint jp-sched-ansi-italic',
      css: { color: palette256(208), backgroundColor: '#102030' }
    });
    expect(runAttributes({ inverse: true })).toEqual({ className: 'jp-sched-ansi-inverse', css: {} });
    expect(runAttributes({ inverse: true, fg: 2 })).toEqual({ className: 'jp-sched-ansi-bg-2 jp-sched-ansi-inverse', css: {} });
    expect(palette256(16)).toBe('#000000');
    expect(palette256(231)).toBe('#ffffff');
    expect(palette256(232)).toBe('#080808');
  });
});

describe('LogViewer', () => {
  it('follows the log, appends without rewriting earlier lines, and says when the job ended', async () => {
    const server = new FakeSchedServer();
    const chunks = [
      { text: 'step 0\n', finished: false },
      { text: ' 10%|#\r 90%|#########', finished: false },
      { text: '\r100%|##########|\n\x1b[32mdone\x1b[0m\n', finished: true },
      { text: '', finished: true }
    ];
    const offsets: string[] = [];
    let offset = 0;
    server.routes.set('GET jobs/j1/logs', (_, q) => {
      offsets.push(`${q.get('offset')}:${q.get('follow')}`);
      const chunk = chunks.shift()!;
      const answer = { text: chunk.text, offset, next_offset: offset + chunk.text.length, finished: chunk.finished };
      offset += chunk.text.length;
      return json(200, answer);
    });
    server.routes.set('GET jobs/j1', () => json(200, makeJob({ id: 'j1', name: 'steps', state: 'succeeded' })));
    const widget = createLogWidget(new SchedClient(server.transport), 'j1', (await import('@jupyterlab/translation')).nullTranslator.load('x'), makeJob({ id: 'j1', name: 'steps', state: 'running' }));
    document.body.appendChild(widget.node);
    const viewer = widget.content;
    let firstLine: Element | null = null;
    for (let i = 0; i < 20 && viewer.node.dataset.finished !== 'true'; i++) {
      await settle();
      firstLine ??= viewer.node.querySelector('.jp-sched-log-line');
    }
    expect(viewer.text).toBe('step 0\n100%|##########|\ndone\n');
    expect(viewer.node.querySelector('.jp-sched-log-line')).toBe(firstLine);
    expect(viewer.node.querySelector('.jp-sched-ansi-fg-2')?.textContent).toBe('done');
    expect(viewer.node.querySelector('[role="status"]')?.textContent).toBe('Succeeded — end of output');
    expect(viewer.node.querySelector('[role="region"]')?.getAttribute('aria-label')).toBe('Output of steps');
    expect(offsets[0]).toBe('0:true');
    expect(widget.title.label).toBe('Logs: steps');
    expect(widget.title.caption).toBe('Output of training j1 (alice), live');
    widget.dispose();
    await viewer.done;
  });

  it('test_s22_words_n7: the scheduler\'s note shows once beside the output, not in it (new user 21, N7)', async () => {
    // before: the panel ignored notes; the log view said nothing of a pace its time limit will stop
    const server = new FakeSchedServer();
    const note = { at: '2026-12-05T11:50:40Z', text: 'jupyter_sched: at this pace (10 % done after 40s) the job needs ~6m40s in all; its 2m time limit stops it at 11:52 UTC' };
    const chunks = [
      { text: 'step 1\n', finished: false, notes: [] },
      { text: '', finished: false, notes: [note] },
      { text: 'step 2\n', finished: false, notes: [note] },
      { text: '', finished: true, notes: [note] }
    ];
    const seen: string[] = [];
    let offset = 0;
    server.routes.set('GET jobs/j3/logs', (_, q) => {
      seen.push(String(q.get('notes_seen')));
      const chunk = chunks.shift()!;
      const answer = { ...chunk, offset, next_offset: offset + chunk.text.length };
      offset += chunk.text.length;
      return json(200, answer);
    });
    server.routes.set('GET jobs/j3', () => json(200, makeJob({ id: 'j3', name: 'slowlim', state: 'failed' })));
    const viewer = new LogViewer(new SchedClient(server.transport), 'j3', undefined, makeJob({ id: 'j3', name: 'slowlim', state: 'running' }));
    for (let i = 0; i < 20 && viewer.node.dataset.finished !== 'true'; i++) {
      await settle();
    }
    expect(viewer.text).toBe('step 1\nstep 2\n');
    const shown = [...viewer.node.querySelectorAll('[role="note"] .jp-sched-log-note')].map(n => n.textContent);
    expect(shown).toEqual([note.text]);
    expect((viewer.node.querySelector('[role="note"]') as HTMLElement).hidden).toBe(false);
    expect(seen).toEqual(['0', '0', '1', '1']);
    viewer.dispose();
    await viewer.done;
  });

  it('a restored tab fetches its job first; an unknown job says so; failures retry', async () => {
    const server = new FakeSchedServer();
    let fails = 1;
    server.routes.set('GET jobs/j2', () => json(200, makeJob({ id: 'j2', name: 'restored', state: 'running' })));
    server.routes.set('GET jobs/j2/logs', () => {
      if (fails-- > 0) {
        return json(503, { error: { code: 'busy', message: 'store busy', field: null, hint: null } });
      }
      return json(200, { text: 'x', offset: 0, next_offset: 1, finished: true });
    });
    const waits: number[] = [];
    const viewer = new LogViewer(new SchedClient(server.transport), 'j2', undefined, null, async ms => {
      waits.push(ms);
      expect(viewer.node.querySelector('[role="status"]')?.textContent).toBe('Log unavailable: store busy (retrying)');
    });
    for (let i = 0; i < 10 && viewer.text !== 'x'; i++) {
      await settle();
    }
    expect(viewer.job?.name).toBe('restored');
    expect(viewer.title.label).toBe('Logs: restored');
    expect(waits).toEqual([2000]);
    expect(viewer.text).toBe('x');
    viewer.dispose();
    await viewer.done;

    const missing = new LogViewer(new SchedClient(server.transport), 'nope');
    await missing.done;
    expect(missing.node.querySelector('[role="status"]')?.textContent).toBe('Job nope not found: no route GET jobs/nope');
    await flush();
  });
});
