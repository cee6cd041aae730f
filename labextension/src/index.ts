/**
 * JupyterLab plugin of jupyter_sched: the "GPUs" left sidebar panel, a main-area log viewer,
 * the file-browser command "Run on GPUs" and the notebook-toolbar button of the same name.
 */
import { ILabShell, ILayoutRestorer, type JupyterFrontEnd, type JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, type MainAreaWidget, WidgetTracker } from '@jupyterlab/apputils';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import type { NotebookPanel } from '@jupyterlab/notebook';
import { PageConfig } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { LabIcon, ToolbarButton } from '@jupyterlab/ui-components';

import { type IJob, SchedClient, type Transport } from './api';
import { SchedClient as TypedSchedClient } from './client';
import { definitionsPlugin } from './definitions';
import { usagePlugin } from './usage';
import { SchedModel } from './model';
import { ISchedModel } from './tokens';

export * from './tokens';
import { createLogWidget, type LogViewer } from './logviewer';
import { DEFAULT_SETTINGS, type IPanelSettings, SchedPanel } from './panel';
import { VIEWS, type ViewId } from './state';

const PLUGIN_ID = '@jupyter-sched/labextension:plugin';

/** Command ids. */
export namespace CommandIDs {
  export const open = 'jupyter-sched:open';
  export const runFile = 'jupyter-sched:run-file';
  export const runNotebook = 'jupyter-sched:run-notebook';
  export const openLogs = 'jupyter-sched:open-logs';
}

const gpuIcon = new LabIcon({
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

function readSettings(settings: ISettingRegistry.ISettings | null): IPanelSettings {
  if (!settings) {
    return DEFAULT_SETTINGS;
  }
  const refresh = settings.get('refreshInterval').composite;
  const views = settings.get('defaultViews').composite;
  const notify = settings.get('notifyCompletion').composite;
  return {
    refreshInterval: typeof refresh === 'number' && refresh > 0 ? refresh : DEFAULT_SETTINGS.refreshInterval,
    defaultViews: Array.isArray(views) ? (views.filter(v => VIEWS.includes(v as ViewId)) as ViewId[]) : DEFAULT_SETTINGS.defaultViews,
    notifyCompletion: typeof notify === 'boolean' ? notify : DEFAULT_SETTINGS.notifyCompletion
  };
}

/**
 * The headless model ({@link ISchedModel}) for other plugins: charts, job definitions, run
 * lists, status-bar items. Started by its first consumer (`model.start()`).
 */
const modelPlugin: JupyterFrontEndPlugin<ISchedModel> = {
  id: '@jupyter-sched/labextension:model',
  description: 'The GPU scheduler model: client, live event stream, state and signals.',
  autoStart: true,
  provides: ISchedModel,
  activate: (app: JupyterFrontEnd): ISchedModel => {
    return new SchedModel({ client: new TypedSchedClient(serverTransport(app.serviceManager.serverSettings)) });
  }
};

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'GPU scheduling sidebar: inventory, queue with reasons and ETA, my work, quotas, submit and admin.',
  autoStart: true,
  requires: [ILabShell],
  optional: [ISettingRegistry, ILayoutRestorer, IDefaultFileBrowser, ICommandPalette],
  activate: async (
    app: JupyterFrontEnd,
    shell: ILabShell,
    registry: ISettingRegistry | null,
    restorer: ILayoutRestorer | null,
    fileBrowser: IDefaultFileBrowser | null,
    palette: ICommandPalette | null
  ) => {
    const transport = serverTransport(app.serviceManager.serverSettings);
    const client = new SchedClient(transport);
    const logTracker = new WidgetTracker<MainAreaWidget<LogViewer>>({ namespace: 'jupyter-sched-logs' });

    const openLogs = (job: IJob): void => {
      const existing = logTracker.find(w => w.content.job.id === job.id);
      if (existing) {
        shell.activateById(existing.id);
        return;
      }
      const widget = createLogWidget(client, job);
      void logTracker.add(widget);
      shell.add(widget, 'main');
      shell.activateById(widget.id);
    };

    let settings: ISettingRegistry.ISettings | null = null;
    if (registry) {
      try {
        settings = await registry.load(PLUGIN_ID);
      } catch (err) {
        console.warn('jupyter_sched: settings could not be loaded; using defaults', err);
      }
    }
    const panel = new SchedPanel({ client, transport, openLogs, settings: readSettings(settings), serverRoot: PageConfig.getOption('serverRoot') });
    panel.title.icon = gpuIcon;
    panel.title.label = '';
    settings?.changed.connect(() => panel.updateSettings(readSettings(settings)));
    shell.add(panel, 'left', { rank: 850, type: 'GPUs' });
    restorer?.add(panel, 'jupyter-sched-panel');
    void panel.start();

    const showSubmit = (path: string): void => {
      shell.activateById(panel.id);
      panel.prefillSubmit(path);
    };

    app.commands.addCommand(CommandIDs.open, {
      label: 'GPUs: Show Scheduler Panel',
      caption: 'Open the GPU scheduling sidebar',
      execute: args => {
        shell.activateById(panel.id);
        const view = args['view'] as ViewId | undefined;
        if (view) {
          panel.showSection(view);
        }
      }
    });
    app.commands.addCommand(CommandIDs.runFile, {
      label: 'Run on GPUs…',
      caption: 'Submit the selected script or notebook as a GPU job',
      icon: gpuIcon,
      isVisible: () => {
        const item = fileBrowser?.selectedItems().next();
        return !!item && !item.done && item.value.type !== 'directory';
      },
      execute: args => {
        const explicit = args['path'] as string | undefined;
        const item = fileBrowser?.selectedItems().next();
        const path = explicit ?? (item && !item.done ? item.value.path : '');
        showSubmit(path);
      }
    });
    app.commands.addCommand(CommandIDs.runNotebook, {
      label: 'Run on GPUs',
      caption: 'Submit this notebook as a GPU job (the saved version runs)',
      icon: gpuIcon,
      execute: args => {
        const path = (args['path'] as string | undefined) ?? '';
        showSubmit(path);
      }
    });
    app.commands.addCommand(CommandIDs.openLogs, {
      label: 'GPUs: Open Job Logs',
      execute: async args => {
        const id = args['id'] as string;
        openLogs(await client.job(id));
      }
    });
    app.contextMenu.addItem({
      command: CommandIDs.runFile,
      selector: '.jp-DirListing-item[data-isdir="false"]',
      rank: 60
    });
    palette?.addItem({ command: CommandIDs.open, category: 'GPUs' });

    app.docRegistry.addWidgetExtension('Notebook', {
      createNew: (nb: NotebookPanel) => {
        const button = new ToolbarButton({
          className: 'jp-sched-run-on-gpus',
          label: 'Run on GPUs',
          icon: gpuIcon,
          tooltip: 'Submit this notebook as a GPU job from the GPUs panel',
          onClick: () => {
            void nb.context.save().then(() => app.commands.execute(CommandIDs.runNotebook, { path: nb.context.path }));
          }
        });
        nb.toolbar.insertItem(10, 'runOnGpus', button);
        return button;
      }
    });
  }
};

export default [modelPlugin, plugin, definitionsPlugin, usagePlugin];
