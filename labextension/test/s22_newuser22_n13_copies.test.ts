/**
 * New user 22, N13's kind in the panel: "Open notebook" of a scheduled run saved the run's executed
 * notebook over whatever was there — a copy opened before and edited since was lost without a word.
 * Since newuser40 N1 the copy has one name per run (`scheduled-runs/<name> (executed <job id>).ipynb`): once
 * there, it is the user's and is opened as it is — edited or not, never written over.
 */
import { describe, expect, it } from 'vitest';

import { SchedClient } from '../src/client';
import { executedCopyPath } from '../src/definitions';
import { openExecutedNotebook } from '../src/executed';
import { FakeSchedServer, json } from './fakeserver';

const RUN = { cells: [{ cell_type: 'code', source: 'x = 1', outputs: [] }], metadata: { kernelspec: { name: 'python3' } }, nbformat: 4, nbformat_minor: 5 };

describe('newuser22 N13: Open notebook never writes over a copy of the user\'s', () => {
  it('test_s22_newuser22_n13 an edited copy is opened as it is, never written over', async () => {
    const server = new FakeSchedServer();
    server.routes.set('GET jobs/j-1/notebook', () => json(200, RUN));
    const path = executedCopyPath('j-1', 'report.ipynb');
    const saved = new Map<string, unknown>([[path, { ...RUN, cells: [{ cell_type: 'markdown', source: 'my notes', metadata: {} }] }]]);
    const opened: string[] = [];
    const files = {
      openPath: async (p: string) => void opened.push(p),
      saveNotebook: async (p: string, content: unknown) => void saved.set(p, content),
      exists: async (p: string) => saved.has(p)
    };
    const got = await openExecutedNotebook(new SchedClient(server.transport), 'j-1', 'report.ipynb', files);
    expect(got).toMatchObject({ path: 'scheduled-runs/report (executed j-1).ipynb', written: false });
    expect((saved.get(path) as typeof RUN).cells[0].source).toBe('my notes');
    expect(saved.size).toBe(1);
    expect(opened).toEqual([path]);
  });

  it('test_s22_newuser22_n13 a file there that cannot be checked is an error, never written over', async () => {
    const server = new FakeSchedServer();
    server.routes.set('GET jobs/j-1/notebook', () => json(200, RUN));
    const saved: string[] = [];
    const files = {
      openPath: async () => undefined,
      saveNotebook: async (p: string) => void saved.push(p),
      exists: async (): Promise<boolean> => {
        throw new Error('Unreadable Notebook: not JSON');
      }
    };
    await expect(openExecutedNotebook(new SchedClient(server.transport), 'j-1', 'report.ipynb', files)).rejects.toThrow('Unreadable Notebook');
    expect(saved).toEqual([]);
  });
});
