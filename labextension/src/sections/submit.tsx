/**
 * Submit: run a script or notebook on N GPUs, with dry-run feedback ("would this fit, where, and
 * when") before anything is queued. `prefill(path)` is what "Run on GPUs" in the file browser and
 * the notebook toolbar call. Arguments are split like a shell does (quotes kept together); for a
 * notebook they are its parameters, `NAME=VALUE` words (`days=3 region=eu`) for its cell tagged
 * "parameters", as `%schedule notebook NB -p days=3` and `jupyter-sched submit --notebook NB -p days=3`
 * send them (new user 14, N27: the words were dropped without a word).
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { ArgumentSyntaxError, quoteArg, splitArgs, unexpandedWords } from '../args';
import { describeError, SchedApiError, type Schemas } from '../client';
import { asClause, formatEta, formatGpus, formMessage, formWords, reasonSentence, reasonText, refusalLine, serverText, shownText } from '../format';
import { fitToast } from '../notify';
import { parseParameterWords } from '../parameters';
import { newSubmitKey, submitKeyed, SubmitOutcomeUnknown } from '../submitting';
import type { ISchedModel, ISchedSection } from '../tokens';
import { type DryRun, type Job, type Me, type PendingReason, type Priority, resourcesOf, type SubmitRequest } from '../types';
import { ModelView } from './base';

/** Join the server's root directory and a path relative to it (the file browser's paths). */
export function absolutePath(root: string, path: string): string {
  if (!root || path.startsWith('/')) {
    return path;
  }
  return `${root.replace(/\/+$/, '')}/${path.replace(/^\.\//, '')}`;
}

/** The form's raw values. */
export interface ISubmitValues {
  path: string;
  args: string;
  gpus: string;
  model: string;
  priority: string;
  timeLimit: string;
  name: string;
  /** The team charged; "" = the user's default team (the server's `me.team`), which the form then leaves out. */
  team: string;
  /** Cores per worker ("4", "0.5"); "" = not asked (the field shows only when a job's edit fills or needs it). */
  cpu?: string;
  /** Host memory per worker ("16GiB", "4096MiB"); "" = not asked (shown as `cpu`). */
  memory?: string;
  /**
   * Free GPUs only (`no_preempt`, the CLI's and the magics' `--no-preempt`): the job waits rather than preempt or
   * reclaim anyone's running work (s38: the panel could neither set it nor say it was set).
   */
  noPreempt?: boolean;
}

export const EMPTY_VALUES: ISubmitValues = { path: '', args: '', gpus: '1', model: '', priority: 'normal', timeLimit: '', name: '', team: '', cpu: '', memory: '', noPreempt: false };

/**
 * The POST body from the form's values. A path from the file browser is relative to the
 * server's root (`serverRoot`): the job gets the absolute path and runs in the file's directory.
 * Throws a plain Error naming the input at fault.
 */
export function submitBodyFrom(values: ISubmitValues, serverRoot = '', trans?: TranslationBundle): SubmitRequest {
  const t = (s: string, ...a: unknown[]) => (trans ? trans.__(s, ...a) : s.replace(/%(\d)/g, (_, i) => String(a[Number(i) - 1])));
  const relative = values.path.trim();
  if (!relative) {
    throw new Error(t('Give the path of a script or notebook to run (e.g. train.py).'));
  }
  const path = absolutePath(serverRoot, relative);
  const gpus = Number(values.gpus);
  // the words the server, the CLI and the magics use (model.validation.parse_gpus; issue 20: one wording)
  if (values.gpus.trim() === '' || !isFinite(gpus)) {
    throw new Error(t('GPUs must be an integer (got "%1"). Use a whole number such as 1 or 4, or a fraction below 1 such as 0.5.', values.gpus));
  }
  if (gpus < 0) {
    throw new Error(t('GPUs must be >= 0 (got %1). Use 0 for CPU-only work or a positive number of GPUs.', values.gpus.trim()));
  }
  let args: string[];
  try {
    args = splitArgs(values.args);
  } catch (err) {
    throw new Error(t('Arguments: %1.', err instanceof ArgumentSyntaxError ? err.message : String(err)));
  }
  const base = path.split('/').pop() || path;
  const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) || '/' : '';
  const body: SubmitRequest = {
    name: values.name.trim() || base.replace(/\.(py|ipynb|sh)$/, ''),
    gpus,
    priority: (values.priority || 'normal') as Priority
  };
  if (path.endsWith('.ipynb')) {
    body.notebook = path;
    if (args.length) {
      try {
        body.parameters = parseParameterWords(args, t('Parameters'));
      } catch (err) {
        throw new Error(t('%1 — a notebook takes values for its cell tagged "parameters", e.g. days=3 region=eu.', String((err as Error).message)));
      }
    }
  } else if (path.endsWith('.py')) {
    body.script = path;
    if (args.length) {
      body.args = args;
    }
  } else {
    body.command = [path, ...args];
  }
  if (dir && serverRoot) {
    body.working_dir = dir;
  }
  if (values.model) {
    body.gpu_models = [values.model];
  }
  if (values.timeLimit.trim()) {
    body.time_limit = values.timeLimit.trim();
  }
  if (values.team) {
    // a member of two teams picks the one charged, as `submit --team` and `%gpu request --team` do (new user 20, N7)
    body.team = values.team;
  }
  const cpu = (values.cpu ?? '').trim();
  if (cpu) {
    // the server reads "4", "0.5" or "500m" and names the field when it cannot
    body.cpu = isFinite(Number(cpu)) ? Number(cpu) : cpu;
  }
  const memory = (values.memory ?? '').trim();
  if (memory) {
    body.memory = memory;
  }
  if (values.noPreempt) {
    body.no_preempt = true; // it waits for free GPUs: nobody's running job is stopped for it (--no-preempt)
  }
  return body;
}

