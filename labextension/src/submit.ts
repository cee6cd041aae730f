/**
 * The Submit section: run a script or notebook on N GPUs, with dry-run feedback ("would this
 * fit, where, and when") before submitting. Built once (inputs keep their values across panel
 * refreshes); `prefill(path)` is what the file-browser command and the notebook button call.
 */
import {
  describeError,
  type IDryRun,
  type IJob,
  type IPendingReason,
  type ISubmitBody,
  type PriorityClass,
  SchedApiError,
  type SchedClient,
  supports
} from './api';
import { h } from './dom';
import { formatEta, formatGpus, reasonSentence } from './format';
import type { PanelState } from './state';

/** Join the server's root directory and a path relative to it (the file browser's paths). */
export function absolutePath(root: string, path: string): string {
  if (!root || path.startsWith('/')) {
    return path;
  }
  return `${root.replace(/\/+$/, '')}/${path.replace(/^\.\//, '')}`;
}

/**
 * Build the POST body from the form's values. Paths from the file browser are relative to the
 * server's root directory (`serverRoot`); the job gets the absolute path and runs in the file's
 * directory, so the script finds the files next to it.
 * Throws a plain Error naming the missing input.
 */
export function submitBodyFrom(
  values: {
    path: string;
    args: string;
    gpus: string;
    model: string;
    priority: string;
    timeLimit: string;
    name: string;
  },
  serverRoot = ''
): ISubmitBody & { args?: string[] } {
  const relative = values.path.trim();
  const path = absolutePath(serverRoot, relative);
  if (!relative) {
    throw new Error('Give the path of a script or notebook to run (e.g. train.py).');
  }
  const gpus = Number(values.gpus);
  if (values.gpus.trim() === '' || !isFinite(gpus) || gpus < 0) {
    throw new Error(`GPUs must be a number >= 0 (got "${values.gpus}").`);
  }
  const base = path.split('/').pop() || path;
  const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) || '/' : '';
  const body: ISubmitBody & { args?: string[] } = {
    name: values.name.trim() || base.replace(/\.(py|ipynb|sh)$/, ''),
    gpus,
    priority: (values.priority || 'normal') as PriorityClass
  };
  if (path.endsWith('.ipynb')) {
    body.notebook = path;
  } else if (path.endsWith('.py')) {
    body.script = path;
    const args = values.args.trim();
    if (args) {
      body.args = args.split(/\s+/);
    }
  } else {
    body.command = [path, ...values.args.trim().split(/\s+/).filter(Boolean)];
  }
  if (dir && serverRoot) {
    body.working_dir = dir;
  }
  if (values.model) {
    body.model = values.model;
  }
  if (values.timeLimit.trim()) {
    body.time_limit = values.timeLimit.trim();
  }
  return body;
}

/** One sentence for a dry-run answer: where it would start now, or why not and when. */
export function dryRunSentence(result: IDryRun, now: Date = new Date()): string {
  const fits = result.fits ?? result.would_start_now ?? (result.allocation ? true : undefined);
  const preempts = result.would_preempt?.length
    ? ` by preempting ${result.would_preempt.length} job${result.would_preempt.length === 1 ? '' : 's'} (${result.would_preempt.join(', ')})`
    : '';
  if (fits && result.allocation) {
    const a = result.allocation;
    return `Would start now on ${a.node} (${a.gpu_uuids.length} GPU${a.gpu_uuids.length === 1 ? '' : 's'})${preempts}.`;
  }
  if (fits) {
    return `Would start now${preempts}.`;
  }
  const reason = (result.reason ?? null) as IPendingReason | null;
  const parts: string[] = [];
  const sentence = reasonSentence(reason) || (typeof result.message === 'string' ? result.message : '');
  parts.push(sentence || 'Would wait in the queue.');
  const eta = reason?.eta ?? result.eta ?? null;
  if (result.never || result.feasible === false) {
    parts.push('It can never start as requested.');
  } else {
    parts.push(`Estimated start: ${formatEta(eta, now)}${reason?.eta_reason ? ` (${reason.eta_reason})` : ''}.`);
  }
  return parts.join(' ');
}

