/**
 * The JupyterLab (and Notebook 7) plugins of jupyter_sched:
 *
 * - `:model` provides {@link ISchedModel} (client, event stream, state, signals);
 * - `:sections` provides {@link ISchedSections} (the sidebar's section registry);
 * - `:plugin` is the GPUs sidebar with the built-in sections, the commands (palette, context
 *   menus and the notebook toolbar button are declared in schema/plugin.json, so users can hide
 *   or move them), job notifications and the restorable log viewer;
 * - `:status` is the status-bar item with the current kernel's GPUs.
 *
 * Nothing requires `ILabShell`: the sidebar goes to `app.shell`'s left area, which Notebook 7
 * has too.
 */
import { ILayoutRestorer, type JupyterFrontEnd, type JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Dialog, ICommandPalette, type MainAreaWidget, Notification, showDialog, WidgetTracker } from '@jupyterlab/apputils';
import { PageConfig } from '@jupyterlab/coreutils';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ServerConnection } from '@jupyterlab/services';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStateDB } from '@jupyterlab/statedb';
import { IStatusBar } from '@jupyterlab/statusbar';
import { ITranslator, nullTranslator, type TranslationBundle } from '@jupyterlab/translation';
import { LabIcon } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import { Signal } from '@lumino/signaling';

import { describeError, SchedApiError, SchedClient, type Transport } from './client';
import { CommandIDs } from './commandids';
import { cancelQuestion, cancelTitle, changedText, clockUTC, cooldownNews, formatDuration, releasedText, serverText, shownText, workName } from './format';
import { definitionsPlugin } from './definitions';
import { contentsFiles, keepCopiesKernelless, openExecutedNotebook } from './executed';
import { createLogWidget, type LogViewer } from './logviewer';
import { usagePlugin } from './usage';
import { SchedModel } from './model';
import { SchedNotifier } from './notify';
import { SchedSections } from './registry';
import { BUILTIN_SECTIONS, builtinSections, type SubmitView } from './sections';
import { type EditFocus, jobEdit, killedOutOfMemory, limitStoppedToast, limitThatStopped, memoryWords, outOfMemoryToast, resubmitBody } from './sections/submit';
import { SchedSidebar, sidebarCaption, SidebarState } from './sidebar';
import { newSubmitKey, submitKeyed, SubmitOutcomeUnknown } from './submitting';
import { panelHiddenText, revealPanel } from './reveal';
import { keepAliveOffered } from './keepalive';
import { KernelGpuStatus } from './statusbar';
import { ISchedModel, ISchedSections } from './tokens';
import { holdAction, type Job, resourcesOf } from './types';

export * from './tokens';
export { CommandIDs } from './commandids';

const PLUGIN_ID = '@jupyter-sched/labextension:plugin';

export const gpuIcon = new LabIcon({
  name: 'jupyter-sched:gpu',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<g class="jp-icon3" fill="#616161">' +
    '<path d="M3 7h18v10H3zM5 9v6h14V9z"/><rect x="7" y="10.5" width="4" height="3"/><rect x="13" y="10.5" width="4" height="3"/>' +
    '<rect x="5" y="17" width="2" height="3"/><rect x="9" y="17" width="2" height="3"/><rect x="13" y="17" width="2" height="3"/><rect x="17" y="17" width="2" height="3"/>' +
    '</g></svg>'
});

/** Requests through Jupyter's ServerConnection: base URL, token and XSRF header are added there. */
export function serverTransport(settings: ServerConnection.ISettings = ServerConnection.makeSettings()): Transport {
  return {
    request: (path, init = {}) => ServerConnection.makeRequest(`${settings.baseUrl}${path}`, init, settings)
  };
}

/** The settings of schema/plugin.json, read defensively. */
export interface IPanelSettings {
  refreshInterval: number;
  defaultViews: string[];
  sectionOrder: string[];
  notifyCompletion: boolean;
}

export const DEFAULT_SETTINGS: IPanelSettings = {
  refreshInterval: 10,
  defaultViews: ['inventory', 'queue', 'mywork', 'submit'],
  sectionOrder: [],
  notifyCompletion: true
};

