// Jest setup provided by Grafana scaffolding
import './.config/jest-setup';

// @grafana/ui's Combobox sizes its menu with CanvasRenderingContext2D.measureText. jsdom has no canvas and the
// scaffold's stub getContext returns undefined, so rendering a Combobox throws. Return a context that measures
// text by character count: enough for layout code, and deterministic.
HTMLCanvasElement.prototype.getContext = function getContext() {
  return {
    font: '',
    measureText: (text) => ({ width: String(text).length * 8 }),
  };
};

// Combobox's menu (ScrollContainer) watches its edges with IntersectionObserver, which jsdom lacks. Nothing in
// the tests depends on the scroll indicators, so an observer that never fires is enough.
if (!global.IntersectionObserver) {
  global.IntersectionObserver = class IntersectionObserver {
    observe() {}
    unobserve() {}
    disconnect() {}
    takeRecords() {
      return [];
    }
  };
}

// i18next (initialised by @grafana/ui) prints an advert on console.info once per test file; keep test output readable.
const consoleInfo = console.info;
console.info = (...args) => {
  if (typeof args[0] === 'string' && args[0].includes('i18next is made possible')) {
    return;
  }
  consoleInfo(...args);
};
