/**
 * newuser26 N7: the panel's log viewer read a finished job's whole log from byte 0 in 64 KiB
 * requests (~110 for 7 MB), then silently kept only its last 20,000 lines. It now opens a long
 * log at its end, says what it shows and what not, and reads earlier text or the whole file on demand.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { SchedClient } from '../src/client';
import { formatBytes } from '../src/format';
import { LogViewer } from '../src/logviewer';
import { TerminalText, utf8Length } from '../src/terminal';
import { FakeSchedServer, json, makeJob, settle } from './fakeserver';

afterEach(() => {
  document.body.replaceChildren();
});

/** A fake log route serving `log` by UTF-8 byte offsets (as read_log does), `size` included, recording each read. */
function serveLog(server: FakeSchedServer, jobId: string, log: string, finished = true): { reads: string[] } {
  const bytes = new TextEncoder().encode(log);
  const reads: string[] = [];
  server.routes.set(`GET jobs/${jobId}/logs`, (_, q) => {
    const offset = Number(q.get('offset') ?? 0);
    const limit = Number(q.get('limit') ?? 65536);
    reads.push(`${offset}+${limit}${q.get('follow') === 'true' ? ' follow' : ''}`);
    let end = Math.min(bytes.length, offset + limit);
    while (end < bytes.length && end > offset && (bytes[end] & 0xc0) === 0x80) {
      end--; // never split a UTF-8 character at the end
    }
    const text = new TextDecoder().decode(bytes.slice(offset, end));
    return json(200, { text, offset, next_offset: Math.max(offset, end), finished, notes: [], size: bytes.length });
  });
  server.routes.set(`GET jobs/${jobId}`, () => json(200, makeJob({ id: jobId, name: 'bigout', state: 'succeeded' })));
  return { reads };
}

async function untilFinished(viewer: LogViewer): Promise<void> {
  for (let i = 0; i < 50 && viewer.node.dataset.finished !== 'true'; i++) {
    await settle();
  }
}

/** The tail read first in these tests (bytes; the panel's is TAIL_BYTES, 256 KiB). */
const TAIL = 4096;

function bigLog(rows: number): string {
  // multi-byte characters on every line: byte offsets are not character offsets
  return Array.from({ length: rows }, (_, i) => `row ${i} é ✓ ${'y'.repeat(40)}\n`).join('');
}

