import { expect, test } from '@jupyterlab/galata';
import { PANEL_ID } from './helpers';
test.use({ autoGoto: false });
test('scratch idle toast', async ({ page }) => {
  let served = 0;
  await page.route('**/api/sched/events', route => {
    served++;
    return route.fulfill({ status: 200, contentType: 'text/event-stream', body: ': hi\n\nid: 1\nevent: idle_warning\ndata: {"job_id": "l-123", "kind": "lease", "stage": "warning", "reason": "GPU utilization 0.0% < 5% for 2 s (window 2 s)"}\n\n' });
  });
  await page.goto();
  await page.sidebar.openTab(PANEL_ID);
  const toast = page.locator('.Toastify__toast', { hasText: /Idle GPUs/ });
  await expect(toast.first()).toBeVisible();
  console.log('TOAST:', await toast.first().innerText(), 'served', served);
  await expect(toast.first().getByRole('button', { name: 'Keep alive' })).toBeVisible();
  await page.waitForTimeout(3000);
  console.log('toasts', await toast.count(), 'served', served);
});