/** `seconds` as a Time limit the server reads back exactly ("1h05m30s", "2m", "45s"; 0: "0", no limit). */
export function exactDuration(seconds: number): string {
  const total = Math.round(seconds);
  if (total <= 0) {
    return '0';
  }
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${sec ? `${sec}s` : ''}`;
}

/** MiB as the Memory field writes them: whole GiB as "16GiB", else "1536MiB". */
export function memoryWords(mib: number): string {
  return mib % 1024 === 0 ? `${mib / 1024}GiB` : `${mib}MiB`;
}

/** A notebook's parameters as the form's `NAME=VALUE` words, read back the same by {@link parseParameterWords}. */
export function parameterWords(parameters: Record<string, unknown>): string {
  return Object.entries(parameters)
    .map(([name, value]) => {
      let text: string;
      if (typeof value === 'string') {
        let reread: unknown = value;
        try {
          reread = JSON.parse(value);
        } catch {
          reread = value;
        }
        text = reread === value ? value : JSON.stringify(value); // "3" given as text stays text
      } else {
        text = JSON.stringify(value);
      }
      return quoteArg(`${name}=${text}`);
    })
    .join(' ');
}

/** The field a job's edit puts the cursor in: what has to change for it not to be stopped the same way. */
export type EditFocus = 'timeLimit' | 'memory';

/**
 * A finished job opened in the Submit form ("Edit in Submit form" of its Resubmit): the form's fields filled with its
 * request, and the rest of its request — what the form has no field for (env, working dir, image, worker groups, …) —
 * carried, sent as it was and named under the form.
 */
export interface IJobEdit {
  /** The job it was made from. */
  from: { id: string; name: string };
  values: ISubmitValues;
  /**
   * The request's other fields, sent as they were (every field of {@link RESUBMIT_COPIED} the form has none for);
   * `command` here is only the interpreter of a `python script.py` job (`[".../bin/python"]`), put before the
   * form's script by {@link editedBody}.
   */
  carried: Partial<SubmitRequest>;
  /** `carried` in words, for the note under the form ("env BATCH, SEED", "working dir /home/ana/x"); never env values. */
  carriedWords: string[];
  focus: EditFocus | null;
}

/** A Python interpreter's file name (`python`, `python3`, `python3.11`), as the CLI's `_PYTHON` reads one. */
const PYTHON_WORD = /^python(3(\.\d+)?)?$/;

/** The request fields the form's own fields say (the rest of a job's request is carried). */
const FORM_FIELDS: readonly (keyof SubmitRequest)[] = ['name', 'priority', 'team', 'gpus', 'cpu_millis', 'memory_mib', 'time_limit_s', 'script', 'notebook', 'command', 'args', 'parameters', 'no_preempt'];

/**
 * `job` as the Submit form shows it (s34-panel, newuser33 n9: a job its time limit stopped had to be typed again
 * field by field). Its request is {@link resubmitBody}'s, so nothing Resubmit sends is lost: the form's fields take
 * what they can say, the rest is carried. `serverRoot`: a path under it is shown relative, as the file browser's;
 * `defaultTeam`: the user's default team (`me.team`), which the form's Team list says as "".
 */
export function jobEdit(job: Job, serverRoot = '', defaultTeam = '', focus: EditFocus | null = null): IJobEdit {
  const full = resubmitBody(job);
  const root = serverRoot.replace(/\/+$/, '');
  const shown = (path: string): string => (root && path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path);
  let command = full.command ?? [];
  // `<a python> <script.py> args…` (the CLI's `submit -- python short.py`): the script goes in "Script or notebook"
  // and the rest in Arguments, as the form takes them (newuser35 n9: the interpreter stood in the Script field). Its
  // interpreter, when a path, is carried as `command: [it]` (editedBody runs the script with it) and said: the panel
  // cannot tell it from the job Python the server would use, so it is kept; a bare `python` is the job Python's name.
  let interpreter = '';
  if (!full.script && !full.notebook && command.length >= 2 && PYTHON_WORD.test(command[0].split('/').pop() ?? '')
      && command[1].endsWith('.py') && !command[1].startsWith('-')) {
    interpreter = command[0].includes('/') ? command[0] : '';
    const script = command[1].startsWith('/') || !full.working_dir ? command[1] : `${full.working_dir.replace(/\/+$/, '')}/${command[1].replace(/^\.\//, '')}`;
    command = [script, ...command.slice(2)];
  }
  const program = full.script ?? full.notebook ?? command[0] ?? '';
  const words = full.script ? (full.args ?? []) : full.notebook ? [] : command.slice(1);
  const r = resourcesOf(job);
  const models = r.gpu_models;
  const values: ISubmitValues = {
    path: shown(program),
    args: full.notebook && full.parameters ? parameterWords(full.parameters) : words.map(quoteArg).join(' '),
    gpus: String(full.gpus ?? r.gpus),
    model: models.length === 1 ? models[0] : '',
    priority: full.priority ?? 'normal',
    timeLimit: typeof full.time_limit_s === 'number' ? exactDuration(full.time_limit_s) : '',
    name: full.name ?? '',
    team: full.team && full.team !== defaultTeam ? full.team : '',
    cpu: full.cpu_millis ? String(r.cpu_millis / 1000) : '',
    memory: full.memory_mib ? memoryWords(r.memory_mib) : '',
    noPreempt: full.no_preempt === true // its checkbox, shown ticked (it was carried unsaid)
  };
  const carried: Partial<SubmitRequest> = {};
  for (const [key, value] of Object.entries(full) as [keyof SubmitRequest, unknown][]) {
    if (!FORM_FIELDS.includes(key) && !(key === 'gpu_models' && models.length === 1)) {
      (carried as Record<string, unknown>)[key] = value;
    }
  }
  if (interpreter) {
    carried.command = [interpreter];
  }
  if (carried.groups) {
    // a gang of worker groups: its gpus, cpu and memory are its groups' own (the form's GPUs field says the total)
    values.cpu = '';
    values.memory = '';
  }
  const said: string[] = [];
  if (interpreter) {
    said.push(`interpreter ${shown(interpreter)}`);
  }
  if (carried.env && Object.keys(carried.env).length) {
    said.push(`env ${Object.keys(carried.env).join(', ')}`);
  }
  if (carried.working_dir) {
    said.push(`working dir ${carried.working_dir}`);
  }
  if (carried.groups?.length) {
    said.push(`worker groups ${carried.groups.map(g => g.name).join(', ')}`);
  }
  if (carried.workers) {
    said.push(`${carried.workers} workers`);
  }
  if (models.length > 1) {
    said.push(`GPU models ${models.join(', ')}`);
  }
  for (const [key, label] of [['image', 'image'], ['port', 'port'], ['profile', 'profile'], ['mig_profile', 'MIG profile']] as const) {
    const value = carried[key];
    if (value !== undefined && value !== null && value !== '') {
      said.push(`${label} ${String(value)}`);
    }
  }
  if (carried.min_memory_mib) {
    said.push(`GPU memory ≥ ${memoryWords(r.min_memory_mib)}`);
  }
  if (carried.node_selector && Object.keys(carried.node_selector).length) {
    said.push(`nodes ${Object.entries(carried.node_selector).map(([k, v]) => `${k}=${v}`).join(', ')}`);
  }
  if (carried.tolerations?.length) {
    said.push(`tolerations ${carried.tolerations.join(', ')}`);
  }
  if (carried.nvlink) {
    said.push('NVLink');
  }
  if (carried.checkpointable) {
    said.push('checkpointable');
  }
  return { from: { id: job.id, name: job.name }, values, carried, carriedWords: said, focus };
}

/**
 * The body the form sends for an edited job: the form's fields (`fromForm`, {@link submitBodyFrom}) over the job's
 * carried ones; its own working dir stands (the form's is the file's folder); a gang's groups keep their resources.
 */
export function editedBody(fromForm: SubmitRequest, carried: Partial<SubmitRequest> | null): SubmitRequest {
  if (!carried) {
    return fromForm;
  }
  const body: SubmitRequest = { ...carried, ...fromForm };
  if (carried.working_dir) {
    body.working_dir = carried.working_dir;
  }
  if (carried.command) {
    // the interpreter a `python script.py` job ran its script with (jobEdit): the form's script and arguments after
    // it; the form's notebook or program goes as the form says
    delete body.command;
    if (fromForm.script) {
      body.command = [...carried.command, fromForm.script, ...(fromForm.args ?? [])];
      delete body.script;
      delete body.args;
    } else if (fromForm.command) {
      body.command = fromForm.command;
    }
  }
  if (carried.groups) {
    delete body.gpus;
    delete body.cpu;
    delete body.memory;
  }
  return body;
}

/** Whether the out-of-memory killer ended `job` (failed; `ended_out_of_memory` of its GET jobs/{id}). */
export function killedOutOfMemory(job: Job): boolean {
  return job.state === 'failed' && job.ended_out_of_memory === true;
}

/**
 * The toast of a Resubmit of a job the out-of-memory killer ended (its memory cap `memory`, its words, or "" when it
 * asked none): short enough that its fix is whole (as {@link limitStoppedToast}).
 */
export function outOfMemoryToast(name: string, memory: string, trans?: TranslationBundle): string {
  const say = (text: string, ...args: string[]): string =>
    trans ? trans.__(text, ...args) : text.replace(/%(\d)/g, (_, n: string) => args[Number(n) - 1] ?? '');
  const fix = say('ask for more Memory in the Submit form');
  const cap = memory ? say(' (its memory %1)', memory) : '';
  return fitToast([
    say('%1 was killed for running out of memory%2: sent again as it was, it would be killed the same way — %3, or resend it as it was.', name, cap, fix),
    say('%1 ran out of memory%2; as it was, it would again — %3.', name, cap, fix),
    say('%1 ran out of memory — %2.', name, fix)
  ], `${fix}.`);
}

/**
 * What Resubmit sends for a job: the request it was submitted with, field by field of
 * `SubmitJobRequest` — every field is either in {@link RESUBMIT_COPIED} or, with why not, in
 * {@link RESUBMIT_NOT_COPIED} (test/forms.test.ts checks both lists against schema.ts). New user 18,
 * N15: a fixed list dropped `groups` (a 1 + 2 GPU gang came back as 2 × 2 = 4 GPUs), `port`,
 * `checkpointable` and `image`.
 */
export const RESUBMIT_COPIED = [
  'name', 'kind', 'priority', 'team', 'gpus', 'gpu_models', 'min_memory_mib', 'mig_profile', 'nvlink',
  'cpu_millis', 'memory_mib', 'workers', 'groups', 'node_selector', 'tolerations', 'time_limit_s', 'command',
  'script', 'args', 'notebook', 'parameters', 'working_dir', 'env', 'image', 'port', 'profile', 'checkpointable',
  'no_preempt'
] as const satisfies readonly (keyof SubmitRequest)[];

/** The request fields Resubmit leaves out, and why (another spelling of a copied one, or not the job's to copy). */
export const RESUBMIT_NOT_COPIED: Readonly<Partial<Record<keyof SubmitRequest, string>>> = {
  queue: 'another spelling of team',
  gpu_milli: 'a share is sent as gpus (0.5)',
  model: 'another spelling of gpu_models',
  mem_per_gpu: 'another spelling of min_memory_mib',
  cpu: 'another spelling of cpu_millis',
  memory: 'another spelling of memory_mib',
  time_limit: 'another spelling of time_limit_s',
  resources: 'its fields are sent flat',
  kernel_id: "a lease's kernel: leases are not resubmitted",
  kernel_notebook: "a lease's notebook: leases are not resubmitted",
  released_at_exit: "a lease's: leases are not resubmitted",
  asking_process: "a lease's asking kernel process: leases are not resubmitted",
  parent_job_id: 'the new job is a run of its own',
  source: 'kept in the store, not in the job object (a definition resubmits itself)',
  notebook_json: 'kept in the store, not in the job object (a definition resubmits itself)'
};

/**
 * The toast of a Resubmit its time limit `limit` (its words, e.g. "1m") stopped (newuser32 n8): the fullest text that
 * fits a toast, else its head cut so the fix — where to set a longer limit — is always whole (newuser33 n9: the one
 * text, 170 characters, was cut at "…a longer Time limit from the …").
 */
export function limitStoppedToast(name: string, limit: string, trans?: TranslationBundle): string {
  const say = (text: string, ...args: string[]): string =>
    trans ? trans.__(text, ...args) : text.replace(/%(\d)/g, (_, n: string) => args[Number(n) - 1] ?? '');
  const fix = say('set a longer Time limit in the Submit form');
  return fitToast([
    say('%1 was stopped by its %2 time limit: sent again as it was, it would be stopped the same way — %3, or resend it as it was.', name, limit, fix),
    say('%1 was stopped by its %2 time limit; as it was, it would stop again — %3.', name, limit, fix),
    say('%1: its %2 limit stopped it — %3.', name, limit, fix)
  ], `${fix}.`);
}

/**
 * The time limit (seconds) that stopped `job`, when it failed after running at least that long; else null
 * (newuser32 n8: Resubmit of a job its 1m limit stopped sent it again at once with the same 1m limit, to be stopped
 * the same way). Read from its numbers (limit, start, end), not from the words of its message.
 */
export function limitThatStopped(job: Job): number | null {
  const limit = job.time_limit_s ?? 0;
  if (job.state !== 'failed' || !limit || !job.started_at || !job.finished_at) {
    return null;
  }
  const ran = (Date.parse(job.finished_at) - Date.parse(job.started_at)) / 1000;
  return Number.isFinite(ran) && ran >= limit ? limit : null;
}

/** The request that submits `job` again (same spec, every field of {@link RESUBMIT_COPIED}; the server assigns a new id). */
export function resubmitBody(job: Job): SubmitRequest {
  const r = resourcesOf(job);
  const raw = (job.resources ?? {}) as Record<string, unknown>;
  const body: SubmitRequest = {
    name: job.name,
    kind: job.kind,
    priority: job.priority,
    team: job.team
  };
  const groups = Array.isArray(raw.groups) ? (raw.groups as Record<string, unknown>[]) : [];
  if (groups.length) {
    // per group: gpus, workers, cpu and memory are the groups' own, never beside them
    body.groups = groups.map(g => {
      const group: Schemas['WorkerGroupRequest'] = { name: String(g.name ?? ''), gpus: Number(g.gpus ?? 0), workers: Number(g.workers ?? 1) };
      if (typeof g.cpu_millis === 'number' && g.cpu_millis) {
        group.cpu_millis = g.cpu_millis;
      }
      if (typeof g.memory_mib === 'number' && g.memory_mib) {
        group.memory_mib = g.memory_mib;
      }
      return group;
    });
  } else {
    body.gpus = r.gpu_milli < 1000 && r.gpus === 1 ? r.gpu_milli / 1000 : r.gpus;
    if (r.cpu_millis) {
      body.cpu_millis = r.cpu_millis;
    }
    if (r.memory_mib) {
      body.memory_mib = r.memory_mib;
    }
    if (r.workers > 1) {
      body.workers = r.workers;
    }
    if (r.mig_profile) {
      body.mig_profile = r.mig_profile;
    }
  }
  if (r.gpu_models.length) {
    body.gpu_models = r.gpu_models;
  }
  if (r.min_memory_mib) {
    body.min_memory_mib = r.min_memory_mib;
  }
  if (r.nvlink) {
    body.nvlink = true;
  }
  if (job.no_preempt) {
    body.no_preempt = true; // sent again as it was asked: it waits for free GPUs, never stops a colleague's job
  }
  const selector = raw.node_selector;
  if (selector && typeof selector === 'object' && Object.keys(selector).length) {
    body.node_selector = { ...(selector as Record<string, string>) };
  }
  if (Array.isArray(raw.tolerations) && raw.tolerations.length) {
    body.tolerations = [...(raw.tolerations as string[])];
  }
  const command = job.command ?? [];
  if (job.script) {
    body.script = job.script;
    if (command.length) {
      body.args = command;
    }
  } else if (job.notebook) {
    body.notebook = job.notebook;
  } else {
    body.command = command;
  }
  const parameters = job['parameters'];
  if (parameters && typeof parameters === 'object' && Object.keys(parameters).length) {
    body.parameters = parameters as Record<string, unknown>;
  }
  if (job.working_dir) {
    body.working_dir = job.working_dir;
  }
  if (job.time_limit_s) {
    body.time_limit_s = job.time_limit_s;
  } else if (job['unlimited'] === true) {
    // "no limit at all" as it was asked (time_limit 0): left out, the copy got the queue's default
    // limit and was stopped there (new user 19, N7)
    body.time_limit_s = 0;
  }
  if (job.env && Object.keys(job.env).length) {
    body.env = job.env;
  }
  if (job.image) {
    body.image = job.image;
  }
  if (typeof job.port === 'number') {
    body.port = job.port;
  }
  if (job.profile) {
    body.profile = job.profile;
  }
  if (job.checkpointable) {
    body.checkpointable = true;
  }
  return body;
}

/**
 * The classes the Priority list offers: the server's (`GET config`), of them those granted to the
 * user in the team the form charges (`GET me`: `priorities[team]`; `team` "" or left out: the user's
 * default team) — new user 16, N13: "high" was offered to a user not granted it, then refused.
 * Without an answer from `me`, the server's list.
 */
export function offeredPriorities(configured: unknown, me: Pick<Me, 'team' | 'priorities'> | null | undefined, team = ''): string[] {
  const all = Array.isArray(configured) ? (configured as string[]) : ['high', 'normal', 'low'];
  const granted = me ? me.priorities?.[team || me.team] : undefined;
  if (!Array.isArray(granted) || !granted.length) {
    return all;
  }
  const offered = all.filter(p => (granted as string[]).includes(p));
  return offered.length ? offered : all;
}

/**
 * The teams the Team list offers (`GET me`: `teams`, the user's default team `me.team` first); none
 * when there is at most one (nothing to pick: the form shows no Team field, and the server charges the
 * default team). New user 20, N7: a member of two teams could not pick one in the panel, where REST,
 * the CLI and %gpu take `--team`.
 */
export function offeredTeams(me: Pick<Me, 'team' | 'teams'> | null | undefined): string[] {
  const teams = [...new Set([me?.team, ...(me?.teams ?? [])].filter((t): t is string => typeof t === 'string' && t !== ''))];
  return teams.length > 1 ? teams : [];
}

/**
 * The server's notes on a request, each ` Note: ….` in the form's words (`time_limit 90 is 90 seconds …` names
 * the Time limit field, newuser31 N4): after a Submit's answer and after a Check fit's alike (newuser31 n13).
 */
export function requestNotes(warnings: readonly string[] | null | undefined, trans: TranslationBundle): string {
  return (warnings ?? []).map(w => ' ' + trans.__('Note: %1.', formWords(w, trans).replace(/\.$/, ''))).join('');
}

/** One sentence for a dry-run answer: where it would start now, or why not and when. */
export function dryRunSentence(result: DryRun, now: Date = new Date(), trans?: TranslationBundle): string {
  const t = (s: string, ...a: unknown[]) => (trans ? trans.__(s, ...a) : s.replace(/%(\d)/g, (_, i) => String(a[Number(i) - 1])));
  const preempts = result.would_preempt?.length ? t(' by preempting %1', result.would_preempt.join(', ')) : '';
  if (result.fits && result.allocation) {
    // the share it would hold, not its GPUs' count: 0.5 GPU said "(1 GPU)" (new user 16, N13)
    const n = result.allocation.gpu_uuids?.length ?? 0;
    const milli = typeof result.allocation.gpu_milli === 'number' ? result.allocation.gpu_milli : 1000;
    const gpus = n === 1 && milli > 0 && milli < 1000 ? formatGpus({ gpus: 1, gpu_milli: milli, gpu_models: [], workers: 1 }) : n === 1 ? t('1 GPU') : t('%1 GPUs', n);
    return t('Would start now on %1 (%2)%3.', result.allocation.node ?? '?', gpus, preempts);
  }
  if (result.fits) {
    return t('Would start now%1.', preempts);
  }
  const reason = (result.reason ?? null) as PendingReason | null;
  const parts = [reasonSentence(reason, trans) || t('Would wait in the queue.')];
  if (result.never) {
    // what blocks it and its fix, as its refusal says them (newuser32 n1: the fix was left out here)
    const fix = reasonText(reason)?.unblock;
    if (fix && reasonSentence(reason, trans)) {
      parts[0] = `${refusalLine(parts[0], fix)}.`;
    }
    parts.push(t('It can never start as requested.'));
  } else {
    const eta = reason?.eta ?? result.eta ?? null;
    parts.push(t('Estimated start: %1%2.', formatEta(eta, now, trans), reason?.eta_reason ? ` (${reason.eta_reason})` : ''));
  }
  return formWords(parts.join(' '), trans); // the form's words (verify21 V3)
}

/** The message for a failed submission: the server's sentence plus a reason it attached. */
/** The form's label of each request field a refusal may name (the API speaks JSON names). */
const FORM_LABELS: Record<string, string> = {
  script: 'Script or notebook',
  notebook: 'Script or notebook',
  command: 'Script or notebook',
  working_dir: 'Script or notebook',
  args: 'Arguments',
  parameters: 'Parameters',
  gpus: 'GPUs',
  gpu_milli: 'GPUs',
  model: 'GPU model',
  gpu_models: 'GPU model',
  priority: 'Priority',
  time_limit: 'Time limit',
  time_limit_s: 'Time limit',
  name: 'Name',
  team: 'Team',
  queue: 'Team',
  cpu: 'CPU cores',
  cpu_millis: 'CPU cores',
  memory: 'Memory',
  memory_mib: 'Memory'
};

/**
 * The Arguments field's help (newuser27 n11): words are split like a shell's but not expanded — as
 * Kubernetes `args` and Docker's exec form pass them — and, where the text holds `~…` or `$NAME` words,
 * which ones reach the program as typed.
 */
export function argumentsHelp(text: string, trans: TranslationBundle): string {
  const rule = trans.__('Split like a shell (quotes group words) but not expanded: ~ and $VAR reach the program as typed.');
  const words = unexpandedWords(text);
  if (!words.length) {
    return rule;
  }
  const shown = words.slice(0, 3).map(w => `'${w}'`).join(', ') + (words.length > 3 ? ', …' : '');
  return trans._n('%2 reaches it as typed: give the full path or value.', '%2 reach it as typed: give full paths or values.', words.length, shown) + ' ' + rule;
}

/**
 * What to do about a bad path, in this form's terms (the API's hint offers `source`, which the form cannot send):
 * the words of `jupyter_sched/wording/files.py` PANEL_PATH_FIX, for a server that sends no `details.fixes`.
 */
const PATH_HINT = 'give the path of a file the server can read (right-click it in the file browser → Run on GPUs)';

/**
 * What to do about a program file that is not executable, in this form's terms: it has no field for an
 * interpreter (Arguments come after the path), so not the API's "run it with its interpreter (CLI: --
 * python FILE)" (new user 17, N10). A `.py` or `.ipynb` runs with the job's Python. The words of
 * `jupyter_sched/wording/files.py` PANEL_NOT_EXECUTABLE_FIX, for a server that sends no `details.fixes`.
 */
const NOT_EXECUTABLE_HINT = 'choose a .py or .ipynb, or make the file executable (chmod +x)';

/**
 * A refused check or submission in the form's own words: the field by its label, no `[code]`,
 * and the reason's rendered advice ("Ask for at most 4 GPUs.") rather than the core's raw one
 * (new user 5: `time_limit: … [time_limit]`, "resubmit asking for fewer GPUs per worker",
 * "or send its text as source").
 */
export function submitErrorSentence(err: unknown, trans?: TranslationBundle): string {
  if (!(err instanceof SchedApiError)) {
    return describeError(err);
  }
  const field = err.field ?? '';
  const label = FORM_LABELS[field];
  const message = formMessage(err.message, field, label);
  const reason = err.body.details?.['reason'];
  const text = reason && typeof reason === 'object' ? reasonText(reason as PendingReason) : null;
  const sentence = reason && typeof reason === 'object' ? reasonSentence(reason as PendingReason, trans) : '';
  const parts = [label ? `${trans ? trans.__(label) : label}: ${message}` : message];
  if (sentence && !parts[0].includes(sentence.replace(/\.$/, ''))) {
    parts.push(sentence.replace(/\.$/, ''));
  }
  const rule = err.body.details?.['rule'];
  // the server's fix for this form, from the one renderer the CLI and the magics say theirs with (newuser31 n15)
  const fixes = err.body.details?.['fixes'];
  const ownFix = fixes && typeof fixes === 'object' ? (fixes as Record<string, unknown>)['panel'] : undefined;
  const hint = typeof ownFix === 'string' && ownFix
    ? ownFix
    : ['script', 'notebook', 'working_dir'].includes(field)
    ? PATH_HINT
    : field === 'command' && rule === 'not_executable'
      ? NOT_EXECUTABLE_HINT
      : text?.unblock || err.hint || '';
  if (hint) {
    parts.push(hint);
  }
  // the form's words, not the CLI's options or REST's second spellings (verify21 V3); one sentence of clauses,
  // as the CLI's and the magics' refusals (newuser32 n1: "— Ask for at most 4 GPUs." had its capital after the dash)
  const [head, ...rest] = parts;
  return formWords(`${[head.replace(/\.$/, ''), ...rest.map(asClause)].join(' — ')}.`, trans);
}

type FeedbackKind = 'info' | 'ok' | 'warn' | 'error';

/**
 * The line under a form filled from a job: which job, and what of its request the form sends without a field for it
 * ("From slowq (j-…): also sends env BATCH, SEED; working dir /home/ana/x.").
 */
export function editNote(edit: IJobEdit, trans?: TranslationBundle): string {
  const say = (text: string, ...args: string[]): string =>
    trans ? trans.__(text, ...args) : text.replace(/%(\d)/g, (_, n: string) => args[Number(n) - 1] ?? '');
  return edit.carriedWords.length
    ? say('From %1 (%2): also sends %3.', edit.from.name, edit.from.id, edit.carriedWords.join('; '))
    : say('From %1 (%2).', edit.from.name, edit.from.id);
}

interface IFormProps {
  model: ISchedModel;
  trans: TranslationBundle;
  serverRoot: string;
  prefill: IPrefill;
  submitted: (job: Job) => void;
}

/**
 * What the Submit form's "Free GPUs only" box does (`no_preempt`; README, docs/admin.md *No-preempt requests*): the
 * CLI's and the magics' `--no-preempt` in the panel's words.
 */
export const NO_PREEMPT_HELP =
  "Wait for free GPUs rather than stop anyone's running job (no preemption, no reclaim of another team's borrowed GPUs) — --no-preempt.";

/** A request to fill the form: a path ("Run on GPUs"), or a finished job's request (its Resubmit's "Edit in Submit form"). */
interface IPrefill {
  path: string;
  serial: number;
  edit?: IJobEdit;
}

function SubmitForm({ model, trans, serverRoot, prefill, submitted }: IFormProps): React.ReactElement {
  const [values, setValues] = React.useState<ISubmitValues>(EMPTY_VALUES);
  const [feedback, setFeedback] = React.useState<{ text: string; kind: FeedbackKind }>({ text: '', kind: 'info' });
  const [busy, setBusy] = React.useState(false);
  const serial = React.useRef(0);
  /**
   * The key of a submit whose outcome is not known, with its body: Submit of the same form again sends that key, so
   * the server answers with the job the first made, if it did, never a second one (newuser33 N3).
   */
  const unknownSubmit = React.useRef<{ body: string; key: string; asking?: boolean } | null>(null);
  const timer = React.useRef<ReturnType<typeof setTimeout> | null>(null);
  const gpusRef = React.useRef<HTMLInputElement>(null);
  const timeLimitRef = React.useRef<HTMLInputElement>(null);
  const memoryRef = React.useRef<HTMLInputElement>(null);
  /** The job the form was filled from, with the rest of its request (sent as it was) — null for a form of its own. */
  const [edit, setEdit] = React.useState<IJobEdit | null>(null);
  /** The field to put the cursor in once the form shows it (a job's edit: its Time limit or Memory). */
  const [focusOn, setFocusOn] = React.useState<{ field: EditFocus | 'gpus'; serial: number } | null>(null);
  const carried = edit?.carried ?? null;
  /** Whether the CPU cores and Memory fields show: a job's edit that has them or needs Memory (else the form as it was). */
  const [extras, setExtras] = React.useState(false);

  // what the form sends: the team and priority its lists show (a team no longer offered is the default
  // again; a class not granted in the chosen team is the first one that is)
  const effective = React.useCallback(
    (v: ISubmitValues): ISubmitValues => {
      const team = offeredTeams(model.me).includes(v.team) ? v.team : '';
      const offered = offeredPriorities(model.config?.priorities, model.me, team);
      return { ...v, team, priority: offered.includes(v.priority) ? v.priority : offered[0] };
    },
    [model]
  );

  const dryRun = React.useCallback(
    async (v: ISubmitValues) => {
      let body: SubmitRequest;
      try {
        body = editedBody(submitBodyFrom(effective(v), serverRoot, trans), carried);
      } catch (err) {
        setFeedback({ text: describeError(err), kind: 'error' });
        return;
      }
      const mine = ++serial.current;
      setFeedback({ text: trans.__('Checking…'), kind: 'info' });
      try {
        const result = await model.client.dryrun(body);
        if (mine === serial.current) {
          // the notes its Submit would give, in the same words (newuser31 n13: Time limit 90 was said only there)
          const notes = requestNotes(result.warnings, trans);
          setFeedback({ text: trans.__('Dry run: %1', dryRunSentence(result, new Date(), trans)) + notes, kind: result.fits && !notes ? 'ok' : 'warn' });
        }
      } catch (err) {
        if (mine === serial.current) {
          setFeedback({ text: submitErrorSentence(err, trans), kind: 'error' });
        }
      }
    },
    [model, serverRoot, trans, effective, carried]
  );

  // the check a timer runs is the form's latest (a job's edit carries fields the render before it had not)
  const latestDryRun = React.useRef(dryRun);
  latestDryRun.current = dryRun;
  const schedule = (v: ISubmitValues, delay = 600): void => {
    if (!model.supports('dryrun') || !v.path.trim()) {
      return;
    }
    if (timer.current !== null) {
      clearTimeout(timer.current);
    }
    timer.current = setTimeout(() => {
      timer.current = null;
      void latestDryRun.current(v);
    }, delay);
  };

  React.useEffect(() => {
    if (prefill.serial > 0) {
      const job = prefill.edit ?? null;
      // a job's edit: its request in every field (s34-panel); a path: that file, the rest as the user left it
      const v = job ? { ...job.values } : { ...values, path: prefill.path, name: '' };
      setEdit(job);
      setValues(v);
      setExtras(!!job && !!(v.cpu || v.memory || job.focus === 'memory'));
      unknownSubmit.current = null;
      setFocusOn({ field: job?.focus ?? 'gpus', serial: prefill.serial });
      schedule(v, 0);
    }
    // only a new prefill request re-runs this
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [prefill.serial]);

  React.useEffect(() => {
    if (focusOn === null) {
      return;
    }
    const input = focusOn.field === 'timeLimit' ? timeLimitRef.current : focusOn.field === 'memory' ? memoryRef.current : gpusRef.current;
    input?.focus();
    if (focusOn.field !== 'gpus') {
      input?.select();
    }
  }, [focusOn]);

  React.useEffect(
    () => () => {
      if (timer.current !== null) {
        clearTimeout(timer.current);
      }
    },
    []
  );

  const set = (key: keyof ISubmitValues) => (event: React.ChangeEvent<HTMLInputElement | HTMLSelectElement>) => {
    const v = { ...values, [key]: event.target.value };
    setValues(v);
    schedule(v);
  };

  /**
   * A submit whose outcome was not known, asked about once the scheduler answers again (`GET jobs?idempotency_key=`,
   * the key it was sent with): "it was: NAME (j-…)" or "it was not" — never sent again to find out (newuser33 N3: the
   * form said "may or may not have been submitted" for good, with the job in My work).
   */
  const askUnknown = React.useCallback(async (): Promise<void> => {
    const pending = unknownSubmit.current;
    if (!pending || pending.asking || !model.live) {
      return;
    }
    pending.asking = true;
    try {
      const made = (await model.client.jobs({ idempotency_key: pending.key }))[0];
      if (unknownSubmit.current !== pending) {
        return; // the form was sent again meanwhile: that answer says it
      }
      if (made) {
        unknownSubmit.current = null;
        model.upsert(made);
        setFeedback({ text: trans.__('The scheduler answers again: it was submitted — %1 (%2): %3. No need to submit it again.', made.name, made.id, made.state), kind: 'ok' });
      } else {
        // the same key still goes with a Submit of this form: a submit the scheduler makes later is answered, not doubled
        setFeedback({ text: trans.__('The scheduler answers again: it was not submitted (no job was made) — press Submit to send it again.'), kind: 'warn' });
      }
    } catch {
      // not answered yet: asked again at the next sign that it answers
    } finally {
      pending.asking = false;
    }
  }, [model, trans]);

  React.useEffect(() => {
    const ask = (): void => void askUnknown();
    model.serverDownChanged.connect(ask);
    model.jobsChanged.connect(ask);
    model.streamStatusChanged.connect(ask);
    return () => {
      model.serverDownChanged.disconnect(ask);
      model.jobsChanged.disconnect(ask);
      model.streamStatusChanged.disconnect(ask);
    };
  }, [model, askUnknown]);

  const submit = async (event: React.FormEvent): Promise<void> => {
    event.preventDefault();
    let body: SubmitRequest;
    try {
      body = editedBody(submitBodyFrom(effective(values), serverRoot, trans), carried);
    } catch (err) {
      setFeedback({ text: describeError(err), kind: 'error' });
      return;
    }
    // a dry run still waiting on its debounce would overwrite the outcome below
    if (timer.current !== null) {
      clearTimeout(timer.current);
      timer.current = null;
    }
    serial.current++;
    setBusy(true);
    setFeedback({ text: trans.__('Submitting…'), kind: 'info' });
    const sent = JSON.stringify(body);
    const key = unknownSubmit.current?.body === sent ? unknownSubmit.current.key : newSubmitKey();
    try {
      const job = await submitKeyed(model.client, body, key, {
        onRetry: (attempt, waited) =>
          setFeedback({
            text: trans.__('Submitting… no answer from the scheduler yet (%1 s); sending it again (try %2) with the same key, so it is made once only', waited, attempt),
            kind: 'info'
          })
      });
      unknownSubmit.current = null;
      // what the server says about the accepted request (time limit 0 = no limit at all, an image not used…),
      // as the CLI and the magics print it (new user 13, N1: a panel user was told nothing)
      // in the form's words: `time_limit 90 is 90 seconds …` names the Time limit field (newuser31 N4)
      const notes = requestNotes(job.warnings, trans);
      setFeedback({ text: trans.__('Submitted %1 (%2): %3, %4.', job.name, job.id, formatGpus(resourcesOf(job), trans), job.state) + notes, kind: notes ? 'warn' : 'ok' });
      submitted(job);
    } catch (err) {
      if (err instanceof SubmitOutcomeUnknown) {
        unknownSubmit.current = { body: sent, key };
        setFeedback({
          text: trans.__(
            'No answer from the scheduler in %1 s: this job may or may not have been submitted. Check My work before submitting again — Submit of this same form sends it with the same key, so it cannot make a second job.',
            err.seconds
          ),
          kind: 'warn'
        });
      } else {
        unknownSubmit.current = null;
        setFeedback({ text: submitErrorSentence(err, trans), kind: 'error' });
      }
    } finally {
      setBusy(false);
    }
  };

  const models = [...new Set((model.inventory?.gpus ?? []).map(g => g.model))].sort();
  const teams = offeredTeams(model.me);
  const { team, priority } = effective(values);
  const priorities = offeredPriorities(model.config?.priorities, model.me, team);
  const field = (id: string, label: string, control: React.ReactElement, help?: string) => (
    <div className="jp-sched-field">
      <label className="jp-sched-field-label" htmlFor={id}>
        {label}
      </label>
      {control}
      {help ? (
        <span className="jp-sched-muted" id={`${id}-help`}>
          {help}
        </span>
      ) : null}
    </div>
  );
  const id = (name: string) => `jp-sched-submit-${name}`;
  const notebook = values.path.trim().endsWith('.ipynb');
  return (
    <form className="jp-sched-submit" onSubmit={event => void submit(event)} aria-label={trans.__('Submit a GPU job')}>
      {field(
        id('path'),
        trans.__('Script or notebook'),
        <input
          id={id('path')}
          type="text"
          className="jp-mod-styled jp-sched-submit-path"
          placeholder="train.py"
          value={values.path}
          onChange={set('path')}
          aria-required="true"
          aria-describedby={id('path-help')}
        />,
        trans.__('Path from the file browser (right-click a file → Run on GPUs).')
      )}
      {notebook
        ? field(
            id('args'),
            trans.__('Parameters'),
            <input id={id('args')} type="text" className="jp-mod-styled jp-sched-submit-args" placeholder="days=3 region=eu" value={values.args} onChange={set('args')} aria-describedby={id('args-help')} />,
            trans.__('NAME=VALUE values for the notebook\'s cell tagged "parameters".')
          )
        : field(
            id('args'),
            trans.__('Arguments'),
            <input id={id('args')} type="text" className="jp-mod-styled jp-sched-submit-args" placeholder={'--epochs 3 --title "my run"'} value={values.args} onChange={set('args')} aria-describedby={id('args-help')} />,
            argumentsHelp(values.args, trans)
          )}
      <div className="jp-sched-row">
        {field(
          id('gpus'),
          trans.__('GPUs'),
          <input id={id('gpus')} ref={gpusRef} type="number" min={0} step="any" className="jp-mod-styled jp-sched-submit-gpus" value={values.gpus} onChange={set('gpus')} />
        )}
        {field(
          id('model'),
          trans.__('GPU model'),
          <select id={id('model')} className="jp-mod-styled jp-sched-submit-model" value={models.includes(values.model) ? values.model : ''} onChange={set('model')}>
            <option value="">{trans.__('Any model')}</option>
            {models.map(m => (
              <option key={m} value={m}>
                {shownText(m)}
              </option>
            ))}
          </select>
        )}
      </div>
      {teams.length
        ? field(
            id('team'),
            trans.__('Team'),
            <select id={id('team')} className="jp-mod-styled jp-sched-submit-team" value={team} onChange={set('team')} aria-describedby={id('team-help')}>
              {teams.map(t => (
                <option key={t} value={t === model.me?.team ? '' : t}>
                  {shownText(t === model.me?.team ? trans.__('%1 (your default)', t) : t)}
                </option>
              ))}
            </select>,
            trans.__('The team whose quota the job is charged to.')
          )
        : null}
      <div className="jp-sched-row">
        {field(
          id('priority'),
          trans.__('Priority'),
          <select id={id('priority')} className="jp-mod-styled jp-sched-submit-priority" value={priority} onChange={set('priority')}>
            {priorities.map(p => (
              <option key={p} value={p}>
                {shownText(p)}
              </option>
            ))}
          </select>
        )}
        {field(
          id('timelimit'),
          trans.__('Time limit'),
          <input id={id('timelimit')} ref={timeLimitRef} type="text" className="jp-mod-styled jp-sched-submit-timelimit" placeholder={trans.__('e.g. 2h (optional)')} value={values.timeLimit} onChange={set('timeLimit')} />
        )}
      </div>
      {extras || values.cpu || values.memory ? (
        <div className="jp-sched-row">
          {field(
            id('cpu'),
            trans.__('CPU cores'),
            <input id={id('cpu')} type="text" className="jp-mod-styled jp-sched-submit-cpu" placeholder={trans.__('e.g. 4 (optional)')} value={values.cpu ?? ''} onChange={set('cpu')} />
          )}
          {field(
            id('memory'),
            trans.__('Memory'),
            <input id={id('memory')} ref={memoryRef} type="text" className="jp-mod-styled jp-sched-submit-memory" placeholder={trans.__('e.g. 16GiB (optional)')} value={values.memory ?? ''} onChange={set('memory')} />
          )}
        </div>
      ) : null}
      {field(id('name'), trans.__('Name'), <input id={id('name')} type="text" className="jp-mod-styled jp-sched-submit-name" placeholder={trans.__('default: file name')} value={values.name} onChange={set('name')} />)}
      <div className="jp-sched-field jp-sched-submit-nopreempt-field">
        <label className="jp-sched-field-label" htmlFor={id('nopreempt')}>
          <input
            id={id('nopreempt')}
            type="checkbox"
            className="jp-sched-submit-nopreempt"
            checked={values.noPreempt === true}
            onChange={event => {
              const v = { ...values, noPreempt: event.target.checked };
              setValues(v);
              schedule(v);
            }}
            aria-describedby={id('nopreempt-help')}
          />{' '}
          {trans.__('Free GPUs only')}
        </label>
        <span className="jp-sched-muted" id={id('nopreempt-help')}>
          {trans.__(NO_PREEMPT_HELP)}
        </span>
      </div>
      <div className="jp-sched-actions">
        <button type="button" className="jp-sched-button jp-sched-dryrun-button" onClick={() => void dryRun(values)}>
          {trans.__('Check fit')}
        </button>
        <button type="submit" className="jp-sched-button jp-mod-accept jp-sched-submit-button" disabled={busy}>
          {trans.__('Submit')}
        </button>
      </div>
      {edit ? (
        <p className="jp-sched-muted jp-sched-submit-carried">
          {shownText(editNote(edit, trans))}{' '}
          {edit.carriedWords.length ? (
            <button type="button" className="jp-sched-button jp-sched-submit-uncarry" onClick={() => setEdit(null)}>
              {trans.__('Leave these out')}
            </button>
          ) : null}
        </p>
      ) : null}
      <div className={`jp-sched-feedback jp-sched-feedback-${feedback.kind}`} role="status">
        {serverText(feedback.text) /* a name, a refusal quoting one (s30), the server's clocks in the browser's zone (newuser38 n30) */}
      </div>
    </form>
  );
}

/** The Submit section body. */
export class SubmitView extends ModelView {
  private prefillRequest: IPrefill = { path: '', serial: 0 };

  constructor(
    ctx: ISchedSection.IContext,
    private readonly serverRoot: string,
    private readonly onSubmitted: (job: Job) => void
  ) {
    // quotasChanged: GET me read again, with its teams' priorities (new user 23, N9: Refresh left them stale)
    super(ctx, { resources: ['inventory'], signals: [ctx.model.inventoryChanged, ctx.model.statusChanged, ctx.model.quotasChanged] });
    this.addClass('jp-sched-submit-section');
  }

  /** Put a path in the form and check it right away. */
  prefill(path: string): void {
    this.prefillRequest = { path, serial: this.prefillRequest.serial + 1 };
    this.update();
  }

  /** Fill the form with a finished job's request ({@link jobEdit}), its field to change focused, and check it. */
  edit(edit: IJobEdit): void {
    this.prefillRequest = { path: edit.values.path, serial: this.prefillRequest.serial + 1, edit };
    this.update();
  }

  protected renderView(): React.ReactElement {
    return (
      <SubmitForm
        model={this.model}
        trans={this.trans}
        serverRoot={this.serverRoot}
        prefill={this.prefillRequest}
        submitted={job => {
          this.model.upsert(job);
          this.onSubmitted(job);
        }}
      />
    );
  }
}
