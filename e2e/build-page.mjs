// Bundles the browser-check test page (e2e/page) with esbuild into test-output/e2e-page/. Unlike dist/module.js,
// which leaves React and @grafana/* to Grafana, this bundle includes them: the page runs without a Grafana server.
import { build } from 'esbuild';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'test-output', 'e2e-page');

export async function buildPage() {
  await mkdir(outdir, { recursive: true });
  await build({
    entryPoints: [path.join(root, 'e2e', 'page', 'main.tsx')],
    outfile: path.join(outdir, 'bundle.js'),
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    jsx: 'automatic',
    // Production React: no dev-only warnings in the console, which the check treats as failures.
    define: { 'process.env.NODE_ENV': '"production"', global: 'window' },
    loader: { '.svg': 'dataurl', '.woff': 'empty', '.woff2': 'empty', '.ttf': 'empty' },
    // Not minified, so a stack trace from a failed check is readable without a source map.
    sourcemap: false,
    logLevel: 'warning',
  });
  // __grafana_public_path__ tells @grafana/ui where icons and fonts live; browser-check.mjs serves /public/.
  await writeFile(
    path.join(outdir, 'index.html'),
    `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>vLLM data source editors</title>
    <link rel="stylesheet" href="/bundle.css" />
    <script>
      window.__grafana_public_path__ = '/public/';
      // What Grafana's index.html sets before any plugin code runs; @grafana/runtime's config reads it.
      window.grafanaBootData = { assets: { dark: '', light: '' }, settings: {}, user: {}, navTree: [] };
    </script>
  </head>
  <body>
    <div id="root"></div>
    <script src="/bundle.js"></script>
  </body>
</html>
`
  );
  return outdir;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const start = Date.now();
  await buildPage();
  console.log(`e2e page built in ${Date.now() - start} ms: ${path.relative(root, outdir)}`);
}
