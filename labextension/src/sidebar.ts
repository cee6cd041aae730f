/**
 * The GPUs sidebar: a `SidePanel` whose accordion holds one section per entry of the
 * {@link ISchedSections} registry (built-in ones and other plugins' alike), each with its toolbar
 * and a badge in the title bar. Section order comes from the settings (`sectionOrder`, then rank);
 * which sections are collapsed and their filters are kept in the state database, so a reload
 * shows the sidebar as the user left it.
 */
import type { IStateDB } from '@jupyterlab/statedb';
import type { ITranslator, TranslationBundle } from '@jupyterlab/translation';
import { CommandToolbarButton, PanelWithToolbar, refreshIcon, SidePanel } from '@jupyterlab/ui-components';
import type { CommandRegistry } from '@lumino/commands';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import type { Message } from '@lumino/messaging';
import type { AccordionPanel } from '@lumino/widgets';
import { Widget } from '@lumino/widgets';

import { ENABLE_FIX } from './client';
import { CommandIDs } from './commandids';
import { shownText } from './format';
import type { StreamStatus } from './events';
import type { ISchedModel, ISchedSection, ISchedSections, ISectionState } from './tokens';
import { reconnectingText } from './types';

/** Where the sidebar's UI state lives in the state database. */
export const SIDEBAR_STATE_KEY = '@jupyter-sched/labextension:sidebar';

/** Persisted UI state: which sections are expanded or collapsed, and per-section filters. */
export class SidebarState {
  private expanded: Record<string, boolean> = {};
  private filters: Record<string, Record<string, string | number | boolean>> = {};
  private saving: Promise<void> = Promise.resolve();
  private _loaded = false;

  constructor(private readonly db: IStateDB | null) {}

  /** Whether {@link load} finished (sections wait for it, so they open as they were left). */
  get loaded(): boolean {
    return this._loaded;
  }

  /**
   * Read the saved state (missing or malformed state: start empty). In JupyterLab the state
   * database answers only once the workspace is restored, which waits for plugins to activate:
   * call this without awaiting it during activation.
   */
  async load(): Promise<void> {
    try {
      await this.read();
    } finally {
      this._loaded = true;
    }
  }

  private async read(): Promise<void> {
    if (!this.db) {
      return;
    }
    try {
      const value = (await this.db.fetch(SIDEBAR_STATE_KEY)) as ReadonlyPartialJSONObject | undefined;
      if (value && typeof value === 'object') {
        this.expanded = { ...((value.expanded as Record<string, boolean>) ?? {}) };
        this.filters = JSON.parse(JSON.stringify(value.filters ?? {}));
      }
    } catch (err) {
      console.warn('jupyter_sched: sidebar state could not be read; starting fresh', err);
    }
  }

  /** Whether a section was left expanded (undefined: never toggled). */
  isExpanded(id: string): boolean | undefined {
    return this.expanded[id];
  }

  setExpanded(id: string, expanded: boolean): void {
    if (this.expanded[id] !== expanded) {
      this.expanded[id] = expanded;
      this.save();
    }
  }

  /** One section's filters as an {@link ISectionState}. */
  section(id: string): ISectionState {
    return {
      get: <T extends string | number | boolean>(key: string, fallback: T): T => {
        const value = this.filters[id]?.[key];
        return (typeof value === typeof fallback ? value : fallback) as T;
      },
      set: (key: string, value: string | number | boolean): void => {
        this.filters[id] = { ...(this.filters[id] ?? {}), [key]: value };
        this.save();
      }
    };
  }

  /** Resolves when every write so far reached the database. */
  flushed(): Promise<void> {
    return this.saving;
  }

  private save(): void {
    const db = this.db;
    if (!db) {
      return;
    }
    const value = { expanded: { ...this.expanded }, filters: JSON.parse(JSON.stringify(this.filters)) };
    this.saving = this.saving.then(() => db.save(SIDEBAR_STATE_KEY, value)).catch(err => console.warn('jupyter_sched: sidebar state not saved', err));
  }
}

/** Construction options of {@link SchedSidebar}. */
export interface ISchedSidebarOptions {
  model: ISchedModel;
  sections: ISchedSections;
  translator: ITranslator;
  commands: CommandRegistry;
  state: SidebarState;
  /** Section ids first in this order (settings `sectionOrder`); the rest by rank. */
  order?: readonly string[];
  /** Sections expanded the first time (settings `openSections`); later the saved state wins. */
  openByDefault?: readonly string[];
}