export function readSettings(settings: ISettingRegistry.ISettings | null): IPanelSettings {
  if (!settings) {
    return DEFAULT_SETTINGS;
  }
  const strings = (value: unknown, fallback: string[]) => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : fallback);
  const refresh = settings.get('refreshInterval').composite;
  const notify = settings.get('notifyCompletion').composite;
  return {
    refreshInterval: typeof refresh === 'number' && refresh > 0 ? refresh : DEFAULT_SETTINGS.refreshInterval,
    defaultViews: strings(settings.get('defaultViews').composite, DEFAULT_SETTINGS.defaultViews),
    sectionOrder: strings(settings.get('sectionOrder').composite, DEFAULT_SETTINGS.sectionOrder),
    notifyCompletion: typeof notify === 'boolean' ? notify : DEFAULT_SETTINGS.notifyCompletion
  };
}

/**
 * The headless model for every plugin: charts, job definitions, run lists, status-bar items.
 * Consumers call `model.start()` (idempotent) and `model.watch(resource)`.
 */
const modelPlugin: JupyterFrontEndPlugin<ISchedModel> = {
  id: '@jupyter-sched/labextension:model',
  description: 'The GPU scheduler model: client, live event stream, state and signals.',
  autoStart: true,
  provides: ISchedModel,
  activate: (app: JupyterFrontEnd): ISchedModel => new SchedModel({ client: new SchedClient(serverTransport(app.serviceManager.serverSettings)) })
};

const sectionsPlugin: JupyterFrontEndPlugin<ISchedSections> = {
  id: '@jupyter-sched/labextension:sections',
  description: 'The registry of GPUs sidebar sections.',
  autoStart: true,
  provides: ISchedSections,
  activate: (): ISchedSections => new SchedSections()
};

/** The job a command is about: `args.id`, else the row under the context menu. */
function jobIdFrom(app: JupyterFrontEnd, args: Record<string, unknown>): string | null {
  if (typeof args.id === 'string' && args.id) {
    return args.id;
  }
  const node = app.contextMenuHitTest(n => !!n.dataset.jobId);
  return node?.dataset.jobId ?? null;
}

const sidebarPlugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'GPU scheduling sidebar: inventory, queue with reasons and ETA, my work, quotas, submit and admin.',
  autoStart: true,
  requires: [ISchedModel, ISchedSections],
  optional: [ITranslator, ISettingRegistry, IStateDB, ILayoutRestorer, ICommandPalette, IDefaultFileBrowser, INotebookTracker],
  activate: async (
    app: JupyterFrontEnd,
    model: ISchedModel,
    sections: ISchedSections,
    translator: ITranslator | null,
    registry: ISettingRegistry | null,
    stateDB: IStateDB | null,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    fileBrowser: IDefaultFileBrowser | null,
    notebooks: INotebookTracker | null
  ) => {
    translator = translator ?? nullTranslator;
    const trans = translator.load('jupyter_sched');
    const { commands, shell } = app;

    let settings: ISettingRegistry.ISettings | null = null;
    if (registry) {
      try {
        settings = await registry.load(PLUGIN_ID);
      } catch (err) {
        console.warn('jupyter_sched: settings could not be loaded; using defaults', err);
      }
    }
    let current = readSettings(settings);
    model.refreshInterval = current.refreshInterval;
    const state = new SidebarState(stateDB);
    if (notebooks && stateDB && restorer) {
      keepCopiesKernelless(notebooks, stateDB); // an executed copy opened with no kernel gets none at the next page load (newuser41 n8)
    }

    const sidebar = new SchedSidebar({
      model,
      sections,
      translator,
      commands,
      state,
      order: current.sectionOrder,
      openByDefault: current.defaultViews
    });
    sidebar.title.icon = gpuIcon;
    // the tab's tooltip names the Show GPUs Panel keys, as the File Browser's names its own; a rebinding follows
    // (newuser41 n10; the default, Alt+Shift+G, is in schema/plugin.json's jupyter.lab.shortcuts)
    const showKeys = (): void => {
      const binding = commands.keyBindings.find(b => b.command === CommandIDs.open);
      sidebar.title.caption = sidebarCaption(trans, binding ? binding.keys.map(CommandRegistry.formatKeystroke).join(', ') : '');
    };
    showKeys();
    commands.keyBindingChanged.connect(showKeys);
    shell.add(sidebar, 'left', { rank: 850, type: 'GPUs' });
    restorer?.add(sidebar, sidebar.id);

    const notifier = new SchedNotifier(model, commands, trans);
    notifier.notifyCompletion = current.notifyCompletion;
    settings?.changed.connect(() => {
      current = readSettings(settings);
      model.refreshInterval = current.refreshInterval;
      notifier.notifyCompletion = current.notifyCompletion;
      sidebar.setOrder(current.sectionOrder);
    });

    // -- logs: one tab per job, restored after a reload
    const logs = new WidgetTracker<MainAreaWidget<LogViewer>>({ namespace: 'jupyter-sched-logs' });
    if (restorer) {
      void restorer.restore(logs, {
        command: CommandIDs.openLogs,
        args: widget => ({ id: widget.content.jobId }),
        name: widget => widget.content.jobId
      });
    }

    let submitView: SubmitView | null = null;
    /**
     * The GPUs panel on screen in this shell (JupyterLab or Notebook 7, whose left area starts closed), then `fill`;
     * where it cannot be shown, a notice says where to find it, `filled` the path its Submit form holds (newuser42 N6).
     */
    const showPanel = (filled: string | null, fill: () => void): void => {
      const shown = revealPanel(shell, sidebar);
      fill();
      if (!shown) {
        Notification.warning(shownText(panelHiddenText(trans, `${PageConfig.getBaseUrl()}lab`, filled)), { autoClose: 12000 });
      }
    };
    const showSubmit = (path: string): void =>
      showPanel(path, () => {
        sidebar.showSection('submit');
        submitView?.prefill(path);
      });
    /** A finished job's request in the Submit form, `focus` its field to change (s34-panel; newuser33 n9). */
    const editInSubmit = (job: Job, focus: EditFocus | null): void =>
      showPanel(workName(job), () => {
        sidebar.showSection('submit');
        submitView?.edit(jobEdit(job, PageConfig.getOption('serverRoot'), model.me?.team ?? '', focus));
      });

    commands.addCommand(CommandIDs.open, {
      label: trans.__('Show GPUs Panel'),
      caption: trans.__('Open the GPU scheduling sidebar'),
      icon: args => (args.isPalette ? undefined : gpuIcon),
      execute: args =>
        showPanel(null, () => {
          if (typeof args.section === 'string') {
            sidebar.showSection(args.section);
          }
        })
    });
    commands.addCommand(CommandIDs.refresh, {
      label: trans.__('Refresh GPUs Panel'),
      caption: trans.__('Re-read inventory, queue and my work now and reconnect the live stream'),
      execute: () => model.refreshAll()
    });
    commands.addCommand(CommandIDs.runNotebook, {
      label: args => (args.isPalette ? trans.__('Run This Notebook on GPUs…') : trans.__('Run on GPUs')),
      caption: trans.__('Open this notebook in the GPUs Submit form, checked against the free GPUs (the saved version runs once you press Submit)'),
      icon: args => (args.isPalette ? undefined : gpuIcon),
      execute: async args => {
        const nb = notebooks?.currentWidget;
        if (typeof args.path === 'string') {
          showSubmit(args.path);
          return;
        }
        if (!nb) {
          showSubmit('');
          return;
        }
        await nb.context.save();
        showSubmit(nb.context.path);
      }
    });
    commands.addCommand(CommandIDs.runFile, {
      label: trans.__('Run on GPUs…'),
      caption: trans.__('Submit the selected script or notebook as a GPU job'),
      icon: gpuIcon,
      isVisible: () => {
        const item = fileBrowser?.selectedItems().next();
        return !!item && !item.done && item.value.type !== 'directory';
      },
      execute: args => {
        const item = fileBrowser?.selectedItems().next();
        const path = typeof args.path === 'string' ? args.path : item && !item.done ? item.value.path : '';
        showSubmit(path);
      }
    });

    const jobOf = async (id: string): Promise<Job> => model.find(id) ?? (await model.client.job(id));

    commands.addCommand(CommandIDs.openLogs, {
      label: trans.__('Open Job Logs'),
      caption: trans.__('Follow the output of a job in the main area'),
      isEnabled: args => !!jobIdFrom(app, args),
      execute: async args => {
        const id = jobIdFrom(app, args);
        if (!id) {
          return;
        }
        const existing = logs.find(w => w.content.jobId === id);
        if (existing) {
          shell.activateById(existing.id);
          return;
        }
        const openNotebook = (job: Job): void => void commands.execute(CommandIDs.openNotebook, { id: job.id });
        const widget = createLogWidget(model.client, id, trans, model.find(id) ?? null, openNotebook);
        await logs.add(widget);
        shell.add(widget, 'main');
        shell.activateById(widget.id);
      }
    });
    // a notebook job's executed notebook, from My work and its log viewer (newuser39 N1), as a definition's run opens it
    const files = contentsFiles(app);
    commands.addCommand(CommandIDs.openNotebook, {
      label: trans.__('Open Executed Notebook'),
      caption: trans.__('Open a notebook job\'s executed notebook (outputs and errors), saved in your files as scheduled-runs/<notebook> (executed <job id>).ipynb and opened with no kernel'),
      isEnabled: args => !!jobIdFrom(app, args),
      execute: async args => {
        const id = jobIdFrom(app, args);
        if (!id) {
          return;
        }
        try {
          const job = await jobOf(id);
          const { notice } = await openExecutedNotebook(model.client, id, job.notebook, files);
          Notification.info(shownText(notice), { autoClose: 8000 }); // where the copy is (newuser40 N1)
        } catch (err) {
          Notification.error(shownText(trans.__('Could not open the executed notebook of %1: %2', id, describeError(err))), { autoClose: 8000 });
        }
      }
    });
    commands.addCommand(CommandIDs.cancel, {
      label: args => {
        const id = jobIdFrom(app, args);
        const job = id ? model.find(id) : undefined;
        return job?.kind === 'lease' ? trans.__('Release Lease') : trans.__('Cancel Job');
      },
      caption: trans.__('Stop a job or release a lease (asks first)'),
      isEnabled: args => !!jobIdFrom(app, args),
      execute: async args => {
        const id = jobIdFrom(app, args);
        if (!id) {
          return;
        }
        let job: Job;
        try {
          job = await jobOf(id);
        } catch (err) {
          Notification.error(shownText(trans.__('Could not find %1: %2', id, describeError(err))), { autoClose: 8000 });
          return;
        }
        const lease = job.kind === 'lease';
        const what = lease ? trans.__('Release lease') : trans.__('Cancel job');
        const result = await showDialog({
          // the job's name, owner and node with their hidden characters as escapes (s30, red29 R2's rule)
          title: shownText(cancelTitle(job, trans)),
          body: shownText(cancelQuestion(job, trans)),
          buttons: [Dialog.cancelButton({ label: trans.__('Keep it') }), Dialog.warnButton({ label: what })]
        });
        if (!result.button.accept) {
          return;
        }
        try {
          const answer = lease ? await model.client.releaseLease(id) : await model.client.cancel(id);
          // cancelled here, by me: its end is no news to me (new user 22, N7; the cancel's event says so too)
          model.upsert(answer.state === 'cancelled' ? Object.assign({}, answer, { cancelled_by: model.me?.user ?? null }) : answer);
          if (lease) {
            // said it was done, as Keep alive is (newuser33 n4)
            Notification.success(shownText(releasedText(job, answer, trans)), { autoClose: 6000 });
          }
          const cost = cooldownNews(answer); // it took GPUs back by reclaim lately: until when its team's reclaims wait (s38)
          if (cost) {
            Notification.warning(serverText(cost), { autoClose: 12000 }); // its clock ("until …"): the browser's zone (newuser38 n30)
          }
        } catch (err) {
          const failed = lease ? trans.__('Could not release %1: %2', workName(job), describeError(err)) : trans.__('Could not cancel %1: %2', job.name, describeError(err));
          Notification.error(shownText(failed), { autoClose: 8000 });
        }
      }
    });
    /**
     * Resubmits of a job in flight or whose outcome is not known → their idempotency key: Resubmit of that job again
     * sends the same key, so the server answers with the job the first made, never a second one (newuser33 N3).
     */
    const resubmitKeys = new Map<string, string>();
    commands.addCommand(CommandIDs.resubmit, {
      label: trans.__('Resubmit Job'),
      caption: trans.__('Submit a finished job again with the same request'),
      isEnabled: args => !!jobIdFrom(app, args),
      execute: async args => {
        const id = jobIdFrom(app, args);
        if (!id) {
          return;
        }
        const failed = (err: unknown): void => {
          if (err instanceof SubmitOutcomeUnknown) {
            Notification.warning(
              shownText(trans.__('No answer from the scheduler in %1 s to the Resubmit of %2: it may or may not have been submitted. Check My work before resubmitting — Resubmit of it now sends the same key, so it cannot make a second job.', err.seconds, id)),
              { autoClose: false }
            );
            return;
          }
          Notification.error(shownText(trans.__('Could not resubmit %1: %2', id, describeError(err))), { autoClose: 8000 });
        };
        try {
          // a failed job read afresh: GET jobs/{id} says whether the out-of-memory killer ended it (s34-panel)
          const known = await jobOf(id);
          const job = known.state === 'failed' ? await model.client.job(id) : known;
          const cut = job.not_kept ?? {};
          if ((cut.env_bytes ?? 0) > 0 || (cut.command_bytes ?? 0) > 0) {
            // a finished job's row keeps its env as names only and its command cut (red30 R4): never resent half
            const why = job.not_kept_text ?? trans.__('its env values or arguments were not kept after it ended; submit it again with them');
            Notification.warning(shownText(trans.__('Cannot resubmit %1 as it was: %2.', job.name, why)), { autoClose: 8000 });
            return;
          }
          const send = async (): Promise<void> => {
            const key = resubmitKeys.get(job.id) ?? newSubmitKey();
            resubmitKeys.set(job.id, key);
            let fresh: Job;
            try {
              fresh = await submitKeyed(model.client, resubmitBody(job), key);
            } catch (err) {
              if (!(err instanceof SubmitOutcomeUnknown)) {
                resubmitKeys.delete(job.id);
              }
              throw err;
            }
            resubmitKeys.delete(job.id);
            model.upsert(fresh);
            // a new job with the old one's request (new user 18, N15: "Resubmitted gangP as j-…" read as the same job)
            Notification.info(shownText(trans.__('Submitted %1 (%2) again as a new job, %3.', job.name, job.id, fresh.id)), { autoClose: 4000 });
          };
          const limit = limitThatStopped(job);
          const memory = limit === null && killedOutOfMemory(job);
          if (limit !== null || memory) {
            // its limit or its memory stopped it: the same request would be stopped the same way — said, with the
            // form filled with its request and the field to change focused; sent as it was only when asked
            // (newuser32 n8, newuser33 n9)
            const mib = resourcesOf(job).memory_mib;
            const said = limit !== null
              ? limitStoppedToast(job.name, formatDuration(limit, trans), trans)
              : outOfMemoryToast(job.name, mib ? memoryWords(mib) : '', trans);
            Notification.warning(shownText(said), {
              autoClose: false,
              actions: [
                { label: trans.__('Edit in Submit form'), displayType: 'accent', callback: () => editInSubmit(job, limit !== null ? 'timeLimit' : 'memory') },
                { label: trans.__('Resubmit anyway'), callback: () => void send().catch(failed) }
              ]
            });
            return;
          }
          await send();
        } catch (err) {
          failed(err);
        }
      }
    });
    commands.addCommand(CommandIDs.keepalive, {
      label: trans.__('Keep Lease Alive'),
      caption: trans.__('Tell the scheduler this lease is in use: its GPUs are kept even while idle, up to the admin\'s limit (once per lease)'),
      // once per allocation (new user 6, F23 remainder): not offered again once this page used it
      isEnabled: args => {
        const id = jobIdFrom(app, args);
        const lease = id ? model.find(id) : undefined;
        // a lease that holds no GPUs has none to keep (newuser38 n11); one not loaded here: the server says
        return !!id && !(lease && (model.keptAlive(lease) || !keepAliveOffered(lease)));
      },
      execute: async args => {
        const id = jobIdFrom(app, args);
        if (!id) {
          return;
        }
        try {
          const kept = await model.client.keepalive(id);
          if (kept.notice) {
            // its owner left the lease's team: nothing was extended, and the server says why (red team 24, R6)
            Notification.warning(serverText(kept.notice), { autoClose: false });
            return;
          }
          model.noteKeepalive(id, kept.keepalive_until ?? null);
          // one keep-alive per lease (new user 6, F23: a second one was refused, nothing had said so)
          const until = kept.keepalive_until ? clockUTC(kept.keepalive_until) : '';
          Notification.success(
            until
              ? trans.__('Lease kept alive: its GPUs are kept until %1 even while idle. This was its one keep-alive; after that, using the GPUs keeps them.', until)
              : trans.__('Lease kept alive. This was its one keep-alive; after that, using the GPUs keeps them.'),
            { autoClose: 8000 }
          );
        } catch (err) {
          if (err instanceof SchedApiError && err.status === 409 && err.field === 'keepalive' && /already used/.test(err.message)) {
            model.noteKeepalive(id, null); // used from elsewhere (another page, %gpu keepalive): the server said so
          }
          Notification.error(trans.__('Keep-alive failed: %1', describeError(err)), { autoClose: 8000 });
        }
      }
    });
    commands.addCommand(CommandIDs.hold, {
      label: args => {
        const id = jobIdFrom(app, args);
        const job = id ? model.find(id) : undefined;
        return job?.held ? trans.__('Release Job') : trans.__('Hold Job');
      },
      caption: trans.__('Hold a pending job (it stays queued but never starts), or release it (hubadmin25 B18)'),
      isEnabled: args => {
        const id = jobIdFrom(app, args);
        const job = id ? model.find(id) : undefined;
        // an admin's hold: only an admin releases it (newuser28 N5)
        return !!id && (!job || holdAction(job, !!model.me?.is_admin) !== null);
      },
      execute: async args => {
        const id = jobIdFrom(app, args);
        if (!id) {
          return;
        }
        try {
          const job = await jobOf(id);
          const changed = await model.client.update(id, { held: !job.held });
          model.upsert(changed);
          // the server's words: "held (release with: …)", "released (held by … since …): it queues again from now, …",
          // with the panel's clocks and its Release button (newuser33 n1, n2)
          Notification.info(shownText(`${job.name}: ${changedText(changed.changed ?? [], new Date(), trans)}`), { autoClose: 5000 });
        } catch (err) {
          Notification.error(shownText(trans.__('Could not change %1: %2', id, describeError(err))), { autoClose: 8000 });
        }
      }
    });
    const sectionFrom = (args: Record<string, unknown>): string | null =>
      typeof args.id === 'string' ? args.id : (app.contextMenuHitTest(n => !!n.dataset.section)?.dataset.section ?? null);
    const move = (delta: -1 | 1) => async (args: Record<string, unknown>) => {
      const id = sectionFrom(args);
      if (!id) {
        return;
      }
      const order = sidebar.movedOrder(id, delta);
      if (settings) {
        await settings.set('sectionOrder', order);
      } else {
        sidebar.setOrder(order);
      }
    };
    commands.addCommand(CommandIDs.moveSectionUp, { label: trans.__('Move Section Up'), execute: move(-1) });
    commands.addCommand(CommandIDs.moveSectionDown, { label: trans.__('Move Section Down'), execute: move(1) });

    for (const command of [CommandIDs.open, CommandIDs.refresh, CommandIDs.runNotebook]) {
      palette?.addItem({ command, category: trans.__('GPUs'), args: { isPalette: true } });
    }

    for (const section of builtinSections({
      trans,
      serverRoot: PageConfig.getOption('serverRoot'),
      onSubmitted: () => sidebar.showSection('mywork'),
      onSubmitView: view => {
        submitView = view;
      }
    })) {
      sections.add(section);
    }

    // my jobs feed the notifications and the status-bar item even while the sidebar is closed
    model.watch('jobs');
    void model.start();
    // the state database answers after the workspace is restored: sections wait for it
    void state.load().then(() => sidebar.syncSections());
  }
};

