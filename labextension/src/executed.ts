/**
 * A notebook job's executed notebook (its outputs and the failed cell's error), opened in JupyterLab or
 * downloaded — from every place a user meets such a job: a definition's run (Scheduled notebooks), its
 * card in My work and its log viewer's header (newuser39 N1: only definition runs had the button, and a
 * one-off notebook job's log pointed at a path in the service's job folder that its owner cannot read).
 *
 * The notebook is fetched from the scheduler API (the job's owner only) and saved through this
 * JupyterLab's own contents API as `scheduled-runs/<notebook> (executed <job id>).ipynb`, so it lands in the
 * user's files whether the scheduler runs in this server or is a JupyterHub service elsewhere.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import { PageConfig, URLExt } from '@jupyterlab/coreutils';
import type { IStateDB } from '@jupyterlab/statedb';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import type { ISignal } from '@lumino/signaling';

import type { SchedClient } from './client';
import { TERMINAL_STATES, type Job } from './types';

/** Where opened executed notebooks go, under the server root (as the server's `executed_notebooks_dir`). */
export const EXECUTED_DIR = 'scheduled-runs';

/** How the panel reads and writes the user's files (the contents API in JupyterLab; tests give their own). */
export interface INotebookFiles {
  /** Open a notebook (relative to the server root) in JupyterLab, with no kernel. */
  openPath(path: string): Promise<void>;
  /** Write a notebook (nbformat JSON) at `path` under the server root, making its folders. */
  saveNotebook(path: string, content: unknown): Promise<void>;
  /** Whether a file is at `path` under the server root (without reading it). */
  exists?(path: string): Promise<boolean>;
}

/** Whether `job` has an executed notebook to open: a notebook job that started and has ended (the runner writes
 * it as the run ends, however it ends). */
export function hasExecutedNotebook(job: Pick<Job, 'notebook' | 'state' | 'started_at' | 'kind'> | null | undefined): boolean {
  return !!job && job.kind !== 'lease' && !!job.notebook && !!job.started_at && TERMINAL_STATES.has(job.state);
}

/** The browser download of a job's executed notebook (`GET jobs/{id}/notebook?download=true`). */
export function executedDownloadUrl(jobId: string): string {
  return URLExt.join(PageConfig.getBaseUrl(), 'api/sched/jobs', encodeURIComponent(jobId), 'notebook') + '?download=true';
}

/** A file name's limit (NAME_MAX, bytes of UTF-8) less room for the server's `-2` … `-50` of a taken name. */
export const NAME_BUDGET_BYTES = 255 - '-50'.length;

const utf8 = new TextEncoder();

/**
 * `stem + tail` when it fits `budget` bytes of UTF-8, else `stem` cut on a character boundary and marked `…`
 * so that it does, `tail` (what keeps the name unique) always whole — the server's `fit_name_bytes`
 * (jupyter_sched/wording/executed.py; newuser41 N4: a legal 226-byte notebook name + its tail passed NAME_MAX
 * and the contents API answered 500).
 */
export function fitNameBytes(stem: string, tail: string, budget: number = NAME_BUDGET_BYTES): string {
  const size = (text: string): number => utf8.encode(text).length;
  if (size(stem) + size(tail) <= budget) {
    return stem + tail;
  }
  let room = budget - size(tail) - size('\u2026');
  let kept = '';
  for (const char of stem) {
    room -= size(char);
    if (room < 0) {
      break;
    }
    kept += char;
  }
  return `${kept.trimEnd()}\u2026${tail}`;
}

// eslint-disable-next-line no-control-regex
const UNSAFE = /[\x00-\x1f\x7f"\\/:*?<>|]/g;

/**
 * The file name a job's executed notebook is saved under: `fail (executed j-…).ipynb` for a run of
 * `fail.ipynb` — the server's `executed_copy_name` (jupyter_sched/wording/executed.py), which names the CLI's
 * `logs JOB --notebook` file and the browser's Download, so every way gives one name, one that reads as the
 * run's copy and never as the user's own notebook (newuser40 N1). Both follow one table of cases
 * (test/executed_names.json).
 */
export function executedCopyName(notebook: string | null | undefined, jobId: string): string {
  const parts = String(notebook ?? '').replace(/\\/g, '/').split('/');
  let stem = (parts[parts.length - 1] ?? '').replace(UNSAFE, '_');
  if (stem.toLowerCase().endsWith('.ipynb')) {
    stem = stem.slice(0, -'.ipynb'.length);
  }
  stem = stem.trim().replace(/^\.+/, '').trim() || 'notebook';
  return fitNameBytes(stem, ` (executed ${jobId.replace(UNSAFE, '_')}).ipynb`);
}

/** Where "Open notebook" puts job `jobId`'s executed notebook: `scheduled-runs/<executedCopyName>`. */
export function executedCopyPath(jobId: string, notebook: string | null | undefined): string {
  return `${EXECUTED_DIR}/${executedCopyName(notebook, jobId)}`;
}

/**
 * Open job `jobId`'s executed notebook with no kernel: the first time it is fetched and saved at
 * {@link executedCopyPath}; later, that copy is opened as it is — the same file on every click (newuser40 N1:
 * each click wrote `fail-2.ipynb`, `fail-3.ipynb`, … of an unchanged notebook), and a copy the user edited is
 * theirs, never written over (new user 22, N13's kind; Download gives the run's own again). Returns where it
 * opened and a sentence for the user: where the copy is, and that it opened with no kernel. Throws the API's
 * error (not a notebook job, another user's, none kept any more) for the caller to show.
 */
export async function openExecutedNotebook(
  client: SchedClient,
  jobId: string,
  notebookPath: string | null | undefined,
  files: INotebookFiles
): Promise<{ path: string; notice: string; written: boolean }> {
  const path = executedCopyPath(jobId, notebookPath);
  const written = !(files.exists && (await files.exists(path)));
  if (written) {
    const notebook = await client.request('getExecutedNotebook', { path: { job_id: jobId } });
    await files.saveNotebook(path, notebook);
  }
  await files.openPath(path);
  const notice = written
    ? `${jobId}'s executed notebook saved as ${path} in your files and opened with no kernel (pick one to run it)`
    : `opened ${path}, the copy of ${jobId}'s executed notebook saved before (with any changes you made; Download gives the run's own)`;
  return { path, notice, written };
}

/** {@link INotebookFiles} through JupyterLab's document manager and contents API. */
export function contentsFiles(app: JupyterFrontEnd): Required<INotebookFiles> {
  const openPath = async (path: string): Promise<void> => {
    // a run's copy to read, not to run: no kernel started (newuser40 N1: each Open started one). JupyterLab 4's
    // SessionContext starts none and asks nothing when shouldStart is false ("No Kernel"; the user picks one to run)
    await app.commands.execute('docmanager:open', { path, kernelPreference: { ...NO_KERNEL } });
  };
  const saveNotebook = async (path: string, content: unknown): Promise<void> => {
    const contents = app.serviceManager.contents;
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const folder = parts.slice(0, i).join('/');
      try {
        await contents.get(folder, { content: false });
      } catch {
        await contents.save(folder, { type: 'directory' });
      }
    }
    await contents.save(path, { type: 'notebook', format: 'json', content });
  };
  const exists = async (path: string): Promise<boolean> => {
    try {
      await app.serviceManager.contents.get(path, { content: false });
      return true;
    } catch (err) {
      if ((err as { response?: { status?: number } })?.response?.status === 404) {
        return false; // not there: free to write
      }
      throw err; // cannot tell: never written over
    }
  };
  return { openPath, saveNotebook, exists };
}