/** A section of the sidebar: the content widget under a title bar with its toolbar. */
class SectionPanel extends PanelWithToolbar {
  readonly badgeNode = document.createElement('span');

  constructor(
    readonly section: ISchedSection,
    readonly content: ISchedSection.IContent
  ) {
    super();
    this.id = `jp-sched-section-${section.id}`;
    this.addClass('jp-sched-section');
    this.addClass(`jp-sched-section-${section.id}`);
    this.node.dataset.section = section.id;
    this.title.label = section.title;
    this.title.dataset = { section: section.id };
    this.badgeNode.className = 'jp-sched-badge';
    const badge = new Widget({ node: this.badgeNode });
    badge.addClass('jp-sched-badge-item');
    this.toolbar.addItem('badge', badge);
    for (const item of content.toolbar ?? []) {
      this.toolbar.addItem(item.name, item.widget);
    }
    this.addWidget(content.widget);
  }

  updateBadge(): void {
    const text = shownText(this.content.badge?.() ?? ''); // it may name jobs (Inventory's held-off list): s30
    if (this.badgeNode.textContent !== text) {
      this.badgeNode.replaceChildren(...badgeParts(text));
      this.badgeNode.title = text; // the whole text when a narrow title bar cuts it (new user 11, N22)
    }
  }
}

/**
 * A badge's text as parts that wrap whole, at its ` · ` only: `167 pending ·` over `0 running` when the title bar is
 * too narrow for one line (newuser34 n4: "QUEUE 167 PENDING · 0 RUNNI…" — the counts a user wants were the part cut).
 * Their text is the badge's text, unchanged (`textContent`).
 */
export function badgeParts(text: string): Node[] {
  const parts = text.split(' · ');
  return parts.flatMap((part, i) => {
    const span = document.createElement('span');
    span.className = 'jp-sched-badge-part';
    span.textContent = i < parts.length - 1 ? `${part} ·` : part;
    return i ? [document.createTextNode(' '), span] : [span];
  });
}

/** What a keyboard user can reach by Tab, in document order (a hidden or disabled control is left out). */
const FOCUSABLE = 'button:not([disabled]), [href], input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/** The first control of `node` a keyboard user reaches (its Refresh button; Retry while the scheduler is unavailable). */
export function firstControl(node: HTMLElement): HTMLElement | null {
  for (const el of node.querySelectorAll<HTMLElement>(FOCUSABLE)) {
    if (!el.closest('.lm-mod-hidden, [hidden], [aria-hidden="true"]')) {
      return el;
    }
  }
  return null;
}

/**
 * The tab's tooltip: what the panel shows and, when the Show GPUs Panel command has a key binding, its keys —
 * `GPUs: inventory, queue, my work, quotas (Alt+Shift+G)`, as the File Browser's `File Browser (Ctrl+Shift+F)`
 * (newuser41 n10). `keys`: the binding's keystrokes, formatted (CommandRegistry.formatKeystroke); '' for none.
 */
export function sidebarCaption(trans: TranslationBundle, keys: string): string {
  return keys ? trans.__('GPUs: inventory, queue, my work, quotas (%1)', keys) : trans.__('GPUs: inventory, queue, my work, quotas');
}

/** The sidebar. */
export class SchedSidebar extends SidePanel {
  private readonly model: ISchedModel;
  private readonly trans: TranslationBundle;
  private readonly panels = new Map<string, SectionPanel>();
  private readonly streamNode: HTMLElement;
  private readonly noticeNode: HTMLElement;
  private readonly reconnectingNode: HTMLElement;
  private readonly downNode: HTMLElement;
  private readonly reinstalledNode: HTMLElement;
  private order: readonly string[];
  /** Redraws the reconnect lines each second while a loop reconnects (their waits count down: newuser33 N3). */
  private ticker: ReturnType<typeof setInterval> | null = null;
  /** True while the sidebar itself expands or collapses (restoring): not a user choice to save. */
  private restoring = false;

