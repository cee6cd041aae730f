/**
 * The GPUs panel against a real JupyterLab + jupyter_sched server (admin = the server owner):
 * simulated inventory, submit → queue → running → finished live, logs, cancel, over-quota
 * reason, the admin quota editor and the idle-lease notification. Screenshots of every section
 * in light and dark go to ui-tests/screenshots/.
 */
import { expect, test } from '@jupyterlab/galata';

import { api, cancelAll, myRow, openPanel, section, shoot, submitForm, upload } from './helpers';

const STEPS_SCRIPT = ['import time', 'for i in range(4):', '    print(f"ui-step {i}", flush=True)', '    time.sleep(1)', 'print("ui-done", flush=True)', ''].join('\n');
const SLEEP_SCRIPT = ['import time', 'print("sleeping", flush=True)', 'time.sleep(120)', ''].join('\n');

test.afterEach(async ({ request }) => {
  await cancelAll(request);
});

test('the panel opens and shows the simulated GPUs, each marked simulated', async ({ page }) => {
  const panel = await openPanel(page);
  const inventory = panel.locator('.jp-sched-section-inventory');
  await expect(inventory.locator('.jp-sched-gpu')).toHaveCount(4);
  await expect(inventory.locator('.jp-sched-gpu.jp-sched-simulated')).toHaveCount(4);
  await expect(inventory.locator('.jp-sched-tag-sim')).toHaveCount(4);
  await expect(inventory.locator('.jp-sched-banner-sim')).toContainText('Simulated GPUs');
  await expect(inventory.locator('.jp-sched-gpu').first()).toHaveAttribute('aria-label', /GPU 0 on .*Simulated GPU 80GB, 80 GiB, simulated; free/);
  // keyboard: the GPU tiles are reachable with Tab
  await inventory.locator('.jp-sched-gpu').first().focus();
  await expect(inventory.locator('.jp-sched-gpu').first()).toBeFocused();
  await shoot(page, inventory, 'inventory');
  await shoot(page, panel, 'panel');
});

test('a job submitted from the form shows in Queue and My work, runs and finishes live, and its log viewer shows the output', async ({ page }) => {
  await upload(page, 'ui_steps.py', STEPS_SCRIPT);
  const panel = await openPanel(page);
  await submitForm(panel, { path: 'ui_steps.py', gpus: 1, name: 'ui-steps' });
  await expect(panel.locator('.jp-sched-section-submit .jp-sched-feedback')).toContainText('Submitted ui-steps');

  const row = myRow(panel, 'ui-steps');
  await expect(row).toBeVisible();
  const jobId = await row.getAttribute('data-job-id');
  expect(jobId).toBeTruthy();
  // running, live: the event stream moves the row without a reload
  await expect(row).toHaveAttribute('data-state', 'running');
  const queueRow = panel.locator(`.jp-sched-section-queue .jp-sched-job[data-job-id="${jobId}"]`);
  await expect(queueRow).toBeVisible();
  await expect(queueRow).toContainText('running on');
  await expect(panel.locator('.jp-sched-section-inventory .jp-sched-gpu.jp-sched-busy')).toHaveCount(1);
  await shoot(page, panel.locator('.jp-sched-section-queue'), 'queue');

  // the log viewer follows the live output in the main area
  await row.getByRole('button', { name: /Open logs/ }).click();
  const log = page.locator('.jp-sched-logviewer .jp-sched-log');
  await expect(log).toContainText('ui-step 0');
  await expect(row).toHaveAttribute('data-state', 'succeeded', { timeout: 30000 });
  await expect(log).toContainText('ui-step 3');
  await expect(log).toContainText('ui-done');
  await expect(page.locator('.jp-sched-logviewer')).toHaveAttribute('data-finished', 'true');
  await expect(queueRow).toHaveCount(0);
  await shoot(page, page.locator('.jp-sched-logviewer'), 'logviewer');
  await shoot(page, panel.locator('.jp-sched-section-mywork'), 'mywork');
  // completion notification with an action
  await expect(page.locator('.Toastify__toast', { hasText: 'ui-steps succeeded' })).toBeVisible();
});

test('a running job can be cancelled after confirming', async ({ page }) => {
  await upload(page, 'ui_sleep.py', SLEEP_SCRIPT);
  const panel = await openPanel(page);
  await submitForm(panel, { path: 'ui_sleep.py', gpus: 1, name: 'ui-sleep' });
  const row = myRow(panel, 'ui-sleep');
  await expect(row).toHaveAttribute('data-state', 'running');
  await row.getByRole('button', { name: /Cancel ui-sleep/ }).click();
  const dialog = page.locator('.jp-Dialog');
  await expect(dialog).toContainText('Cancel job ui-sleep?');
  await dialog.getByRole('button', { name: 'Cancel job' }).click();
  await expect(row).toHaveAttribute('data-state', 'cancelled', { timeout: 30000 });
});

