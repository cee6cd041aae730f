import { afterEach, describe, expect, it } from 'vitest';

import { SchedClient } from '../src/client';
import { CommandIDs } from '../src/commandids';
import { executedDownloadUrl, hasExecutedNotebook, openExecutedNotebook } from '../src/executed';
import { LogViewer } from '../src/logviewer';
import { MyWorkView } from '../src/sections';
import type { Job } from '../src/types';
import { FakeSchedServer, json, makeJob, settle } from './fakeserver';
import { context, mount, recordingCommands, startedModel, text } from './ui';

// newuser39 N1: a one-off notebook job's card in My work had only Logs and Resubmit, and its log pointed at a path
// its owner could not read; only a definition's run (Scheduled notebooks) had "Open notebook" / "Download".
const ran = { submitted_at: '2026-12-07T14:00:00Z', started_at: '2026-12-07T14:00:02Z', finished_at: '2026-12-07T14:00:09Z' };
const failedNotebook = makeJob({ id: 'j-nb', name: 'nbf', state: 'failed', notebook: '/home/ann/rep.ipynb', exit_code: 1, ...ran });
const failedScript = makeJob({ id: 'j-py', name: 'train', state: 'failed', exit_code: 1, ...ran });
const cancelledBeforeStart = makeJob({ id: 'j-nb2', name: 'never', state: 'cancelled', notebook: '/home/ann/rep.ipynb', submitted_at: '2026-12-07T14:00:00Z' });

afterEach(() => {
  document.body.innerHTML = '';
});

describe('newuser39 N1: the executed notebook of any notebook job, from My work and its log viewer', () => {
  it('test_newuser39_N1_my_work_offers_open_notebook_and_download_on_a_notebook_jobs_card_only', async () => {
    const server = new FakeSchedServer();
    server.jobs = [failedNotebook, failedScript, cancelledBeforeStart];
    const { model } = await startedModel(server, 'jobs', 'inventory');
    const { commands, runs } = recordingCommands(CommandIDs.openLogs, CommandIDs.resubmit, CommandIDs.openNotebook);
    const view = await mount(new MyWorkView(context(model, commands)));
    const opens = [...view.node.querySelectorAll('button.jp-sched-open-notebook')];
    expect(opens.map(b => b.getAttribute('aria-label'))).toEqual(['Open the executed notebook of nbf']);
    expect(text(opens[0])).toBe('Open notebook');
    const downloads = [...view.node.querySelectorAll('a.jp-sched-download-notebook')];
    expect(downloads.map(a => a.getAttribute('href'))).toEqual([executedDownloadUrl('j-nb')]);
    expect(downloads[0].getAttribute('href')).toMatch(/api\/sched\/jobs\/j-nb\/notebook\?download=true$/);
    (opens[0] as HTMLButtonElement).click();
    await settle();
    expect(runs.map(r => `${r.id} ${(r.args as { id: string }).id}`)).toEqual(['jupyter-sched:open-executed-notebook j-nb']);
    model.dispose();
  });

  it('test_newuser39_N1_only_a_notebook_job_that_ran_and_ended_has_one', () => {
    expect(hasExecutedNotebook(failedNotebook)).toBe(true);
    expect(hasExecutedNotebook(makeJob({ ...failedNotebook, state: 'succeeded' }))).toBe(true);
    expect(hasExecutedNotebook(makeJob({ ...failedNotebook, state: 'running', finished_at: null }))).toBe(false); // written as it ends
    expect(hasExecutedNotebook(failedScript)).toBe(false);
    expect(hasExecutedNotebook(cancelledBeforeStart)).toBe(false);
    expect(hasExecutedNotebook(null)).toBe(false);
  });

  it('test_newuser39_N1_the_log_viewer_header_opens_it_once_the_notebook_job_ended', async () => {
    const server = new FakeSchedServer();
    server.routes.set('GET jobs/j-nb/logs', (_, q) =>
      json(200, q.get('offset') === '0' ? { text: 'cell 3/3 failed\n', offset: 0, next_offset: 16, finished: true } : { text: '', offset: 16, next_offset: 16, finished: true }));
    server.routes.set('GET jobs/j-nb', () => json(200, failedNotebook));
    const running = makeJob({ ...failedNotebook, state: 'running', finished_at: null });
    const viewer = new LogViewer(new SchedClient(server.transport), 'j-nb', undefined, running);
    const opened: Job[] = [];
    viewer.openNotebook = job => void opened.push(job);
    document.body.appendChild(viewer.node);
    const actions = viewer.node.querySelector('.jp-sched-log-head .jp-sched-log-notebook') as HTMLElement;
    expect(actions.hidden).toBe(true); // running: nothing written yet
    for (let i = 0; i < 20 && viewer.node.dataset.finished !== 'true'; i++) {
      await settle();
    }
    expect(actions.hidden).toBe(false);
    const button = actions.querySelector('button') as HTMLButtonElement;
    expect(button.hidden).toBe(false);
    expect(text(button)).toBe('Open notebook');
    expect(button.title).toContain('jupyter-sched logs j-nb --notebook');
    expect(actions.querySelector('a')?.getAttribute('href')).toBe(executedDownloadUrl('j-nb'));
    button.click();
    expect(opened.map(j => j.id)).toEqual(['j-nb']);
    viewer.dispose();
    await viewer.done;
    const script = new LogViewer(new SchedClient(server.transport), 'j-py', undefined, failedScript);
    expect((script.node.querySelector('.jp-sched-log-notebook') as HTMLElement).hidden).toBe(true);
    script.dispose();
  });

  it('test_newuser39_N1_open_saves_the_fetched_notebook_in_the_users_files_and_opens_it', async () => {
    const server = new FakeSchedServer();
    const executed = { cells: [{ cell_type: 'code', outputs: [{ output_type: 'error', ename: 'ValueError' }] }], nbformat: 4 };
    server.routes.set('GET jobs/j-nb/notebook', () => json(200, executed));
    const saved = new Map<string, unknown>();
    const openedPaths: string[] = [];
    const files = {
      openPath: async (path: string) => void openedPaths.push(path),
      saveNotebook: async (path: string, content: unknown) => void saved.set(path, content),
      exists: async (path: string) => saved.has(path)
    };
    const client = new SchedClient(server.transport);
    const first = await openExecutedNotebook(client, 'j-nb', failedNotebook.notebook, files);
    expect(first.path).toBe('scheduled-runs/rep (executed j-nb).ipynb'); // newuser40 N1: the run's own name
    expect(saved.get('scheduled-runs/rep (executed j-nb).ipynb')).toEqual(executed);
    expect(openedPaths).toEqual(['scheduled-runs/rep (executed j-nb).ipynb']);
    server.routes.set('GET jobs/j-py/notebook', () => json(404, { error: { code: 'not_found', message: 'job j-py has no executed notebook', field: 'job_id', hint: null } }));
    await expect(openExecutedNotebook(client, 'j-py', null, files)).rejects.toThrow('has no executed notebook');
  });
});
