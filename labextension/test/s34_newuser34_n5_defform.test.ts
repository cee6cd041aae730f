import { describe, expect, it } from 'vitest';

import { definitionLimitText, limitFieldText } from '../src/definitions';

describe('newuser34 N5: the Scheduled notebooks form has a Time limit, and the card says when there is none', () => {
  it('newuser34 n5 the card says "no time limit" for a GPU definition that gives none, its limit otherwise', () => {
    expect(definitionLimitText({ job: { gpus: 1 } } as never)).toBe('no time limit');
    expect(definitionLimitText({ job: { gpus: 1, time_limit: 300 } } as never)).toBe('time limit 5m');
    expect(definitionLimitText({ job: { gpus: 0 } } as never)).toBe('');
    expect(limitFieldText({ job: { gpus: 1, time_limit: 5400 } } as never)).toBe('1h30m');
    expect(limitFieldText({ job: { gpus: 1 } } as never)).toBe('');
  });

  it('newuser34 n5 Save sends the Time limit, Edit shows it back and an emptied one is taken off', async () => {
    const { FakeSchedServer, json, settle } = await import('./fakeserver');
    const { startedModel, flush } = await import('./ui');
    const { DefinitionsView } = await import('../src/definitions');
    const server = new FakeSchedServer();
    const saved = {
      id: 'd-1', name: 'nightly', user: 'me', notebook: '/srv/r.ipynb', script: null, schedule: '0 3 * * *', timezone: 'UTC',
      schedule_description: 'At 03:00', paused: false, parameters: {}, job: { gpus: 1, time_limit: 7200 }, next_run_at: null
    };
    server.routes.set('GET definitions', () => json(200, [saved]));
    server.routes.set('POST definitions', () => json(201, saved));
    server.routes.set('PATCH definitions/d-1', () => json(200, saved));
    const { model } = await startedModel(server);
    const view = new DefinitionsView({ model, openPath: async () => undefined, saveNotebook: async () => undefined });
    document.body.appendChild(view.node);
    await view.reload();
    await flush();
    expect(view.node.querySelector('.jp-sched-def-limit')?.textContent).toBe('time limit 2h');
    const field = (cls: string) => view.node.querySelector<HTMLInputElement>(`.jp-sched-defs-${cls}`)!;
    expect(field('timelimit')).not.toBeNull();
    field('path').value = 'r.ipynb';
    field('timelimit').value = '2h';
    view.node.querySelector<HTMLButtonElement>('.jp-sched-defs-create')!.click();
    await settle();
    await flush();
    const post = server.calls.find(c => c.method === 'POST' && c.path.endsWith('definitions'));
    expect((post?.body as Record<string, unknown>).time_limit).toBe('2h');
    view.node.querySelector<HTMLButtonElement>('.jp-sched-def-edit')!.click();
    expect(field('timelimit').value).toBe('2h');
    field('timelimit').value = '';
    view.node.querySelector<HTMLButtonElement>('.jp-sched-defs-create')!.click();
    await settle();
    await flush();
    const patch = server.calls.find(c => c.method === 'PATCH');
    expect((patch?.body as Record<string, unknown>).time_limit).toBeNull();
    view.dispose();
    model.dispose();
  });
});

describe('newuser34 N3 addendum: the glossary under a budget-held line', () => {
  it('newuser34 n3 glossary has a budget entry and its ETA entry does not deny a budget-held wait with GPUs free', async () => {
    const { glossaryTerms } = await import('../src/glossary');
    const line = "#4 · 4/4 GPUs free · ETA 00:00 UTC; not before 00:00 UTC (when the day's budget resets)";
    const terms = glossaryTerms(line);
    expect(terms.map(t => t.term)).toEqual(['ETA', 'budget']);
    expect(terms[0].meaning).toContain('budget resets');
    expect(terms[1].meaning).toContain('even while GPUs are free');
  });
});

describe('newuser34 N5 nit: Run now says what it made', () => {
  it('newuser34 n5 nit Run now says "Queued" with why while its run waits, "Started" once it runs', async () => {
    const { runNowNotice } = await import('../src/definitions');
    expect(runNowNotice({ job: { state: 'pending', reason: { message: "team ml's budget is spent" } } } as never, 'nightly'))
      .toBe('Queued a run of "nightly" (pending: team ml\'s budget is spent)');
    expect(runNowNotice({ job: { state: 'pending', reason: null } } as never, 'nightly')).toBe('Queued a run of "nightly"');
    expect(runNowNotice({ job: { state: 'running' } } as never, 'nightly')).toBe('Started a run of "nightly"');
  });
});
