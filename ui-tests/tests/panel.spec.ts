/**
 * The GPUs panel against a real JupyterLab + jupyter_sched server (admin = the server owner):
 * simulated inventory with keyboard navigation, submit → queue → running → finished live, the log
 * viewer (tqdm redraws, ANSI colours) restored after a reload, cancel with confirmation, the
 * over-quota refusal, the admin quota and idle-policy editors with the audit trail, "Run on GPUs"
 * from the file browser and the notebook toolbar, the idle-lease notification, the status-bar
 * item, context menus and the palette, and the sidebar state kept across a reload.
 */
import { expect, test } from '@jupyterlab/galata';

import { activateSidebarTab, api, cancelAll, collapse, myRow, only, openPanel, section, submitForm, title, upload } from './helpers';

// The job holds its GPU until the test has seen it running and uploads ui_steps.go (at most 60 s):
// a job that ended on its own after a few seconds could finish between two updates of a slow page,
// and the test then never saw it "running" (a CI flake on a loaded machine).
const STEPS_SCRIPT = [
  'import os, sys, time',
  'for i in range(4):',
  '    print(f"ui-step {i}", flush=True)',
  '    time.sleep(0.2)',
  'go = {os.path.join(d, "ui_steps.go") for d in (os.getcwd(), os.path.dirname(os.path.abspath(__file__)))}',
  'deadline = time.time() + 60',
  'while not any(os.path.exists(p) for p in go) and time.time() < deadline:',
  '    time.sleep(0.1)',
  'for p in (10, 50, 100):',
  '    sys.stdout.write(f"\\rprogress {p:3d}%"); sys.stdout.flush(); time.sleep(0.2)',
  'print()',
  'print("\\x1b[32mui-done\\x1b[0m " + " ".join(sys.argv[1:]), flush=True)',
  ''
].join('\n');
const SLEEP_SCRIPT = ['import time', 'print("sleeping", flush=True)', 'time.sleep(120)', ''].join('\n');

test.afterEach(async ({ request }) => {
  await cancelAll(request);
});

test('the inventory shows the simulated GPUs with full model names; the grid is one tab stop with arrow keys', async ({ page }) => {
  const panel = await openPanel(page);
  const inventory = await section(panel, 'inventory');
  const tiles = inventory.getByRole('gridcell');
  await expect(tiles).toHaveCount(4);
  await expect(inventory.locator('.jp-sched-tag-sim')).toHaveCount(4);
  await expect(inventory.locator('.jp-sched-gpu-model').first()).toHaveText('Simulated GPU 80GB');
  await expect(inventory.locator('.jp-sched-banner-sim')).toContainText('Simulated GPUs');
  await expect(tiles.first()).toHaveAttribute('aria-label', /^GPU 0 on gpu-node-a: Simulated GPU 80GB, 80 GiB, simulated; free(; |$)/);
  await expect(title(panel, 'inventory').locator('.jp-sched-badge')).toHaveText('4/4 free');
  await expect(inventory.locator('[role="gridcell"][tabindex="0"]')).toHaveCount(1);
  // keyboard: Tab reaches the grid once, arrows move inside it
  await title(panel, 'inventory').focus();
  await page.keyboard.press('Tab');
  await expect(tiles.nth(0)).toBeFocused();
  await page.keyboard.press('ArrowRight');
  await expect(tiles.nth(1)).toBeFocused();
  await page.keyboard.press('End');
  await expect(tiles.nth(3)).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(tiles.nth(3)).not.toBeFocused();
  await expect(inventory.locator('[role="gridcell"][tabindex="0"]')).toHaveAttribute('data-gpu-uuid', /-3$/);
});

