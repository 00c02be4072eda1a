// Browser check: mounts the real ConfigEditor and QueryEditor (e2e/page, bundled by build-page.mjs) in Debian's
// Chromium, driven by playwright-core, picks every query type through the UI and saves a screenshot of each editor
// under test-output/screenshots/. Exits non-zero when an editor does not render, a query type cannot be chosen,
// or the page throws. With --catalogue, a run without failures also copies the screenshots plugin.json lists
// (CATALOGUE below) into src/img/screenshots/, so the catalogue shows today's editors.
//
//   node e2e/browser-check.mjs              # builds the page first
//   node e2e/browser-check.mjs --catalogue  # npm run screenshots: also refresh src/img/screenshots/
//   CHROMIUM=/path/to/chrome node e2e/browser-check.mjs
import { chromium } from 'playwright-core';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { buildPage } from './build-page.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shotsDir = path.join(root, 'test-output', 'screenshots');
const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
// Generous: the check must not fail because the machine is busy (Go race tests often run next to it).
const TIMEOUT_MS = 20_000;

// The screenshots the plugin catalogue shows (plugin.json info.screenshots), by the name this check saves them under.
const CATALOGUE = [
  'config-editor.png',
  'query-queue-filtered.png',
  'query-wait-time.png',
  'query-topk.png',
  'query-gpu.png',
  'query-fleet.png',
  'query-saturation.png',
];
const catalogueDir = path.join(root, 'src', 'img', 'screenshots');

const QUERY_TYPES = [
  { label: 'Queue depth', value: 'queue', shows: 'Group by', file: 'query-queue.png' },
  { label: 'Wait time', value: 'waitTime', shows: 'Quantiles', file: 'query-wait-time.png' },
  { label: 'Preemptions', value: 'preemptions', shows: 'Output', file: 'query-preemptions.png' },
  { label: 'Top-k', value: 'topk', shows: 'Rank by', file: 'query-topk.png' },
  { label: 'GPU', value: 'gpu', shows: 'Source', file: 'query-gpu.png' },
  { label: 'Fleet', value: 'fleet', shows: 'Models', file: 'query-fleet.png' },
  { label: 'Saturation', value: 'saturation', shows: 'Series + table', file: 'query-saturation.png' },
  { label: 'Prefix cache', value: 'prefixCache', shows: 'Group by', file: 'query-prefix-cache.png' },
  { label: 'Speculative decoding', value: 'specDecode', shows: 'Group by', file: 'query-spec-decode.png' },
  { label: 'LoRA adapters', value: 'lora', shows: 'Output', file: 'query-lora.png' },
  { label: 'Container', value: 'container', shows: 'Output', file: 'query-container.png' },
  { label: 'KV transfer', value: 'kvTransfer', shows: 'Quantiles', file: 'query-kv-transfer.png' },
  { label: 'Workload', value: 'workload', shows: 'View', file: 'query-workload.png' },
  { label: 'Capacity', value: 'capacity', shows: 'Headroom', file: 'query-capacity.png' },
  { label: 'PromQL', value: 'promql', shows: 'Expr', file: 'query-promql.png' },
];

/** Escapes a string for use inside a RegExp. */
function reEscape(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Closes whatever menu is open, so the next click on a picker opens it rather than toggling it shut. */
async function closeMenus(page) {
  const open = page.getByRole('listbox');
  for (let i = 0; i < 3 && (await open.count()) > 0; i++) {
    await page.keyboard.press('Escape');
    await open
      .first()
      .waitFor({ state: 'detached', timeout: 2_000 })
      .catch(() => {});
  }
}

/**
 * Opens picker's menu and clicks its option called name (the option's accessible name starts with its label; the
 * description follows). Combobox renders only the options in view (a virtual list), so the later ones of a long
 * list exist only once the list is scrolled to them; on a busy machine a scroll can re-render the option under the
 * pointer, so the click is retried on a freshly found element.
 */
async function pickOption(page, picker, name) {
  await closeMenus(page);
  await picker.click();
  await page.getByRole('option').first().waitFor();
  const option = page.getByRole('option', { name: new RegExp(`^${reEscape(name)}`) }).first();
  for (let i = 0; i < 40 && (await option.count()) === 0; i++) {
    // From the top (the list opens at the selected option), then down.
    // Scroll the nearest scrollable ancestor of the options that are rendered.
    await page
      .getByRole('option')
      .first()
      .evaluate((el, top) => {
        let n = el.parentElement;
        while (n && n.scrollHeight <= n.clientHeight) {
          n = n.parentElement;
        }
        if (n) {
          n.scrollTop = top ? 0 : n.scrollTop + Math.max(n.clientHeight / 2, 40);
        }
      }, i === 0);
    await page.waitForTimeout(50);
  }
  let last;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await option.scrollIntoViewIfNeeded({ timeout: 5_000 });
      await option.click({ timeout: 5_000 });
      return;
    } catch (err) {
      last = err;
    }
  }
  throw last;
}