describe('test_newuser26_n7: a long log opens at its end', { timeout: 30000 }, () => {
  it('reads the last TAIL_BYTES, from a whole line, in 3 requests, and says what is not shown', async () => {
    const log = bigLog(400); // ~21 KB, read with a 4 KB tail
    const size = utf8Length(log);
    const server = new FakeSchedServer();
    const { reads } = serveLog(server, 'j7', log);
    const viewer = new LogViewer(new SchedClient(server.transport), 'j7', undefined, makeJob({ id: 'j7', name: 'bigout', state: 'succeeded' }));
    viewer.tailBytes = TAIL;
    await untilFinished(viewer);
    // before: ~33 reads of 65536 from byte 0 up
    expect(reads).toEqual([`0+65536 follow`, `${size - TAIL}+${TAIL}`, `${size}+65536 follow`]);
    const shown = viewer.text;
    expect(log.endsWith(shown)).toBe(true);
    expect(shown.startsWith('row ')).toBe(true);
    const firstRow = Number(/^row (\d+)/.exec(shown)![1]);
    expect(log.slice(log.indexOf(`row ${firstRow} `))).toBe(shown);
    const shownLines = 400 - firstRow;
    const bar = viewer.node.querySelector('.jp-sched-log-earlier') as HTMLElement;
    expect(bar.hidden).toBe(false);
    const notShown = utf8Length(log.slice(0, log.indexOf(`row ${firstRow} `)));
    expect(bar.querySelector('[role="status"]')?.textContent).toBe(
      // what is shown, said exactly (new user 30, n7: "the first 50 MB of 50 MB are not shown")
      `Showing the last ${shownLines} lines (${formatBytes(size - notShown)}) of ${formatBytes(size)} — the earlier part is not shown.`
    );
    expect(viewer.terminal.firstByte).toBe(notShown);
    expect(viewer.node.querySelectorAll('.jp-sched-log-line').length).toBe(shownLines + 1);
    viewer.dispose();
  });

  it('Load earlier puts the text before above, seamlessly, until the whole log shows', async () => {
    const log = bigLog(150); // ~8 KB: three pages of 3 KB
    const server = new FakeSchedServer();
    const { reads } = serveLog(server, 'j8', log);
    const viewer = new LogViewer(new SchedClient(server.transport), 'j8');
    viewer.tailBytes = 3000;
    await untilFinished(viewer);
    const bar = viewer.node.querySelector('.jp-sched-log-earlier') as HTMLElement;
    const button = bar.querySelector('.jp-sched-log-load-earlier') as HTMLButtonElement;
    const before = viewer.text;
    button.click();
    await settle();
    expect(viewer.text.endsWith(before)).toBe(true);
    expect(viewer.text.length).toBeGreaterThan(before.length);
    expect(log.endsWith(viewer.text)).toBe(true);
    expect(viewer.text.startsWith('row ')).toBe(true);
    for (let i = 0; i < 10 && !bar.hidden; i++) {
      button.click();
      await settle();
    }
    expect(bar.hidden).toBe(true);
    expect(viewer.text).toBe(log);
    expect(viewer.terminal.firstByte).toBe(0);
    expect(viewer.node.querySelectorAll('.jp-sched-log-line').length).toBe(151);
    expect([...viewer.node.querySelectorAll('.jp-sched-log-line')].slice(0, 2).map(n => n.textContent)).toEqual([
      `row 0 é ✓ ${'y'.repeat(40)}`,
      `row 1 é ✓ ${'y'.repeat(40)}`
    ]);
    expect(reads.filter(r => !r.endsWith('follow')).length).toBeLessThanOrEqual(4); // the tail, then a page per click
    viewer.dispose();
  });

  it('Download full log saves the whole log, read in 1 MiB slices', async () => {
    const log = bigLog(400);
    const server = new FakeSchedServer();
    const { reads } = serveLog(server, 'j9', log);
    const viewer = new LogViewer(new SchedClient(server.transport), 'j9', undefined, makeJob({ id: 'j9', name: 'bigout', state: 'succeeded' }));
    viewer.tailBytes = TAIL;
    await untilFinished(viewer);
    const saved: { name: string; blob: Blob }[] = [];
    viewer.saveFile = (name, blob) => saved.push({ name, blob });
    const button = viewer.node.querySelector('.jp-sched-log-download') as HTMLButtonElement;
    expect(button.title).toBe('Or in a terminal: jupyter-sched logs j9 > j9.log');
    const before = reads.length;
    await viewer.download();
    expect(saved.map(s => s.name)).toEqual(['bigout-j9.log']);
    expect(saved[0].blob.size).toBe(utf8Length(log));
    expect(reads.slice(before).every(r => r.endsWith('+1048576'))).toBe(true);
    expect(button.textContent).toBe('Download full log');
    viewer.dispose();
  });

  it('a short log still reads from the start, with no bar', async () => {
    const log = bigLog(100);
    const server = new FakeSchedServer();
    const { reads } = serveLog(server, 'j10', log);
    const viewer = new LogViewer(new SchedClient(server.transport), 'j10', undefined, makeJob({ id: 'j10', state: 'succeeded' }));
    await untilFinished(viewer);
    expect(viewer.text).toBe(log);
    expect(reads[0]).toBe('0+65536 follow');
    expect((viewer.node.querySelector('.jp-sched-log-earlier') as HTMLElement).hidden).toBe(true);
    viewer.dispose();
  });

  it('lines the text model drops while following are said, and their start is known', () => {
    const t = new TerminalText(3);
    t.write('a\nbé\nc\nd\n');
    expect(t.text()).toBe('c\nd\n');
    expect(t.firstByte).toBe(utf8Length('a\nbé\n'));
    expect(t.prepend('a\nbé\n')).toBe(2);
    expect(t.text()).toBe('a\nbé\nc\nd\n');
    expect(t.firstByte).toBe(0);
    expect(t.maxLines).toBe(5);
  });
});
