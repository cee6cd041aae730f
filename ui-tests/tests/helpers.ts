/**
 * Shared steps of the jupyter_sched browser tests: open the panel, find sections and rows,
 * upload scripts, save screenshots (light and dark) and talk to the REST API directly where a
 * test needs a precondition the panel does not create (a lease, a clean-up).
 */
import { expect, type IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { APIRequestContext, Locator } from '@playwright/test';
import * as path from 'path';

export const PANEL_ID = 'jupyter-sched-panel';
export const SCREENSHOTS = path.resolve(__dirname, '..', 'screenshots');

/** Open the GPUs sidebar at 300 px (the narrowest width the panel promises to handle). */
export async function openPanel(page: IJupyterLabPageFixture): Promise<Locator> {
  await page.sidebar.openTab(PANEL_ID);
  await page.sidebar.setWidth(300, 'left');
  const panel = page.locator(`#${PANEL_ID}`);
  await expect(panel.locator('.jp-sched-section-inventory')).toBeVisible();
  return panel;
}

/** A section of the panel, opened. */
export async function section(panel: Locator, id: string): Promise<Locator> {
  const details = panel.locator(`.jp-sched-section-${id}`);
  if ((await details.getAttribute('open')) === null) {
    await details.locator('summary').click();
  }
  await expect(details).toHaveAttribute('open', '');
  return details;
}

/** Upload a file into the server's root directory (the file browser's top level). */
export async function upload(page: IJupyterLabPageFixture, name: string, text: string): Promise<void> {
  expect(await page.contents.uploadContent(text, 'text', name)).toBe(true);
}

/** Screenshot the panel (or one element) in the light and the dark theme. */
export async function shoot(page: IJupyterLabPageFixture, target: Locator, name: string): Promise<void> {
  await target.screenshot({ path: path.join(SCREENSHOTS, `${name}-light.png`) });
  await page.theme.setDarkTheme();
  await target.screenshot({ path: path.join(SCREENSHOTS, `${name}-dark.png`) });
  await page.theme.setLightTheme();
}

/** Fill and send the Submit form; returns nothing (the panel shows the outcome). */
export async function submitForm(panel: Locator, values: { path: string; gpus?: number; name?: string }): Promise<void> {
  const form = await section(panel, 'submit');
  await form.locator('.jp-sched-submit-path').fill(values.path);
  await form.locator('.jp-sched-submit-gpus').fill(String(values.gpus ?? 1));
  await form.locator('.jp-sched-submit-name').fill(values.name ?? '');
  await form.locator('.jp-sched-submit-button').click();
}

/** The My work row of the job named `name` (the newest one). */
export function myRow(panel: Locator, name: string): Locator {
  return panel.locator('.jp-sched-section-mywork .jp-sched-job').filter({ has: panel.page().locator('.jp-sched-job-name', { hasText: new RegExp(`^${name}$`) }) }).first();
}

/** REST call with the server's JSON error shape surfaced on failure. */
export async function api(request: APIRequestContext, method: 'GET' | 'POST' | 'PUT' | 'DELETE', route: string, data?: unknown): Promise<any> {
  const response = await request.fetch(`api/sched/${route}`, { method, data, headers: { 'Content-Type': 'application/json' } });
  const body = await response.text();
  if (!response.ok()) {
    throw new Error(`${method} ${route} -> ${response.status()}: ${body}`);
  }
  return body ? JSON.parse(body) : null;
}

/** Cancel every live job and lease of the caller (tests leave the shared server clean). */
export async function cancelAll(request: APIRequestContext): Promise<void> {
  for (const route of ['jobs', 'leases']) {
    for (const job of await api(request, 'GET', route)) {
      if (['pending', 'admitted', 'running', 'preempted'].includes(job.state)) {
        await api(request, 'DELETE', `${route}/${job.id}`);
      }
    }
  }
}