test('a job submitted from the form runs live; its log shows tqdm redraws and colours, and comes back after a reload', async ({ page }) => {
  await page.contents.deleteFile('ui_steps.go');
  await upload(page, 'ui_steps.py', STEPS_SCRIPT);
  const panel = await openPanel(page);
  await submitForm(panel, { path: 'ui_steps.py', gpus: 1, name: 'ui-steps', args: '--tag "two words"' });
  await expect(panel.locator('.jp-sched-section-submit [role="status"]')).toContainText('Submitted ui-steps');

  const row = myRow(panel, 'ui-steps');
  await expect(row).toBeVisible();
  const jobId = await row.getAttribute('data-job-id');
  expect(jobId).toBeTruthy();
  await expect(row).toHaveAttribute('data-state', 'running', { timeout: 60000 });
  const queueRow = panel.locator(`.jp-sched-section-queue .jp-sched-job[data-job-id="${jobId}"]`);
  await expect(queueRow).toContainText('Running on gpu-node-a');
  await expect(panel.locator('.jp-sched-section-inventory .jp-sched-gpu.jp-sched-busy')).toHaveCount(1);

  await row.getByRole('button', { name: 'Open logs of ui-steps' }).click();
  const log = page.locator('.jp-sched-logviewer .jp-sched-log');
  await expect(log).toContainText('ui-step 3');
  await upload(page, 'ui_steps.go', '');
  await expect(row).toHaveAttribute('data-state', 'succeeded', { timeout: 30000 });
  await expect(page.locator('.jp-sched-logviewer')).toHaveAttribute('data-finished', 'true');
  // \r redraws one line: only the last state of the progress line is left
  await expect(log.locator('.jp-sched-log-line', { hasText: 'progress' })).toHaveText('progress 100%');
  // colours from ANSI escapes; the quoted argument arrived as one
  await expect(log.locator('.jp-sched-ansi-fg-2')).toHaveText('ui-done');
  await expect(log.locator('.jp-sched-log-line', { hasText: 'ui-done' })).toHaveText('ui-done --tag two words');
  await expect(queueRow).toHaveCount(0);
  await expect(page.locator('.Toastify__toast', { hasText: 'ui-steps succeeded' })).toBeVisible();

  // the log tab is restored after a reload, with the whole output
  await page.reload({ waitForIsReady: false });
  await page.waitForSelector('#jupyterlab-splash', { state: 'detached' });
  await expect(page.locator('.lm-TabBar-tab', { hasText: 'Logs: ui-steps' })).toBeVisible();
  await expect(page.locator('.jp-sched-logviewer .jp-sched-log')).toContainText('ui-step 3');
});

// newuser26 N7: a finished job's long log (~430 KB, above the viewer's 256 KiB) opens at its end, says so,
// and "Load earlier" reads the rest (it was read from byte 0 in 64 KiB requests, then silently cut).
const LONG_SCRIPT = ['for i in range(6000):', '    print(f"ui-long {i} " + "y" * 60)', ''].join('\n');

test('newuser26 N7 a long log opens at its end, says what it leaves out, and Load earlier reads it', async ({ page }) => {
  await upload(page, 'ui_long.py', LONG_SCRIPT);
  const panel = await openPanel(page);
  await submitForm(panel, { path: 'ui_long.py', gpus: 1, name: 'ui-long' });
  const row = myRow(panel, 'ui-long');
  await expect(row).toHaveAttribute('data-state', 'succeeded', { timeout: 60000 });
  await row.getByRole('button', { name: 'Open logs of ui-long' }).click();
  const viewer = page.locator('.jp-sched-logviewer');
  await expect(viewer).toHaveAttribute('data-finished', 'true');
  const log = viewer.locator('.jp-sched-log');
  await expect(log.locator('.jp-sched-log-line', { hasText: 'ui-long 5999 ' })).toHaveText(/^ui-long 5999 y+$/);
  await expect(log).not.toContainText('ui-long 0 ');
  const bar = viewer.locator('.jp-sched-log-earlier');
  // what is shown, exactly (newuser30 n7: "the first 50 MB of 50 MB" was rounding's)
  await expect(bar).toContainText(/^Showing the last \d+ lines \(2\d\d KB\) of 4\d\d KB — the earlier part is not shown\./);
  await bar.getByRole('button', { name: 'Load earlier' }).click();
  await expect(bar).toBeHidden();
  await expect(log.locator('.jp-sched-log-line').first()).toHaveText(/^ui-long 0 y+$/);
  await expect(log.locator('.jp-sched-log-line', { hasText: /^ui-long \d+ / })).toHaveCount(6000);
});

