/**
 * A notebook job's executed notebook (its outputs and the failed cell's error), opened in JupyterLab or
 * downloaded — from every place a user meets such a job: a definition's run (Scheduled notebooks), its
 * card in My work and its log viewer's header (newuser39 N1: only definition runs had the button, and a
 * one-off notebook job's log pointed at a path in the service's job folder that its owner cannot read).
 *
 * The notebook is fetched from the scheduler API (the job's owner only) and saved through this
 * JupyterLab's own contents API under `scheduled-runs/<job id>/`, so it lands in the user's files
 * whether the scheduler runs in this server or is a JupyterHub service elsewhere.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import { PageConfig, URLExt } from '@jupyterlab/coreutils';

import type { SchedClient } from './client';
import { TERMINAL_STATES, type Job } from './types';

/** Where opened executed notebooks go, under the server root (as the server's `executed_notebooks_dir`). */
export const EXECUTED_DIR = 'scheduled-runs';

/** How the panel reads and writes the user's files (the contents API in JupyterLab; tests give their own). */
export interface INotebookFiles {
  /** Open a file (relative to the server root) in JupyterLab. */
  openPath(path: string): Promise<void>;
  /** Write a notebook (nbformat JSON) at `path` under the server root, making its folders. */
  saveNotebook(path: string, content: unknown): Promise<void>;
  /** The notebook saved at `path` under the server root (nbformat JSON), or null when there is none. */
  readNotebook?(path: string): Promise<unknown | null>;
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

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v
  );
}

/**
 * Where "Open notebook" puts a run's executed notebook under `dir`: `name` when free or holding this
 * very notebook (then nothing is written), else the first `<stem>-2.ipynb`, `-3`, … that is free or
 * holds it — an earlier copy the user edited (or one saved while the run went on) is never overwritten
 * (new user 22, N13's kind: output written over a file of the user's without a word). `kept`: the
 * copies passed over, to say so.
 *
 * Throws: an Error after 50 names, none free.
 */
export async function executedCopyPath(
  dir: string,
  name: string,
  notebook: unknown,
  read: (path: string) => Promise<unknown | null>
): Promise<{ path: string; write: boolean; kept: string[] }> {
  const dot = name.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  const want = canonical(notebook);
  const kept: string[] = [];
  for (let n = 1; n <= 50; n++) {
    const path = `${dir}/${n === 1 ? name : `${stem}-${n}${ext}`}`;
    const had = await read(path);
    if (had === null || had === undefined) {
      return { path, write: true, kept };
    }
    if (canonical(had) === want) {
      return { path, write: false, kept };
    }
    kept.push(path);
  }
  throw new Error(`${dir} holds 50 copies of ${name} that differ from the run's notebook: open one of them, or delete some`);
}

/**
 * Open job `jobId`'s executed notebook: fetch it, save it under `scheduled-runs/<job id>/<notebook's name>`
 * (never over a copy that differs: {@link executedCopyPath}) and open it. Returns where it opened and a
 * sentence to show when earlier copies were kept (else null). Throws the API's error (not a notebook job,
 * another user's, none kept any more) for the caller to show.
 */
export async function openExecutedNotebook(
  client: SchedClient,
  jobId: string,
  notebookPath: string | null | undefined,
  files: INotebookFiles
): Promise<{ path: string; notice: string | null }> {
  const notebook = await client.request('getExecutedNotebook', { path: { job_id: jobId } });
  const name = String(notebookPath ?? 'notebook.ipynb').split('/').pop() || 'notebook.ipynb';
  const read = files.readNotebook ?? (async () => null);
  const { path, write, kept } = await executedCopyPath(`${EXECUTED_DIR}/${jobId}`, name, notebook, read);
  if (write) {
    await files.saveNotebook(path, notebook);
  }
  // an earlier copy with changes of its own is the user's: never overwritten (new user 22, N13's kind)
  const notice = kept.length
    ? `${kept.join(', ')} ${kept.length === 1 ? 'differs' : 'differ'} from the run's notebook (edited, or saved while it ran): kept as ${kept.length === 1 ? 'it is' : 'they are'}; opened ${path}`
    : null;
  await files.openPath(path);
  return { path, notice };
}

/** {@link INotebookFiles} through JupyterLab's document manager and contents API. */
export function contentsFiles(app: JupyterFrontEnd): Required<INotebookFiles> {
  const openPath = async (path: string): Promise<void> => {
    await app.commands.execute('docmanager:open', { path });
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
  const readNotebook = async (path: string): Promise<unknown | null> => {
    try {
      return (await app.serviceManager.contents.get(path, { type: 'notebook', content: true })).content as unknown;
    } catch (err) {
      if ((err as { response?: { status?: number } })?.response?.status === 404) {
        return null; // not there: free to write
      }
      throw err; // there but unreadable as a notebook: never written over
    }
  };
  return { openPath, saveNotebook, readNotebook };
}