  constructor(private readonly options: ISchedSidebarOptions) {
    super({ translator: options.translator });
    this.model = options.model;
    this.trans = options.translator.load('jupyter_sched');
    this.order = options.order ?? [];
    this.id = 'jupyter-sched-panel';
    this.addClass('jp-sched-sidebar');
    this.title.caption = sidebarCaption(this.trans, '');
    this.content.node.setAttribute('aria-label', this.trans.__('GPU scheduler sections'));

    const header = document.createElement('div');
    header.className = 'jp-sched-header';
    const heading = document.createElement('h2');
    heading.className = 'jp-sched-title';
    heading.textContent = this.trans.__('GPUs');
    this.streamNode = document.createElement('span');
    this.streamNode.className = 'jp-sched-stream';
    this.streamNode.setAttribute('role', 'status');
    header.append(heading, this.streamNode);
    this.noticeNode = document.createElement('div');
    this.noticeNode.className = 'jp-sched-notice';
    this.reconnectingNode = document.createElement('ul');
    this.reconnectingNode.className = 'jp-sched-reconnecting';
    this.reconnectingNode.setAttribute('role', 'status');
    this.reconnectingNode.setAttribute('aria-label', this.trans.__('Server connections being re-established'));
    // one alert for a server that does not answer (a restart), not one per section (newuser26 n12)
    this.downNode = document.createElement('p');
    this.downNode.className = 'jp-sched-feedback jp-sched-feedback-error jp-sched-server-down';
    this.downNode.setAttribute('role', 'alert');
    // jupyter_sched reinstalled under the running server (GET config's reinstalled): said before any job waits (n12)
    this.reinstalledNode = document.createElement('p');
    this.reinstalledNode.className = 'jp-sched-feedback jp-sched-feedback-warning jp-sched-reinstalled';
    this.reinstalledNode.setAttribute('role', 'status');
    const headerWidget = new Widget();
    headerWidget.addClass('jp-sched-header-area');
    headerWidget.node.append(header, this.downNode, this.reinstalledNode, this.reconnectingNode, this.noticeNode);
    this.header.addWidget(headerWidget);

    this.toolbar.addItem('refresh', new CommandToolbarButton({ commands: options.commands, id: CommandIDs.refresh, icon: refreshIcon, label: '' }));

    const accordion = this.content as AccordionPanel;
    accordion.expansionToggled.connect((_, index) => {
      const panel = accordion.widgets[index] as SectionPanel | undefined;
      if (panel && !this.restoring) {
        options.state.setExpanded(panel.section.id, !panel.isHidden);
      }
    });

    this.model.statusChanged.connect(this.onStatus, this);
    this.model.quotasChanged.connect(this.syncSections, this);
    this.model.streamStatusChanged.connect((_, status) => this.showStream(status));
    this.model.reconnectingChanged.connect(this.showReconnecting, this);
    this.model.serverDownChanged.connect(this.showDown, this);
    // the header says LIVE only while everything answers: a loop reconnecting or a read unanswered ends it (N3)
    this.model.reconnectingChanged.connect(this.showHeader, this);
    this.model.serverDownChanged.connect(this.showHeader, this);
    for (const signal of [this.model.inventoryChanged, this.model.queueChanged, this.model.jobsChanged, this.model.quotasChanged] as const) {
      signal.connect(this.updateBadges, this);
    }
    options.sections.added.connect(this.syncSections, this);
    options.sections.removed.connect((_, section) => this.removeSection(section.id));
    this.onStatus();
    this.showStream(this.model.streamStatus);
    this.showReconnecting();
    this.showDown();
  }

  /**
   * Activated (Show GPUs Panel, its shortcut, the tab): the keyboard goes to the panel's first control, as JupyterLab's
   * own sidebars take it on activate — newuser41 n10: focus stayed in the notebook's cell, whose Tab then indented it
   * and never reached the panel. Focus already inside the panel stays where it is.
   */
  protected onActivateRequest(msg: Message): void {
    super.onActivateRequest(msg);
    if (this.isAttached && this.isVisible && !this.node.contains(document.activeElement)) {
      firstControl(this.node)?.focus();
    }
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.model.reconnectingChanged.disconnect(this.showReconnecting, this);
    this.model.serverDownChanged.disconnect(this.showDown, this);
    this.model.reconnectingChanged.disconnect(this.showHeader, this);
    this.model.serverDownChanged.disconnect(this.showHeader, this);
    if (this.ticker !== null) {
      clearInterval(this.ticker);
      this.ticker = null;
    }
    this.model.statusChanged.disconnect(this.onStatus, this);
    this.model.quotasChanged.disconnect(this.syncSections, this);
    for (const signal of [this.model.inventoryChanged, this.model.queueChanged, this.model.jobsChanged, this.model.quotasChanged] as const) {
      signal.disconnect(this.updateBadges, this);
    }
    this.options.sections.added.disconnect(this.syncSections, this);
    super.dispose();
  }

  /** Ids of the sections shown, top to bottom. */
  get sectionIds(): string[] {
    return (this.content as AccordionPanel).widgets.map(w => (w as SectionPanel).section.id);
  }

