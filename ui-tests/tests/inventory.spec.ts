/**
 * Live inventory: while the event stream is up, a GPU going unhealthy reaches the panel within
 * 2 s. This server reads a static inventory file (re-read every 0.5 s, see
 * jupyter_server_test_config.py); the test rewrites the file as an admin would, the engine
 * publishes an `inventory` event, and the tile changes without any reload or refresh.
 */
import { expect, test } from '@jupyterlab/galata';
import * as fs from 'fs';
import * as path from 'path';

import { openPanel, section, title } from './helpers';

function inventoryFile(healthy: boolean): string {
  const sick = healthy ? '' : ', healthy: false, health_reason: "Xid 79: GPU fell off the bus"';
  return [
    'nodes:',
    '  - name: gpu-node-b',
    '    gpus:',
    '      - {uuid: GPU-static-b-0, model: A100-SXM4-80GB, memory: 80GiB}',
    `      - {uuid: GPU-static-b-1, model: A100-SXM4-80GB, memory: 80GiB${sick}}`,
    ''
  ].join('\n');
}

test('a GPU going unhealthy reaches the open panel within 2 s while the stream is up', async ({ page }) => {
  const file = path.join(process.env.SCHED_UI_STATE ?? '', 'inventory-user.yaml');
  fs.writeFileSync(file, inventoryFile(true));
  try {
    const panel = await openPanel(page);
    const inventory = await section(panel, 'inventory');
    const tile = inventory.locator('[data-gpu-uuid="GPU-static-b-1"]');
    await expect(tile).toHaveAttribute('data-health', 'healthy');
    await expect(title(panel, 'inventory').locator('.jp-sched-badge')).toHaveText('2/2 free');
    await expect(panel.locator('.jp-sched-stream')).toHaveText('live');
    const inventoryReads = [];
    page.on('request', r => {
      if (r.url().includes('api/sched/inventory')) {
        inventoryReads.push(r.url());
      }
    });
    fs.writeFileSync(file, inventoryFile(false));
    await expect(tile).toHaveAttribute('data-health', 'unhealthy', { timeout: 2000 });
    await expect(tile).toHaveAttribute('aria-label', /unhealthy: Xid 79: GPU fell off the bus/);
    await expect(tile.locator('.jp-sched-gpu-owner')).toHaveText(/^⚠ unhealthy: Xid 79: GPU fell off the bus/);
    await expect(title(panel, 'inventory').locator('.jp-sched-badge')).toHaveText('1/2 free');
    // pushed by the stream, not polled
    expect(inventoryReads).toEqual([]);
  } finally {
    fs.writeFileSync(file, inventoryFile(true));
  }
});
