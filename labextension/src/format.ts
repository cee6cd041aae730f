/**
 * Pure formatting for the panel: pending reasons, ETAs, durations, sizes and GPU requests.
 *
 * Reasons are data with numbers (STYLE.md §5): the server renders `reason.message`; the panel
 * shows it and, only when a server leaves it empty, builds one sentence from `code` + `details`.
 * Nothing here parses a message string.
 */
import type { IJob, IPendingReason, IQuota, IResources } from './api';

/** Seconds → a short human duration: `45 s`, `3 min 05 s`, `2 h 03 min`, `3 d 4 h`. */
export function formatDuration(seconds: number): string {
  if (!isFinite(seconds) || seconds < 0) {
    return '–';
  }
  const s = Math.floor(seconds);
  if (s < 60) {
    return `${s} s`;
  }
  const minutes = Math.floor(s / 60);
  if (minutes < 60) {
    return `${minutes} min ${String(s % 60).padStart(2, '0')} s`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 24) {
    return `${hours} h ${String(minutes % 60).padStart(2, '0')} min`;
  }
  const days = Math.floor(hours / 24);
  return `${days} d ${hours % 24} h`;
}

/** Parse an ISO timestamp; `null` when absent or unparsable. */
export function parseTime(value: string | null | undefined): Date | null {
  if (!value) {
    return null;
  }
  const t = Date.parse(value);
  return isNaN(t) ? null : new Date(t);
}

/**
 * An ETA as a phrase relative to `now`: `unknown`, `any moment` (due or past), `in 40 s`,
 * `in 12 min`, `in 2 h 05 min`, `in 3 d 4 h`.
 */
export function formatEta(eta: string | null | undefined, now: Date = new Date()): string {
  const at = parseTime(eta);
  if (!at) {
    return 'unknown';
  }
  const seconds = (at.getTime() - now.getTime()) / 1000;
  if (seconds <= 5) {
    return 'any moment';
  }
  if (seconds < 60) {
    return `in ${Math.round(seconds)} s`;
  }
  if (seconds < 3600) {
    return `in ${Math.round(seconds / 60)} min`;
  }
  return `in ${formatDuration(seconds)}`;
}

/** Elapsed time of a job: running → since start; finished → start to finish; pending → waiting since submit. */
export function formatElapsed(job: Pick<IJob, 'state' | 'submitted_at' | 'started_at' | 'finished_at'>, now: Date = new Date()): string {
  const start = parseTime(job.started_at);
  const end = parseTime(job.finished_at);
  if (start) {
    return formatDuration(((end ?? now).getTime() - start.getTime()) / 1000);
  }
  const submitted = parseTime(job.submitted_at);
  if (submitted && !end) {
    return `waiting ${formatDuration((now.getTime() - submitted.getTime()) / 1000)}`;
  }
  return '–';
}

/** MiB → `512 MiB`, `80 GiB`, `1.5 TiB`. */
export function formatMiB(mib: number | null | undefined): string {
  if (mib === null || mib === undefined || !isFinite(mib)) {
    return '–';
  }
  if (mib < 1024) {
    return `${Math.round(mib)} MiB`;
  }
  const gib = mib / 1024;
  if (gib < 1024) {
    return `${gib >= 100 || Number.isInteger(gib) ? Math.round(gib) : gib.toFixed(1)} GiB`;
  }
  return `${(gib / 1024).toFixed(1)} TiB`;
}

/** A number with at most `digits` decimals, no trailing zeros: 2 → `2`, 2.5 → `2.5`. */
export function formatNumber(value: number, digits = 1): string {
  if (!isFinite(value)) {
    return '∞';
  }
  return String(Number(value.toFixed(digits)));
}

/** A GPU request: `1 GPU`, `4 GPUs`, `0.5 GPU (shared)`, `2 × A100-80GB`, `CPU only`, plus workers. */
export function formatGpus(resources: Pick<IResources, 'gpus' | 'gpu_milli' | 'gpu_models' | 'workers'> | null | undefined): string {
  if (!resources) {
    return '–';
  }
  const { gpus, gpu_milli: milli, gpu_models: models, workers } = resources;
  let text: string;
  if (!gpus) {
    text = 'CPU only';
  } else if (milli && milli < 1000) {
    text = `${formatNumber((gpus * milli) / 1000, 3)} GPU (shared)`;
  } else if (models && models.length) {
    text = `${gpus} × ${models.join('|')}`;
  } else {
    text = `${gpus} GPU${gpus === 1 ? '' : 's'}`;
  }
  return workers && workers > 1 ? `${text} × ${workers} workers` : text;
}

