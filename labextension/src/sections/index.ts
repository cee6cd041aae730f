/**
 * The built-in sections of the GPUs sidebar, registered through {@link ISchedSections} like any
 * other plugin's: Inventory, Queue, My work, Quota, Submit and (for admins) Admin.
 */
import type { TranslationBundle } from '@jupyterlab/translation';

import type { ISchedSection } from '../tokens';
import type { Job } from '../types';
import { AdminView } from './admin';
import { InventoryView } from './inventory';
import { MyWorkView, QueueView } from './jobs';
import { quotaBadge, QuotaView } from './quota';
import { SubmitView } from './submit';

export { AdminView, InventoryView, MyWorkView, QueueView, QuotaView, SubmitView };

/** Ids of the built-in sections, top to bottom by default. */
export const BUILTIN_SECTIONS = ['inventory', 'queue', 'mywork', 'quota', 'submit', 'admin'] as const;

export interface IBuiltinOptions {
  trans: TranslationBundle;
  /** The server's root directory (file-browser paths are relative to it). */
  serverRoot: string;
  /** A job was submitted from the form. */
  onSubmitted: (job: Job) => void;
  /** The Submit view was created (the run commands prefill it). */
  onSubmitView: (view: SubmitView) => void;
}

export function builtinSections(options: IBuiltinOptions): ISchedSection[] {
  const { trans } = options;
  return [
    {
      id: 'inventory',
      title: trans.__('Inventory'),
      rank: 100,
      create: ctx => ({ widget: new InventoryView(ctx), badge: () => InventoryView.badge(ctx.model, trans) })
    },
    {
      id: 'queue',
      title: trans.__('Queue'),
      rank: 200,
      // no toolbar: "Mine only" is in the section's body, and the title bar keeps its room for the counts (newuser34 n4)
      create: ctx => ({ widget: new QueueView(ctx), badge: () => QueueView.badge(ctx.model, trans) })
    },
    {
      id: 'mywork',
      title: trans.__('My work'),
      rank: 300,
      create: ctx => ({ widget: new MyWorkView(ctx), badge: () => MyWorkView.badge(ctx.model, trans) })
    },
    {
      id: 'quota',
      title: trans.__('Quota'),
      rank: 400,
      isAvailable: model => model.supports('quotas'),
      create: ctx => ({ widget: new QuotaView(ctx), badge: () => quotaBadge(ctx.model, trans) })
    },
    {
      id: 'submit',
      title: trans.__('Submit'),
      rank: 500,
      isAvailable: model => model.supports('submit'),
      create: ctx => {
        const view = new SubmitView(ctx, options.serverRoot, options.onSubmitted);
        options.onSubmitView(view);
        return { widget: view };
      }
    },
    {
      id: 'admin',
      title: trans.__('Admin'),
      rank: 600,
      isAvailable: model => model.me?.is_admin === true,
      create: ctx => ({ widget: new AdminView(ctx) })
    }
  ];
}
