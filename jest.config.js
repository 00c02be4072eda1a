// force timezone to UTC to allow tests to work regardless of local timezone
// generally used by snapshots, but can affect specific tests
process.env.TZ = 'UTC';

const base = require('./.config/jest.config');

module.exports = {
  // Jest configuration provided by Grafana scaffolding
  ...base,
  // The editor tests drive @grafana/ui comboboxes with user-event; each takes 0.5-3 s of CPU, and on a busy
  // two-core CI machine (Go race tests next to it) jest's default 5 s timeout fails tests that are merely slow.
  // 120 s: at a load average of 10 one SloOptions test took over 30 s. The timeout only catches hangs; no test
  // asserts speed.
  testTimeout: 120000,
  transform: {
    ...base.transform,
    // d3-color (pulled in by @grafana/ui → @grafana/data) ships only ESM `.mjs` files. The scaffold's transform
    // only matches .js/.jsx/.ts/.tsx, so without this any test that imports @grafana/ui fails with
    // "SyntaxError: Cannot use import statement outside a module". Reuse the scaffold's swc transformer.
    '^.+\\.mjs$': base.transform['^.+\\.(t|j)sx?$'],
  },
};