/** Whether `path` is an executed copy "Open notebook" saves: `scheduled-runs/<stem> (executed <job id>).ipynb`
 * (a `-2` … of a name the server found taken included). */
export function isExecutedCopyPath(path: string): boolean {
  return new RegExp(`^${EXECUTED_DIR}/[^/]+ \\(executed [^()/]+\\)(-\\d+)?\\.ipynb$`).test(path);
}

/** The kernel preference an executed copy is opened and restored with: no kernel started (the user picks one). */
export const NO_KERNEL = { shouldStart: false } as const;

/** What {@link keepCopiesKernelless} reads of a notebook JupyterLab opened (a `NotebookPanel`). */
export interface IOpenedNotebook {
  readonly isDisposed: boolean;
  readonly context: { readonly path: string };
  readonly sessionContext: { readonly ready: Promise<void>; readonly session: unknown; readonly sessionChanged: ISignal<unknown, unknown> };
}

/** What {@link keepCopiesKernelless} reads of JupyterLab's notebook tracker (`INotebookTracker`: a `WidgetTracker`
 * whose `namespace` — `notebook` in JupyterLab 4 — names its entries; `IWidgetTracker` does not declare it). */
export interface INotebookRestoreTracker {
  readonly namespace?: string;
  readonly widgetAdded: ISignal<unknown, IOpenedNotebook>;
}

/** The notebook tracker's namespace in JupyterLab 4 (`@jupyterlab/notebook-extension`), when its tracker says none. */
const NOTEBOOK_NAMESPACE = 'notebook';

/**
 * Keep an executed copy that is open with no kernel kernelless across page loads (newuser41 n8: after a reload the
 * copy "Open notebook" opened without a kernel had a live Python 3 kernel, no click at all).
 *
 * JupyterLab's layout restorer reopens each notebook tab by running `docmanager:open` with the args its notebook
 * tracker saved under `<namespace>:<path>` in the state database — `{path, factory}`, no kernel preference, so the
 * notebook's kernel was started. Each time the tracker saves an executed copy's entry (when it adds the tab: at the
 * click and at every restore), this adds `kernelPreference: {shouldStart: false}` (`docmanager:open`'s own argument,
 * JupyterLab 4) to it while the copy has no kernel, and takes it out once the user picks one (a kernel they chose is
 * restored as any notebook's). Other notebooks, and a copy with no saved entry (no layout restorer), are left alone.
 */
export function keepCopiesKernelless(notebooks: INotebookRestoreTracker, state: IStateDB): void {
  notebooks.widgetAdded.connect((_, panel) => {
    if (!isExecutedCopyPath(panel.context.path)) {
      return;
    }
    const remember = async (): Promise<void> => {
      await panel.sessionContext.ready.catch(() => undefined);
      const path = panel.context.path;
      if (panel.isDisposed || !isExecutedCopyPath(path)) {
        return;
      }
      const key = `${notebooks.namespace ?? NOTEBOOK_NAMESPACE}:${path}`;
      const saved = (await state.fetch(key)) as { data?: ReadonlyPartialJSONObject } | undefined;
      if (!saved || typeof saved.data !== 'object' || saved.data === null || Array.isArray(saved.data)) {
        return; // not restored: nothing to keep
      }
      const { kernelPreference: _, ...rest } = saved.data;
      void _;
      const data: ReadonlyPartialJSONObject = panel.sessionContext.session ? rest : { ...rest, kernelPreference: { ...NO_KERNEL } };
      await state.save(key, { data });
    };
    void remember();
    panel.sessionContext.sessionChanged.connect(() => void remember());
  });
}
