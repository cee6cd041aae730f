/** The registry behind {@link ISchedSections}: sections of the GPUs sidebar, from any plugin. */
import { DisposableDelegate, type IDisposable } from '@lumino/disposable';
import { Signal } from '@lumino/signaling';

import type { ISchedSection, ISchedSections } from './tokens';

export class SchedSections implements ISchedSections {
  readonly added: Signal<ISchedSections, ISchedSection> = new Signal(this);
  readonly removed: Signal<ISchedSections, ISchedSection> = new Signal(this);
  private readonly sections: ISchedSection[] = [];

  /**
   * Add a section. Throws when a section with the same id is already registered (ids key the
   * saved order and collapsed state, so two sections must not share one).
   */
  add(section: ISchedSection): IDisposable {
    if (this.sections.some(s => s.id === section.id)) {
      throw new Error(`a GPUs sidebar section with id "${section.id}" is already registered`);
    }
    this.sections.push(section);
    this.added.emit(section);
    return new DisposableDelegate(() => {
      const index = this.sections.indexOf(section);
      if (index >= 0) {
        this.sections.splice(index, 1);
        this.removed.emit(section);
      }
    });
  }

  items(): readonly ISchedSection[] {
    return [...this.sections];
  }
}
