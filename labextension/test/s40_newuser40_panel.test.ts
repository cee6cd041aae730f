/**
 * newuser40 N1: My work → Open notebook wrote a new copy (`fail-3.ipynb`, `fail-4.ipynb`, …) of an unchanged
 * executed notebook on every click, named like the user's own notebook, and started a kernel for it; the CLI saved
 * the same notebook under another name. Now one name, `fail (executed j-…).ipynb`, the server's rule (table shared
 * with tests/onboarding/test_newuser40_n1_executed_name.py), the same copy on every click, opened with no kernel.
 *
 * newuser40 N2: Load earlier never loaded anything when the bytes before the first line shown were all one very
 * long line: the same request on every click. Now every click moves back, and a long line shows cut, with a marker.
 *
 * newuser40 N3: the Quota section's bar and header said "2.1 used" / "2.1 IN USE" with room shown while its sentence
 * (and admission) counted 3 of 3: a GPU only the team's shares hold counts whole. They now read the server's count.
 *
 * newuser40 n3: after a server restart the header said RECONNECTING ~30 s after the data came back (the event
 * stream waited out its backoff). A read answered now reconnects the stream at once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { JupyterFrontEnd } from '@jupyterlab/application';
import { nullTranslator } from '@jupyterlab/translation';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { SchedClient, type Transport } from '../src/client';
import { contentsFiles, executedCopyName, executedCopyPath, openExecutedNotebook } from '../src/executed';
import { LONG_LINE_CHARS, LogViewer } from '../src/logviewer';
import { QuotaView } from '../src/sections';
import { quotaBadge } from '../src/sections/quota';
import { utf8Length } from '../src/terminal';
import { FakeSchedServer, json, makeJob, settle } from './fakeserver';
import { context, flush, mount, sidebarOn, startedModel, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

const TABLE = JSON.parse(readFileSync(join(__dirname, 'executed_names.json'), 'utf8')) as {
  cases: { notebook: string | null; job_id: string; name: string }[];
};

describe('newuser40 N1: one executed-notebook copy, one name, no kernel', () => {
  it('newuser40 N1 test_newuser40_N1_the_panel_names_the_copy_as_the_server_does', () => {
    for (const { notebook, job_id, name } of TABLE.cases) {
      expect(executedCopyName(notebook, job_id)).toBe(name);
    }
    expect(executedCopyPath('j-1m98qnnvb-d9jn1z', 'fail.ipynb')).toBe('scheduled-runs/fail (executed j-1m98qnnvb-d9jn1z).ipynb');
  });

  it('newuser40 N1 test_newuser40_N1_a_second_open_opens_the_same_copy_and_writes_nothing', async () => {
    const server = new FakeSchedServer();
    // the run's notebook as the runner wrote it (sources as lists of lines), which the contents API reads back joined:
    // the old comparison of the two never matched, so each click wrote the next free name
    const executed = { cells: [{ cell_type: 'code', source: ['import x\n', 'x.run()'], outputs: [], metadata: {} }], metadata: {}, nbformat: 4, nbformat_minor: 5 };
    server.routes.set('GET jobs/j-f/notebook', () => json(200, executed));
    const saved = new Map<string, unknown>();
    const opened: string[] = [];
    const files = {
      openPath: async (path: string) => void opened.push(path),
      saveNotebook: async (path: string, content: unknown) => void saved.set(path, content),
      exists: async (path: string) => saved.has(path)
    };
    const client = new SchedClient(server.transport);
    const first = await openExecutedNotebook(client, 'j-f', 'work/fail.ipynb', files);
    const again = await openExecutedNotebook(client, 'j-f', 'work/fail.ipynb', files);
    const third = await openExecutedNotebook(client, 'j-f', 'work/fail.ipynb', files);
    expect([...saved.keys()]).toEqual(['scheduled-runs/fail (executed j-f).ipynb']);
    expect(saved.get('scheduled-runs/fail (executed j-f).ipynb')).toEqual(executed);
    expect(opened).toEqual(Array(3).fill('scheduled-runs/fail (executed j-f).ipynb'));
    expect([first.written, again.written, third.written]).toEqual([true, false, false]);
    expect(server.count('GET', 'jobs/j-f/notebook')).toBe(1); // later clicks open the copy, fetch nothing
    expect(first.notice).toBe("j-f's executed notebook saved as scheduled-runs/fail (executed j-f).ipynb in your files and opened with no kernel (pick one to run it)");
    expect(again.notice).toContain('opened scheduled-runs/fail (executed j-f).ipynb, the copy');
  });

  it('newuser40 N1 test_newuser40_N1_jupyterlab_opens_the_copy_with_no_kernel', async () => {
    const executed: { command: string; args: unknown }[] = [];
    const app = {
      commands: { execute: async (command: string, args: unknown) => void executed.push({ command, args }) },
      serviceManager: { contents: {} }
    } as unknown as JupyterFrontEnd;
    await contentsFiles(app).openPath('scheduled-runs/fail (executed j-f).ipynb');
    expect(executed).toEqual([
      { command: 'docmanager:open', args: { path: 'scheduled-runs/fail (executed j-f).ipynb', kernelPreference: { shouldStart: false } } }
    ]);
  });

  it('newuser40 N1 test_newuser40_N1_exists_asks_without_reading_and_never_guesses_on_an_error', async () => {
    const asked: unknown[] = [];
    const answers: Record<string, () => unknown> = {
      'a.ipynb': () => ({ type: 'notebook' }),
      'b.ipynb': () => {
        throw { response: { status: 404 } };
      },
      'c.ipynb': () => {
        throw { response: { status: 500 } };
      }
    };
    const app = {
      commands: { execute: async () => undefined },
      serviceManager: { contents: { get: async (path: string, options: unknown) => (asked.push(options), answers[path]()) } }
    } as unknown as JupyterFrontEnd;
    const files = contentsFiles(app);
    expect(await files.exists('a.ipynb')).toBe(true);
    expect(await files.exists('b.ipynb')).toBe(false);
    await expect(files.exists('c.ipynb')).rejects.toEqual({ response: { status: 500 } });
    expect(asked).toEqual(Array(3).fill({ content: false }));
  });
});

/** A log route serving `log` by UTF-8 byte offsets (as read_log does, never splitting a character), recording reads. */
function serveLog(server: FakeSchedServer, jobId: string, log: string): string[] {
  const bytes = new TextEncoder().encode(log);
  const reads: string[] = [];
  server.routes.set(`GET jobs/${jobId}/logs`, (_, q) => {
    const offset = Number(q.get('offset') ?? 0);
    const limit = Number(q.get('limit') ?? 65536);
    reads.push(`${offset}+${limit}${q.get('follow') === 'true' ? ' follow' : ''}`);
    let end = Math.min(bytes.length, offset + limit);
    while (end < bytes.length && end > offset && (bytes[end] & 0xc0) === 0x80) {
      end--;
    }
    const text = new TextDecoder().decode(bytes.slice(offset, end));
    return json(200, { text, offset, next_offset: Math.max(offset, end), finished: true, notes: [], size: bytes.length });
  });
  server.routes.set(`GET jobs/${jobId}`, () => json(200, makeJob({ id: jobId, name: 'noisy2', state: 'succeeded' })));
  return reads;
}