test('a running job is cancelled after confirming; the dialog names the job', async ({ page }) => {
  await upload(page, 'ui_sleep.py', SLEEP_SCRIPT);
  const panel = await openPanel(page);
  await submitForm(panel, { path: 'ui_sleep.py', gpus: 1, name: 'ui-sleep' });
  const row = myRow(panel, 'ui-sleep');
  await expect(row).toHaveAttribute('data-state', 'running');
  await row.getByRole('button', { name: 'Cancel job ui-sleep' }).click();
  const dialog = page.locator('.jp-Dialog');
  await expect(dialog).toContainText('Cancel job ui-sleep?');
  await dialog.getByRole('button', { name: 'Cancel job' }).click();
  await expect(row).toHaveAttribute('data-state', 'cancelled', { timeout: 30000 });
  await expect(row.getByRole('button', { name: 'Resubmit ui-sleep' })).toBeVisible();
});

test('newuser17 N21 a cancel from the panel settles My work and Quota with Inventory at once', async ({ page }) => {
  await upload(page, 'ui_sleep.py', SLEEP_SCRIPT);
  const panel = await openPanel(page);
  await section(panel, 'quota');
  await submitForm(panel, { path: 'ui_sleep.py', gpus: 1, name: 'ui-pcancel' });
  const row = myRow(panel, 'ui-pcancel');
  await expect(row).toHaveAttribute('data-state', 'running', { timeout: 60000 });
  const inUse = title(panel, 'quota').locator('.jp-sched-badge');
  await expect(inUse).toHaveText('1 in use');
  await row.getByRole('button', { name: 'Cancel job ui-pcancel' }).click();
  await page.locator('.jp-Dialog').getByRole('button', { name: 'Cancel job' }).click();
  await expect(row).toHaveAttribute('data-state', 'cancelled', { timeout: 30000 });
  // the job-ended event updates the item and `me` together: well inside the panel's 10 s refresh
  // interval (newuser17 saw "Stopping … · cancelled by root" and "1 in use" beside "4/4 free" 4.5 s on)
  await expect(row.locator('.jp-sched-state')).toHaveText('Cancelled', { timeout: 5000 });
  await expect(row).not.toContainText('stopping (', { timeout: 5000 });
  await expect(inUse).toHaveText('0 in use', { timeout: 5000 });
  await expect(title(panel, 'inventory').locator('.jp-sched-badge')).toHaveText('4/4 free');
  // the Quota section says the server's sentence (newuser17 N17), which follows what is held too
  await expect(panel.locator('.jp-sched-section-quota .jp-sched-quota-text')).toContainText('0 GPUs in use by the team', { timeout: 5000 });
});

test('an over-quota request: the dry run and the submission are refused with the numbers and the fix; nothing is queued', async ({ page, request }) => {
  await upload(page, 'ui_big.py', SLEEP_SCRIPT);
  const panel = await openPanel(page);
  const form = await only(panel, 'submit');
  await form.locator('.jp-sched-submit-path').fill('ui_big.py');
  await form.locator('.jp-sched-submit-gpus').fill('3');
  await form.locator('.jp-sched-dryrun-button').click();
  const feedback = form.getByRole('status');
  // the server's sentence (numbers and what to do) under the form's label, as an error: it can never run as asked
  const refusal = /^GPUs: 3 GPUs can never fit the limit of team team-ui: 2 GPUs \(guaranteed 2 \+ borrowing limit 0\) — [Aa]sk for at most 2 GPUs/;
  await expect(feedback).toHaveText(refusal);
  await expect(feedback).toHaveClass(/jp-sched-feedback-error/);
  await form.locator('.jp-sched-submit-button').click();
  await expect(feedback).toHaveText(refusal);
  expect((await api(request, 'GET', 'queue')).filter((j: { name: string }) => j.name === 'ui_big')).toEqual([]);
  expect((await api(request, 'GET', 'jobs')).filter((j: { name: string }) => j.name === 'ui_big')).toEqual([]);
  const queue = await only(panel, 'queue');
  await expect(queue.locator('.jp-sched-job')).toHaveCount(0);
  await expect(title(panel, 'queue').locator('.jp-sched-badge')).toHaveText('0 pending · 0 running');
});

