/**
 * New user 23, N12 (admin): "Save quotas" dropped the PUT's `warnings` — `User: nobody` typed on
 * team ml's line was saved with only "Saved 2 quota lines.", and ml's other members were left at 0
 * GPUs. Now Save asks the server first (`dry_run: true`): warnings the set in force does not already
 * have are listed with "Save anyway", nothing stored; a save says the saved set's warnings.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { nullTranslator } from '@jupyterlab/translation';

import { AdminView } from '../src/sections';
import { quotaWarningText } from '../src/sections/admin';
import { FakeSchedServer, json, settle } from './fakeserver';
import { click, context, flush, mount, startedModel, text, type } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

const STANDING = 'team default has no quota line: it may use 0 GPUs (c.SchedApp.unlisted_team_borrowing_limit); give it a line with PUT quotas';
const STRANDED = 'team ml has only a quota line for user nobody: its other members, you included, may use 0 GPUs (c.SchedApp.unlisted_team_borrowing_limit); give the team a line with PUT quotas';
const UNKNOWN = "quotas[0] (team ml, user nobody): nobody is in no team here (user_teams and teams' members name them nowhere) — a typo? The line counts only for nobody's own work in ml; give a user name as they log in, or no user for a line for the whole team";

type Line = { team: string; user: string | null; gpu_model: string; guaranteed: number; borrowing_limit: number | null };

function server(): { server: FakeSchedServer; puts: { dry: boolean; quotas: Line[] }[] } {
  const s = new FakeSchedServer();
  s.me = { ...s.me, is_admin: true };
  let stored: Line[] = [{ team: 'ml', user: null, gpu_model: '*', guaranteed: 2, borrowing_limit: 2 }];
  const warnings = (lines: Line[]): string[] => [STANDING, ...(lines.some(l => l.user === 'nobody') ? [STRANDED, UNKNOWN] : [])];
  const puts: { dry: boolean; quotas: Line[] }[] = [];
  s.routes.set('GET quotas', () => json(200, { quotas: stored, budgets: [], teams: [], user_teams: {}, warnings: warnings(stored) }));
  s.routes.set('PUT quotas', body => {
    const { quotas, dry_run: dry } = body as { quotas: Line[]; dry_run?: boolean };
    puts.push({ dry: !!dry, quotas });
    if (!dry) {
      stored = quotas;
    }
    return json(200, { quotas, budgets: [], teams: [], user_teams: {}, warnings: warnings(quotas) });
  });
  return { server: s, puts };
}

describe('test_s23_newuser23_n12_save_quotas_says_the_warnings', () => {
  it('asks first when the lines would bring new warnings, saves on "Save anyway", and says the saved set\'s warnings', async () => {
    const { server: s, puts } = server();
    const { model } = await startedModel(s);
    const view = await mount(new AdminView(context(model)));
    await settle();
    await flush();
    const node = view.node;
    const status = (): Element => node.querySelectorAll('[role="status"]')[0];
    const items = (): string[] => [...status().querySelectorAll('li')].map(li => text(li));

    await type(node.querySelector('input[name="user"]') as HTMLInputElement, 'nobody');
    await click(node.querySelector('.jp-sched-quota-save')!);
    expect(puts.map(p => p.dry)).toEqual([true]); // a dry run: nothing stored yet
    expect(status().className).toContain('jp-sched-feedback-warn');
    expect(text(status())).toContain('Not saved yet. With these lines the server warns:');
    expect(items()).toEqual([
      'team ml has only a quota line for user nobody: its other members, you included, may use 0 GPUs (c.SchedApp.unlisted_team_borrowing_limit); give the team a line here',
      "Row 1 (team ml, user nobody): nobody is in no team here (user_teams and teams' members name them nowhere) — a typo? The line counts only for nobody's own work in ml; give a user name as they log in, or no user for a line for the whole team"
    ]); // the warning the set in force has already (team default) is not asked about

    await click(node.querySelector('.jp-sched-quota-save-anyway')!);
    expect(puts.map(p => p.dry)).toEqual([true, false]);
    expect(puts[1].quotas[0].user).toBe('nobody');
    expect(text(status())).toContain('Saved 1 quota line. The server warns:');
    expect(status().className).toContain('jp-sched-feedback-warn');
    expect(items()).toHaveLength(3);
    expect(items()[0]).toBe('team default has no quota line: it may use 0 GPUs (c.SchedApp.unlisted_team_borrowing_limit); give it a line here');
    expect(node.querySelector('.jp-sched-quota-save-anyway')).toBeNull();

    // nothing new to warn of: saved at once (one dry run, one save), the warnings still said
    await type(node.querySelector('input[name="guaranteed"]') as HTMLInputElement, '1');
    await click(node.querySelector('.jp-sched-quota-save')!);
    expect(puts.map(p => p.dry)).toEqual([true, false, true, false]);
    expect(text(status())).toContain('Saved 1 quota line. The server warns:');
    view.dispose();
    model.dispose();
  });

  it('"Keep editing" stores nothing, and an edit drops the question', async () => {
    const { server: s, puts } = server();
    const { model } = await startedModel(s);
    const view = await mount(new AdminView(context(model)));
    await settle();
    await flush();
    const node = view.node;
    await type(node.querySelector('input[name="user"]') as HTMLInputElement, 'nobody');
    await click(node.querySelector('.jp-sched-quota-save')!);
    await click(node.querySelector('.jp-sched-quota-keep-editing')!);
    expect(node.querySelector('.jp-sched-quota-save-anyway')).toBeNull();
    await click(node.querySelector('.jp-sched-quota-save')!);
    expect(node.querySelector('.jp-sched-quota-save-anyway')).not.toBeNull();
    await type(node.querySelector('input[name="user"]') as HTMLInputElement, '');
    expect(node.querySelector('.jp-sched-quota-save-anyway')).toBeNull();
    expect(puts.every(p => p.dry)).toBe(true);
    view.dispose();
    model.dispose();
  });

  it('quotaWarningText: the API\'s quotas[i] is the form\'s Row i+1; a fix "with PUT quotas" is made here', () => {
    const trans = nullTranslator.load('jupyter_sched');
    expect(quotaWarningText('quotas[2] (team cv, user bo): bo is not a member of cv', trans)).toBe('Row 3 (team cv, user bo): bo is not a member of cv');
    expect(quotaWarningText('give the team a line with PUT quotas', trans)).toBe('give the team a line here');
  });
});