const statusPlugin: JupyterFrontEndPlugin<void> = {
  id: '@jupyter-sched/labextension:status',
  description: "A status-bar item with the current notebook kernel's GPUs.",
  autoStart: true,
  requires: [ISchedModel],
  optional: [ITranslator, IStatusBar, INotebookTracker],
  activate: (app: JupyterFrontEnd, model: ISchedModel, translator: ITranslator | null, statusBar: IStatusBar | null, notebooks: INotebookTracker | null) => {
    if (!statusBar || !notebooks) {
      return;
    }
    const trans: TranslationBundle = (translator ?? nullTranslator).load('jupyter_sched');
    const changed = new Signal<unknown, void>(notebooks);
    const kernelId = () => notebooks.currentWidget?.sessionContext.session?.kernel?.id ?? null;
    notebooks.currentChanged.connect((_, panel) => {
      changed.emit();
      panel?.sessionContext.kernelChanged.connect(() => changed.emit());
    });
    const item = new KernelGpuStatus(model, kernelId, changed, trans, () => void app.commands.execute(CommandIDs.open, { section: 'mywork' }));
    statusBar.registerStatusItem('@jupyter-sched/labextension:status', {
      item,
      align: 'left',
      rank: 4,
      isActive: () => !!notebooks.currentWidget,
      activeStateChanged: changed
    });
    model.watch('jobs');
    void model.start();
  }
};

export { BUILTIN_SECTIONS };

export default [modelPlugin, sectionsPlugin, sidebarPlugin, statusPlugin, definitionsPlugin, usagePlugin];
