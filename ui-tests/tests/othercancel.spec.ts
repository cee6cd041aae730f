/**
 * Verify 22, V2: an admin's cancel of my pending job showed no toast at all (the bell did not move
 * either), while my own cancels toasted as designed. The cancel's event carried the admin's view of
 * the job (`mine: false`) to me, and the panel took my job for someone else's. Here the page's user
 * (the user server's anonymous browser user) has a pending job, and the admin ui-boss (a request
 * header the test server's identity provider reads; see jupyter_server_test_config.py) cancels it
 * through REST: exactly one warning toast "NAME cancelled: cancelled by ui-boss", with no Open logs
 * (it never ran).
 */
import { expect, test } from '@jupyterlab/galata';
import type { APIRequestContext } from '@playwright/test';

import { api, cancelAll, openPanel } from './helpers';

const BOSS = { 'X-Sched-UI-User': 'ui-boss', 'Content-Type': 'application/json' };

test.afterEach(async ({ page }) => {
  await cancelAll(page.request);
});

async function asBoss(request: APIRequestContext, method: 'GET' | 'DELETE', route: string): Promise<any> {
  const response = await request.fetch(`api/sched/${route}`, { method, headers: BOSS });
  const body = await response.text();
  if (!response.ok()) {
    throw new Error(`${method} ${route} as ui-boss -> ${response.status()}: ${body}`);
  }
  return body ? JSON.parse(body) : null;
}

test('verify22 V2 an admin cancel of my pending job shows one warning toast, without Open logs', async ({ page, request }) => {
  const panel = await openPanel(page);
  const me = (await api(page.request, 'GET', 'me')).user;
  expect((await asBoss(request, 'GET', 'me')).user).toBe('ui-boss');
  // the team's 2 guaranteed GPUs asked for first: the job after it waits
  await api(page.request, 'POST', 'jobs', { name: 'ui-v2-hold', gpus: 2, command: ['sleep', '300'], time_limit: '10m' });
  const job = await api(page.request, 'POST', 'jobs', { name: 'ui-v2-solo0', gpus: 1, command: ['sleep', '5'], time_limit: '1m' });
  expect(job.user).toBe(me);
  await expect.poll(async () => (await api(page.request, 'GET', `jobs/${job.id}`)).state, { timeout: 30000 }).toBe('pending');
  // its submit's event is in the page: the queue lists it
  await expect(panel).toContainText('ui-v2-solo0', { timeout: 30000 });
  const answer = await asBoss(request, 'DELETE', `jobs/${job.id}`);
  expect([answer.state, answer.user]).toEqual(['cancelled', me]);
  const toasts = page.locator('.Toastify__toast', { hasText: /cancelled/ });
  await expect(toasts).toHaveCount(1, { timeout: 30000 });
  await expect(toasts.first()).toContainText('ui-v2-solo0 cancelled: cancelled by ui-boss');
  expect(await toasts.first().getAttribute('class')).toMatch(/Toastify__toast--warning/);
  await expect(toasts.first().getByRole('button', { name: 'Open logs' })).toHaveCount(0);
  // My work says it too: the row is the page user's, ended by ui-boss
  await expect(panel).toContainText(/ui-v2-solo0[\s\S]{0,160}cancelled by ui-boss/);
  await expect(toasts).toHaveCount(1);
});