/** The message for a failed submission: the server's sentence (with numbers) plus a reason it attached. */
export function submitErrorSentence(err: unknown): string {
  let text = describeError(err);
  if (err instanceof SchedApiError) {
    const reason = err.body.details?.['reason'] as IPendingReason | undefined;
    const sentence = reason && typeof reason === 'object' ? reasonSentence(reason) : '';
    if (sentence && !text.includes(sentence.replace(/\.$/, ''))) {
      text = `${text} ${sentence}`;
    }
  }
  return text;
}

/** Callbacks of the form. */
export interface ISubmitHooks {
  submitted(job: IJob): void;
}

/** The Submit form. */
export class SubmitForm {
  readonly node: HTMLElement;
  private readonly path: HTMLInputElement;
  private readonly args: HTMLInputElement;
  private readonly gpus: HTMLInputElement;
  private readonly model: HTMLSelectElement;
  private readonly priority: HTMLSelectElement;
  private readonly timeLimit: HTMLInputElement;
  private readonly name: HTMLInputElement;
  private readonly feedback: HTMLElement;
  private readonly submitButton: HTMLButtonElement;
  private dryTimer: number | null = null;
  private drySerial = 0;

  constructor(
    private readonly client: SchedClient,
    private readonly state: PanelState,
    private readonly hooks: ISubmitHooks,
    private readonly serverRoot = ''
  ) {
    const field = (label: string, input: HTMLElement, help?: string) =>
      h('label', { class: 'jp-sched-field' }, h('span', { class: 'jp-sched-field-label' }, label), input, help ? h('span', { class: 'jp-sched-muted' }, help) : null);
    const onInput = () => this.scheduleDryRun();
    this.path = h('input', { type: 'text', class: 'jp-mod-styled jp-sched-submit-path', placeholder: 'train.py or analysis.ipynb', oninput: onInput, 'aria-required': 'true' });
    this.args = h('input', { type: 'text', class: 'jp-mod-styled jp-sched-submit-args', placeholder: '--epochs 3', oninput: onInput });
    this.gpus = h('input', { type: 'number', class: 'jp-mod-styled jp-sched-submit-gpus', min: 0, step: 'any', value: '1', oninput: onInput });
    this.model = h('select', { class: 'jp-mod-styled jp-sched-submit-model', onchange: onInput }, h('option', { value: '' }, 'Any model'));
    this.priority = h('select', { class: 'jp-mod-styled jp-sched-submit-priority', onchange: onInput });
    this.timeLimit = h('input', { type: 'text', class: 'jp-mod-styled jp-sched-submit-timelimit', placeholder: 'e.g. 2h (optional)', oninput: onInput });
    this.name = h('input', { type: 'text', class: 'jp-mod-styled jp-sched-submit-name', placeholder: 'default: file name', oninput: onInput });
    this.feedback = h('div', { class: 'jp-sched-feedback', role: 'status', 'aria-live': 'polite' });
    this.submitButton = h('button', { type: 'submit', class: 'jp-sched-button jp-mod-accept jp-sched-submit-button' }, 'Submit');
    const dryButton = h('button', { type: 'button', class: 'jp-sched-button jp-sched-dryrun-button', onclick: () => void this.dryRun() }, 'Check fit');
    const form = h(
      'form',
      {
        class: 'jp-sched-submit',
        onsubmit: (e: Event) => {
          e.preventDefault();
          void this.submit();
        }
      },
      field('Script or notebook', this.path, 'Path from the file browser (right-click a file → Run on GPUs).'),
      field('Arguments', this.args),
      h('div', { class: 'jp-sched-row' }, field('GPUs', this.gpus), field('GPU model', this.model)),
      h('div', { class: 'jp-sched-row' }, field('Priority', this.priority), field('Time limit', this.timeLimit)),
      field('Name', this.name),
      h('div', { class: 'jp-sched-actions' }, dryButton, this.submitButton),
      this.feedback
    );
    this.node = form;
    this.refreshOptions();
  }