test('an over-quota submission shows the reason sentence with its numbers', async ({ page }) => {
  await upload(page, 'ui_big.py', SLEEP_SCRIPT);
  const panel = await openPanel(page);
  const form = await section(panel, 'submit');
  await form.locator('.jp-sched-submit-path').fill('ui_big.py');
  await form.locator('.jp-sched-submit-gpus').fill('3');
  // dry run first: the same sentence, before anything is queued
  await form.locator('.jp-sched-dryrun-button').click();
  const feedback = form.locator('.jp-sched-feedback');
  await expect(feedback).toContainText('team-ui has 2 of 2 GPUs free (0 in use), job needs 3.');
  await shoot(page, form, 'submit');
  await form.locator('.jp-sched-submit-button').click();
  // the server either refuses it (422 + reason) or queues it with the reason: the panel shows the sentence
  await expect(panel.getByText(/team-ui has 2 of 2 GPUs free \(0 in use\), job needs 3\./).first()).toBeVisible();
  const queue = await section(panel, 'queue');
  const big = queue.locator('.jp-sched-job', { hasText: 'job needs 3' });
  if (await big.count()) {
    await expect(big.first().locator('.jp-sched-reason')).toContainText(/#\d+ · team-ui has 2 of 2 GPUs free \(0 in use\), job needs 3\. · ETA/);
  }
  await shoot(page, await section(panel, 'quota'), 'quota');
});

test('the admin quota editor changes a quota and shows server validation messages', async ({ page, request }) => {
  const panel = await openPanel(page);
  const admin = await section(panel, 'admin');
  await expect(admin.locator('.jp-sched-quota-row')).toHaveCount(1);
  await expect(admin.locator('.jp-sched-quota-row input[name="team"]')).toHaveValue('team-ui');
  const guaranteed = admin.locator('.jp-sched-quota-row input[name="guaranteed"]').first();
  await expect(guaranteed).toHaveValue('2');
  try {
    // a value the server rejects: its message (field + hint) is shown, nothing changes
    await guaranteed.fill('-1');
    await admin.locator('.jp-sched-quota-save').click();
    await expect(admin.locator('.jp-sched-feedback').first()).toContainText(/Not saved: .*guaranteed.*>= 0/);
    expect((await api(request, 'GET', 'quotas')).quotas[0].guaranteed).toBe(2);
    // a valid change is saved and shows in the Quota section
    await guaranteed.fill('3');
    await admin.locator('.jp-sched-quota-save').click();
    await expect(admin.locator('.jp-sched-feedback').first()).toContainText('Saved 1 quota line.');
    expect((await api(request, 'GET', 'quotas')).quotas[0].guaranteed).toBe(3);
    const quota = await section(panel, 'quota');
    await expect(quota.locator('.jp-sched-quota').first()).toContainText('3 guaranteed');
    await expect(admin.locator('.jp-sched-idle')).toContainText('Idle below');
    await expect(admin.locator('.jp-sched-audit-record').first()).toBeVisible();
    await admin.locator('.jp-sched-audit-search').fill('quotas_changed');
    await expect(admin.locator('.jp-sched-audit-record').first()).toContainText('quotas_changed');
    await shoot(page, admin, 'admin');
  } finally {
    await api(request, 'PUT', 'quotas', { quotas: [{ team: 'team-ui', gpu_model: '*', guaranteed: 2, borrowing_limit: 0 }] });
  }
});

test('"Run on GPUs" from the file browser menu and the notebook toolbar fills the Submit form', async ({ page, tmpPath }) => {
  await upload(page, `${tmpPath}/menu_job.py`, STEPS_SCRIPT);
  const panel = await openPanel(page);
  await page.sidebar.openTab('filebrowser');
  await page.filebrowser.refresh();
  await page.locator('.jp-DirListing-item', { hasText: 'menu_job.py' }).click({ button: 'right' });
  await page.locator('.lm-Menu-item', { hasText: 'Run on GPUs…' }).click();
  await expect(panel).toBeVisible();
  const path = panel.locator('.jp-sched-submit-path');
  await expect(path).toHaveValue(`${tmpPath}/menu_job.py`);
  // the dry run answers at once: where it would start
  await expect(panel.locator('.jp-sched-section-submit .jp-sched-feedback')).toContainText('Would start now on');

  await page.notebook.createNew('gpu_notebook.ipynb');
  await page.locator('.jp-NotebookPanel-toolbar .jp-sched-run-on-gpus').click();
  await expect(path).toHaveValue(`${tmpPath}/gpu_notebook.ipynb`);
  await expect(panel.locator('.jp-sched-submit-gpus')).toBeFocused();
});

test('an idle lease raises a warning notification with a keep-alive action', async ({ page, request }) => {
  const panel = await openPanel(page);
  // a notebook whose kernel is connected and idle holds a lease (as %gpu in it would make it)
  await page.notebook.createNew('idle_lease.ipynb');
  let kernelId = '';
  await expect
    .poll(
      async () => {
        kernelId = await page.evaluate(() => (window as any).jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel?.id ?? '');
        return kernelId ? (await (await request.get(`api/kernels/${kernelId}`)).json()).execution_state : 'no kernel yet';
      },
      { timeout: 60000 }
    )
    .toBe('idle');
  await page.sidebar.openTab('jupyter-sched-panel');
  const lease = await api(request, 'POST', 'leases', { gpus: 1, name: 'ui-idle-lease', kernel_id: kernelId });
  expect(lease.kind).toBe('lease');
  await expect(myRow(panel, 'ui-idle-lease')).toHaveAttribute('data-state', 'running');
  // GPU < 5 % and the kernel idle for the 2 s window: the warning arrives as a notification
  const toast = page.locator('.Toastify__toast', { hasText: /Idle GPUs/ });
  await expect(toast.first()).toBeVisible({ timeout: 60000 });
  await expect(toast.first()).toContainText('ui-idle-lease is idle; its GPUs will be released');
  await expect(toast.first().getByRole('button', { name: 'Keep alive' })).toBeVisible();
  await shoot(page, page.locator('.Toastify__toast-container'), 'idle-notification');
  // keep alive: the server accepts it for this lease and the panel confirms
  await toast.first().getByRole('button', { name: 'Keep alive' }).click();
  await expect(page.locator('.Toastify__toast', { hasText: 'Lease kept alive' })).toBeVisible();
});
