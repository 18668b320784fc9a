// End-to-end test of the palace extension in a real VS Code: code-server
// (VS Code 1.100 from npm) driven by headless Chromium over the DevTools
// protocol (puppeteer-core). cmd/palace's TestVSCodeEndToEnd prepares a
// palace and a workspace and runs:
//
//   node run.mjs
//
// with PALACE_BIN, PALACE_HOME, E2E_WORKSPACE (a folder with .palace/ and
// db/open.go), E2E_VSIX (the packaged extension), E2E_CHROMIUM, E2E_OUT (a
// folder for the screenshots and result.json) and E2E_EXPECT (JSON: the
// lens title, the card ids and statements to find). It opens db/open.go and
// checks the code lens, the inlay hint, the hover, a diagnostic (in the
// Problems panel) and the palace.showContext command, saving a screenshot of
// each; every check is a node:test test, and the process exits non-zero when
// one fails.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

import puppeteer from 'puppeteer-core';

const here = dirname(fileURLToPath(import.meta.url));
const need = (k) => {
  const v = process.env[k];
  if (!v) {
    console.error(`${k} is not set (see the comment at the top of run.mjs)`);
    process.exit(2);
  }
  return v;
};
const palaceBin = need('PALACE_BIN');
const workspace = need('E2E_WORKSPACE');
const vsix = need('E2E_VSIX');
const chromium = need('E2E_CHROMIUM');
const out = need('E2E_OUT');
const expect = JSON.parse(need('E2E_EXPECT'));
mkdirSync(out, { recursive: true });

