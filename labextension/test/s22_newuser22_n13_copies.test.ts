/**
 * New user 22, N13's kind in the panel: "Open notebook" of a scheduled run saved the run's executed
 * notebook at `scheduled-runs/<job id>/<name>` over whatever was there — a copy opened before and
 * edited since was lost without a word. An unchanged copy is opened as it is; one with changes of its
 * own is kept, and the run's notebook goes to the next free `<stem>-2.ipynb`, said in the notice.
 */
import { describe, expect, it } from 'vitest';

import { executedCopyPath } from '../src/definitions';

const RUN = { cells: [{ cell_type: 'code', source: 'x = 1', outputs: [] }], metadata: { kernelspec: { name: 'python3' } }, nbformat: 4, nbformat_minor: 5 };

function files(saved: Record<string, unknown>): (path: string) => Promise<unknown | null> {
  return async path => (path in saved ? saved[path] : null);
}

describe('newuser22 N13: Open notebook never writes over a copy of the user\'s', () => {
  it('test_s22_newuser22_n13 a free name is written; the same notebook (keys in another order) is only opened', async () => {
    expect(await executedCopyPath('scheduled-runs/j-1', 'report.ipynb', RUN, files({}))).toEqual({ path: 'scheduled-runs/j-1/report.ipynb', write: true, kept: [] });
    const reordered = { nbformat_minor: 5, nbformat: 4, metadata: { kernelspec: { name: 'python3' } }, cells: RUN.cells };
    expect(await executedCopyPath('scheduled-runs/j-1', 'report.ipynb', RUN, files({ 'scheduled-runs/j-1/report.ipynb': reordered }))).toEqual({
      path: 'scheduled-runs/j-1/report.ipynb',
      write: false,
      kept: []
    });
  });

  it('test_s22_newuser22_n13 an edited copy is kept and the run\'s notebook goes to the next free name', async () => {
    const edited = { ...RUN, cells: [{ cell_type: 'markdown', source: 'my notes', metadata: {} }, ...RUN.cells] };
    const got = await executedCopyPath('scheduled-runs/j-1', 'report.ipynb', RUN, files({ 'scheduled-runs/j-1/report.ipynb': edited }));
    expect(got).toEqual({ path: 'scheduled-runs/j-1/report-2.ipynb', write: true, kept: ['scheduled-runs/j-1/report.ipynb'] });
    const again = await executedCopyPath('scheduled-runs/j-1', 'report.ipynb', RUN, files({ 'scheduled-runs/j-1/report.ipynb': edited, 'scheduled-runs/j-1/report-2.ipynb': RUN }));
    expect(again).toEqual({ path: 'scheduled-runs/j-1/report-2.ipynb', write: false, kept: ['scheduled-runs/j-1/report.ipynb'] });
  });

  it('test_s22_newuser22_n13 an unreadable file there is an error, never written over', async () => {
    const read = async (): Promise<unknown> => {
      throw new Error('Unreadable Notebook: not JSON');
    };
    await expect(executedCopyPath('scheduled-runs/j-1', 'report.ipynb', RUN, read)).rejects.toThrow('Unreadable Notebook');
  });
});