/** Serves the built page, and @grafana/ui's icons where the page's __grafana_public_path__ points. */
function serve(pageDir) {
  const iconsDir = path.join(root, 'node_modules', '@grafana', 'ui', 'dist', 'public', 'img', 'icons');
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    let file;
    if (url.pathname.startsWith('/public/build/img/icons/')) {
      file = path.join(iconsDir, url.pathname.slice('/public/build/img/icons/'.length));
    } else {
      file = path.join(pageDir, url.pathname === '/' ? 'index.html' : url.pathname);
    }
    const base = file.startsWith(iconsDir) ? iconsDir : pageDir;
    try {
      if (!path.resolve(file).startsWith(base) || !(await stat(file)).isFile()) {
        throw new Error('not a file');
      }
      res.writeHead(200, { 'Content-Type': types[path.extname(file)] ?? 'application/octet-stream' });
      createReadStream(file).pipe(res);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const failures = [];
function fail(message) {
  failures.push(message);
  console.error(`FAIL ${message}`);
}

async function step(name, fn) {
  const start = Date.now();
  try {
    await fn();
    console.log(`ok   ${name} (${Date.now() - start} ms)`);
  } catch (err) {
    fail(`${name}: ${err instanceof Error ? err.message.split('\n')[0] : err}`);
    await describePage(name);
  }
}

/** The page the steps drive, so a failed step can say what was on it. */
let currentPage;

/** Prints what a failed step left on the page (open menus, their options, the focused element), and leaves no menu open. */
async function describePage(name) {
  if (!currentPage) {
    return;
  }
  const state = await currentPage
    .evaluate(() => ({
      listboxes: document.querySelectorAll('[role="listbox"]').length,
      options: [...document.querySelectorAll('[role="option"]')].map((o) => o.textContent.slice(0, 40)),
      focused: document.activeElement ? document.activeElement.outerHTML.slice(0, 160) : null,
    }))
    .catch((e) => ({ unreadable: String(e) }));
  console.log(`info after "${name}" failed: ${JSON.stringify(state)}`);
  await closeMenus(currentPage).catch(() => {});
}

/**
 * Polls the page's JSON (query or settings) until `ok` accepts it. React may apply a state update a task after the
 * event that caused it, so reading once right after a click can see the previous value on a busy machine.
 */
async function waitForJson(page, testId, ok, what) {
  const deadline = Date.now() + TIMEOUT_MS;
  let value;
  for (;;) {
    value = JSON.parse(await page.getByTestId(testId).textContent());
    if (ok(value)) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: got ${JSON.stringify(value)}`);
    }
    await page.waitForTimeout(50);
  }
}

async function main() {
  await stat(executablePath).catch(() => {
    throw new Error(`${executablePath} not found: apt-get install -y chromium, or set CHROMIUM`);
  });
  const pageDir = await buildPage();
  await mkdir(shotsDir, { recursive: true });
  const server = await serve(pageDir);
  const baseUrl = `http://127.0.0.1:${server.address().port}/`;
  // A fresh, empty profile per run: nothing cached or remembered from an earlier run or another browser.
  const userDataDir = await mkdtemp(path.join(os.tmpdir(), 'vllm-e2e-profile-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(TIMEOUT_MS);
    currentPage = page;
    page.on('pageerror', (err) => fail(`uncaught error in the page: ${err.message}`));
    page.on('console', (msg) => {
      // Grafana's web fonts are not part of the npm packages; their 404s are expected and harmless.
      if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text())) {
        fail(`console error: ${msg.text()}`);
      }
    });
    page.on('response', (res) => {
      if (res.status() < 400) {
        return;
      }
      // Fonts and a few icons (e.g. the spinner) ship with Grafana itself, not with @grafana/ui: note, do not fail.
      if (res.url().includes('/public/')) {
        console.log(`note HTTP ${res.status()} for ${new URL(res.url()).pathname} (a Grafana asset not in npm)`);
      } else {
        fail(`HTTP ${res.status()} for ${res.url()}`);
      }
    });

    await page.goto(baseUrl);
    const config = page.getByTestId('config-editor');
    const editor = page.getByTestId('query-editor');

    await step('config editor renders', async () => {
      // Sections holding only defaults start collapsed; the page's settings have agents, so that section is open.
      // The URL field's label carries a required marker; its input is named by plugin-ui's aria-label.
      await config.getByRole('textbox', { name: 'Data source connection URL' }).waitFor();
      for (const label of ['Stack profile', 'Selector', 'Scrape interval', 'Agent URLs', 'Node agent token']) {
        await config.getByText(label, { exact: true }).first().waitFor();
      }
      await config.screenshot({ path: path.join(shotsDir, 'config-editor.png') });
    });

    await step('config editor: profile auto is shown first and chosen when nothing is saved', async () => {
      // One radio of the profile group is checked, the page's first radio group: Auto checked and first means Auto
      // is the first option.
      if (!(await config.getByRole('radio', { name: 'Auto' }).isChecked())) {
        throw new Error('Auto is not checked');
      }
      if (!(await config.getByRole('radio').first().isChecked())) {
        throw new Error('Auto is not the first profile');
      }
    });

    await step('config editor: a collapsed section opens and writes jsonData', async () => {
      await config.getByRole('button', { name: 'Expand section Diagnosis thresholds' }).click();
      await config.getByLabel('Queue', { exact: true }).fill('4');
      await waitForJson(page, 'settings-json', (v) => v.jsonData.saturationQueue === 4, 'saturationQueue not written');
      await config.getByRole('button', { name: 'Collapse section Diagnosis thresholds' }).click();
    });

    await step('config editor: discovery mode writes jsonData', async () => {
      // Grafana's radio buttons lay a transparent input over the label; click what a user's pointer hits.
      await config.getByRole('radio', { name: 'Prometheus discovery' }).click();
      await config.getByLabel('Prometheus job').fill('gpu-agents');
      await waitForJson(
        page,
        'settings-json',
        // The backend prefers a non-empty URL list over discovery, so choosing discovery must clear it.
        (v) => v.jsonData.agentMode === 'discovery' && v.jsonData.agentJob === 'gpu-agents' && !v.jsonData.agentUrls,
        'discovery not written (agentMode, agentJob, agentUrls cleared)'
      );
      await config.screenshot({ path: path.join(shotsDir, 'config-editor-discovery.png') });
    });

    await step('query editor renders with the default query', async () => {
      await editor.getByLabel('Query', { exact: true }).waitFor();
      await waitForJson(page, 'query-json', (q) => q.queryType === 'queue', 'default queryType is not queue');
    });

    for (const type of QUERY_TYPES) {
      await step(`query type "${type.label}" can be chosen`, async () => {
        const picker = editor.getByLabel('Query', { exact: true });
        await pickOption(page, picker, type.label);
        await editor.getByText(type.shows, { exact: true }).first().waitFor();
        await waitForJson(page, 'query-json', (q) => q.queryType === type.value, `queryType is not ${type.value}`);
        if ((await picker.inputValue()) !== type.label) {
          throw new Error(`the picker shows "${await picker.inputValue()}"`);
        }
        await page.mouse.click(1200, 20); // close any menu before the screenshot
        await editor.screenshot({ path: path.join(shotsDir, type.file) });
      });
    }

    await step('typing in the query-type picker and pressing Enter does not break the editor', async () => {
      // With a later option selected, Combobox keeps that option's index highlighted after filtering, which can
      // point past the filtered list; Enter then hands over no option. The editor must ignore it, not throw.
      const picker = editor.getByLabel('Query', { exact: true });
      await pickOption(page, picker, 'GPU');
      await closeMenus(page);
      await picker.click();
      await picker.pressSequentially('Top');
      await picker.press('Enter');
      const q = await waitForJson(page, 'query-json', (v) => ['gpu', 'topk'].includes(v.queryType), 'queryType');
      console.log(`info typed "Top" + Enter with GPU selected: queryType is now ${q.queryType}`);
      await page.keyboard.press('Escape');
    });

    await step('filters list the backend values and add the picked one', async () => {
      await pickOption(page, editor.getByLabel('Query', { exact: true }), 'Queue depth');
      await closeMenus(page);
      // Editor at the top of the viewport, so the menu has room to open downwards, into the screenshot below.
      await editor.evaluate((e) => e.scrollIntoView({ block: 'start' }));
      await editor.getByLabel('Models').click();
      await page.getByRole('option', { name: 'mistral-7b' }).waitFor();
      const box = await editor.boundingBox();
      const menu = await page.getByRole('listbox').boundingBox();
      const top = Math.max(0, Math.min(box.y, menu.y));
      const bottom = Math.max(box.y + box.height, menu.y + menu.height) + 16;
      await page.screenshot({
        path: path.join(shotsDir, 'query-queue-models-menu.png'),
        clip: { x: box.x, y: top, width: box.width, height: bottom - top },
      });
      await page.getByRole('option', { name: 'mistral-7b' }).click();
      await page.getByRole('option', { name: '$model' }).waitFor(); // dashboard variables are offered too
      await page.keyboard.press('Escape');
      await waitForJson(
        page,
        'query-json',
        (q) => JSON.stringify(q.models) === '["mistral-7b"]',
        'models is not ["mistral-7b"]'
      );
      const calls = await page.evaluate(() => window.__vllmResourceCalls);
      if (!calls.some((c) => c.path === 'models')) {
        throw new Error(`the models route was not called: ${JSON.stringify(calls)}`);
      }
      await editor.screenshot({ path: path.join(shotsDir, 'query-queue-filtered.png') });
    });

    await step('an invalid quantile is shown next to the field and not run', async () => {
      await pickOption(page, editor.getByLabel('Query', { exact: true }), 'Wait time');
      await closeMenus(page);
      await editor.getByLabel('Quantiles').waitFor();
      const runsBefore = await page.evaluate(() => window.__vllmRuns.length);
      await editor.getByLabel('Quantiles').fill('0.5, 1.5');
      await editor.getByLabel('Quantiles').press('Enter');
      await editor.getByText('Quantile 1.5 is outside (0, 1)', { exact: false }).waitFor();
      // The typed value is kept in the query (not lost), it just does not run.
      await waitForJson(page, 'query-json', (q) => JSON.stringify(q.quantiles) === '[0.5,1.5]', 'quantiles not kept');
      const ran = await page.evaluate((n) => window.__vllmRuns.slice(n), runsBefore);
      const invalid = ran.filter((r) => (r.quantiles ?? []).some((v) => !(v > 0 && v < 1)));
      if (invalid.length > 0) {
        throw new Error(`an invalid query ran: ${JSON.stringify(invalid)}`);
      }
      await editor.screenshot({ path: path.join(shotsDir, 'query-wait-time-invalid.png') });
    });
  } finally {
    await context.close();
    server.close();
    await rm(userDataDir, { recursive: true, force: true });
  }
}

/** Copies the catalogue's screenshots from this run into src/img/screenshots/, checking plugin.json lists each. */
async function updateCatalogue() {
  const plugin = JSON.parse(await readFile(path.join(root, 'src', 'plugin.json'), 'utf8'));
  const listed = new Set((plugin.info?.screenshots ?? []).map((s) => path.basename(s.path)));
  for (const file of CATALOGUE) {
    if (!listed.has(file)) {
      fail(`${file} is a catalogue screenshot, but plugin.json info.screenshots does not list it`);
      continue;
    }
    await copyFile(path.join(shotsDir, file), path.join(catalogueDir, file));
    console.log(`catalogue ${path.relative(root, path.join(catalogueDir, file))}`);
  }
}

const start = Date.now();
try {
  await main();
} catch (err) {
  fail(err instanceof Error ? err.message : String(err));
}
if (failures.length === 0 && process.argv.includes('--catalogue')) {
  await updateCatalogue();
}
if (failures.length > 0) {
  console.error(`browser check: ${failures.length} failure(s)`);
  process.exit(1);
}
console.log(`browser check: ok in ${Date.now() - start} ms, screenshots in ${path.relative(root, shotsDir)}/`);
