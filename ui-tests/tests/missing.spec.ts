/**
 * With the server extension not enabled, every api/sched/ URL answers Jupyter's own 404 page;
 * the panel must say "server extension not enabled" with the fix instead of staying blank.
 * The browser's requests to api/sched/ are answered here with that 404 (status and HTML body of
 * jupyter_server's default handler), which is what a server without jupyter_sched sends.
 */
import { expect, test } from '@jupyterlab/galata';

import { activateSidebarTab, PANEL_ID, shoot } from './helpers';

test.use({ autoGoto: false });

test('without the server extension the panel shows "server extension not enabled" and the fix', async ({ page }) => {
  await page.route('**/api/sched/**', route =>
    route.fulfill({ status: 404, contentType: 'text/html', body: '<html><title>404: Not Found</title><body><h1>404 : Not Found</h1></body></html>' })
  );
  await page.goto();
  await activateSidebarTab(page, PANEL_ID);
  const panel = page.locator(`#${PANEL_ID}`);
  const missing = panel.locator('.jp-sched-missing');
  await expect(missing).toContainText('Server extension not enabled');
  await expect(missing).toHaveAttribute('role', 'alert');
  await expect(missing.locator('code')).toHaveText('jupyter server extension enable jupyter_sched');
  await expect(missing.getByRole('button', { name: 'Retry' })).toBeVisible();
  // newuser37 N5: inside JupyterLab's side-panel header (capitals, a flex row) the notice and its case-sensitive fix
  // were uppercased and cut at the sidebar's edge — they keep their case and wrap within the panel
  const text = missing.locator('p').first();
  expect(await text.evaluate(node => getComputedStyle(node).textTransform)).toBe('none');
  const [box, edge] = [await missing.boundingBox(), await panel.boundingBox()];
  expect(box && edge && box.x + box.width <= edge.x + edge.width + 1).toBe(true);
  await shoot(page, panel, 'extension-missing');
});