  /** The content widget of a section, if shown. */
  sectionContent(id: string): Widget | null {
    return this.panels.get(id)?.content.widget ?? null;
  }

  /** Whether a section is shown expanded. */
  isExpanded(id: string): boolean {
    const panel = this.panels.get(id);
    return !!panel && !panel.isHidden;
  }

  /** Expand a section and scroll it into view. */
  showSection(id: string): void {
    const panel = this.panels.get(id);
    if (!panel) {
      return;
    }
    const accordion = this.content as AccordionPanel;
    const index = accordion.widgets.indexOf(panel);
    if (index >= 0 && panel.isHidden) {
      accordion.expand(index);
      this.options.state.setExpanded(id, true);
    }
    panel.node.scrollIntoView?.({ block: 'nearest' });
  }

  /** Apply a new `sectionOrder` (settings changed, or a move command). */
  setOrder(order: readonly string[]): void {
    this.order = [...order];
    const accordion = this.content as AccordionPanel;
    const wanted = this.sorted([...this.panels.values()].filter(p => p.parent === accordion).map(p => p.section));
    wanted.forEach((section, index) => {
      const panel = this.panels.get(section.id)!;
      if (accordion.widgets.indexOf(panel) !== index) {
        const expanded = !panel.isHidden;
        accordion.insertWidget(index, panel);
        this.setExpansion(panel, expanded);
      }
    });
  }

  /** The order of ids after moving `id` by `delta` places (for the move commands). */
  movedOrder(id: string, delta: -1 | 1): string[] {
    const ids = this.sectionIds;
    const index = ids.indexOf(id);
    const target = index + delta;
    if (index < 0 || target < 0 || target >= ids.length) {
      return ids;
    }
    [ids[index], ids[target]] = [ids[target], ids[index]];
    return ids;
  }

  private sorted(sections: ISchedSection[]): ISchedSection[] {
    const position = (s: ISchedSection) => {
      const i = this.order.indexOf(s.id);
      return i >= 0 ? i : this.order.length;
    };
    return sections.sort((a, b) => position(a) - position(b) || (a.rank ?? 1000) - (b.rank ?? 1000));
  }

  private onStatus(): void {
    this.showReinstalled(); // read with config at start
    const { model, trans } = this;
    const notice = this.noticeNode;
    notice.replaceChildren();
    notice.removeAttribute('role');
    notice.className = 'jp-sched-notice';
    if (model.status === 'loading' || model.status === 'idle') {
      const p = document.createElement('p');
      p.className = 'jp-sched-muted';
      p.textContent = trans.__('Connecting to the scheduler…');
      notice.append(p);
    } else if (model.status === 'missing' || model.status === 'failed') {
      notice.classList.add('jp-sched-missing');
      notice.setAttribute('role', 'alert');
      const title = document.createElement('strong');
      const text = document.createElement('p');
      if (model.status === 'missing') {
        title.textContent = trans.__('Server extension not enabled');
        text.textContent = trans.__('This Jupyter server has no jupyter_sched API, so there is no GPU scheduler to show.');
        const fix = document.createElement('p');
        const code = document.createElement('code');
        code.textContent = ENABLE_FIX;
        fix.append(trans.__('Fix: run '), code, trans.__(' in a terminal on the server, then restart JupyterLab.'));
        notice.append(title, text, fix);
      } else {
        title.textContent = trans.__('Scheduler unavailable');
        text.textContent = shownText(model.startError ?? '');
        notice.append(title, text);
        if (model.retryStartInS !== null) {
          // the scheduler off (its cause and fix above) or the server restarting: it comes back by itself (store41)
          const again = document.createElement('p');
          again.className = 'jp-sched-muted jp-sched-retrying';
          again.textContent = trans.__('Asked again every %1 s: the panel comes back by itself once the scheduler runs.', model.retryStartInS);
          notice.append(again);
        }
      }
      const retry = document.createElement('button');
      retry.type = 'button';
      retry.className = 'jp-sched-button';
      retry.textContent = trans.__('Retry');
      retry.addEventListener('click', () => void model.start());
      notice.append(retry);
    }
    this.syncSections();
  }

  private showHeader(): void {
    this.showStream(this.model.streamStatus);
  }

