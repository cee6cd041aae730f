/**
 * New user 23, N11: the Scheduled notebooks form's refusals (a notebook that does not exist, GPUs
 * 1.5, a parameter line without `=`) and the list's (Run now, Pause) were written where every re-read
 * of the list — a jobs poll, each second or so while work runs — erased them: `reload()` cleared
 * the one error field they all shared. They stay now: the form's beside the form until it is
 * changed, the list's until the next action.
 */
import { describe, expect, it } from 'vitest';

import { FakeSchedServer, json } from './fakeserver';
import { mountedDefinitions } from './ui';

const definition = {
  id: 'd-1', user: 'ann', name: 'daily_report', notebook: '/srv/daily_report.ipynb', script: null, schedule: '0 7 * * *', timezone: 'UTC',
  schedule_description: 'At 07:00', paused: false, next_run_at: '2026-12-06T07:00:00Z', parameters: {}, job: { gpus: 1 }, last_run: null
};

async function view(routes: Record<string, (body: unknown) => Response>) {
  const server = new FakeSchedServer();
  const posted: unknown[] = [];
  server.routes.set('GET definitions', () => json(200, [definition])); // one definition: every jobs change re-reads the list
  for (const [route, answer] of Object.entries(routes)) {
    server.routes.set(route, body => {
      posted.push(body);
      return answer(body);
    });
  }
  const { v, done, close } = await mountedDefinitions(server);
  return { v, posted, done, close };
}

describe('test_s23_newuser23_n11_refusals_outlive_the_next_reload', () => {
  it.each([
    [
      'a notebook the server does not have',
      { path: 'w/nosuch.ipynb', gpus: '0', params: '' },
      { code: 'validation_error', field: 'notebook', message: "notebook '/tmp/nu23/w/nosuch.ipynb' does not exist on this server", hint: 'give the path of a notebook on this server' },
      "Notebook or script: '/tmp/nu23/w/nosuch.ipynb' does not exist on this server — give the path of a notebook on this server"
    ],
    [
      'GPUs 1.5 (-1 the browser refuses itself: the field has min 0)',
      { path: 'w/daily_report.ipynb', gpus: '1.5', params: '' },
      { code: 'validation_error', field: 'gpus', message: 'gpus must be a whole number or a fraction below 1 (got 1.5)', hint: 'use e.g. 1, 2 or 0.5' },
      'GPUs per run: must be a whole number or a fraction below 1 (got 1.5) — use e.g. 1, 2 or 0.5'
    ],
    [
      'a parameter line without "=" (refused before sending)',
      { path: 'w/daily_report.ipynb', gpus: '1', params: 'region eu' },
      null,
      'parameters: "region eu" is not NAME=VALUE'
    ]
  ])('Save definition refused for %s: said beside the form, still there after the list is re-read', async (_, values, refusal, said) => {
    const { v, posted, done, close } = await view({ 'POST definitions': () => json(400, { error: refusal }) });
    const set = (cls: string, value: string) => {
      v.node.querySelector<HTMLInputElement | HTMLTextAreaElement>(`.jp-sched-defs-${cls}`)!.value = value;
    };
    set('name', 'pd6');
    set('path', values.path);
    set('cron', '0 7 * * *');
    set('gpus', values.gpus);
    set('params', values.params);
    v.node.querySelector<HTMLButtonElement>('.jp-sched-defs-create')!.click();
    await done();
    expect(posted.length).toBe(refusal ? 1 : 0);
    const shown = (): string => v.node.querySelector('.jp-sched-defs-form-error')?.textContent ?? '';
    expect(shown()).toContain(said);
    // a jobs poll: the model's jobs changed, the view re-reads the definitions (before: the refusal was wiped here)
    await v.reload();
    await done();
    expect(shown()).toContain(said);
    expect(v.node.querySelector('.jp-sched-defs-form-error')?.getAttribute('role')).toBe('alert');
    expect(v.node.textContent?.split(said).length).toBe(2); // said once
    // the user changes the form: the refusal is no longer about what it holds
    v.node.querySelector('.jp-sched-defs-path')!.dispatchEvent(new Event('input', { bubbles: true }));
    expect(shown()).toBe('');
    close();
  });

  it.each([
    ['Run now', '.jp-sched-def-run', 'POST definitions/d-1/runs'],
    ['Pause', '.jp-sched-def-toggle', 'POST definitions/d-1/pause']
  ])('a refused %s stays above the list after the next re-reads, until the next action', async (_, button, route) => {
    const refusal = { code: 'conflict', field: null, message: 'daily_report has a run waiting to start already (j-1)', hint: 'cancel it in My work first' };
    const { v, done, close } = await view({ [route]: () => json(409, { error: refusal }) });
    v.node.querySelector<HTMLButtonElement>(button)!.click();
    await done();
    const said = 'daily_report has a run waiting to start already (j-1) — cancel it in My work first';
    const shown = (): string[] => [...v.node.querySelectorAll('.jp-sched-defs-error')].map(e => e.textContent ?? '');
    expect(shown()).toEqual([said]);
    await v.reload();
    await v.reload();
    await done();
    expect(shown()).toEqual([said]);
    close();
  });
});
