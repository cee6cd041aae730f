/**
 * The GPU usage chart shows a gap, labelled, where telemetry was blank (issue 18, cases 009/026).
 *
 * Runs on the non-admin ("user") server, whose telemetry is dcgm-exporter text read from a file
 * (`telemetry_url = file://$SCHED_UI_STATE/metrics-user.prom`, jupyter_server_test_config.py): the
 * test writes valid readings, then DCGM's blank sentinel for a few seconds, then valid readings
 * again, while one of the user's jobs holds the GPU. The chart must break its line there and
 * shade the span with "blank: DCGM blank value (no data)". Screenshots in light and dark themes.
 *
 * The screenshots are saved as test artifacts (test-results/usagechart-{light,dark}.png), not
 * compared with baselines: the chart draws live samples taken once a second, so how many fall on
 * each side of the gap (and so the pixels) varies by one from run to run; the assertions above
 * the screenshots check what must hold (the gap, its label, the broken line).
 */
import { expect, test } from '@jupyterlab/galata';
import * as fs from 'fs';
import * as path from 'path';

import { api, cancelAll, openPanel, section } from './helpers';

const STATE = process.env.SCHED_UI_STATE ?? '';
const METRICS = path.join(STATE, 'metrics-user.prom');
const BLANK = '9223372036854775792'; // DCGM_INT64_BLANK: "no value"

/** dcgm-exporter text for the user server's static GPUs (GPU-static-b-0, GPU-static-b-1). */
function metrics(util: string): string {
  return ['GPU-static-b-0', 'GPU-static-b-1']
    .map((uuid, i) => {
      const labels = `gpu="${i}",UUID="${uuid}",Hostname="ui-b",modelName="NVIDIA A100-SXM4-80GB"`;
      return `DCGM_FI_DEV_GPU_UTIL{${labels}} ${util}\nDCGM_FI_DEV_FB_USED{${labels}} 2048\n`;
    })
    .join('');
}

function write(util: string): void {
  fs.writeFileSync(`${METRICS}.tmp`, metrics(util));
  fs.renameSync(`${METRICS}.tmp`, METRICS); // atomic: the collector never reads half a file
}

test.afterEach(async ({ request }) => {
  write('0');
  await cancelAll(request);
});

test('the usage chart of a running job shows a gap for a blank span', async ({ page, request }) => {
  expect(STATE, 'SCHED_UI_STATE is set by ui-tests/run.sh').not.toBe('');
  write('55');
  const job = await api(request, 'POST', 'jobs', {
    name: 'ui-chart',
    gpus: 1,
    command: ['python', '-c', 'import time; time.sleep(600)']
  });
  await expect
    .poll(async () => (await api(request, 'GET', `jobs/${job.id}`)).state, { timeout: 30000 })
    .toBe('running');
  await page.waitForTimeout(4000); // valid readings
  write(BLANK);
  await page.waitForTimeout(5000); // blank readings: a gap
  write('70');
  await page.waitForTimeout(4000); // valid again

  const panel = await openPanel(page);
  const usage = await section(panel, 'utilization');
  const item = usage.locator(`[data-key="usage-${job.id}"]`);
  await expect(item.locator('.jp-sched-usage-title')).toHaveText(`job ui-chart (${job.id})`);
  const gap = item.locator('rect.jp-sched-chart-gap-blank');
  await expect(gap.first()).toHaveAttribute('data-gap', 'blank: DCGM blank value (no data)');
  await expect(item.locator('text.jp-sched-chart-gap-label').first()).toHaveText('blank: DCGM blank value (no data)');
  const util = await item.locator('path.jp-sched-chart-util').getAttribute('d');
  expect((util ?? '').match(/M/g)?.length ?? 0).toBeGreaterThanOrEqual(2); // the line is broken at the gap
  write(''); // an empty scrape is refused: no new samples, the chart stops moving for the screenshots
  await page.waitForTimeout(1500);
  const out = test.info().outputPath('');
  await page.mouse.move(0, 0);
  await item.screenshot({ path: path.join(out, 'usagechart-light.png'), animations: 'disabled' });
  await page.theme.setDarkTheme();
  await item.screenshot({ path: path.join(out, 'usagechart-dark.png'), animations: 'disabled' });
  await page.theme.setLightTheme();
});
