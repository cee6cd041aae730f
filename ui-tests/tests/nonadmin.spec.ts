/**
 * A non-admin user (second server: scheduler identities come from jupyter_server's anonymous
 * per-browser user, who is not in admin_users) sees the panel without the Admin section, and the
 * admin-only endpoints refuse them.
 */
import { expect, test } from '@jupyterlab/galata';

import { openPanel, shoot } from './helpers';

test('a non-admin sees Inventory, Queue, My work, Quota and Submit but no Admin section', async ({ page }) => {
  const panel = await openPanel(page);
  for (const id of ['inventory', 'queue', 'mywork', 'quota', 'submit']) {
    await expect(panel.locator(`.jp-sched-section-${id}`)).toHaveCount(1);
  }
  await expect(panel.locator('.jp-sched-section-admin')).toHaveCount(0);
  await expect(panel.locator('.jp-sched-quota-editor')).toHaveCount(0);
  const audit = await page.request.get('api/sched/audit');
  expect(audit.status()).toBe(403);
  await shoot(page, panel, 'panel-nonadmin');
});
