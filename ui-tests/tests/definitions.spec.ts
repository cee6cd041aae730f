/**
 * "Scheduled notebooks" (issue 19) against a real JupyterLab + jupyter_sched server: create a
 * definition from the view (schedule preview in words), run it, see its runs, read the failing
 * cell in a failed run's reason and open that run's executed notebook in JupyterLab.
 * The view is also a section of the GPUs sidebar (ISchedSections) and passes axe's WCAG 2.1 AA
 * rules (colour contrast included) in light and dark. Screenshots in light and dark are compared
 * with tests/definitions.spec.ts-snapshots/.
 */
import { expect, test } from '@jupyterlab/galata';
import type { APIRequestContext, Locator } from '@playwright/test';

import { api, axe, cancelAll, only, openPanel, shoot, upload } from './helpers';

const VIEW = '#jupyter-sched-definitions';

/** A notebook with a `parameters` cell whose third cell refuses an unknown region. */
function regionNotebook(): string {
  const cell = (source: string, tags: string[] = []) => ({ cell_type: 'code', execution_count: null, metadata: { tags }, outputs: [], source });
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
    cells: [
      cell("region = 'us'", ['parameters']),
      cell('KNOWN = {"us", "eu"}'),
      cell("if region not in KNOWN:\n    raise ValueError(f'unknown region {region!r}')\nprint('report for', region)")
    ].map((c, i) => ({ ...c, id: `c${i}` }))
  });
}

async function openView(page: import('@jupyterlab/galata').IJupyterLabPageFixture): Promise<Locator> {
  await page.evaluate(async () => {
    await (window as any).jupyterapp.commands.execute('jupyter-sched:definitions');
  });
  const view = page.locator(VIEW);
  await expect(view.locator('.jp-sched-defs-form')).toBeVisible();
  return view;
}

test.afterEach(async ({ request }) => {
  for (const d of await api(request, 'GET', 'definitions')) {
    await api(request, 'DELETE', `definitions/${d.id}`);
  }
  await cancelAll(request);
});

/** The server's sessions of executed copies (`… (executed j-….ipynb`): a kernel started for one. */
async function copySessions(request: APIRequestContext): Promise<string[]> {
  const sessions = (await (await request.get('api/sessions')).json()) as { path: string }[];
  return sessions.map(s => s.path).filter(path => path.includes(' (executed j-'));
}

test('a definition created from the panel runs, and its failed run names the cell and opens in JupyterLab', async ({ page, request }) => {
  await upload(page, 'regions.ipynb', regionNotebook());
  const view = await openView(page);

  // run A (s38): the "Free GPUs only" box stood alone, centred, on a line above its words — it sits on their line, before them
  const box = await view.locator('.jp-sched-defs-nopreempt').boundingBox();
  const words = await view.locator('.jp-sched-defs-field-nopreempt .jp-sched-defs-label').boundingBox();
  expect(box && words && box.y < words.y + words.height && words.y < box.y + box.height && box.x + box.width <= words.x).toBe(true);

  await view.locator('.jp-sched-defs-name').fill('regions');
  await view.locator('.jp-sched-defs-path').fill('regions.ipynb');
  await view.locator('.jp-sched-defs-cron').fill('0 7 * * 1-5');
  await view.locator('.jp-sched-defs-tz').fill('Europe/Berlin');
  await view.locator('.jp-sched-defs-gpus').fill('0');
  await view.locator('.jp-sched-defs-params').fill('region=mars');
  await expect(view.locator('.jp-sched-defs-preview')).toContainText('At 07:00 on Monday through Friday; next');
  await view.locator('.jp-sched-defs-create').click();

  const row = view.locator('.jp-sched-def').filter({ has: page.locator('.jp-sched-def-name', { hasText: /^regions$/ }) });
  await expect(row).toBeVisible();
  await expect(row.locator('.jp-sched-def-schedule')).toHaveText('At 07:00 on Monday through Friday (Europe/Berlin)');
  await expect(row.locator('.jp-sched-def-next')).toContainText('next ');

  await row.locator('.jp-sched-def-run').click();
  await row.locator('.jp-sched-def-expand').click();
  const run = row.locator('.jp-sched-run').first();
  await expect(run.locator('.jp-sched-run-trigger')).toHaveText('run now');
  await expect(run.locator('.jp-sched-run-state')).toHaveText('failed', { timeout: 90000 });
  await expect(run.locator('.jp-sched-run-reason')).toHaveText(
    "cell 3 (In [4] in the executed notebook) raised ValueError: unknown region 'mars' (cell starts: if region not in KNOWN:)"
  );
  await expect(run.locator('.jp-sched-run-params')).toHaveText('{"region":"mars"}');
  await shoot(page, view, 'definitions');

  await run.locator('.jp-sched-run-open').click();
  const notebook = page.locator('.jp-NotebookPanel').filter({ has: page.locator('.jp-OutputArea-output') }).last();
  await expect(page.locator('.lm-TabBar-tab.jp-mod-current')).toContainText('regions (executed j-'); // the run's own copy (newuser40 N1)
  await expect(notebook.locator('.jp-OutputArea-output').last()).toContainText("ValueError: unknown region 'mars'");
  await expect(notebook.locator('.jp-Cell').nth(1)).toContainText("region = 'mars'"); // the injected parameters

  // newuser41 n8: opened with no kernel, and given none at the next page load either (the layout restore reopened it
  // with the notebook's kernel); the tab's restore entry carries docmanager:open's "no kernel" once it is saved
  const kernel = page.locator('.jp-NotebookPanel:not(.lm-mod-hidden) [data-jp-item-name="kernelName"]');
  await expect(kernel).toHaveText('No Kernel');
  expect(await copySessions(request)).toEqual([]);
  await expect.poll(() => page.evaluate(async () => {
    const workspace = await (window as any).jupyterapp.serviceManager.workspaces.fetch('default');
    return Object.entries(workspace.data as Record<string, any>)
      .filter(([key]) => key.startsWith('notebook:') && key.includes(' (executed j-'))
      .map(([, value]) => value?.data?.kernelPreference ?? null);
  })).toEqual([{ shouldStart: false }]);
  await page.reload({ waitForIsReady: false });
  await page.waitForSelector('#jupyterlab-splash', { state: 'detached' });
  await expect(page.locator('.lm-TabBar-tab', { hasText: 'regions (executed j-' })).toBeVisible();
  await expect(kernel).toHaveText('No Kernel');
  expect(await copySessions(request)).toEqual([]);
});

