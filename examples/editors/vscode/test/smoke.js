// Smoke test of the wire shapes the extension uses, against the real
// `palace lsp` (no VS Code needed): the arguments TransportKind.stdio
// produces, initializationOptions, didChangeConfiguration under "palace",
// code lens, the palace.context command and palace/context, shutdown + exit.
//
//   PALACE_BIN=/path/to/palace npm test
'use strict';
const assert = require('node:assert/strict');
const cp = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const rpc = require('vscode-jsonrpc/node');

async function main() {
  const bin = process.env.PALACE_BIN || 'palace';
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'palace-vscode-'));
  const repo = path.join(tmp, 'repo');
  fs.mkdirSync(repo);
  cp.execFileSync('git', ['init', '-q'], { cwd: repo });
  const file = path.join(repo, 'main.go');
  fs.writeFileSync(file, 'package main\n');
  const uri = 'file://' + file;

  const child = cp.spawn(bin, ['lsp', '--mode', 'human', '--stdio'], {
    cwd: repo,
    env: { ...process.env, PALACE_HOME: path.join(tmp, 'home'), PALACE_MODE: '' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const conn = rpc.createMessageConnection(
    new rpc.StreamMessageReader(child.stdout),
    new rpc.StreamMessageWriter(child.stdin),
  );
  conn.onRequest('workspace/codeLens/refresh', () => null);
  conn.onRequest('workspace/inlayHint/refresh', () => null);
  conn.listen();

  const init = await conn.sendRequest('initialize', {
    processId: process.pid,
    rootUri: 'file://' + repo,
    workspaceFolders: [{ uri: 'file://' + repo, name: 'repo' }],
    capabilities: { workspace: { codeLens: { refreshSupport: true }, inlayHint: { refreshSupport: true } } },
    initializationOptions: { hints: { hover: true, codeLens: true, inlayHints: true, diagnostics: true } },
  });
  assert.ok(init.capabilities.executeCommandProvider.commands.includes('palace.promote'), 'human mode offers palace.promote');
  await conn.sendNotification('initialized', {});
  await conn.sendNotification('workspace/didChangeConfiguration', { settings: { palace: { budget: 4000, hints: { inlayHints: false } } } });
  await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'go', version: 1, text: 'package main\n' } });

  const lenses = await conn.sendRequest('textDocument/codeLens', { textDocument: { uri } });
  assert.equal(lenses.length, 1);
  assert.match(lenses[0].command.title, /^palace · dao 0 · shu 0 · qi 0/);
  assert.equal(lenses[0].command.command, 'palace.context');

  const viaCommand = await conn.sendRequest('workspace/executeCommand', { command: lenses[0].command.command, arguments: lenses[0].command.arguments });
  assert.equal(typeof viaCommand.rendered, 'string');
  const pack = await conn.sendRequest('palace/context', { uri, dry_run: true });
  assert.equal(pack.request.file, 'main.go');
  assert.equal(pack.budget.limit, 4000, 'the budget setting reached the server');

  const hints = await conn.sendRequest('textDocument/inlayHint', { textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } } });
  assert.deepEqual(hints, [], 'inlay hints switched off by didChangeConfiguration');

  await conn.sendRequest('shutdown');
  await conn.sendNotification('exit');
  assert.equal(await exited, 0, 'palace lsp exits 0 after shutdown + exit');
  conn.dispose();
  fs.rmSync(tmp, { recursive: true, force: true });
  console.log('ok: palace lsp speaks the extension\'s protocol');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
