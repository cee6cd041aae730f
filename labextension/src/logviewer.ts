/**
 * Main-area log viewer of one job: follows the job's output (long-polling
 * `GET jobs/{id}/logs?follow=true` from the last `next_offset`) until the job finishes.
 *
 * Output goes through a {@link TerminalText}: `\r` redraws a line (tqdm progress bars), ANSI
 * colours show as colours, and each chunk re-renders only the lines it changed — appending to a
 * long log costs the same as appending to a short one. The view stays at the end unless the
 * user scrolled up or turned "Follow" off.
 *
 * The scheduler's notes for the log's readers (the answers' `notes`: that the job's pace outruns its
 * time limit, once per run — new user 21, N7) show below the output, each once, where `jupyter-sched logs`
 * prints them (on stderr, after the log; newuser31 n12: the panel put them above the first line, the CLI
 * after the last): never mixed into the job's own text. A note is one by when it was said (`at`): its
 * words turn past tense once its run is over, and one shown live is not shown again. The follow passes
 * `notes_seen`, so a new note ends its long poll.
 *
 * A long log opens at its end (newuser26 N7: a finished job's 7 MB log was read from byte 0 in
 * 64 KiB requests, ~110 of them, then silently cut to its last 20,000 lines): when the first answer's
 * `size` is above {@link TAIL_BYTES}, the viewer reads the last {@link TAIL_BYTES} from their first
 * whole line and follows from there. A bar above the output then says what is shown ("Showing the
 * last 3,412 lines of 7.1 MB — the first 6.9 MB are not shown"), with "Load earlier" (the
 * {@link TAIL_BYTES} before, put above) and "Download full log" (the whole log read in 1 MiB slices
 * and saved as a file). Lines the text model drops from the top while following say so the same way.
 */
import { MainAreaWidget } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import { describeError, type SchedClient } from './client';
import { formatBytes, logLineClocks, NULL_TRANS, reasonSentence, reasonText, shownText, stateLabel, stateWord } from './format';
import { runAttributes, TerminalText, utf8Length } from './terminal';
import { executedCopyPath, executedDownloadUrl, hasExecutedNotebook } from './executed';
import { type Job, TERMINAL_STATES } from './types';

/** Bytes asked for per request. */
const CHUNK_BYTES = 65536;

/** A log longer than this (bytes) opens at its end; "Load earlier" reads this much more each time. */
export const TAIL_BYTES = 262144;

/** States of a job that has not started: its log has no output yet (the answer's `state`, newuser37 N2). */
const NOT_STARTED = new Set(['pending', 'preempted', 'admitted']);

/**
 * What the log view says of a job that has not started (`job.state` pending, preempted or admitted),
 * as `jupyter-sched logs` says it ("j-… is pending: no output yet — … follows it once it starts"): its
 * state, why it waits in the one wording renderer's words (`reason.text`), and that its output follows
 * here once it starts; null for a job that started (newuser37 N2: "Connecting…", then "Following live
 * output…" over an empty page for ever, for a held job).
 */
export function notStartedText(job: Job, trans: TranslationBundle = NULL_TRANS): string | null {
  if (!NOT_STARTED.has(job.state)) {
    return null;
  }
  const unblock = reasonText(job.reason)?.unblock.trim() ?? '';
  const why = [reasonSentence(job.reason, trans), unblock && !/[.!?]$/.test(unblock) ? `${unblock}.` : unblock]
    .filter(Boolean)
    .join(' ');
  const state = stateLabel(stateWord(job), trans);
  return why
    ? trans.__('%1: no output yet — %2 Its output follows here once it starts.', state, why)
    : trans.__('%1: no output yet. Its output follows here once it starts.', state);
}

/** Bytes per request of "Download full log" (the log route's largest slice). */
const DOWNLOAD_BYTES = 1048576;

/** `text` from its first whole line: what follows the first newline (all of it when it has none). */
/** A line longer than this is shown cut when loaded from earlier in the log (newuser40 N2); Download has it whole. */
export const LONG_LINE_CHARS = 10000;
/** Reads of `tailBytes` one "Load earlier" makes at most to find where a very long line starts. */
export const LONG_LINE_READS = 16;

/**
 * `[… cut: a line of 300 KB — Download full log has it whole]` after a long line's shown start (`bytes`: its
 * length), or `[… a line of more than 4.2 MB, its start further back: Load earlier again, or Download full log]`
 * before the shown end of one whose start was not read yet (`bytes` null, `readBytes` read of it).
 */
