/**
 * One toast per burst of like news (new user 22, N7: one `cancel --mine` of 299 pending jobs put
 * 299 toasts on the screen, still there 9 minutes on, burying a Preempted and an Idle GPUs toast).
 *
 * Notices are added to a *group* by key (`ended:failed`, `cancel:by:ann`, `preempted:j-9`,
 * `idle:warn:release:lease` …). A group's first notice gets its own toast; each later one within
 * {@link BURST_MS} of the last updates that toast to the group's summary ("12 jobs failed: a, b, c
 * and 9 more") instead of stacking another. A group's render may say nothing for a notice (the
 * user's own cancel of one job), and a notice can leave its group (an idle warning cleared or moved
 * to its next stage): the toast then says what is left, or is dismissed when nothing is.
 */
import { Notification } from '@jupyterlab/apputils';

import { serverText } from './format';

/** Notices of one group within this long of the group's last join its toast (ms). */
export const BURST_MS = 60_000;

/** How long news that needs nothing from the user stays on screen (ms); the bell keeps it after. */
export const NEWS_MS = 8_000;

/** How long an alert that needs no action stays on screen (ms): a failure, a preemption, a reclaim. */
export const ALERT_MS = 20_000;

/**
 * Updates of a shown toast wait this long and go out as one (ms): JupyterLab makes a toast
 * asynchronously, and an update that comes before it is up makes a second one that is dropped
 * (its toast id is taken) — the toast then kept its first words ("2 of your pending jobs were
 * cancelled" for 60, seen in the browser test). Coalescing also spares the page 298 re-renders.
 */
export const UPDATE_MS = 300;

/** Groups remembered (their toasts updated when a notice leaves); the oldest are forgotten. */
export const GROUPS_KEPT = 200;

/** The toast a group shows: what {@link Render} returns. `autoClose: false` only when it needs action. */
export interface IToast {
  type: 'info' | 'success' | 'warning' | 'error';
  message: string;
  autoClose: number | false;
  actions: Notification.IAction[];
}

/** What a group's toast says for its notices (oldest first, at least one); null: no toast. */
export type Render<T> = (items: readonly T[]) => IToast | null;

interface IGroup<T> {
  key: string;
  items: T[];
  render: Render<T>;
  toast: string | null;
  last: number;
  /** Notices added since its toast last said them (shown alone if the toast was closed). */
  fresh: T[];
}

/**
 * Toasts folded by group (see module docstring). `now` (ms since the epoch) and `schedule` (a
 * timer) are injected for tests. A group's first toast shows at once; its updates go out together
 * {@link UPDATE_MS} later: a burst read in one go (a re-read of 299 jobs) shows one toast, then
 * updates it once to "299 …".
 */
export class ToastFolder<T extends { id: string }> {
  /** Oldest first; a key's latest group is the one that takes new notices. */
  private groups: IGroup<T>[] = [];

  /** Groups whose toast has an update waiting ({@link UPDATE_MS}). */
  private readonly dirty = new Set<IGroup<T>>();
  private timer: unknown = null;

  constructor(
    private readonly now: () => number = () => Date.now(),
    private readonly windowMs = BURST_MS,
    private readonly schedule: (fn: () => void, ms: number) => unknown = (fn, ms) => setTimeout(fn, ms)
  ) {}

  /** Add `item` to group `key` (a new group after {@link BURST_MS} quiet); its toast shows or updates. */
  add(key: string, item: T, render: Render<T>): void {
    const now = this.now();
    let group = [...this.groups].reverse().find(g => g.key === key);
    if (!group || now - group.last > this.windowMs) {
      group = { key, items: [], render, toast: null, last: now, fresh: [] };
      // an older group keeps its toast, which remove() still updates; a long session keeps the latest
      this.groups = [...this.groups.slice(1 - GROUPS_KEPT), group];
    }
    group.items.push(item);
    group.fresh.push(item);
    group.render = render;
    group.last = now;
    this.show(group);
  }

  /** Send the waiting updates (each group's toast says all its notices). */
  flush(): void {
    this.timer = null;
    const groups = [...this.dirty];
    this.dirty.clear();
    for (const group of groups) {
      if (!group.toast) {
        continue;
      }
      const toast = group.render(group.items);
      if (!toast) {
        Notification.dismiss(group.toast);
        group.toast = null;
        continue;
      }
      const { type, message, autoClose, actions } = toast;
      if (!Notification.update({ id: group.toast, message: serverText(message), type, autoClose, actions })) {
        // closed by the user meanwhile: the notices since then get a toast of their own
        group.toast = null;
        group.items = group.fresh;
        this.show(group);
      }
      group.fresh = [];
    }
  }

  /** Take `id` out of every group (an idle warning cleared or moved on): the toasts say what is left. */
  remove(id: string): void {
    for (const group of this.groups) {
      const left = group.items.filter(item => item.id !== id);
      if (left.length === group.items.length) {
        continue;
      }
      group.items = left;
      group.fresh = group.fresh.filter(item => item.id !== id);
      if (!left.length) {
        if (group.toast) {
          Notification.dismiss(group.toast);
        }
        this.dirty.delete(group);
        this.groups = this.groups.filter(g => g !== group);
      } else {
        this.show(group);
      }
    }
  }

  /** The group's toast made now, or its update sent within {@link UPDATE_MS}. */
  private show(group: IGroup<T>): void {
    if (group.toast) {
      this.dirty.add(group);
      if (this.timer === null) {
        this.timer = this.schedule(() => this.flush(), UPDATE_MS);
      }
      return;
    }
    const toast = group.render(group.items);
    if (toast) {
      const { type, message, autoClose, actions } = toast;
      // a job, user or team name in it shows its hidden characters as escapes (s30, red29 R2's rule)
      group.toast = Notification[type](serverText(message), { autoClose, actions });
      group.fresh = [];
    }
  }
}

/** `a, b, c and 9 more` (the first `shown` names, then how many others). */
export function namesList(names: readonly string[], more: (shown: string, rest: number) => string, shown = 3): string {
  return names.length > shown ? more(names.slice(0, shown).join(', '), names.length - shown) : names.join(', ');
}
