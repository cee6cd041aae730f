/**
 * The extension in Notebook 7 (no ILabShell there): a notebook opened in the classic-style
 * notebook page shows the "Run on GPUs" toolbar button (declared in the settings), and pressing it
 * opens the GPUs sidebar in Notebook 7's left area with the notebook filled into Submit.
 */
import { expect, test } from '@jupyterlab/galata';

test.use({ autoGoto: false });

test('loads in Notebook 7: toolbar button, GPUs sidebar and its sections', async ({ context, request, baseURL }) => {
  const name = 'nb7_gpu.ipynb';
  const content = { cells: [], metadata: { kernelspec: { name: 'python3', display_name: 'Python 3 (ipykernel)', language: 'python' } }, nbformat: 4, nbformat_minor: 5 };
  const saved = await request.put(`api/contents/${name}`, { data: { type: 'notebook', format: 'json', content } });
  expect(saved.ok()).toBe(true);
  // a plain page: Galata's page fixture expects JupyterLab
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', e => errors.push(e.message));
  await page.goto(`${baseURL}/notebooks/${name}`);
  const button = page.locator('.jp-NotebookPanel-toolbar [data-command="jupyter-sched:run-notebook"]');
  await expect(button).toBeVisible({ timeout: 60000 });
  await button.click();
  const panel = page.locator('#jupyter-sched-panel');
  await expect(panel).toBeVisible();
  await expect(panel.locator('h2')).toHaveText('GPUs');
  await expect(panel.locator('.jp-sched-stream')).toHaveText('live');
  await expect(panel.locator('.jp-sched-submit-path')).toHaveValue(name);
  await expect(panel.locator('.jp-sched-section-submit [role="status"]')).toContainText('Would start now on gpu-node-a');
  await expect(panel.locator('.jp-sched-section-inventory [role="gridcell"]')).toHaveCount(4);
  expect(errors.filter(e => e.includes('jupyter-sched') || e.includes('ISchedModel'))).toEqual([]);
  await request.delete(`api/contents/${name}`);
});
