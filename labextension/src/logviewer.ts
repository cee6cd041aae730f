/**
 * Main-area log viewer of one job: appends the job's output as it is written (long-polling
 * `GET jobs/{id}/logs?follow=true` from the last `next_offset`) until the job finishes, and
 * keeps the view scrolled to the end unless the user scrolled up.
 */
import { MainAreaWidget } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { describeError, type IJob, type SchedClient, TERMINAL_STATES } from './api';
import { h } from './dom';
import { stateLabel } from './format';

/** Largest text kept in the view (characters); older output is trimmed from the top. */
const MAX_CHARS = 2_000_000;

/** The content of the log viewer. */
export class LogViewer extends Widget {
  private readonly pre: HTMLPreElement;
  private readonly status: HTMLElement;
  private readonly follow: HTMLInputElement;
  private offset = 0;
  private readonly controller = new AbortController();
  private stopped = false;

  constructor(
    private readonly client: SchedClient,
    readonly job: IJob
  ) {
    super();
    this.addClass('jp-sched-logviewer');
    this.status = h('span', { class: 'jp-sched-log-status', role: 'status', 'aria-live': 'polite' }, 'Connecting…');
    this.follow = h('input', { type: 'checkbox', checked: true, class: 'jp-sched-log-follow' });
    this.pre = h('pre', { class: 'jp-sched-log', tabindex: 0, 'aria-label': `Output of ${job.name}` });
    this.node.append(
      h('div', { class: 'jp-sched-log-head' }, h('strong', {}, job.name || job.id), ' ', h('code', {}, job.id), ' ', this.status, h('label', { class: 'jp-sched-filter' }, this.follow, ' Follow')),
      this.pre
    );
    void this.loop();
  }

  /** Text shown so far. */
  get text(): string {
    return this.pre.textContent ?? '';
  }

  dispose(): void {
    this.stopped = true;
    this.controller.abort();
    super.dispose();
  }

  private append(text: string): void {
    if (!text) {
      return;
    }
    const atEnd = this.pre.scrollTop + this.pre.clientHeight >= this.pre.scrollHeight - 4;
    let content = (this.pre.textContent ?? '') + text;
    if (content.length > MAX_CHARS) {
      content = content.slice(content.length - MAX_CHARS);
    }
    this.pre.textContent = content;
    if (this.follow.checked && atEnd) {
      this.pre.scrollTop = this.pre.scrollHeight;
    }
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        const chunk = await this.client.logs(this.job.id, this.offset, { follow: true, signal: this.controller.signal });
        failures = 0;
        this.append(chunk.text);
        this.offset = chunk.next_offset;
        if (chunk.finished && !chunk.text) {
          let state = 'finished';
          try {
            state = stateLabel((await this.client.job(this.job.id)).state);
          } catch {
            // the final state is a nicety; the log is complete either way
          }
          this.status.textContent = `${state} — end of output`;
          this.node.dataset.finished = 'true';
          return;
        }
        this.status.textContent = chunk.finished ? 'Reading the rest…' : 'Following live output…';
      } catch (err) {
        if (this.stopped) {
          return;
        }
        failures++;
        this.status.textContent = `Log unavailable: ${describeError(err)} (retrying)`;
        await new Promise(resolve => setTimeout(resolve, Math.min(30000, 1000 * 2 ** failures)));
      }
    }
  }
}

/** A main-area widget around a {@link LogViewer}. */
export function createLogWidget(client: SchedClient, job: IJob): MainAreaWidget<LogViewer> {
  const content = new LogViewer(client, job);
  const widget = new MainAreaWidget({ content });
  widget.id = `jp-sched-logs-${job.id}`;
  widget.title.label = `Logs: ${job.name || job.id}`;
  widget.title.caption = `Output of ${job.kind} ${job.id} (${job.user})${TERMINAL_STATES.has(job.state) ? '' : ', live'}`;
  widget.title.closable = true;
  return widget;
}
