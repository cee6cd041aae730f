/** Command ids of the jupyter_sched frontend (palette, menus, toolbars, sections). */
export namespace CommandIDs {
  /** Show the GPUs sidebar (`{section?}` opens and scrolls to that section). */
  export const open = 'jupyter-sched:open';
  /** Re-read everything shown and reconnect the event stream. */
  export const refresh = 'jupyter-sched:refresh';
  /** Submit the current (or `{path}`) notebook: opens Submit with it filled in. */
  export const runNotebook = 'jupyter-sched:run-notebook';
  /** Submit the file selected in the file browser (or `{path}`). */
  export const runFile = 'jupyter-sched:run-file';
  /** Cancel a job or release a lease (`{id}`; from a context menu: the row under the pointer). */
  export const cancel = 'jupyter-sched:cancel';
  /** Open a job's log viewer (`{id}`). */
  export const openLogs = 'jupyter-sched:open-logs';
  /** Open a notebook job's executed notebook in JupyterLab (`{id}`; newuser39 N1). */
  export const openNotebook = 'jupyter-sched:open-executed-notebook';
  /** Submit a finished job again (`{id}`). */
  export const resubmit = 'jupyter-sched:resubmit';
  /** Hold a pending job, or release it when held (`{id}`; hubadmin25 B18: PATCH jobs/{id}). */
  export const hold = 'jupyter-sched:hold';
  /** Keep an idle lease (`{id}`). */
  export const keepalive = 'jupyter-sched:keepalive';
  /** Move a sidebar section up or down (`{id}`); saved in the settings' sectionOrder. */
  export const moveSectionUp = 'jupyter-sched:move-section-up';
  export const moveSectionDown = 'jupyter-sched:move-section-down';
}