function num(details: Record<string, unknown>, ...keys: string[]): number | undefined {
  for (const key of keys) {
    const value = details[key];
    if (typeof value === 'number' && isFinite(value)) {
      return value;
    }
  }
  return undefined;
}

function str(details: Record<string, unknown>, ...keys: string[]): string | undefined {
  for (const key of keys) {
    const value = details[key];
    if (typeof value === 'string' && value) {
      return value;
    }
  }
  return undefined;
}

/**
 * One sentence for a reason's code and numbers, used only when the server sent no message.
 * Never the bare "does not fit" (case 005): it names the resource and the numbers it has.
 */
export function sentenceFromDetails(code: string, details: Record<string, unknown>): string {
  const requested = num(details, 'requested', 'gpus', 'needed');
  const free = num(details, 'free', 'available');
  const quota = num(details, 'quota', 'guaranteed', 'limit');
  const used = num(details, 'used', 'in_use');
  const capacity = num(details, 'capacity', 'total');
  const model = str(details, 'model', 'gpu_model', 'flavor');
  const gpusOf = model ? `${model} GPUs` : 'GPUs';
  const team = str(details, 'team') ?? 'the team';
  const parts: string[] = [];
  switch (code) {
    case 'ExceedsQuota':
    case 'BorrowingLimitReached':
      parts.push(
        `${team} uses ${used ?? '?'} of ${quota ?? '?'} ${gpusOf}` +
          (requested !== undefined ? `; the job needs ${requested} more` : '') +
          (code === 'BorrowingLimitReached' ? ' (borrowing limit reached)' : '')
      );
      break;
    case 'BudgetExhausted': {
      const spent = num(details, 'spent_gpu_hours', 'used_gpu_hours', 'spent');
      const budget = num(details, 'budget_gpu_hours', 'gpu_hours', 'budget');
      parts.push(
        `${team} has spent ${spent !== undefined ? formatNumber(spent) : '?'} of ${budget !== undefined ? formatNumber(budget) : '?'} GPU-hours this period`
      );
      break;
    }
    case 'WaitingForCapacity':
    case 'Fragmented':
      parts.push(
        `${free ?? '?'} of ${capacity ?? '?'} ${gpusOf} free, job needs ${requested ?? '?'}` +
          (code === 'Fragmented' ? ' on one node (free GPUs are spread over nodes)' : '')
      );
      break;
    case 'NoMatchingGpuModel':
      parts.push(`no node has the requested GPU model ${model ?? '(unnamed)'}`);
      break;
    case 'UnhealthyGpu':
      parts.push(`the matching ${gpusOf} are unhealthy`);
      break;
    default: {
      const numbers = Object.entries(details)
        .filter(([, v]) => typeof v === 'number' || typeof v === 'string')
        .map(([k, v]) => `${k.replace(/_/g, ' ')} ${v}`);
      parts.push(`${code.replace(/([a-z])([A-Z])/g, '$1 $2')}${numbers.length ? `: ${numbers.join(', ')}` : ''}`);
    }
  }
  const sentence = parts.join(' ');
  return sentence.charAt(0).toUpperCase() + sentence.slice(1) + '.';
}

/** The primary reason as one sentence (the server's message, else built from the numbers). */
export function reasonSentence(reason: IPendingReason | null | undefined): string {
  if (!reason) {
    return '';
  }
  const message = (reason.message ?? '').trim();
  if (message) {
    return /[.!?]$/.test(message) ? message : `${message}.`;
  }
  return sentenceFromDetails(reason.code, reason.details ?? {});
}

/** Waiting for GPUs: pending, or preempted and requeued. */
export function isWaiting(state: string): boolean {
  return state === 'pending' || state === 'preempted';
}

/** Queue position of a job (`position` on the row, else on its reason), or null. */
export function queuePosition(job: Pick<IJob, 'position' | 'reason'>): number | null {
  if (typeof job.position === 'number') {
    return job.position;
  }
  return job.reason?.position ?? null;
}