test('admin: the quota editor and the idle-policy editor save through the API, with validation and an audit record', async ({ page, request }) => {
  const panel = await openPanel(page);
  const admin = await only(panel, 'admin');
  await expect(admin.locator('.jp-sched-quota-row')).toHaveCount(1);
  await expect(admin.getByLabel('Team', { exact: true })).toHaveValue('team-ui');
  const guaranteed = admin.getByLabel('Guaranteed', { exact: true });
  await expect(guaranteed).toHaveValue('2');
  const policyBefore = (await api(request, 'GET', 'idle-policy')).default;
  try {
    // the audit log: how many quota changes are recorded before this one
    await admin.locator('.jp-sched-audit-search').fill('quotas_changed');
    await expect(admin.locator('.jp-sched-audit [role="status"]')).toHaveText(/matching record|is empty/);
    const before = await admin.locator('.jp-sched-audit-record').count();
    // a value the server rejects: its message (field + hint) is shown, nothing changes
    await guaranteed.fill('-1');
    await admin.locator('.jp-sched-quota-save').click();
    // in the form's words: its row and column label, no JSON path (new user 18, N18)
    await expect(admin.getByRole('status').first()).toContainText(/^Not saved: Row 1 \(team [^)]*\): Guaranteed (must be )?(>= 0|greater than or equal to 0|at least 0)/);
    await expect(admin.getByRole('status').first()).not.toContainText('quotas[0]');
    expect((await api(request, 'GET', 'quotas')).quotas[0].guaranteed).toBe(2);
    await guaranteed.fill('3');
    await admin.locator('.jp-sched-quota-save').click();
    await expect(admin.getByRole('status').first()).toHaveText('Saved 1 quota line.');
    expect((await api(request, 'GET', 'quotas')).quotas[0].guaranteed).toBe(3);
    const quota = await only(panel, 'quota');
    await expect(quota.locator('.jp-sched-quota').first()).toContainText('3 guaranteed');
    await only(panel, 'admin');
    // the audit log now has exactly one more, newest first, found by its action
    await admin.getByRole('button', { name: 'Reload' }).last().click();
    await expect(admin.locator('.jp-sched-audit-record')).toHaveCount(before + 1);
    await expect(admin.locator('.jp-sched-audit-record').first().locator('strong')).toHaveText('quotas_changed');
    await admin.locator('.jp-sched-audit-search').fill('"guaranteed":3');
    await expect(admin.locator('.jp-sched-audit-record')).toHaveCount(1);

    // idle policy: PUT idle-policy from the form
    const threshold = admin.getByLabel('Idle below (%)');
    await expect(threshold).toHaveValue(String(policyBefore.threshold_pct));
    await threshold.fill('7');
    await admin.locator('.jp-sched-idle-save').click();
    await expect(admin.locator('.jp-sched-idle [role="status"]')).toHaveText('Saved 1 change; the server applies it at once.');
    expect((await api(request, 'GET', 'idle-policy')).default.threshold_pct).toBe(7);
  } finally {
    await api(request, 'PUT', 'quotas', { quotas: [{ team: 'team-ui', gpu_model: '*', guaranteed: 2, borrowing_limit: 0 }] });
    await api(request, 'PUT', 'idle-policy', { default: { threshold_pct: policyBefore.threshold_pct } });
  }
});

test('"Run on GPUs" from the file browser menu and the notebook toolbar (declared in settings) fills the Submit form', async ({ page, tmpPath }) => {
  await upload(page, `${tmpPath}/menu_job.py`, STEPS_SCRIPT);
  const panel = await openPanel(page);
  await activateSidebarTab(page, 'filebrowser');
  await page.filebrowser.refresh();
  await page.locator('.jp-DirListing-item', { hasText: 'menu_job.py' }).click({ button: 'right' });
  await page.locator('.lm-Menu-item', { hasText: 'Run on GPUs…' }).click();
  await expect(panel).toBeVisible();
  const path = panel.locator('.jp-sched-submit-path');
  await expect(path).toHaveValue(`${tmpPath}/menu_job.py`);
  await expect(panel.locator('.jp-sched-section-submit [role="status"]')).toContainText('Would start now on gpu-node-a');

  await page.notebook.createNew('gpu_notebook.ipynb');
  const button = page.locator('.jp-NotebookPanel-toolbar [data-command="jupyter-sched:run-notebook"]');
  await expect(button).toBeVisible();
  await expect(button).toHaveText('Run on GPUs'); // the README's name, beside the icon (newuser38 n15)
  await button.click();
  await expect(path).toHaveValue(`${tmpPath}/gpu_notebook.ipynb`);
  await expect(panel.locator('.jp-sched-submit-gpus')).toBeFocused();
});

