import { describe, expect, it } from 'vitest';

import type { SchedModel } from '../src/model';
import { GpuUsageView, gpuOfCommand, gpuUsageTitle } from '../src/usage';

// newuser39 n15: the palette's "GPU usage" charted GPU #0 without asking (tab "GPU usage GPU-static-g", cut) and,
// with telemetry off, showed a grey chart that could never fill.
function modelOf(gpus: { uuid: string; index: number; node: string; model: string }[], telemetry: boolean): SchedModel {
  const signal = { connect: () => true, disconnect: () => true };
  return { inventory: { gpus }, telemetry: signal, supports: (f: string) => f !== 'telemetry' || telemetry } as unknown as SchedModel;
}

const GPUS = [
  { uuid: 'GPU-static-g1-0', index: 0, node: 'g1', model: 'A100' },
  { uuid: 'GPU-static-g1-1', index: 1, node: 'g1', model: 'A100' }
];

describe('newuser39 n15: one GPU\'s utilization, named for what it is', () => {
  it('test_newuser39_n15_the_tab_title_names_the_gpu_as_the_inventory_numbers_it', () => {
    const model = modelOf(GPUS, true);
    expect(gpuUsageTitle(model, 'GPU-static-g1-1')).toBe('GPU #1 (g1) utilization');
    expect(gpuUsageTitle(model, 'GPU-gone')).toBe('GPU GPU-gone utilization'); // not cut
  });

  it('test_newuser39_n15_with_several_gpus_and_none_in_context_it_asks_which', () => {
    expect(gpuOfCommand({}, undefined, modelOf(GPUS, true))).toBeUndefined();
    expect(gpuOfCommand({}, 'GPU-static-g1-1', modelOf(GPUS, true))).toBe('GPU-static-g1-1');
  });

  it('test_newuser39_n15_telemetry_off_says_so_instead_of_an_empty_chart', async () => {
    const view = new GpuUsageView(modelOf(GPUS, false), 'GPU-static-g1-0');
    await view.refresh();
    const said = view.node.querySelector('.jp-sched-usage-off');
    expect(said?.textContent).toContain('GPU #0 (g1) utilization: telemetry is off on this server');
    expect(view.node.querySelector('svg, canvas, .jp-sched-chart')).toBeNull();
    view.dispose();
  });
});
