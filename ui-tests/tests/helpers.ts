/**
 * Shared steps of the jupyter_sched browser tests: open the GPUs sidebar, expand sections, upload
 * scripts, compare screenshots with the committed baselines (light and dark), scan with axe-core,
 * and talk to the REST API directly where a test needs a precondition the panel does not create.
 */
import AxeBuilder from '@axe-core/playwright';
import { expect, type IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { APIRequestContext, Locator, Page } from '@playwright/test';
import * as path from 'path';

export const PANEL_ID = 'jupyter-sched-panel';

/**
 * Make the left or right sidebar's tab `id` the current one, idempotently: once JupyterLab has
 * restored its layout (`app.restored`: a fresh layout then shows the file browser, a restored one
 * the tab it was left on), `shell.activateById` — never a click on the tab. Galata's
 * `sidebar.openTab` checks whether the tab is current, then CLICKS it; when the layout restorer
 * opened it between the check and the click, the click TOGGLED it closed and the wait for it timed
 * out (CI on 072684ca: panel.spec "a job submitted from the form…", toasts.spec before it).
 * Activated again until it is current (anything activating another tab meanwhile loses).
 */
export async function activateSidebarTab(page: Page, id: string): Promise<void> {
  const tab = page.locator(`.lm-TabBar.jp-SideBar .lm-TabBar-content li.lm-TabBar-tab[data-id="${id}"]`);
  await expect(async () => {
    await page.evaluate(async widget => {
      const app = (window as any).jupyterapp;
      await app.restored;
      app.shell.activateById(widget);
    }, id);
    await expect(tab).toHaveClass(/lm-mod-current/, { timeout: 2000 });
  }).toPass({ timeout: 30000 });
}

/** Open the GPUs sidebar at 300 px (the narrowest width the panel promises to handle). */
export async function openPanel(page: IJupyterLabPageFixture): Promise<Locator> {
  await activateSidebarTab(page, PANEL_ID);
  await page.sidebar.setWidth(300, 'left');
  const panel = page.locator(`#${PANEL_ID}`);
  await expect(panel.locator('.jp-sched-section-inventory')).toBeAttached();
  await expect(panel.locator('.jp-sched-stream')).toHaveText('live');
  return panel;
}

/** The accordion title of a section. */
export function title(panel: Locator, id: string): Locator {
  return panel.locator(`.lm-AccordionPanel-title[data-section="${id}"]`);
}

/** A section, expanded. */
export async function section(panel: Locator, id: string): Promise<Locator> {
  const head = title(panel, id);
  if ((await head.getAttribute('aria-expanded')) !== 'true') {
    await head.locator('.lm-AccordionPanel-titleLabel').click();
  }
  await expect(head).toHaveAttribute('aria-expanded', 'true');
  return panel.locator(`.jp-sched-section-${id}`);
}

/** Expand `id` and collapse every other section, so it has the sidebar's height (screenshots). */
export async function only(panel: Locator, id: string): Promise<Locator> {
  const ids = await panel.locator('.lm-AccordionPanel-title').evaluateAll(nodes => nodes.map(n => (n as HTMLElement).dataset.section ?? ''));
  for (const other of ids) {
    if (other !== id) {
      await collapse(panel, other);
    }
  }
  return section(panel, id);
}

/** A section, collapsed. */
export async function collapse(panel: Locator, id: string): Promise<void> {
  const head = title(panel, id);
  if ((await head.getAttribute('aria-expanded')) === 'true') {
    await head.locator('.lm-AccordionPanel-titleLabel').click();
  }
  await expect(head).toHaveAttribute('aria-expanded', 'false');
}

/** Upload a file into the server's root directory (the file browser's top level). */
export async function upload(page: IJupyterLabPageFixture, name: string, text: string): Promise<void> {
  // Galata counts only a 201 (created) as success: a file an earlier test left at the same path
  // answers 200 (replaced) and read as a failed upload (the N21 spec after the cancel spec)
  if (await page.contents.fileExists(name)) {
    await page.contents.deleteFile(name);
  }
  expect(await page.contents.uploadContent(text, 'text', name)).toBe(true);
}

/**
 * Compare `target` with the committed baselines `<name>-light.png` and `<name>-dark.png`
 * (`tests/<spec>-snapshots/`; `bash ui-tests/run.sh --update-snapshots` rewrites them).
 * Times, live bars, sparklines and job ids are hidden by tests/screenshot.css (add classes there);
 * `mask` covers anything else; animations and the caret are frozen.
 */
export async function shoot(page: IJupyterLabPageFixture, target: Locator, name: string, mask: Locator[] = []): Promise<void> {
  const options = {
    animations: 'disabled' as const,
    caret: 'hide' as const,
    mask,
    stylePath: path.join(__dirname, 'screenshot.css'),
    maxDiffPixelRatio: 0.01
  };
  await page.mouse.move(0, 0);
  await expect(target).toHaveScreenshot(`${name}-light.png`, options);
  await page.theme.setDarkTheme();
  await expect(target).toHaveScreenshot(`${name}-dark.png`, options);
  await page.theme.setLightTheme();
}

/** axe-core (WCAG 2.1 A and AA rules) on the element; returns the violations in a readable form. */
export async function axe(page: Page, selector: string): Promise<string[]> {
  const result = await new AxeBuilder({ page }).include(selector).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations.flatMap(v => v.nodes.map(n => `${v.id} (${v.impact}): ${n.target.join(' ')} — ${n.failureSummary?.replace(/\s+/g, ' ')}`));
}

/** Fill and send the Submit form. */
export async function submitForm(panel: Locator, values: { path: string; gpus?: number; name?: string; args?: string }): Promise<void> {
  const form = await section(panel, 'submit');
  await form.locator('.jp-sched-submit-path').fill(values.path);
  await form.locator('.jp-sched-submit-args').fill(values.args ?? '');
  await form.locator('.jp-sched-submit-gpus').fill(String(values.gpus ?? 1));
  await form.locator('.jp-sched-submit-name').fill(values.name ?? '');
  await form.locator('.jp-sched-submit-button').click();
}

/** The My work row of the job named `name` (the newest one). */
export function myRow(panel: Locator, name: string): Locator {
  return panel
    .locator('.jp-sched-section-mywork .jp-sched-job')
    .filter({ has: panel.page().locator('.jp-sched-job-name', { hasText: new RegExp(`^${name}$`) }) })
    .first();
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
