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

import { api, cancelAll, only, openPanel } from './helpers';

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

// The user server's identities are jupyter_server's per-browser anonymous users: the job must be
// submitted with the page's own cookies (page.request), or it belongs to another anonymous user
// and the page's "GPU usage" section (the caller's own work) rightly leaves it out.
test.afterEach(async ({ page }) => {
  write('0');
  await cancelAll(page.request);
});

test('the usage chart of a running job shows a gap for a blank span', async ({ page }) => {
  test.setTimeout(150000); // ~30 s of scripted telemetry on top of a job start, on a loaded machine
  const request = page.request;
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
  await page.waitForTimeout(12000); // valid readings: a line of a few 5-s steps before the gap
  write(BLANK);
  // blank readings for 16 s: the chart of young work has 5-s steps, and a step with any valid
  // reading is valid, so at least two whole steps must be blank for a gap
  await page.waitForTimeout(16000);
  write('70');
  await page.waitForTimeout(6000); // valid again (the section re-reads the history every 5 s)

  const panel = await openPanel(page);
  // the only expanded section: the chart gets the sidebar's height (an element screenshot of a
  // chart clipped by its section would show whatever is painted over it)
  const usage = await only(panel, 'utilization');
  const item = usage.locator(`[data-key="usage-${job.id}"]`);
  await expect(item.locator('.jp-sched-usage-title')).toHaveText(`job ui-chart (${job.id})`);
  const gap = item.locator('rect.jp-sched-chart-gap-blank');
  await expect(gap.first()).toHaveAttribute('data-gap', 'blank: DCGM blank value (no data)');
  // (a 'missing: no telemetry' gap may come first: the step before the job's first sample)
  const label = item.locator('text.jp-sched-chart-gap-label').filter({ hasText: 'blank: DCGM blank value (no data)' });
  await expect(label.first()).toHaveText('blank: DCGM blank value (no data)');
  const util = await item.locator('path.jp-sched-chart-util').getAttribute('d');
  expect((util ?? '').match(/M/g)?.length ?? 0).toBeGreaterThanOrEqual(2); // the line is broken at the gap
  // new user 5 #17: a value axis, a time axis, a legend, and no text drawn over other text
  await expect(item.locator('text.jp-sched-chart-axis-label').first()).toHaveText('0 %');
  await expect(item.locator('text.jp-sched-chart-legend').first()).toHaveText('utilization %');
  expect(await item.locator('text.jp-sched-chart-time').count()).toBeGreaterThanOrEqual(1);
  // The svg and its texts are measured in ONE page-side call on the live DOM: the section redraws
  // its items whenever telemetry arrives (every second), so two separate calls (texts, then
  // `locator('svg').boundingBox()`) could measure two different nodes — or a replaced, detached
  // svg whose boundingBox() is null, read as a 0-px box at x = 0, so that "0 %" (the first text)
  // seemed to lie outside it (fresh-clone run on 6fec996). No redraw can run during one evaluation.
  const { svgBox, boxes } = await page.evaluate(key => {
    const svgs = [...document.querySelectorAll(`[data-key="${key}"] svg.jp-sched-chart`)];
    if (svgs.length !== 1) {
      return { svgBox: null, boxes: [] };
    }
    const r = svgs[0].getBoundingClientRect();
    return {
      svgBox: { x: r.left, width: r.width },
      boxes: [...svgs[0].querySelectorAll('text')].filter(n => (n.textContent ?? '').trim()).map(n => {
        const b = n.getBoundingClientRect();
        return { text: n.textContent ?? '', left: b.left, right: b.right, top: b.top, bottom: b.bottom };
      })
    };
  }, `usage-${job.id}`);
  expect(svgBox, 'one chart svg on the page for the job').not.toBeNull();
  expect(svgBox?.width ?? 0, 'the chart svg is laid out').toBeGreaterThan(0);
  expect(boxes.map(b => b.text)).toContain('0 %');
  for (const [i, a] of boxes.entries()) {
    // inside the chart (nothing cut at its edges) …
    expect(a.left >= (svgBox?.x ?? 0) - 0.5 && a.right <= (svgBox?.x ?? 0) + (svgBox?.width ?? 0) + 0.5, a.text).toBe(true);
    for (const b of boxes.slice(i + 1)) {
      // … and on no other text
      const apart = a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
      expect(apart, `"${a.text}" overlaps "${b.text}"`).toBe(true);
    }
  }
  write(''); // an empty scrape is refused: no new samples, the chart stops moving for the screenshots
  await page.waitForTimeout(1500);
  const out = test.info().outputPath('');
  await page.mouse.move(0, 0);
  await expect(item.locator('svg')).toBeInViewport({ ratio: 1 });
  // the section redraws its items when telemetry arrives: a screenshot taken as one is replaced
  // fails with "not attached to the DOM", so take it again from the fresh node
  const shot = (name: string) => expect(async () => {
    await item.screenshot({ path: path.join(out, name), animations: 'disabled' });
  }).toPass({ timeout: 15000 });
  await shot('usagechart-light.png');
  await page.theme.setDarkTheme();
  await shot('usagechart-dark.png');
  await page.theme.setLightTheme();
});
