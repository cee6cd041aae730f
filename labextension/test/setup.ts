/**
 * jsdom lacks a few browser APIs that Lumino and JupyterLab touch at import or attach time
 * (JupyterLab's own jest setup adds the same). Minimal stand-ins, no behaviour the tests rely on.
 */
class DragEventShim extends MouseEvent {
  readonly dataTransfer = null;
}
const g = globalThis as Record<string, unknown>;
g.DragEvent ??= DragEventShim;
g.ResizeObserver ??= class {
  observe(): void {}
  unobserve(): void {}
  disconnect(): void {}
};
if (!window.matchMedia) {
  window.matchMedia = (query: string) =>
    ({ matches: false, media: query, onchange: null, addListener() {}, removeListener() {}, addEventListener() {}, removeEventListener() {}, dispatchEvent: () => false }) as MediaQueryList;
}
if (!Element.prototype.scrollIntoView) {
  Element.prototype.scrollIntoView = function () {};
}
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
g.requestIdleCallback ??= (fn: (deadline: { didTimeout: boolean; timeRemaining: () => number }) => void) =>
  setTimeout(() => fn({ didTimeout: false, timeRemaining: () => 50 }), 0);
g.cancelIdleCallback ??= (handle: number) => clearTimeout(handle);
g.IntersectionObserver ??= class {
  observe(): void {}
  unobserve(): void {}
  disconnect(): void {}
  takeRecords(): unknown[] {
    return [];
  }
};
(window as unknown as Record<string, unknown>).IntersectionObserver ??= g.IntersectionObserver;

// the panel's clocks are the browser's zone's (newuser26 n14): the tests' words are UTC wherever they run
import { setDisplayZone } from '../src/format';
setDisplayZone('UTC');