/**
 * The full queue line for a pending job: `#3 · <reason sentence> · starts in 12 min (<eta_reason>)`.
 * Running jobs: `running on <node> (GPUs …)`.
 */
export function queueLine(job: IJob, now: Date = new Date()): string {
  if (!isWaiting(job.state)) {
    const node = job.allocation?.node;
    return node ? `${job.state} on ${node}` : job.state;
  }
  const parts: string[] = [];
  const position = queuePosition(job);
  if (position !== null) {
    parts.push(`#${position}`);
  }
  const sentence = reasonSentence(job.reason);
  if (sentence) {
    parts.push(sentence);
  }
  const eta = job.reason?.eta ?? job.eta ?? null;
  const etaReason = job.reason?.eta_reason || job.eta_reason || '';
  parts.push(`ETA ${formatEta(eta, now)}${etaReason ? ` (${etaReason})` : ''}`);
  if (job.reason?.unblock) {
    parts.push(`Unblocks when: ${job.reason.unblock}`);
  }
  return parts.join(' · ');
}

/** Quota line label: `team-ml / alice · A100-80GB` (`*` → `any model`). */
export function quotaLabel(q: Pick<IQuota, 'team' | 'user' | 'gpu_model'>): string {
  const who = q.user ? `${q.team} / ${q.user}` : q.team;
  return `${who} · ${q.gpu_model === '*' ? 'any model' : q.gpu_model}`;
}

/** Fractions of a bar for usage against guarantee and guarantee+borrowing (0..1 each). */
export function quotaFractions(used: number, guaranteed: number, borrowingLimit: number | null): {
  max: number | null;
  usedFraction: number;
  guaranteedFraction: number;
  text: string;
} {
  const max = borrowingLimit === null ? null : guaranteed + borrowingLimit;
  const scale = Math.max(max ?? Math.max(guaranteed, used) * 1.25, used, guaranteed, 1);
  const text =
    `${formatNumber(used)} used · ${formatNumber(guaranteed)} guaranteed · ` +
    (borrowingLimit === null ? 'borrowing unlimited' : `borrow up to ${formatNumber(borrowingLimit)} (max ${formatNumber(max as number)})`);
  return {
    max,
    usedFraction: Math.min(1, used / scale),
    guaranteedFraction: Math.min(1, guaranteed / scale),
    text
  };
}

/** A state label as users read it. */
export function stateLabel(state: string): string {
  return state.charAt(0).toUpperCase() + state.slice(1);
}

/** Sparkline SVG path (`M x y L ...`) of `values` (0..100) in a `width`×`height` box. */
export function sparklinePath(values: readonly number[], width: number, height: number): string {
  if (!values.length) {
    return '';
  }
  const n = values.length;
  const step = n > 1 ? width / (n - 1) : 0;
  return values
    .map((v, i) => {
      const clamped = Math.max(0, Math.min(100, isFinite(v) ? v : 0));
      const x = n > 1 ? i * step : width;
      const y = height - (clamped / 100) * height;
      return `${i === 0 ? 'M' : 'L'}${x.toFixed(1)} ${y.toFixed(1)}`;
    })
    .join(' ');
}

/** What an idle-ladder action does to the GPUs, as a past participle. */
const IDLE_VERBS: Record<string, string> = { release: 'released', requeue: 'requeued', stop: 'stopped', notify: 'reported as idle' };

/**
 * The notification text of an `idle_warning` event (engine: `{job_id, kind, stage: warn|reclaim|clear,
 * action, reason, deadline, idle_since}`), short enough for a toast (JupyterLab cuts at 140
 * characters); the full reason with its numbers is the job's message in My work.
 * Returns null for `clear` (activity resumed: nothing to announce).
 */
export function idleNotice(data: Record<string, any>, name: string, now: Date = new Date()): string | null {
  const stage = data.stage ?? 'warn';
  const verb = IDLE_VERBS[data.action as string] ?? 'released';
  if (stage === 'clear') {
    return null;
  }
  if (stage === 'reclaim') {
    return `Idle GPUs reclaimed: ${name}'s GPUs were ${verb}.`;
  }
  const when = data.deadline ? formatEta(data.deadline, now) : 'soon';
  return `Idle GPUs: ${name} is idle; its GPUs will be ${verb} ${when === 'any moment' ? 'any moment' : when} unless it is used or kept alive.`;
}