async function viewerOf(server: FakeSchedServer, jobId: string, tailBytes: number): Promise<LogViewer> {
  const viewer = new LogViewer(new SchedClient(server.transport), jobId);
  viewer.tailBytes = tailBytes;
  for (let i = 0; i < 50 && viewer.node.dataset.finished !== 'true'; i++) {
    await settle();
  }
  return viewer;
}

describe('newuser40 N2: Load earlier past a very long line', () => {
  it('newuser40 N2 test_newuser40_N2_every_click_moves_back_and_the_long_line_shows_cut_with_a_marker', async () => {
    // the tester's noisy.py: a few short lines, one 300,000-character line, 4 short lines
    const long = 'é'.repeat(5) + 'x'.repeat(300000 - 5);
    const log = `RED normal bold green\nprogress\n${long}\nafter 1\nafter 2\nafter 3\nafter 4\n`;
    const server = new FakeSchedServer();
    const reads = serveLog(server, 'j-n', log);
    const viewer = await viewerOf(server, 'j-n', 65536);
    const button = viewer.node.querySelector('.jp-sched-log-load-earlier') as HTMLButtonElement;
    const bar = viewer.node.querySelector('.jp-sched-log-earlier') as HTMLElement;
    expect(viewer.text).toBe('after 1\nafter 2\nafter 3\nafter 4\n');
    const firstBytes = [viewer.terminal.firstByte];
    for (let i = 0; i < 5 && !bar.hidden; i++) {
      button.click();
      for (let k = 0; k < 5; k++) {
        await settle();
      }
      firstBytes.push(viewer.terminal.firstByte);
    }
    // before: every click asked for the same bytes and the view never moved
    expect(bar.hidden).toBe(true);
    expect(firstBytes).toEqual([utf8Length(log) - 32, utf8Length('RED normal bold green\nprogress\n'), 0]);
    const asked = reads.filter(r => !r.endsWith('follow'));
    expect(new Set(asked).size).toBe(asked.length); // no request made twice
    const lines = [...viewer.node.querySelectorAll('.jp-sched-log-line')].map(n => n.textContent ?? '');
    expect(lines.slice(0, 2)).toEqual(['RED normal bold green', 'progress']);
    expect(lines[2]).toBe(`${long.slice(0, LONG_LINE_CHARS)} [… cut: a line of 300 KB — Download full log has it whole]`);
    expect(lines.slice(3, 7)).toEqual(['after 1', 'after 2', 'after 3', 'after 4']);
    viewer.dispose();
  });

  it('newuser40 N2 test_newuser40_N2_a_line_whose_start_is_beyond_one_clicks_reads_shows_its_end_and_the_next_click_goes_on', async () => {
    const long = 'y'.repeat(40000);
    const log = `head\n${long}\nlast\n`;
    const server = new FakeSchedServer();
    const reads = serveLog(server, 'j-y', log);
    const viewer = await viewerOf(server, 'j-y', 1024); // 16 reads of 1 KiB a click: 16 KiB, less than the line
    const button = viewer.node.querySelector('.jp-sched-log-load-earlier') as HTMLButtonElement;
    const starts = [viewer.terminal.firstByte];
    for (let i = 0; i < 6 && viewer.terminal.firstByte > 0; i++) {
      button.click();
      for (let k = 0; k < 10; k++) {
        await settle();
      }
      starts.push(viewer.terminal.firstByte);
    }
    for (let i = 1; i < starts.length; i++) {
      expect(starts[i]).toBeLessThan(starts[i - 1]); // every click moved back
    }
    expect(starts[starts.length - 1]).toBe(0);
    const lines = [...viewer.node.querySelectorAll('.jp-sched-log-line')].map(n => n.textContent ?? '');
    expect(lines[0]).toBe('head');
    expect(lines.some(l => l.startsWith('[… a line of more than ') && l.includes('its start further back: Load earlier again, or Download full log]'))).toBe(true);
    const asked = reads.filter(r => !r.endsWith('follow'));
    expect(new Set(asked).size).toBe(asked.length);
    viewer.dispose();
  });
});

