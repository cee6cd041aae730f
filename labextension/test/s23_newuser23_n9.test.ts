/**
 * New user 23, N9: the Submit form kept offering a priority the team had lost after the panel's
 * Refresh (GET me was re-read only with the Quota section's own refresh), and Check fit's refusal said
 * "or submit with team (Team cv), which allows 'high'".
 */
import { describe, expect, it } from 'vitest';

import { formWords } from '../src/format';
import { offeredPriorities } from '../src/sections/submit';
import { FakeSchedServer, settle } from './fakeserver';
import { startedModel } from './ui';

describe('test_s23_newuser23_n9_refresh_rereads_priorities_and_the_hint_says_the_field', () => {
  it("the panel's Refresh re-reads GET me: the form offers the team's priorities as they are now", async () => {
    const server = new FakeSchedServer();
    server.me = { ...server.me, team: 'ml', priorities: { ml: ['high', 'normal', 'low'] } } as typeof server.me;
    const { model } = await startedModel(server); // nothing watched: the Quota section is closed
    expect(offeredPriorities(['high', 'normal', 'low'], model.me, '')).toEqual(['high', 'normal', 'low']);
    server.me = { ...server.me, priorities: { ml: ['normal', 'low'], cv: ['high', 'normal'] } } as typeof server.me;
    model.refreshAll();
    await settle();
    expect(offeredPriorities(['high', 'normal', 'low'], model.me, '')).toEqual(['normal', 'low']);
    model.dispose();
  });

  it("the refusal's other team reads as the form's field", () => {
    const said = formWords(
      "Priority: team 'ml' may not use priority 'high' (allowed: normal, low) — use normal or low, or submit with team (--team cv), which allows 'high', or add 'high' to team ml's allowed_priorities (PUT quotas)."
    );
    expect(said).toBe(
      "Priority: team 'ml' may not use priority 'high' (allowed: normal, low) — use normal or low, or choose Team cv, which allows 'high', or add 'high' to team ml's allowed_priorities (PUT quotas)."
    );
    expect(formWords('or submit with team (--team cv) or team (--team nlp), which allow')).toBe('or choose Team cv or Team nlp, which allow');
  });
});
