/**
 * Helpers for DOM tests (jsdom): a started model on the API double, a section context with a
 * real command registry and translator, and a way to let Lumino and React finish rendering.
 */
import { StateDB } from '@jupyterlab/statedb';
import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import { act } from 'react';

import { SchedClient } from '../src/client';
import { DefinitionsView } from '../src/definitions';
import { SchedModel } from '../src/model';
import { SchedNotifier } from '../src/notify';
import { SchedSections } from '../src/registry';
import { builtinSections } from '../src/sections';
import { SchedSidebar, SidebarState } from '../src/sidebar';
import type { ISchedSection, ISectionState, SchedResource } from '../src/tokens';
import type { Job } from '../src/types';
import { FakeSchedServer, settle } from './fakeserver';

/** Let posted Lumino messages (update requests) and React renders run. */
export async function flush(): Promise<void> {
  await act(async () => {
    MessageLoop.flush();
    await settle();
    MessageLoop.flush();
    await settle();
  });
}

/** Type `value` into an input as a user does (React sees an input event). */
export async function type(element: HTMLInputElement, value: string): Promise<void> {
  await act(async () => {
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(element, value);
    element.dispatchEvent(new Event('input', { bubbles: true }));
  });
}

/** Click `element` and let the answer it sends for render. */
export async function click(element: Element): Promise<void> {
  await act(async () => {
    (element as HTMLElement).click();
  });
  await settle();
  await flush();
}

/** The toasts' {@link SchedNotifier} on a started model whose server lists `jobs` (no commands registered). */
export async function notifierOn(jobs: Job[]): Promise<{ server: FakeSchedServer; model: SchedModel; notifier: SchedNotifier }> {
  const server = new FakeSchedServer();
  server.jobs = jobs;
  const { model } = await startedModel(server, 'jobs');
  const notifier = new SchedNotifier(model, new CommandRegistry(), nullTranslator.load('x'));
  return { server, model, notifier };
}

/**
 * The Scheduled notebooks view on a started model over `server`, in the document, its first read done; `done` lets
 * what a click started finish, `close` takes it all down.
 */
export async function mountedDefinitions(server: FakeSchedServer): Promise<{ v: DefinitionsView; done: () => Promise<void>; close: () => void }> {
  const { model } = await startedModel(server);
  const v = new DefinitionsView({ model, openPath: async () => undefined, saveNotebook: async () => undefined });
  document.body.appendChild(v.node);
  const done = async (): Promise<void> => {
    await settle();
    await flush();
  };
  await done();
  const close = (): void => {
    v.dispose();
    model.dispose();
    v.node.remove();
  };
  return { v, done, close };
}

/** A model on the API double, started, with `resources` read once. */
export async function startedModel(server = new FakeSchedServer(), ...resources: SchedResource[]): Promise<{ server: FakeSchedServer; model: SchedModel }> {
  const model = new SchedModel({ client: new SchedClient(server.transport), refreshInterval: 10 });
  const watches = resources.map(r => model.watch(r));
  await model.start();
  await settle();
  for (const w of watches) {
    w.dispose();
  }
  return { server, model };
}

export class MemoryState implements ISectionState {
  readonly values: Record<string, string | number | boolean> = {};
  get<T extends string | number | boolean>(key: string, fallback: T): T {
    return (key in this.values ? this.values[key] : fallback) as T;
  }
  set(key: string, value: string | number | boolean): void {
    this.values[key] = value;
  }
}

export function context(model: SchedModel, commands = new CommandRegistry(), state: ISectionState = new MemoryState()): ISchedSection.IContext {
  return { model, translator: nullTranslator, trans: nullTranslator.load('jupyter_sched'), commands, state };
}

/** Attach a widget to the document and render it. */
/** Widgets {@link mount} attached, for {@link disposeMounted}. */
const mounted: Widget[] = [];

/** Dispose every widget {@link mount} attached: their React effects clean up (debounce timers cleared), so no
 * timer of a finished test sets state after the test environment is torn down ("window is not defined",
 * an unhandled rejection that fails the run: session 41, the admin audit search's 300 ms debounce). */
export function disposeMounted(): void {
  for (const widget of mounted.splice(0)) {
    if (!widget.isDisposed) {
      widget.dispose();
    }
  }
}

export async function mount<T extends Widget>(widget: T): Promise<T> {
  mounted.push(widget);
  Widget.attach(widget, document.body);
  widget.update();
  await flush();
  return widget;
}

/** A command registry recording executions of the given ids. */
export function recordingCommands(...ids: string[]): { commands: CommandRegistry; runs: { id: string; args: unknown }[] } {
  const commands = new CommandRegistry();
  const runs: { id: string; args: unknown }[] = [];
  for (const id of ids) {
    commands.addCommand(id, { label: id, execute: args => void runs.push({ id, args }) });
  }
  return { commands, runs };
}

export function text(node: Element | null | undefined): string {
  return (node?.textContent ?? '').replace(/\s+/g, ' ').trim();
}

/** The GPUs sidebar with the built-in sections on the API double, attached, started and rendered. */
export async function sidebarOn(server: FakeSchedServer, db = new StateDB(), options: { order?: string[]; open?: string[] } = {}) {
  const model = new SchedModel({ client: new SchedClient(server.transport) });
  const sections = new SchedSections();
  const state = new SidebarState(db);
  const sidebar = new SchedSidebar({
    model,
    sections,
    translator: nullTranslator,
    commands: new CommandRegistry(),
    state,
    order: options.order,
    openByDefault: options.open ?? ['inventory', 'queue', 'mywork', 'submit']
  });
  const trans = nullTranslator.load('jupyter_sched');
  for (const section of builtinSections({ trans, serverRoot: '', onSubmitted: () => undefined, onSubmitView: () => undefined })) {
    sections.add(section);
  }
  Widget.attach(sidebar, document.body);
  await model.start();
  await state.load();
  sidebar.syncSections();
  await settle();
  await flush();
  return { model, sections, state, sidebar };
}