export function longLineMarker(bytes: number | null, trans: TranslationBundle = NULL_TRANS, readBytes = 0): string {
  return bytes === null
    ? trans.__('[… a line of more than %1, its start further back: Load earlier again, or Download full log]', formatBytes(readBytes))
    : trans.__('[… cut: a line of %1 — Download full log has it whole]', formatBytes(bytes));
}

/** Where to cut a long line's text for the view: at {@link LONG_LINE_CHARS}, never inside an escape sequence. */
function cutAt(text: string): number {
  const esc = text.lastIndexOf('\x1b', LONG_LINE_CHARS);
  return esc >= 0 && esc > LONG_LINE_CHARS - 64 ? esc : LONG_LINE_CHARS; // a colour sequence cut in two would swallow the marker
}

/** `text` as shown: a line longer than {@link LONG_LINE_CHARS} cut, with its marker. */
function cutLine(text: string, bytes: number, trans: TranslationBundle): string {
  return text.length > LONG_LINE_CHARS ? `${text.slice(0, cutAt(text))} ${longLineMarker(bytes, trans)}` : text;
}

/** The lines of `text` (whole lines that end at byte `end` of the log, the last with its newline), each with its start and length. */
function wholeLines(text: string, end: number): { text: string; start: number; bytes: number }[] {
  const parts = text.split('\n');
  parts.pop(); // after the last newline: nothing
  let start = end - utf8Length(text);
  return parts.map(part => {
    const bytes = utf8Length(part);
    const line = { text: part, start, bytes };
    start += bytes + 1;
    return line;
  });
}

function fromFirstLine(text: string): string {
  const cut = text.indexOf('\n');
  return cut < 0 ? text : text.slice(cut + 1);
}

