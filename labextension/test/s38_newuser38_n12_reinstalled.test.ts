import { StateDB } from '@jupyterlab/statedb';
import { afterEach, describe, expect, it } from 'vitest';

import { FakeSchedServer, settle } from './fakeserver';
import { flush, sidebarOn, text } from './ui';

afterEach(() => {
  document.body.replaceChildren();
});

// GET config's reinstalled, as jupyter_sched.wording.reinstall.reinstalled_notice says it
const SAID =
  'jupyter_sched was reinstalled under this running server (0.1.0+g0b9ef5d → 0.1.0+g3f1bb45): restart jupyter lab — ' +
  'batch jobs are held until then, GPU leases are still granted';

describe('newuser38 n12: a reinstall under the running server is said in the header, before any job waits', () => {
  it('test_newuser38_n12_the_header_says_it_once_config_says_it_and_drops_it_after_the_restart', async () => {
    const server = new FakeSchedServer();
    const { model, sidebar } = await sidebarOn(server, new StateDB());
    const notice = () => sidebar.node.querySelector('.jp-sched-reinstalled');
    expect(text(notice())).toBe(''); // runs what is installed: nothing said (hidden while empty)
    // pip install under the running server, the panel open: the next inventory read brings config with it
    server.config = { ...server.config, reinstalled: SAID } as typeof server.config;
    model.refresh('inventory', { force: true });
    await settle();
    await flush();
    expect(text(notice())).toBe('J' + SAID.slice(1));
    expect(notice()!.getAttribute('role')).toBe('status');
    server.config = { ...server.config, reinstalled: null } as typeof server.config; // restarted
    model.refresh('inventory', { force: true });
    await settle();
    await flush();
    expect(text(notice())).toBe('');
    model.dispose();
  });
});
