/**
 * Playwright configuration of the jupyter_sched browser tests.
 *
 * Galata's base config, with Debian's Chromium (/usr/bin/chromium; Playwright's own browser
 * download does not work on these machines), no video/trace recorders (they need downloads),
 * the `list` reporter (the HTML reporter waits forever on failure), and three JupyterLab servers
 * on free ports chosen by run.sh: "admin" (the server owner = scheduler admin), "user" (a
 * non-admin identity) and "visual" (an admin server only the screenshot/axe tests use), all from
 * jupyter_server_test_config.py.
 */
const baseConfig = require('@jupyterlab/galata/lib/playwright-config');

const adminPort = Number(process.env.SCHED_UI_PORT || 0);
const userPort = Number(process.env.SCHED_UI_PORT_USER || 0);
const visualPort = Number(process.env.SCHED_UI_PORT_VISUAL || 0);
if (!adminPort || !userPort || !visualPort) {
  throw new Error('Set SCHED_UI_PORT, SCHED_UI_PORT_USER and SCHED_UI_PORT_VISUAL (free ports); ui-tests/run.sh does this.');
}

const chromium = {
  executablePath: process.env.SCHED_UI_CHROMIUM || '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--headless',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-quic'
  ]
};

function server(port, role) {
  return {
    command: 'jupyter lab --config jupyter_server_test_config.py',
    url: `http://127.0.0.1:${port}/lab`,
    env: { ...process.env, SCHED_UI_PORT: String(port), SCHED_UI_ROLE: role },
    reuseExistingServer: false,
    timeout: 120000,
    stdout: 'ignore',
    stderr: 'pipe'
  };
}

module.exports = {
  ...baseConfig,
  testDir: './tests',
  outputDir: './test-results',
  reporter: [['list']],
  retries: 0,
  workers: 1,
  fullyParallel: false,
  timeout: 90000,
  expect: { timeout: 20000, toHaveScreenshot: { maxDiffPixelRatio: 0.01 } },
  // committed baselines: tests/<spec>-snapshots/<name>-<project>.png (no platform suffix: CI and
  // development machines both run Debian's Chromium headless)
  snapshotPathTemplate: '{testDir}/{testFileName}-snapshots/{arg}-{projectName}{ext}',
  use: {
    ...baseConfig.use,
    launchOptions: chromium,
    video: 'off',
    trace: 'off',
    screenshot: 'off',
    viewport: { width: 1280, height: 900 }
  },
  projects: [
    { name: 'admin', testMatch: /(panel|notebook7|definitions|layout|toasts)\.spec\.ts/, use: { baseURL: `http://127.0.0.1:${adminPort}` } },
    { name: 'user', testMatch: /(nonadmin|missing|inventory|usagechart|othercancel)\.spec\.ts/, use: { baseURL: `http://127.0.0.1:${userPort}` } },
    // screenshots and axe scans on a server no other test touches: what they show does not
    // depend on which tests ran before
    { name: 'visual', testMatch: /visual\.spec\.ts/, use: { baseURL: `http://127.0.0.1:${visualPort}` } }
  ],
  // run.sh starts the three servers side by side and sets SCHED_UI_SERVERS_STARTED; without it
  // (`npx playwright test` by hand) Playwright starts them, one after the other
  webServer: process.env.SCHED_UI_SERVERS_STARTED
    ? []
    : [server(adminPort, 'admin'), server(userPort, 'user'), server(visualPort, 'visual')]
};