describe('newuser40 n3: the header follows the first good answer after a restart', () => {
  it('newuser40 n3 test_newuser40_n3_a_read_answered_reconnects_the_event_stream_at_once', async () => {
    const server = new FakeSchedServer();
    let restarting = false;
    const real = server.transport.request;
    (server.transport as { request: Transport['request'] }).request = async (path, init) => {
      if (restarting) {
        throw new TypeError('Failed to fetch'); // the server is down: nothing listens on its port
      }
      return real(path, init);
    };
    const { model, sidebar } = await sidebarOn(server);
    const badge = (): string => text(sidebar.node.querySelector('.jp-sched-stream'));
    expect(badge()).toBe('live');
    const streamsBefore = server.streams.length;
    restarting = true;
    server.stream.close();
    model.refresh('queue', { force: true });
    await settle();
    await flush();
    expect(badge()).toBe('reconnecting');
    expect(model.serverDown).not.toBeNull();
    restarting = false; // back: the next read is answered, while the stream waits out its backoff (≥ 0.8 s)
    model.refresh('queue', { force: true });
    await settle();
    await flush();
    // before: RECONNECTING until the stream's next attempt, up to 30 s later
    expect(model.serverDown).toBeNull();
    expect(server.streams.length).toBe(streamsBefore + 1);
    expect(badge()).toBe('live');
    model.dispose();
  });
});

