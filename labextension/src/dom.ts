/**
 * A tiny DOM builder: `h('div', {class: 'x', onclick}, child, ...)`. Plain DOM keeps the panel
 * free of a second rendering framework; sections re-render their body wholesale and
 * {@link replaceKeepingFocus} puts keyboard focus back on the element with the same `data-key`.
 *
 * Every text child and every attribute a reader is shown (`title`, `aria-label`, `alt`, `placeholder`) is written
 * through {@link shownText}: a definition, job or user name holding a zero-width or bidi character shows it as its
 * escape wherever this builder puts it (s30, red29 R2's rule for every panel place). Values (`value`, `data-*`)
 * are kept as they are: they are sent back or looked up.
 */
import { shownText } from './format';

/** Attributes read to the user (tooltips, screen readers): written through {@link shownText}. */
const SHOWN_ATTRIBUTES = new Set(['title', 'aria-label', 'alt', 'placeholder']);

type Child = Node | string | number | null | undefined | false | Child[];

export type Attrs = Record<string, unknown>;

/** Create an element with attributes (`on*` functions become listeners) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) {
      continue;
    }
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2).toLowerCase(), value as EventListener);
    } else if (key === 'class') {
      el.className = String(value);
    } else if (key === 'style' && typeof value === 'object') {
      Object.assign(el.style, value);
    } else if (key === 'value' && 'value' in el) {
      (el as unknown as HTMLInputElement).value = String(value);
    } else if (key === 'checked' && 'checked' in el) {
      (el as unknown as HTMLInputElement).checked = !!value;
    } else {
      const text = value === true ? '' : String(value);
      el.setAttribute(key, SHOWN_ATTRIBUTES.has(key) ? shownText(text) : text);
    }
  }
  append(el, children);
  return el;
}

function append(el: Element, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    if (Array.isArray(child)) {
      append(el, child);
    } else if (child instanceof Node) {
      el.appendChild(child);
    } else {
      el.appendChild(document.createTextNode(shownText(String(child))));
    }
  }
}

/** An SVG element (namespaced). */
export function svg(tag: string, attrs: Record<string, string | number>, ...children: Element[]): SVGElement {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [key, value] of Object.entries(attrs)) {
    el.setAttribute(key, SHOWN_ATTRIBUTES.has(key) ? shownText(String(value)) : String(value));
  }
  for (const child of children) {
    el.appendChild(child);
  }
  return el;
}

/** Replace `container`'s children, restoring focus to the element carrying the same `data-key`. */
export function replaceKeepingFocus(container: HTMLElement, ...children: Child[]): void {
  const active = document.activeElement as HTMLElement | null;
  const key = active && container.contains(active) ? active.dataset.key : undefined;
  const fragment = document.createDocumentFragment();
  const holder = document.createElement('div');
  append(holder, children);
  while (holder.firstChild) {
    fragment.appendChild(holder.firstChild);
  }
  container.replaceChildren(fragment);
  if (key) {
    const again = container.querySelector<HTMLElement>(`[data-key="${CSS.escape(key)}"]`);
    again?.focus();
  }
}

/** A labelled horizontal bar (0..1) with an accessible value. */
export function bar(fraction: number, label: string, cls = ''): HTMLElement {
  const pct = Math.round(Math.max(0, Math.min(1, isFinite(fraction) ? fraction : 0)) * 100);
  return h(
    'div',
    { class: `jp-sched-bar ${cls}`, role: 'meter', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': pct, 'aria-label': label, title: label },
    h('div', { class: 'jp-sched-bar-fill', style: { width: `${pct}%` } })
  );
}