/** Save `blob` as a file named `name` through the browser's download. */
function saveWithBrowser(name: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

/** The content of the log viewer. */
export class LogViewer extends Widget {
  readonly terminal = new TerminalText();
  private readonly output: HTMLElement;
  private readonly statusNode: HTMLElement;
  private readonly titleNode: HTMLElement;
  private readonly follow: HTMLInputElement;
  private readonly notesNode: HTMLElement;
  private readonly notesSeen = new Set<string>();
  private readonly earlierNode: HTMLElement;
  private readonly earlierText: HTMLElement;
  private readonly earlierButton: HTMLButtonElement;
  private readonly downloadButton: HTMLButtonElement;
  private readonly notebookNode: HTMLElement;
  private readonly notebookButton: HTMLButtonElement;
  private readonly notebookTitle: (notebook: string | null | undefined) => string;
  private readonly notebookLink: HTMLAnchorElement;
  private _openNotebook: ((job: Job) => void) | null = null;
  private offset = 0;
  /** The log's size in bytes at the last answer that said it (null: not said). */
  private size: number | null = null;
  /** A log longer than this many bytes opens at its end; "Load earlier" reads this much (tests make it small). */
  tailBytes = TAIL_BYTES;
  /** Saves the full log's file (a browser download; tests replace it). */
  saveFile: (name: string, blob: Blob) => void = saveWithBrowser;
  private readonly controller = new AbortController();
  private stopped = false;
  private _job: Job | null;
  /** Resolves when the log reached its end (the job finished) or the viewer was closed. */
  readonly done: Promise<void>;

  constructor(
    private readonly client: SchedClient,
    readonly jobId: string,
    private readonly trans: TranslationBundle = NULL_TRANS,
    job: Job | null = null,
    private readonly sleep: (ms: number) => Promise<void> = ms => new Promise(resolve => setTimeout(resolve, ms))
  ) {
    super();
    this._job = job;
    this.addClass('jp-sched-logviewer');
    const head = document.createElement('div');
    head.className = 'jp-sched-log-head';
    this.titleNode = document.createElement('strong');
    const idNode = document.createElement('code');
    idNode.className = 'jp-sched-log-id';
    idNode.textContent = jobId;
    this.statusNode = document.createElement('span');
    this.statusNode.className = 'jp-sched-log-status';
    this.statusNode.setAttribute('role', 'status');
    this.statusNode.textContent = trans.__('Connecting…');
    const label = document.createElement('label');
    label.className = 'jp-sched-filter';
    this.follow = document.createElement('input');
    this.follow.type = 'checkbox';
    this.follow.checked = true;
    this.follow.className = 'jp-sched-log-follow';
    label.append(this.follow, ` ${trans.__('Follow')}`);
    // a notebook job's executed notebook, from its log's header (newuser39 N1: its log pointed at a path its owner
    // could not read, and only a definition's run had the button)
    this.notebookNode = document.createElement('span');
    this.notebookNode.className = 'jp-sched-log-notebook';
    this.notebookNode.hidden = true;
    this.notebookButton = document.createElement('button');
    this.notebookButton.type = 'button';
    this.notebookButton.className = 'jp-mod-styled jp-sched-log-open-notebook';
    this.notebookButton.textContent = trans.__('Open notebook');
    this.notebookTitle = (notebook: string | null | undefined): string =>
      trans.__('The executed notebook (outputs and errors), saved in your files as %1 and opened with no kernel; or in a terminal: jupyter-sched logs %2 --notebook', executedCopyPath(jobId, notebook), jobId);
    this.notebookButton.title = this.notebookTitle(job?.notebook);
    this.notebookButton.addEventListener('click', () => {
      if (this._job && this._openNotebook) {
        this._openNotebook(this._job);
      }
    });
    this.notebookLink = document.createElement('a');
    this.notebookLink.className = 'jp-sched-log-download-notebook';
    this.notebookLink.href = executedDownloadUrl(jobId);
    this.notebookLink.download = '';
    this.notebookLink.textContent = trans.__('Download notebook');
    this.notebookNode.append(this.notebookButton, ' ', this.notebookLink);
    head.append(this.titleNode, ' ', idNode, ' ', this.statusNode, label, ' ', this.notebookNode);
    this.notesNode = document.createElement('div');
    this.notesNode.className = 'jp-sched-log-notes';
    this.notesNode.setAttribute('role', 'note');
    this.notesNode.hidden = true;
    this.earlierNode = document.createElement('div');
    this.earlierNode.className = 'jp-sched-log-earlier';
    this.earlierNode.hidden = true;
    this.earlierText = document.createElement('span');
    this.earlierText.className = 'jp-sched-log-earlier-text';
    this.earlierText.setAttribute('role', 'status');
    this.earlierButton = document.createElement('button');
    this.earlierButton.type = 'button';
    this.earlierButton.className = 'jp-mod-styled jp-sched-log-load-earlier';
    this.earlierButton.textContent = trans.__('Load earlier');
    this.earlierButton.addEventListener('click', () => void this.loadEarlier());
    this.downloadButton = document.createElement('button');
    this.downloadButton.type = 'button';
    this.downloadButton.className = 'jp-mod-styled jp-sched-log-download';
    this.downloadButton.textContent = trans.__('Download full log');
    this.downloadButton.title = trans.__('Or in a terminal: jupyter-sched logs %1 > %1.log', jobId);
    this.downloadButton.addEventListener('click', () => void this.download());
    this.earlierNode.append(this.earlierText, ' ', this.earlierButton, ' ', this.downloadButton);
    this.output = document.createElement('div');
    this.output.className = 'jp-sched-log';
    this.output.setAttribute('role', 'region');
    this.output.tabIndex = 0;
    this.node.append(head, this.earlierNode, this.output, this.notesNode);
    this.showName();
    this.done = this.loop();
  }

  /** The job, once known. */
  get job(): Job | null {
    return this._job;
  }

  /** Text shown so far. */
  get text(): string {
    return this.terminal.text();
  }

  dispose(): void {
    this.stopped = true;
    this.controller.abort();
    super.dispose();
  }

  private showName(): void {
    const name = shownText(this._job?.name || this.jobId); // a name's hidden characters as escapes (s30)
    this.titleNode.textContent = name;
    this.output.setAttribute('aria-label', this.trans.__('Output of %1', name));
    this.showNotebook();
  }

  /** How the header's "Open notebook" opens the executed notebook in JupyterLab (the plugin's command); unset, only
   * its Download link is shown. */
  set openNotebook(open: ((job: Job) => void) | null) {
    this._openNotebook = open;
    this.showNotebook();
  }

  /** Open notebook / Download notebook, once the job is a notebook job that ran and ended. */
  private showNotebook(): void {
    this.notebookNode.hidden = !hasExecutedNotebook(this._job);
    this.notebookButton.title = this.notebookTitle(this._job?.notebook);
    this.notebookButton.hidden = !this._openNotebook;
  }

  /** Take a chunk of output and re-render the lines it changed. */
  append(text: string): void {
    if (!text) {
      return;
    }
    const out = this.output;
    const atEnd = out.scrollTop + out.clientHeight >= out.scrollHeight - 4;
    const { firstChanged, lineCount, dropped } = this.terminal.write(text);
    for (let k = 0; k < dropped && out.firstChild; k++) {
      out.removeChild(out.firstChild);
    }
    while (out.childElementCount > firstChanged) {
      out.removeChild(out.lastChild as ChildNode);
    }
    const fragment = document.createDocumentFragment();
    for (let index = firstChanged; index < lineCount; index++) {
      fragment.appendChild(this.renderLine(index));
    }
    out.appendChild(fragment);
    if (this.follow.checked && atEnd) {
      out.scrollTop = out.scrollHeight;
    }
    if (dropped) {
      this.showEarlier();
    }
  }

  /** Lines shown (an empty last line, the one after the last newline, not counted). */
  private get shownLines(): number {
    const count = this.terminal.lineCount;
    return count && !this.terminal.lineText(count - 1) ? count - 1 : count;
  }

  /** The bar over the output while the log's start is not shown: how much is, and how much is not. */
  private showEarlier(): void {
    const first = this.terminal.firstByte;
    this.earlierNode.hidden = first <= 0;
    if (first <= 0) {
      return;
    }
    const total = Math.max(this.size ?? 0, this.offset);
    // what is shown, said exactly: "the first 50 MB of 50 MB are not shown" was rounding (new user 30, n7)
    this.earlierText.textContent = this.trans.__(
      'Showing the last %1 lines (%2) of %3 — the earlier part is not shown.',
      String(this.shownLines),
      formatBytes(total - first),
      formatBytes(total)
    );
  }

  /**
   * Read the text before the first line shown (`tailBytes` of it) and put its whole lines above. When all of it is
   * one line — longer than `tailBytes`, so never shown, and each click asked for the same bytes again (newuser40
   * N2) — look further back for where that line starts (up to {@link LONG_LINE_READS} reads a click) and show its
   * start, cut, with a marker that says how long it is. Every click moves the first byte shown back, so no read is
   * ever asked twice; a line longer than {@link LONG_LINE_CHARS} is always shown cut ({@link longLineMarker}).
   */
  async loadEarlier(): Promise<void> {
    const end = this.terminal.firstByte;
    if (end <= 0 || this.earlierButton.disabled) {
      return;
    }
    this.earlierButton.disabled = true;
    try {
      const read = async (from: number, to: number): Promise<{ text: string; next: number } | null> => {
        const page = await this.client.logs(this.jobId, { offset: from, limit: to - from }, this.controller.signal);
        // lines were dropped from the top meanwhile (a live log): the text read no longer joins
        return this.terminal.firstByte === end ? { text: page.text, next: page.next_offset } : null;
      };
      const from = Math.max(0, end - this.tailBytes);
      const page = await read(from, end);
      if (!page) {
        this.showEarlier();
        return;
      }
      const first = from > 0 ? page.text.indexOf('\n') : -1;
      let lines: { text: string; start: number }[];
      if (from === 0 || (first >= 0 && first < page.text.length - 1)) {
        lines = wholeLines(from === 0 ? page.text : page.text.slice(first + 1), end).map(line => ({ ...line, text: cutLine(line.text, line.bytes, this.trans) }));
      } else {
        const long = await this.longLine(from, end, read);
        if (!long) {
          this.showEarlier();
          return;
        }
        lines = [long];
      }
      const out = this.output;
      const before = out.scrollHeight;
      const added = this.terminal.prependLines(lines);
      const fragment = document.createDocumentFragment();
      for (let index = 0; index < added; index++) {
        fragment.appendChild(this.renderLine(index));
      }
      out.insertBefore(fragment, out.firstChild);
      out.scrollTop += out.scrollHeight - before; // the lines read stay where they were
      this.showEarlier();
    } catch (err) {
      if (!this.stopped) {
        this.earlierText.textContent = this.trans.__('Could not load earlier output: %1', describeError(err));
      }
    } finally {
      this.earlierButton.disabled = false;
    }
  }

  /**
   * The line that ends at `end` and holds all of `[from, end)`: where it starts (reading back from `from`, a read
   * at a time, never the same bytes twice) and its first {@link LONG_LINE_CHARS} characters with a marker; or, when
   * its start is further back than {@link LONG_LINE_READS} reads, a marker saying so and the line's last
   * characters, from the lowest byte read (the next click goes on from there). Null: the view changed meanwhile.
   */
  private async longLine(
    from: number,
    end: number,
    read: (from: number, to: number) => Promise<{ text: string; next: number } | null>
  ): Promise<{ text: string; start: number } | null> {
    let lowest = from;
    for (let reads = 0; lowest > 0 && reads < LONG_LINE_READS; reads++) {
      const to = lowest;
      lowest = Math.max(0, to - this.tailBytes);
      const page = await read(lowest, to);
      if (!page) {
        return null;
      }
      const newline = page.text.lastIndexOf('\n');
      if (newline >= 0 || lowest === 0) {
        // its start: counted back from where the answer ended (a read that began inside a character counts right)
        const start = newline >= 0 ? page.next - utf8Length(page.text.slice(newline + 1)) : 0;
        const head = await read(start, Math.min(end, start + 4 * LONG_LINE_CHARS));
        if (!head) {
          return null;
        }
        const text = head.text.split('\n')[0];
        return { text: `${text.slice(0, cutAt(text))} ${longLineMarker(end - 1 - start, this.trans)}`, start };
      }
    }
    const tail = await read(Math.max(lowest, end - 4 * LONG_LINE_CHARS), end);
    if (!tail) {
      return null;
    }
    const text = tail.text.replace(/\n$/, '');
    return { text: `${longLineMarker(null, this.trans, end - lowest)} ${text.slice(-LONG_LINE_CHARS)}`, start: lowest };
  }

  /** Read the whole log (as it is now) in 1 MiB slices and save it as `<name>-<id>.log`. */
  async download(): Promise<void> {
    if (this.downloadButton.disabled) {
      return;
    }
    this.downloadButton.disabled = true;
    const parts: string[] = [];
    let offset = 0;
    try {
      for (;;) {
        const page = await this.client.logs(this.jobId, { offset, limit: DOWNLOAD_BYTES }, this.controller.signal);
        if (!page.text || page.next_offset <= offset) {
          break;
        }
        parts.push(page.text);
        offset = page.next_offset;
        const total = Math.max(page.size ?? 0, offset);
        this.downloadButton.textContent = this.trans.__('Downloading… %1 of %2', formatBytes(offset), formatBytes(total));
      }
      this.saveFile(shownText(`${this._job?.name || this.jobId}-${this.jobId}.log`), new Blob(parts, { type: 'text/plain' }));
      this.downloadButton.textContent = this.trans.__('Download full log');
    } catch (err) {
      if (!this.stopped) {
        this.downloadButton.textContent = this.trans.__('Download full log');
        this.earlierText.textContent = this.trans.__('Could not download the log: %1', describeError(err));
      }
    } finally {
      this.downloadButton.disabled = false;
    }
  }

  /** A long log's end: the last {@link TAIL_BYTES} before `size`, from their first whole line. */
  private async openAtEnd(size: number): Promise<void> {
    const from = size - this.tailBytes;
    const page = await this.client.logs(this.jobId, { offset: from, limit: this.tailBytes }, this.controller.signal);
    const text = fromFirstLine(page.text);
    this.size = page.size ?? size;
    this.terminal.startAt(page.next_offset - utf8Length(text));
    this.append(text);
    this.offset = page.next_offset;
    this.showEarlier();
  }

  private renderLine(index: number): HTMLElement {
    const line = document.createElement('div');
    line.className = 'jp-sched-log-line';
    // the scheduler's own lines ("[jupyter_sched] preempted at 20:24:21 UTC by …") say their clocks in the browser's
    // zone, as the CLI's `logs` (newuser41 n2); the job's lines, the byte offsets and the downloaded log are as written
    const ours = logLineClocks(this.terminal.lineText(index)) !== this.terminal.lineText(index);
    const now = new Date();
    for (const run of this.terminal.runs(index)) {
      const { className, css } = runAttributes(run.style);
      const text = ours ? logLineClocks(run.text, now, true) : run.text;
      if (!className && !Object.keys(css).length) {
        line.appendChild(document.createTextNode(text));
      } else {
        const span = document.createElement('span');
        span.className = className;
        Object.assign(span.style, css);
        span.textContent = text;
        line.appendChild(span);
      }
    }
    if (!line.firstChild) {
      line.appendChild(document.createTextNode('\u200b'));
    }
    return line;
  }

  /** Show each note not shown yet (`{at, text}`, oldest first), once. */
  showNotes(notes: ReadonlyArray<{ at: string; text: string }> | undefined): void {
    for (const note of notes ?? []) {
      const key = note.at;
      if (this.notesSeen.has(key)) {
        continue;
      }
      this.notesSeen.add(key);
      const line = document.createElement('div');
      line.className = 'jp-sched-log-note';
      line.textContent = note.text;
      this.notesNode.appendChild(line);
      this.notesNode.hidden = false;
    }
  }

  private setStatus(text: string): void {
    if (this.statusNode.textContent !== text) {
      this.statusNode.textContent = text;
    }
  }

  /** Say `job`'s wait when it has not started (see {@link notStartedText}); whether it said so. */
  private sayNotStarted(job: Job | null): boolean {
    const text = job && !this.offset ? notStartedText(job, this.trans) : null;
    if (text) {
      this.setStatus(text);
    }
    return !!text;
  }

  /** Read the job again and say why it still waits (its reason may have changed since). */
  private async refreshNotStarted(): Promise<void> {
    try {
      this._job = await this.client.job(this.jobId);
    } catch {
      // the last known job says it well enough; the log's own answers go on
    }
    if (!this.sayNotStarted(this._job)) {
      this.setStatus(this.trans.__('Following live output…'));
    }
  }

  private async loop(): Promise<void> {
    if (!this._job) {
      try {
        this._job = await this.client.job(this.jobId);
        this.showName();
        this.title.label = this.trans.__('Logs: %1', shownText(this._job.name || this.jobId));
      } catch (err) {
        this.setStatus(this.trans.__('Job %1 not found: %2', this.jobId, describeError(err)));
        return;
      }
    }
    this.sayNotStarted(this._job); // never a bare "Connecting…" for a job the server answered about
    let failures = 0;
    while (!this.stopped) {
      try {
        const chunk = await this.client.logs(
          this.jobId, { offset: this.offset, limit: CHUNK_BYTES, follow: true, notes_seen: this.notesSeen.size }, this.controller.signal
        );
        failures = 0;
        this.showNotes(chunk.notes);
        this.size = chunk.size ?? this.size;
        if (this.offset === 0 && this.terminal.firstByte === 0 && (chunk.size ?? 0) > this.tailBytes) {
          await this.openAtEnd(chunk.size as number); // a long log opens at its end (newuser26 N7)
          continue;
        }
        this.append(chunk.text);
        this.offset = chunk.next_offset;
        if (this.terminal.firstByte > 0) {
          this.showEarlier();
        }
        if (chunk.finished && !chunk.text) {
          let state = this.trans.__('Finished');
          try {
            this._job = await this.client.job(this.jobId);
            state = stateLabel(this._job.state, this.trans);
            this.showNotebook();
          } catch {
            // the final state is a nicety; the log is complete either way
          }
          this.setStatus(this.offset ? this.trans.__('%1 — end of output', state) : this.trans.__('%1 — no output', state));
          this.node.dataset.finished = 'true';
          return;
        }
        if (!chunk.finished && !this.offset && chunk.state && NOT_STARTED.has(chunk.state)) {
          // still waiting: its reason as it is now (the answer says the state; the job says why)
          await this.refreshNotStarted();
          continue;
        }
        this.setStatus(chunk.finished ? this.trans.__('Reading the rest…') : this.trans.__('Following live output…'));
      } catch (err) {
        if (this.stopped) {
          return;
        }
        failures++;
        this.setStatus(this.trans.__('Log unavailable: %1 (retrying)', describeError(err)));
        await this.sleep(Math.min(30000, 1000 * 2 ** failures));
      }
    }
  }
}

/** A main-area widget around a {@link LogViewer}. */
export function createLogWidget(
  client: SchedClient, jobId: string, trans: TranslationBundle, job: Job | null = null, openNotebook: ((job: Job) => void) | null = null
): MainAreaWidget<LogViewer> {
  const content = new LogViewer(client, jobId, trans, job);
  content.openNotebook = openNotebook;
  const widget = new MainAreaWidget({ content });
  widget.id = `jp-sched-logs-${jobId}`;
  widget.title.label = trans.__('Logs: %1', shownText(job?.name || jobId));
  widget.title.caption = job
    ? trans.__('Output of %1 %2 (%3)%4', job.kind, job.id, shownText(job.user), TERMINAL_STATES.has(job.state) ? '' : trans.__(', live'))
    : trans.__('Output of job %1', jobId);
  widget.title.closable = true;
  widget.addClass('jp-sched-logs');
  content.title.changed.connect(() => {
    widget.title.label = content.title.label || widget.title.label;
  });
  return widget;
}
