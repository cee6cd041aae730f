/**
 * New user 22, N7: one `cancel --mine` of 299 pending jobs put 299 toasts on the screen, each with
 * an "Open logs" for a job that never ran, and they stayed. A burst shows at most one toast: here 60
 * pending jobs (more than the server's 50 per-job events: one summary event, then the panel re-reads
 * its jobs and sees all 60 end at once) cancelled in one request by their owner, as `cancel --mine` does.
 */
import { expect, test } from '@jupyterlab/galata';

import { api, cancelAll, openPanel } from './helpers';

test.afterEach(async ({ request }) => {
  await cancelAll(request);
});

test('newuser22 N7 a bulk cancel of 60 pending jobs shows at most one toast, without Open logs', async ({ page, request }) => {
  await openPanel(page);
  // the team's 2 guaranteed GPUs held: the 60 others wait in the queue
  const holder = await api(request, 'POST', 'jobs', { name: 'ui-burst-hold', gpus: 2, command: ['sleep', '300'], time_limit: '10m' });
  await expect.poll(async () => (await api(request, 'GET', `jobs/${holder.id}`)).state, { timeout: 60000 }).toBe('running');
  const ids: string[] = [];
  for (let i = 0; i < 60; i++) {
    ids.push((await api(request, 'POST', 'jobs', { name: `ui-burst-${i}`, gpus: 1, command: ['sleep', '5'], time_limit: '1m' })).id);
  }
  const pending = async () => (await api(request, 'GET', 'jobs')).filter((j: { id: string; state: string }) => ids.includes(j.id) && j.state === 'pending').length;
  await expect.poll(pending, { timeout: 30000 }).toBe(60);
  // each submit's event is in the page: the panel's My work counts its pending work in its title
  await expect(page.locator('#jupyter-sched-panel')).toContainText('ui-burst-', { timeout: 30000 });
  const answer = await api(request, 'POST', 'jobs/cancel', { mine: true, states: ['pending'] });
  expect(answer.cancelled).toBe(60);
  const toasts = page.locator('.Toastify__toast', { hasText: /cancelled/ });
  await expect(toasts).toHaveCount(1, { timeout: 30000 });
  await expect(toasts.first()).toContainText(/60 of your pending jobs were cancelled \(by you, \d\d:\d\d UTC\)/);
  await expect(toasts.first().getByRole('button', { name: 'Open logs' })).toHaveCount(0);
  // the 60 ends come in one re-read: none is left to add a toast after the summary
  await expect(page.locator('#jupyter-sched-panel')).not.toContainText(/ui-burst-\d+\s*Pending/, { timeout: 30000 });
  await expect(toasts).toHaveCount(1);
  // nothing else of the burst either (the holder's own idle warning, this server's 2 s idle window, is no part of it)
  expect(await page.locator('.Toastify__toast').filter({ hasNotText: /Idle GPUs/ }).count()).toBe(1);
});