  /** Refill the model and priority choices from inventory and config (keeps the selection). */
  refreshOptions(): void {
    const models = [...new Set((this.state.inventory?.gpus ?? []).map(g => g.model))].sort();
    const selected = this.model.value;
    const have = [...this.model.options].map(o => o.value).slice(1);
    if (have.join('|') !== models.join('|')) {
      this.model.replaceChildren(h('option', { value: '' }, 'Any model'), ...models.map(m => h('option', { value: m }, m)));
      this.model.value = models.includes(selected) ? selected : '';
    }
    const priorities = Array.isArray(this.state.config?.['priorities']) ? (this.state.config?.['priorities'] as string[]) : ['high', 'normal', 'low'];
    if ([...this.priority.options].map(o => o.value).join('|') !== priorities.join('|')) {
      const current = this.priority.value || 'normal';
      this.priority.replaceChildren(...priorities.map(p => h('option', { value: p }, p)));
      this.priority.value = priorities.includes(current) ? current : priorities[0];
    }
  }

  /** Put a path in the form (file browser / notebook button) and check it right away. */
  prefill(path: string): void {
    this.path.value = path;
    this.name.value = '';
    this.scheduleDryRun(0);
    this.gpus.focus();
  }

  private values() {
    return {
      path: this.path.value,
      args: this.args.value,
      gpus: this.gpus.value,
      model: this.model.value,
      priority: this.priority.value,
      timeLimit: this.timeLimit.value,
      name: this.name.value
    };
  }

  private show(text: string, kind: 'info' | 'ok' | 'warn' | 'error'): void {
    this.feedback.className = `jp-sched-feedback jp-sched-feedback-${kind}`;
    this.feedback.textContent = text;
  }

  private scheduleDryRun(delayMs = 600): void {
    if (!supports(this.state.config, 'dryrun') || !this.path.value.trim()) {
      return;
    }
    if (this.dryTimer !== null) {
      window.clearTimeout(this.dryTimer);
    }
    this.dryTimer = window.setTimeout(() => {
      this.dryTimer = null;
      void this.dryRun();
    }, delayMs);
  }

  /** Ask the server whether the request would fit now, where and when (nothing is queued). */
  async dryRun(): Promise<void> {
    let body: ISubmitBody;
    try {
      body = submitBodyFrom(this.values(), this.serverRoot);
    } catch (err) {
      this.show(describeError(err), 'error');
      return;
    }
    const serial = ++this.drySerial;
    this.show('Checking…', 'info');
    try {
      const result = await this.client.dryrun(body);
      if (serial === this.drySerial) {
        const fits = result.fits ?? result.would_start_now ?? !!result.allocation;
        this.show(`Dry run: ${dryRunSentence(result)}`, fits ? 'ok' : 'warn');
      }
    } catch (err) {
      if (serial === this.drySerial) {
        this.show(submitErrorSentence(err), 'error');
      }
    }
  }

  /** Submit for real; on success the job appears in Queue and My work. */
  async submit(): Promise<void> {
    let body: ISubmitBody;
    try {
      body = submitBodyFrom(this.values(), this.serverRoot);
    } catch (err) {
      this.show(describeError(err), 'error');
      return;
    }
    this.drySerial++;
    this.submitButton.disabled = true;
    this.show('Submitting…', 'info');
    try {
      const job = await this.client.submit(body);
      this.show(`Submitted ${job.name} (${job.id}): ${formatGpus(job.resources)}, ${job.state}.`, 'ok');
      this.hooks.submitted(job);
    } catch (err) {
      this.show(submitErrorSentence(err), 'error');
    } finally {
      this.submitButton.disabled = false;
    }
  }
}
