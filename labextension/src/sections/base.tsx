/**
 * The base of a section body: a React widget that re-renders when the model signals a change it
 * cares about, and keeps its resources watched (fresh) only while it is visible — a collapsed
 * section or a closed sidebar asks the server for nothing.
 *
 * React reconciles each render against the DOM, so a re-render changes only the text and
 * attributes that differ: text selection survives, focus stays, and a `role="alert"` whose text
 * did not change is not announced again.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import type { IDisposable } from '@lumino/disposable';
import type { Message } from '@lumino/messaging';
import type { ISignal } from '@lumino/signaling';
import * as React from 'react';

import { shownText } from '../format';
import type { ISchedModel, ISchedSection, SchedResource } from '../tokens';

/** What a view listens to. */
export interface IModelViewOptions {
  /** Resources kept fresh while visible. */
  resources: readonly SchedResource[];
  /** Model signals after which the view re-renders. */
  signals: ReadonlyArray<ISignal<ISchedModel, unknown>>;
  /** Re-render this often (ms) while visible, for times that move with the clock (0: never). */
  tickMs?: number;
  /**
   * Make the body a tab stop: for views that may hold nothing focusable, so keyboard users can
   * still scroll them (WCAG 2.1.1; axe `scrollable-region-focusable`).
   */
  focusable?: boolean;
}

/**
 * The "now" a view of `model` says its times against: `wall`, or the scheduler's last answer while it does not answer
 * (`serverDown` set) — never later than `wall`.
 */
export function shownNow(model: Pick<ISchedModel, 'serverDown' | 'lastAnswerAt'>, wall: Date): Date {
  const last = model.serverDown !== null ? model.lastAnswerAt : null;
  return last && last.getTime() < wall.getTime() ? last : wall;
}

export abstract class ModelView extends ReactWidget {
  protected readonly model: ISchedModel;
  protected readonly trans: TranslationBundle;
  private watches: IDisposable[] = [];
  private tick: ReturnType<typeof setInterval> | null = null;
  private dirty = true;
  private active = false;

  constructor(
    protected readonly ctx: ISchedSection.IContext,
    private readonly viewOptions: IModelViewOptions
  ) {
    super();
    this.model = ctx.model;
    this.trans = ctx.trans;
    this.addClass('jp-sched-section-body');
    if (viewOptions.focusable) {
      this.node.tabIndex = 0;
    }
    for (const signal of viewOptions.signals) {
      signal.connect(this.onModelChanged, this);
    }
  }

  /**
   * The time the section's clocks, ETAs and "(now)"/"in 2m" are worked out against: the browser's clock, or, while
   * the scheduler does not answer (`model.serverDown`), the time of its last answer — what is shown is what it said
   * then, as the header says ("showing what it said at T"), so "ETA 19:01 UTC (now)" is not re-aged against a clock
   * it never saw (newuser33 N3 leftover). A method so tests can pin it.
   */
  protected now(): Date {
    return shownNow(this.model, new Date());
  }

  private onModelChanged(): void {
    if (this.isVisible) {
      this.update();
    } else {
      this.dirty = true;
    }
  }

  private startWatching(): void {
    if (this.active) {
      return;
    }
    this.active = true;
    this.watches = this.viewOptions.resources.map(r => this.model.watch(r));
    if (this.viewOptions.tickMs) {
      this.tick = setInterval(() => this.update(), this.viewOptions.tickMs);
    }
    if (this.dirty) {
      this.dirty = false;
      this.update();
    }
  }

  private stopWatching(): void {
    if (!this.active) {
      return;
    }
    this.active = false;
    for (const w of this.watches) {
      w.dispose();
    }
    this.watches = [];
    if (this.tick !== null) {
      clearInterval(this.tick);
      this.tick = null;
    }
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    if (this.isVisible) {
      this.startWatching();
    }
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this.startWatching();
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this.stopWatching();
  }

  protected onBeforeDetach(msg: Message): void {
    this.stopWatching();
    super.onBeforeDetach(msg);
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.stopWatching();
    for (const signal of this.viewOptions.signals) {
      signal.disconnect(this.onModelChanged, this);
    }
    super.dispose();
  }

  protected render(): React.ReactElement {
    return this.renderView();
  }

  protected abstract renderView(): React.ReactElement;
}

/** A resource's last refresh error, as an alert that React keeps (and screen readers do not repeat). */
export function ErrorNote(props: { error: string | null }): React.ReactElement | null {
  if (!props.error) {
    return null;
  }
  return (
    <p className="jp-sched-feedback jp-sched-feedback-error" role="alert">
      {shownText(props.error)}
    </p>
  );
}

/** A horizontal bar 0..1, presentational (the surrounding text or label carries the value). */
export function Bar(props: { fraction: number; className?: string }): React.ReactElement {
  const pct = Math.round(Math.max(0, Math.min(1, isFinite(props.fraction) ? props.fraction : 0)) * 100);
  return (
    <div className={`jp-sched-bar ${props.className ?? ''}`} aria-hidden="true">
      <div className="jp-sched-bar-fill" style={{ width: `${pct}%` }} />
    </div>
  );
}

/** A labelled meter (0..100 %) for places where the bar is the only carrier of the value. */
export function Meter(props: { value: number; max: number; label: string; className?: string; children?: React.ReactNode }): React.ReactElement {
  const fraction = props.max > 0 ? props.value / props.max : 0;
  const pct = Math.round(Math.max(0, Math.min(1, isFinite(fraction) ? fraction : 0)) * 100);
  return (
    <div
      className={`jp-sched-bar ${props.className ?? ''}`}
      role="meter"
      aria-valuemin={0}
      aria-valuemax={props.max}
      aria-valuenow={props.value}
      aria-label={shownText(props.label)}
      title={shownText(props.label)}
    >
      <div className="jp-sched-bar-fill" style={{ width: `${pct}%` }} />
      {props.children}
    </div>
  );
}