describe('newuser40 N3: the quota bar counts what the line counts', () => {
  it('newuser40 N3 test_newuser40_N3_the_bar_and_header_read_the_servers_count_with_the_asks_as_a_note', async () => {
    const server = new FakeSchedServer();
    const line = { team: 'vision', user: null, gpu_model: '*', guaranteed: 2, borrowing_limit: 1 };
    // n40a's 4 × 0.5 + 1 × 0.1 shares on 3 GPUs, as GET me answers it (2.1 asked, 0.9 held whole)
    server.me = {
      ...server.me,
      user: 'n40a',
      team: 'vision',
      teams: ['vision'],
      quotas: [line],
      in_use: { gpus: 2.1, jobs: 5, leases: 0 },
      team_in_use: 3,
      team_held_whole: 0.9,
      by_team: [{ team: 'vision', in_use: 3, held_whole: 0.9, yours: 2.1, quotas: [line] }],
      quota_text: "team vision: guaranteed 2 GPUs, borrowing limit 1 GPU (at most 3 GPUs); 3 GPUs in use by the team (all yours: 2.1 GPUs asked; a GPU only the team's shares hold counts whole against the line)"
    } as typeof server.me;
    server.quotas = { ...server.quotas, quotas: [line] };
    const { model } = await startedModel(server, 'quotas', 'queue');
    const view = await mount(new QuotaView(context(model)));
    const row = view.node.querySelector('.jp-sched-quota') as HTMLElement;
    const bar = row.querySelector('[role="meter"]') as HTMLElement;
    // before: "2.1 used" and a bar with a third of it empty, while the next job waited for lack of room
    expect(bar.getAttribute('aria-valuenow')).toBe('3');
    expect(bar.getAttribute('aria-valuemax')).toBe('3');
    expect((bar.querySelector('.jp-sched-bar-fill') as HTMLElement).style.width).toBe('100%');
    expect(text(row.querySelector('.jp-sched-muted'))).toBe(
      "3 used · 2 guaranteed · borrow up to 1 (max 3) (2.1 asked; a GPU only the team's shares hold counts whole against the line)"
    );
    expect(quotaBadge(model, nullTranslator.load('jupyter_sched'))).toBe('3 in use');
    // whole GPUs only: the count and the asks agree, no note
    server.me = { ...server.me, team_in_use: 2, team_held_whole: 0, by_team: [{ team: 'vision', in_use: 2, held_whole: 0, yours: 2, quotas: [line] }] } as typeof server.me;
    model.refresh('quotas', { force: true });
    // the view renders the new answer on React's next commit, which a fixed number of settles did not always reach
    // (s42: failed on main and in CI's frontend run, passed with one more tick): wait for it
    await vi.waitFor(() => expect(text(view.node.querySelector('.jp-sched-quota .jp-sched-muted'))).toBe('2 used · 2 guaranteed · borrow up to 1 (max 3)'));
    model.dispose();
  });
});
