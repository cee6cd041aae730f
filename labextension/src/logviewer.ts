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
 * time limit, once per run — new user 21, N7) show above the output, each once, as `jupyter-sched logs`
 * prints them on stderr: never mixed into the job's own text. The follow passes `notes_seen`, so a
 * new note ends its long poll.
 */
import { MainAreaWidget } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import { describeError, type SchedClient } from './client';
import { NULL_TRANS, stateLabel } from './format';
import { runAttributes, TerminalText } from './terminal';
import { type Job, TERMINAL_STATES } from './types';

/** Bytes asked for per request. */
const CHUNK_BYTES = 65536;

/** The content of the log viewer. */
export class LogViewer extends Widget {
  readonly terminal = new TerminalText();
  private readonly output: HTMLElement;
  private readonly statusNode: HTMLElement;
  private readonly titleNode: HTMLElement;
  private readonly follow: HTMLInputElement;
  private readonly notesNode: HTMLElement;
  private readonly notesSeen = new Set<string>();
  private offset = 0;
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
    head.append(this.titleNode, ' ', idNode, ' ', this.statusNode, label);
    this.notesNode = document.createElement('div');
    this.notesNode.className = 'jp-sched-log-notes';
    this.notesNode.setAttribute('role', 'note');
    this.notesNode.hidden = true;
    this.output = document.createElement('div');
    this.output.className = 'jp-sched-log';
    this.output.setAttribute('role', 'region');
    this.output.tabIndex = 0;
    this.node.append(head, this.notesNode, this.output);
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
    const name = this._job?.name || this.jobId;
    this.titleNode.textContent = name;
    this.output.setAttribute('aria-label', this.trans.__('Output of %1', name));
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
  }

  private renderLine(index: number): HTMLElement {
    const line = document.createElement('div');
    line.className = 'jp-sched-log-line';
    for (const run of this.terminal.runs(index)) {
      const { className, css } = runAttributes(run.style);
      if (!className && !Object.keys(css).length) {
        line.appendChild(document.createTextNode(run.text));
      } else {
        const span = document.createElement('span');
        span.className = className;
        Object.assign(span.style, css);
        span.textContent = run.text;
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
      const key = `${note.at}\u0000${note.text}`;
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

  private async loop(): Promise<void> {
    if (!this._job) {
      try {
        this._job = await this.client.job(this.jobId);
        this.showName();
        this.title.label = this.trans.__('Logs: %1', this._job.name || this.jobId);
      } catch (err) {
        this.setStatus(this.trans.__('Job %1 not found: %2', this.jobId, describeError(err)));
        return;
      }
    }
    let failures = 0;
    while (!this.stopped) {
      try {
        const chunk = await this.client.logs(
          this.jobId, { offset: this.offset, limit: CHUNK_BYTES, follow: true, notes_seen: this.notesSeen.size }, this.controller.signal
        );
        failures = 0;
        this.showNotes(chunk.notes);
        this.append(chunk.text);
        this.offset = chunk.next_offset;
        if (chunk.finished && !chunk.text) {
          let state = this.trans.__('Finished');
          try {
            state = stateLabel((await this.client.job(this.jobId)).state, this.trans);
          } catch {
            // the final state is a nicety; the log is complete either way
          }
          this.setStatus(this.trans.__('%1 — end of output', state));
          this.node.dataset.finished = 'true';
          return;
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
export function createLogWidget(client: SchedClient, jobId: string, trans: TranslationBundle, job: Job | null = null): MainAreaWidget<LogViewer> {
  const content = new LogViewer(client, jobId, trans, job);
  const widget = new MainAreaWidget({ content });
  widget.id = `jp-sched-logs-${jobId}`;
  widget.title.label = trans.__('Logs: %1', job?.name || jobId);
  widget.title.caption = job
    ? trans.__('Output of %1 %2 (%3)%4', job.kind, job.id, job.user, TERMINAL_STATES.has(job.state) ? '' : trans.__(', live'))
    : trans.__('Output of job %1', jobId);
  widget.title.closable = true;
  widget.addClass('jp-sched-logs');
  content.title.changed.connect(() => {
    widget.title.label = content.title.label || widget.title.label;
  });
  return widget;
}