  private showStream(status: StreamStatus): void {
    const { trans } = this;
    // the stream open but the scheduler behind the server not answering (a hung hub service): not live (newuser33 N3)
    const unanswered = status === 'open' && !this.model.live;
    const shown: StreamStatus = unanswered ? 'down' : status;
    const text = shown === 'open' ? trans.__('live') : shown === 'connecting' ? trans.__('connecting') : trans.__('reconnecting');
    this.streamNode.dataset.status = shown;
    if (this.streamNode.textContent !== text) {
      this.streamNode.textContent = this.model.status === 'ready' ? text : '';
    }
    this.streamNode.title = unanswered
      ? trans.__('The scheduler is not answering; what is shown is as of its last answer; retrying')
      : status === 'open'
        ? trans.__('Live updates from the event stream')
        : trans.__('Event stream %1; refreshing every %2 s', status, this.model.refreshInterval);
  }

  /** One line per server retry loop that is reconnecting, in the server's own sentence
   * ("reconnecting to the database (attempt 3, next in 4 s): …"); empty (hidden) when all are connected. */
  private showReconnecting(): void {
    const now = Date.now();
    const lines = [...this.model.reconnecting.entries()].map(([loop, state]) => {
      const said = reconnectingText(state, now);
      const li = document.createElement('li');
      li.dataset.loop = loop;
      li.textContent = shownText(said.charAt(0).toUpperCase() + said.slice(1));
      return li;
    });
    const same = lines.length === this.reconnectingNode.children.length &&
      lines.every((li, i) => li.textContent === this.reconnectingNode.children[i].textContent && li.dataset.loop === (this.reconnectingNode.children[i] as HTMLElement).dataset.loop);
    if (!same) {
      this.reconnectingNode.replaceChildren(...lines);
    }
    if (lines.length && this.ticker === null) {
      this.ticker = setInterval(() => this.showReconnecting(), 1000);
    } else if (!lines.length && this.ticker !== null) {
      clearInterval(this.ticker);
      this.ticker = null;
    }
  }

  /** The notice of a reinstall under the running server (empty, hidden, while it runs what is installed). */
  private showReinstalled(): void {
    const said = this.model.config?.reinstalled ?? '';
    const text = shownText(said && said.charAt(0).toUpperCase() + said.slice(1));
    if (this.reinstalledNode.textContent !== text) {
      this.reinstalledNode.textContent = text;
    }
  }

  /** The one line saying the server does not answer (empty, hidden, while it does). */
  private showDown(): void {
    const said = this.model.serverDown ?? '';
    const text = shownText(said && said.charAt(0).toUpperCase() + said.slice(1));
    if (this.downNode.textContent !== text) {
      this.downNode.textContent = text;
    }
  }

  /** Add the registered sections that are available now, remove those that are not. */
  syncSections(): void {
    const ready = this.model.status === 'ready' && this.options.state.loaded;
    for (const section of this.sorted([...this.options.sections.items()])) {
      const available = ready && (section.isAvailable?.(this.model) ?? true);
      if (available && !this.panels.get(section.id)?.parent) {
        this.addSection(section);
      } else if (!available && this.panels.get(section.id)?.parent) {
        this.panels.get(section.id)!.parent = null;
      }
    }
    this.updateBadges();
  }

  private addSection(section: ISchedSection): void {
    let panel = this.panels.get(section.id);
    if (!panel) {
      const content = section.create({
        model: this.model,
        translator: this.options.translator,
        trans: this.trans,
        commands: this.options.commands,
        state: this.options.state.section(section.id)
      });
      panel = new SectionPanel(section, content);
      this.panels.set(section.id, panel);
    }
    const accordion = this.content as AccordionPanel;
    const shown = this.sorted([...this.panels.values()].filter(p => p.parent === accordion || p === panel).map(p => p.section));
    accordion.insertWidget(shown.indexOf(section), panel);
    const saved = this.options.state.isExpanded(section.id);
    this.setExpansion(panel, saved ?? (this.options.openByDefault ?? []).includes(section.id));
    panel.updateBadge();
  }

  private setExpansion(panel: SectionPanel, expanded: boolean): void {
    const accordion = this.content as AccordionPanel;
    const index = accordion.widgets.indexOf(panel);
    if (index < 0) {
      return;
    }
    this.restoring = true;
    try {
      if (expanded && panel.isHidden) {
        accordion.expand(index);
      } else if (!expanded && !panel.isHidden) {
        accordion.collapse(index);
      }
    } finally {
      this.restoring = false;
    }
  }

  private removeSection(id: string): void {
    const panel = this.panels.get(id);
    if (panel) {
      this.panels.delete(id);
      panel.dispose();
    }
  }

  private updateBadges(): void {
    this.showReinstalled(); // config is read again with the inventory
    for (const panel of this.panels.values()) {
      panel.updateBadge();
    }
  }
}
