/**
 * A status-bar item for the current notebook: the GPUs its kernel holds (its live leases, as
 * `%gpu` takes them) or "No GPU". Clicking it opens the GPUs sidebar.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import type { ISignal } from '@lumino/signaling';
import * as React from 'react';

import { formatGpus, shownText } from './format';
import type { ISchedModel } from './tokens';
import { ACTIVE_STATES, type Job, resourcesOf } from './types';

/** What the item shows for a kernel: its active leases' GPUs. */
export function kernelGpuText(model: ISchedModel, kernelId: string | null, trans: TranslationBundle): { text: string; detail: string; leases: Job[] } {
  const leases = kernelId ? model.leases.filter(l => l.kernel_id === kernelId && (ACTIVE_STATES.has(l.state) || l.state === 'pending')) : [];
  if (!leases.length) {
    return { text: trans.__('No GPU'), detail: trans.__('This kernel holds no GPU (use %gpu in the notebook to ask for one).'), leases };
  }
  const running = leases.filter(l => ACTIVE_STATES.has(l.state));
  if (!running.length) {
    return { text: trans.__('GPU: waiting'), detail: trans.__('Lease %1 is waiting for GPUs.', leases[0].name || leases[0].id), leases };
  }
  const text = running.map(l => formatGpus(resourcesOf(l), trans)).join(' + ');
  return {
    text: trans.__('GPU: %1', text),
    detail: running.map(l => trans.__('Lease %1 holds %2 on %3', l.name || l.id, formatGpus(resourcesOf(l), trans), l.allocation?.node ?? '?')).join('; '),
    leases
  };
}

/** The item. `kernelId()` tells which kernel is current; `changed` fires when it may differ. */
export class KernelGpuStatus extends ReactWidget {
  constructor(
    private readonly model: ISchedModel,
    private readonly kernelId: () => string | null,
    changed: ISignal<unknown, unknown>,
    private readonly trans: TranslationBundle,
    private readonly open: () => void
  ) {
    super();
    this.addClass('jp-sched-statusbar');
    model.jobsChanged.connect(() => this.update());
    changed.connect(() => this.update());
  }

  protected render(): React.ReactElement {
    const said = kernelGpuText(this.model, this.kernelId(), this.trans);
    const [text, detail] = [shownText(said.text), shownText(said.detail)]; // lease and node names: s30
    return (
      <button type="button" className="jp-sched-statusbar-button" title={detail} aria-label={`${text}. ${detail}`} onClick={() => this.open()}>
        {text}
      </button>
    );
  }
}
