/**
 * Showing the GPUs panel where it lives, in whichever shell runs the command (newuser42 N6).
 *
 * JupyterLab's shell opens a side-area widget with `activateById`. Notebook 7's `INotebookShell`
 * (@jupyter-notebook/application) keeps its left area closed by default; its public
 * `expandLeft(id)` / `leftCollapsed` open it. Recent Notebook 7 releases do that from
 * `activateById` too; an older one, or a shell whose layout put the panel elsewhere, may not: the
 * panel is then opened with `expandLeft` when it is in the left area, and when it still is not shown
 * the caller is told so (never a form filled out of sight with no word).
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { Widget } from '@lumino/widgets';

/** The public part of Notebook 7's `INotebookShell` that opens its left area. */
export interface ILeftExpandingShell {
  readonly leftCollapsed: boolean;
  expandLeft(id?: string): void;
}

/** A typed guard: is this Notebook 7's shell (or one with the same public left-area API)? */
export function expandsLeft(shell: unknown): shell is ILeftExpandingShell {
  const candidate = shell as Partial<Record<keyof ILeftExpandingShell, unknown>> | null;
  return !!candidate && typeof candidate.expandLeft === 'function' && typeof candidate.leftCollapsed === 'boolean';
}

function inArea(shell: JupyterFrontEnd.IShell, area: string, panel: Widget): boolean {
  for (const widget of shell.widgets(area)) {
    if (widget === panel) {
      return true;
    }
  }
  return false;
}

/**
 * Activate `panel` in `shell` and make sure it is on screen; true when it is shown, false when
 * this shell could not show it (the caller then says where to find it).
 */
export function revealPanel(shell: JupyterFrontEnd.IShell, panel: Widget): boolean {
  shell.activateById(panel.id);
  if (!panel.isVisible && expandsLeft(shell) && inArea(shell, 'left', panel)) {
    shell.expandLeft(panel.id);
  }
  return panel.isVisible;
}

/** What the notice says when the panel could not be shown: where to find it, and what it holds. */
export function panelHiddenText(trans: TranslationBundle, labUrl: string, filled: string | null): string {
  const where = trans.__('open JupyterLab (%1) and use the GPUs tab of its left sidebar', labUrl);
  return filled === null
    ? trans.__('The GPUs panel cannot be shown on this page: %1.', where)
    : trans.__('The GPUs panel cannot be shown on this page, so its Submit form (filled with %1) is out of sight: %2.', filled || trans.__('no path'), where);
}
