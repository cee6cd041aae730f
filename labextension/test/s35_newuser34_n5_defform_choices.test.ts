/**
 * newuser34 N5 leftover: the Scheduled notebooks form had Time limit but no GPU model, priority or team (only the CLI
 * and REST set them). The form now offers them as the Submit form does (models from the inventory, the user's own
 * teams and each team's priority classes from `GET me`), Save sends them, Edit starts from the definition's and sends
 * only what changed (null takes one off), and the card says them in `definitions show`'s words.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { definitionRequestParts, formChoices, formStart, requestFields } from '../src/definitions';
import { FakeSchedServer, json, makeGpu, makeInventory } from './fakeserver';
import { mountedDefinitions } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

const saved = (job: Record<string, unknown>, team = 'team-cv') => ({
  id: 'd-1', name: 'nightly', user: 'alice', team, notebook: '/srv/r.ipynb', script: null, args: [], schedule: '0 3 * * *',
  timezone: 'UTC', schedule_description: 'At 03:00', paused: false, parameters: {}, job, next_run_at: null
});

function twoTeams(server: FakeSchedServer): void {
  server.me = {
    ...server.me, team: 'team-ml', teams: ['team-ml', 'team-cv'],
    priorities: { 'team-ml': ['normal', 'low'], 'team-cv': ['high', 'normal', 'low'] }
  } as typeof server.me;
  const gpus = [makeGpu(0), { ...makeGpu(1), uuid: 'GPU-h', model: 'H100 80GB' }];
  server.inventory = makeInventory(2, { gpus, nodes: [{ name: 'node-a', ready: true, unschedulable: false, labels: {}, taints: [], gpus }] });
}

describe('newuser34 n5 definitions form: GPU model, priority and team', () => {
  it('newuser34 n5 definitions form offers the models, my teams and each team\'s priorities; Save sends them; the card says them', async () => {
    const server = new FakeSchedServer();
    twoTeams(server);
    let list: unknown[] = [];
    server.routes.set('GET definitions', () => json(200, list));
    server.routes.set('POST definitions', () => json(201, saved({ gpus: 1, gpu_models: ['H100 80GB'], team: 'team-cv', priority: 'high' })));
    const { v, done, close } = await mountedDefinitions(server);
    const field = <T extends HTMLElement>(cls: string) => v.node.querySelector<T>(`.jp-sched-defs-${cls}`)!;
    const options = (cls: string) => [...field<HTMLSelectElement>(cls).options].map(o => [o.value, o.textContent]);
    expect(options('model')).toEqual([['', 'Any model'], ['H100 80GB', 'H100 80GB'], ['Simulated GPU 80GB', 'Simulated GPU 80GB']]);
    expect(options('team')).toEqual([['', 'team-ml (your default)'], ['team-cv', 'team-cv']]);
    expect(v.node.querySelector<HTMLElement>('.jp-sched-defs-field-team')!.hidden).toBe(false);
    // team-ml grants no high: not offered until team-cv is chosen
    expect(options('priority').map(o => o[0])).toEqual(['normal', 'low']);
    field<HTMLSelectElement>('team').value = 'team-cv';
    field<HTMLSelectElement>('team').dispatchEvent(new Event('change'));
    expect(options('priority').map(o => o[0])).toEqual(['high', 'normal', 'low']);
    field<HTMLSelectElement>('priority').value = 'high';
    field<HTMLSelectElement>('model').value = 'H100 80GB';
    field<HTMLInputElement>('path').value = 'r.ipynb';
    list = [saved({ gpus: 1, gpu_models: ['H100 80GB'], team: 'team-cv', priority: 'high' })];
    v.node.querySelector<HTMLButtonElement>('.jp-sched-defs-create')!.click();
    await done();
    const post = server.calls.find(c => c.method === 'POST' && c.path.endsWith('definitions'))!.body as Record<string, unknown>;
    expect([post.gpu_models, post.team, post.priority]).toEqual([['H100 80GB'], 'team-cv', 'high']);
    expect([...v.node.querySelectorAll('.jp-sched-def-request')].map(s => s.textContent)).toEqual(['model H100 80GB', 'priority high', 'team team-cv']);
    close();
  });

  it('newuser34 n5 definitions form Edit starts from the definition\'s model, team and priority and sends only what changed', async () => {
    const server = new FakeSchedServer();
    twoTeams(server);
    const d = saved({ gpus: 1, model: 'H100 80GB', queue: 'team-cv', priority: 'high', time_limit: '2h' });
    server.routes.set('GET definitions', () => json(200, [d]));
    server.routes.set('PATCH definitions/d-1', () => json(200, d));
    const { v, done, close } = await mountedDefinitions(server);
    const field = <T extends HTMLElement>(cls: string) => v.node.querySelector<T>(`.jp-sched-defs-${cls}`)!;
    v.node.querySelector<HTMLButtonElement>('.jp-sched-def-edit')!.click();
    expect([field<HTMLSelectElement>('model').value, field<HTMLSelectElement>('team').value, field<HTMLSelectElement>('priority').value])
      .toEqual(['H100 80GB', 'team-cv', 'high']);
    // nothing changed: none of the three is sent (a CLI-made spelling, model / queue, stays as it is)
    v.node.querySelector<HTMLButtonElement>('.jp-sched-defs-create')!.click();
    await done();
    let patch = server.calls.filter(c => c.method === 'PATCH').pop()!.body as Record<string, unknown>;
    expect(['gpu_models', 'model', 'team', 'queue', 'priority'].filter(k => k in patch)).toEqual([]);
    // any model and the default team: taken off (null); a lower priority: sent
    v.node.querySelector<HTMLButtonElement>('.jp-sched-def-edit')!.click();
    field<HTMLSelectElement>('model').value = '';
    field<HTMLSelectElement>('team').value = '';
    field<HTMLSelectElement>('team').dispatchEvent(new Event('change'));
    field<HTMLSelectElement>('priority').value = 'low';
    v.node.querySelector<HTMLButtonElement>('.jp-sched-defs-create')!.click();
    await done();
    patch = server.calls.filter(c => c.method === 'PATCH').pop()!.body as Record<string, unknown>;
    expect([patch.gpu_models, patch.team, patch.priority]).toEqual([null, null, 'low']);
    close();
  });

  it('newuser34 n5 definitions form with one team shows no Team field; what an edit keeps is offered as saved', async () => {
    const { v, close } = await mountedDefinitions(new FakeSchedServer()); // me: one team
    expect(v.node.querySelector<HTMLElement>('.jp-sched-defs-field-team')!.hidden).toBe(true);
    close();
    const me = { team: 'team-ml', teams: ['team-ml'], priorities: { 'team-ml': ['normal', 'low'] } };
    const one = formChoices(me as never, ['high', 'normal', 'low'], ['A100'], null, '');
    expect(one.teams).toEqual([]);
    expect(one.priorities.map(p => p[0])).toEqual(['normal', 'low']);
    // an admin edits another user's definition: its team, models gone from the inventory and class are kept as choices
    const other = formChoices(me as never, ['high', 'normal', 'low'], ['A100'], { job: { team: 'vision', gpu_models: ['L40S', 'H100'], priority: 'high' } }, '');
    expect(other.teams).toEqual([['', 'team-ml (your default)'], ['vision', 'vision']]);
    expect(other.models.at(-1)?.[1]).toBe('L40S/H100 (as saved)');
    expect(other.priorities.map(p => p[0])).toEqual(['normal', 'low', 'high']);
    // newuser34 n5 an admin editing another user's definition: not the admin's teams and grants, the owner's default
    const admin = { user: 'boss', team: 'team-ml', teams: ['team-ml', 'team-cv'], priorities: { 'team-ml': ['normal'] } };
    const bobs = formChoices(admin as never, ['high', 'normal', 'low'], ['A100'], { user: 'bob', job: { team: 'team-ml' } } as never, '');
    expect(bobs.teams).toEqual([['', "bob's default team"], ['team-ml', 'team-ml']]);
    expect(bobs.priorities.map(p => p[0])).toEqual(['high', 'normal', 'low']);
    expect(formStart({ user: 'bob', job: { team: 'team-ml' } } as never, admin as never).team).toBe('team-ml');
    expect(formStart({ user: 'boss', job: { team: 'team-ml' } } as never, admin as never).team).toBe('');
    // create: only what differs from the defaults
    expect(requestFields({ model: '', team: '', priority: 'normal' }, { model: '', team: '', priority: 'normal' }, false)).toEqual({});
    expect(definitionRequestParts({ job: { gpus: 1 }, team: 'default' } as never)).toEqual(['team default']);
  });
});
