/**
 * What the panel looks like, compared with committed baselines in the light and dark themes
 * (`toHaveScreenshot`; times, live bars and sparklines masked), and an axe-core scan (WCAG 2.1
 * A + AA, colour contrast included) of the open panel with every section expanded in the light,
 * dark and high-contrast themes.
 */
import { expect, test } from '@jupyterlab/galata';

import { api, axe, cancelAll, myRow, only, openPanel, section, shoot, submitForm, upload } from './helpers';

const LOG_SCRIPT = [
  'import sys',
  'print("epoch 1/2", flush=True)',
  'for p in (25, 50, 100):',
  '    sys.stdout.write(f"\\rtrain {p:3d}%|" + "#" * (p // 10)); sys.stdout.flush()',
  'print()',
  'print("\\x1b[1;31mwarning:\\x1b[0m learning rate is high", flush=True)',
  'print("\\x1b[32mdone\\x1b[0m", flush=True)',
  ''
].join('\n');

test.afterEach(async ({ request }) => {
  await cancelAll(request);
});

test('the sections look as committed, in light and dark', async ({ page, request }) => {
  const panel = await openPanel(page);
  await shoot(page, panel, 'panel');
  await shoot(page, await only(panel, 'inventory'), 'inventory');

  // a lease holding one GPU: My work with its actions, the inventory tile as busy
  const mywork = await only(panel, 'mywork');
  const lease = await api(request, 'POST', 'leases', { gpus: 1, name: 'ui-visual-lease' });
  await expect(myRow(panel, 'ui-visual-lease')).toHaveAttribute('data-state', 'running');
  await shoot(page, mywork, 'mywork');
  await shoot(page, await only(panel, 'queue'), 'queue');
  await api(request, 'DELETE', `leases/${lease.id}`);
  await only(panel, 'mywork');
  await expect(myRow(panel, 'ui-visual-lease')).toHaveAttribute('data-state', 'cancelled');

  const quota = await only(panel, 'quota');
  // the usage line says its period's start ("since Nov 28 10:19 UTC"): a clock, masked as the others are
  await shoot(page, quota, 'quota', [quota.locator('.jp-sched-me')]);

  const submit = await only(panel, 'submit');
  await upload(page, 'visual_big.py', 'print(1)\n'); // Check fit refuses a missing file first (new user 5, #10)
  await submit.locator('.jp-sched-submit-path').fill('visual_big.py');
  await submit.locator('.jp-sched-submit-gpus').fill('3');
  await submit.locator('.jp-sched-dryrun-button').click();
  await expect(submit.getByRole('status')).toContainText('can never fit');
  await shoot(page, submit, 'submit-refused');

  const admin = await only(panel, 'admin');
  await expect(admin.locator('.jp-sched-quota-row')).toHaveCount(1);
  await expect(admin.getByLabel('Idle below (%)')).toBeVisible();
  await shoot(page, admin, 'admin');
});

test('the log viewer shows redrawn progress and colours, as committed', async ({ page }) => {
  await upload(page, 'ui_visual_log.py', LOG_SCRIPT);
  const panel = await openPanel(page);
  await only(panel, 'submit');
  await submitForm(panel, { path: 'ui_visual_log.py', name: 'ui-visual-log' });
  await only(panel, 'mywork');
  const row = myRow(panel, 'ui-visual-log');
  await expect(row).toHaveAttribute('data-state', 'succeeded', { timeout: 30000 });
  await row.getByRole('button', { name: 'Open logs of ui-visual-log' }).click();
  const viewer = page.locator('.jp-sched-logviewer');
  await expect(viewer).toHaveAttribute('data-finished', 'true');
  await expect(viewer.locator('.jp-sched-log-line', { hasText: 'train' })).toHaveText('train 100%|##########');
  await shoot(page, viewer, 'logviewer');
  expect(await axe(page, '.jp-sched-logviewer')).toEqual([]);
});

test('axe-core finds no WCAG A/AA violation in the open panel, in the light, dark and high-contrast themes', async ({ page, request }) => {
  test.setTimeout(300000); // 3 themes × 6 sections, each scanned page by page
  const panel = await openPanel(page);
  const lease = await api(request, 'POST', 'leases', { gpus: 1, name: 'ui-axe-lease' });
  await only(panel, 'mywork');
  await expect(myRow(panel, 'ui-axe-lease')).toHaveAttribute('data-state', 'running');
  const submit = await only(panel, 'submit');
  await upload(page, 'x.py', 'print(1)\n');
  await submit.locator('.jp-sched-submit-path').fill('x.py');
  await submit.locator('.jp-sched-submit-gpus').fill('3');
  await submit.locator('.jp-sched-dryrun-button').click();
  await expect(submit.getByRole('status')).toContainText('can never fit');
  const admin = await only(panel, 'admin');
  await expect(admin.locator('.jp-sched-quota-row')).toHaveCount(1);
  await expect(admin.getByLabel('Idle below (%)')).toBeVisible();
  // axe checks contrast only where text is on screen: scan each section with the panel's height
  const themes: [string, () => Promise<void>][] = [
    ['light', () => page.theme.setLightTheme()],
    ['dark', () => page.theme.setDarkTheme()],
    ['high contrast', () => page.theme.setTheme('JupyterLab Dark High Contrast')]
  ];
  const found: string[] = [];
  for (const [theme, apply] of themes) {
    await apply();
    for (const id of ['inventory', 'queue', 'mywork', 'quota', 'submit', 'admin']) {
      await only(panel, id);
      const body = panel.locator(`.jp-sched-section-${id} .jp-sched-section-body`);
      // and page by page through a section taller than the panel
      for (let page_ = 0; page_ < 6; page_++) {
        found.push(...(await axe(page, '#jupyter-sched-panel')).map(v => `${theme} / ${id}: ${v}`));
        const scrolled = await body.evaluate(el => {
          const before = el.scrollTop;
          el.scrollTop += el.clientHeight;
          return el.scrollTop > before;
        });
        if (!scrolled) {
          break;
        }
      }
    }
  }
  await page.theme.setLightTheme();
  await api(request, 'DELETE', `leases/${lease.id}`);
  expect(found).toEqual([]);
});