test('an idle lease raises a warning with a keep-alive action; the status bar shows the kernel\u2019s GPU', async ({ page, request, tmpPath }) => {
  // a notebook with a kernelspec (no kernel picker), opened from the file browser
  const notebook = { cells: [], metadata: { kernelspec: { name: 'python3', display_name: 'Python 3 (ipykernel)', language: 'python' } }, nbformat: 4, nbformat_minor: 5 };
  expect((await request.put(`api/contents/${tmpPath}/idle_lease.ipynb`, { data: { type: 'notebook', format: 'json', content: notebook } })).ok()).toBe(true);
  expect(await page.notebook.openByPath(`${tmpPath}/idle_lease.ipynb`)).toBe(true);
  const panel = await openPanel(page);
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
  const status = page.locator('.jp-sched-statusbar-button');
  await expect(status).toHaveText('No GPU');
  await activateSidebarTab(page, 'jupyter-sched-panel');
  const lease = await api(request, 'POST', 'leases', { gpus: 1, name: 'ui-idle-lease', kernel_id: kernelId });
  expect(lease.kind).toBe('lease');
  await expect(myRow(panel, 'ui-idle-lease')).toHaveAttribute('data-state', 'running');
  await expect(status).toHaveText('GPU: 1 GPU');
  await expect(myRow(panel, 'ui-idle-lease').getByRole('button', { name: 'Release lease ui-idle-lease' })).toBeVisible();
  await expect(myRow(panel, 'ui-idle-lease').getByRole('button', { name: 'Keep lease ui-idle-lease alive' })).toBeVisible();
  const toast = page.locator('.Toastify__toast', { hasText: /Idle GPUs/ });
  await expect(toast.first()).toBeVisible({ timeout: 60000 });
  await expect(toast.first()).toContainText('ui-idle-lease is idle; its GPUs will be released');
  await toast.first().getByRole('button', { name: 'Keep alive' }).click();
  await expect(page.locator('.Toastify__toast', { hasText: 'Lease kept alive' })).toBeVisible();
});

test('context menus and the palette carry the commands; collapsed sections and "Mine only" survive a reload', async ({ page }) => {
  await upload(page, 'ui_menu.py', SLEEP_SCRIPT);
  const panel = await openPanel(page);
  await submitForm(panel, { path: 'ui_menu.py', gpus: 1, name: 'ui-menu' });
  const row = myRow(panel, 'ui-menu');
  await expect(row).toHaveAttribute('data-state', 'running');
  await row.click({ button: 'right' });
  const menu = page.locator('.lm-Menu');
  await expect(menu.locator('.lm-Menu-item', { hasText: 'Open Job Logs' })).toBeVisible();
  await expect(menu.locator('.lm-Menu-item', { hasText: 'Cancel Job' })).toBeVisible();
  await page.keyboard.press('Escape');

  await page.keyboard.press('Control+Shift+C');
  const palette = page.locator('#command-palette');
  await palette.locator('input').fill('GPUs');
  await expect(palette.locator('.lm-CommandPalette-item', { hasText: 'Show GPUs Panel' })).toBeVisible();
  await expect(palette.locator('.lm-CommandPalette-item', { hasText: 'Refresh GPUs Panel' })).toBeVisible();
  await expect(palette.locator('.lm-CommandPalette-item', { hasText: 'Run This Notebook on GPUs' })).toBeVisible();
  await page.keyboard.press('Escape');

  await collapse(panel, 'inventory');
  await section(panel, 'quota');
  const mineOnly = panel.getByRole('button', { name: 'Mine only' });
  await mineOnly.click();
  await expect(mineOnly).toHaveAttribute('aria-pressed', 'true');
  await page.waitForTimeout(500); // the state database saves in the background
  await page.reload({ waitForIsReady: false });
  await page.waitForSelector('#jupyterlab-splash', { state: 'detached' });
  const again = await openPanel(page);
  await expect(title(again, 'inventory')).toHaveAttribute('aria-expanded', 'false');
  await expect(title(again, 'quota')).toHaveAttribute('aria-expanded', 'true');
  await expect(again.getByRole('button', { name: 'Mine only' })).toHaveAttribute('aria-pressed', 'true');
  await again.getByRole('button', { name: 'Mine only' }).click();
  await section(again, 'inventory');
});