const codeServer = join(here, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const tmp = mkdtempSync(join(tmpdir(), 'palace-vscode-e2e-'));
const userData = join(tmp, 'user-data');
const extensions = join(tmp, 'extensions');
// code-server and VS Code write config and state under HOME and XDG: keep
// them in the temporary folder.
const env = { ...process.env, HOME: tmp, XDG_CONFIG_HOME: join(tmp, 'config'), XDG_DATA_HOME: join(tmp, 'data') };

let server, browser, page;
const log = [];

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function shot(name) {
  await page.screenshot({ path: join(out, `${name}.png`) });
}

/** waitText waits until the text of the elements matching selector holds
 * want. The editor renders spaces as no-break spaces: both read as spaces. */
async function waitText(selector, want, timeout = 30000) {
  try {
    await page.waitForFunction(
      (sel, w) => [...document.querySelectorAll(sel)].some((e) => e.textContent.replaceAll('\u00a0', ' ').includes(w)),
      { timeout, polling: 200 }, selector, want);
  } catch {
    const seen = await page.$$eval(selector, (els) => els.map((e) => e.textContent.replaceAll('\u00a0', ' ')).join(' | ')).catch(() => '');
    await shot(`failed-${selector.replace(/[^a-z]+/g, '-')}`).catch(() => {});
    assert.fail(`no ${selector} holding ${JSON.stringify(want)} within ${timeout} ms; seen: ${seen.slice(0, 600)}`);
  }
}

before(async () => {
  mkdirSync(join(userData, 'User'), { recursive: true });
  writeFileSync(join(userData, 'User', 'settings.json'), JSON.stringify({
    'palace.path': palaceBin,
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'security.workspace.trust.enabled': false,
    'editor.inlayHints.enabled': 'on',
    'editor.hover.delay': 100,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'update.mode': 'none',
    // E2E_SETTINGS (JSON) adds settings: {"palace.hints.hover": false}
    // shows the test fail when the hover is gone.
    ...JSON.parse(process.env.E2E_SETTINGS || '{}'),
  }, null, 2));
  execFileSync(process.execPath, [codeServer, '--install-extension', vsix, '--extensions-dir', extensions, '--user-data-dir', userData],
    { env, stdio: 'pipe' });
  const port = await freePort();
  server = spawn(process.execPath, [codeServer, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry',
    '--disable-update-check', '--disable-workspace-trust', '--user-data-dir', userData, '--extensions-dir', extensions, workspace],
  { env, stdio: ['ignore', 'pipe', 'pipe'] });
  server.stdout.on('data', (d) => log.push(String(d)));
  server.stderr.on('data', (d) => log.push(String(d)));
  browser = await puppeteer.launch({
    executablePath: chromium,
    headless: 'shell',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--window-size=1400,900'],
    defaultViewport: { width: 1400, height: 900 },
  });
  page = await browser.newPage();
  const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`;
  for (let i = 0; ; i++) {
    try {
      await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 10000 });
      break;
    } catch (err) {
      if (i >= 60) throw new Error(`code-server did not answer at ${url}: ${err}\n${log.join('')}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  // Open db/open.go through Quick Open, as a person would.
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyP');
  await page.keyboard.up('Control');
  await page.waitForSelector('.quick-input-widget input', { visible: true, timeout: 30000 });
  await page.keyboard.type('db/open.go');
  await waitText('.quick-input-list .monaco-list-row', 'open.go');
  await page.keyboard.press('Enter');
  await waitText('.view-line', 'sql.Open(');
});

after(async () => {
  await browser?.close();
  server?.kill();
  rmSync(tmp, { recursive: true, force: true });
  writeFileSync(join(out, 'code-server.log'), log.join(''));
});

test('the code lens on line 1 counts the cards by tier', async () => {
  // The extension host starts the server once the file is open: give it
  // time on a busy machine.
  await waitText('.codelens-decoration', expect.lens, 60000);
  await shot('1-lens');
});

test('an inlay hint marks the line the trigger pattern matches', async () => {
  await waitText('.view-line', expect.inlay, 30000);
  await shot('2-inlay-hint');
});

test('the hover on sql.Open shows the triggered card', async () => {
  // Put the cursor on Open of sql.Open( and ask for the hover from the
  // keyboard (Ctrl+K Ctrl+I): it stays until Escape, unlike a mouse hover.
  const token = await page.evaluateHandle(() => {
    for (const line of document.querySelectorAll('.view-line')) {
      if (!line.textContent.includes('sql.Open(')) continue;
      const spans = [...line.querySelectorAll('span span')];
      const i = spans.findIndex((s) => s.textContent === 'sql');
      return spans.slice(i).find((s) => s.textContent.includes('Open')) ?? null;
    }
    return null;
  });
  assert.ok(token.asElement(), 'no token Open on the sql.Open line');
  await token.asElement().click();
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyK');
  await page.keyboard.press('KeyI');
  await page.keyboard.up('Control');
  for (const want of expect.hover) {
    await waitText('.monaco-hover-content', want, 20000);
  }
  await shot('3-hover');
  await page.keyboard.press('Escape');
});

test('a dao card\'s trigger match is a diagnostic in the Problems panel', async () => {
  // qi and shu matches are Hint diagnostics, which VS Code shows as dots
  // only; a dao match is Information, listed in Problems.
  await page.keyboard.down('Control');
  await page.keyboard.down('Shift');
  await page.keyboard.press('KeyM');
  await page.keyboard.up('Shift');
  await page.keyboard.up('Control');
  await waitText('.markers-panel', expect.diagnostic, 30000);
  await shot('4-problems');
});

test('palace: Show Context Pack for This File opens the pack', async () => {
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget input', { visible: true, timeout: 20000 });
  await page.keyboard.type('palace: Show Context Pack');
  await waitText('.quick-input-list .monaco-list-row', 'palace: Show Context Pack for This File');
  await page.keyboard.press('Enter');
  // It asks for an optional query: none.
  await waitText('.quick-input-widget', 'Query (optional)', 20000);
  await page.keyboard.press('Enter');
  await waitText('.view-line', '# palace context', 30000);
  await waitText('.view-line', expect.contextCard, 10000);
  await shot('5-context-command');
});