test('edit, pause, resume and delete from the view', async ({ page, request }) => {
  await upload(page, 'nightly.ipynb', regionNotebook());
  await api(request, 'POST', 'definitions', { name: 'nightly', notebook: 'nightly.ipynb', schedule: '30 2 * * *', timezone: 'UTC', gpus: 0 });
  const view = await openView(page);
  const row = view.locator('.jp-sched-def').filter({ has: page.locator('.jp-sched-def-name', { hasText: /^nightly$/ }) });
  await expect(row.locator('.jp-sched-def-schedule')).toHaveText('At 02:30 every day (UTC)');
  await row.locator('.jp-sched-def-edit').click();
  await expect(view.locator('.jp-sched-defs-heading')).toHaveText('Edit "nightly"');
  await expect(view.locator('.jp-sched-defs-cron')).toHaveValue('30 2 * * *');
  await view.locator('.jp-sched-defs-cron').fill('0 6 * * *');
  await view.locator('.jp-sched-defs-create').click();
  await expect(row.locator('.jp-sched-def-schedule')).toHaveText('At 06:00 every day (UTC)');
  await expect(view.locator('.jp-sched-defs-heading')).toHaveText('New scheduled notebook');
  await row.locator('.jp-sched-def-toggle').click();
  await expect(row.locator('.jp-sched-def-next')).toHaveText('paused');
  await row.locator('.jp-sched-def-toggle').click();
  await expect(row.locator('.jp-sched-def-next')).toContainText('next ');
  await row.locator('.jp-sched-def-delete').click();
  // it asks first, listing the runs still waiting to start (none here) — new user 8 N3
  const dialog = page.locator('.jp-Dialog');
  await expect(dialog.locator('.jp-Dialog-header')).toHaveText('Delete "nightly"?');
  await expect(dialog.locator('.jp-sched-def-delete-question')).toContainText('None of its runs is waiting to start.');
  await dialog.locator('.jp-Dialog-button.jp-mod-warn').click();
  await expect(row).toHaveCount(0);
  await expect(view.locator('.jp-sched-defs-notice')).toHaveText('Deleted "nightly": it fires no more; its runs stay in My work');
});

test('the GPUs sidebar shows Scheduled notebooks as a section, AA in light and dark', async ({ page, request }) => {
  await upload(page, 'weekly.ipynb', regionNotebook());
  const d = await api(request, 'POST', 'definitions', { name: 'weekly', notebook: 'weekly.ipynb', schedule: '0 9 * * 1', timezone: 'UTC', gpus: 0 });
  await api(request, 'POST', `definitions/${d.id}/runs`, { parameters: { region: 'mars' } });
  const panel = await openPanel(page);
  await expect(panel.locator('.lm-AccordionPanel-title[data-section="definitions"]')).toContainText('Scheduled notebooks');
  // the section alone in the sidebar (as a user collapses the others to work in it)
  const defs = await only(panel, 'definitions');
  const row = defs.locator('.jp-sched-def').filter({ has: page.locator('.jp-sched-def-name', { hasText: /^weekly$/ }) });
  await expect(row.locator('.jp-sched-def-schedule')).toHaveText('At 09:00 on Monday (UTC)');
  await row.locator('.jp-sched-def-expand').click();
  await expect(row.locator('.jp-sched-run-state').first()).toHaveText('failed', { timeout: 90000 });
  await expect(row.locator('.jp-sched-def-last')).toHaveText('last: failed');
  const found: string[] = [];
  for (const theme of ['light', 'dark']) {
    if (theme === 'dark') {
      await page.theme.setDarkTheme();
    }
    found.push(...(await axe(page, '.jp-sched-section-definitions')).map(v => `${theme}: ${v}`));
  }
  await page.theme.setLightTheme();
  expect(found).toEqual([]);
});
