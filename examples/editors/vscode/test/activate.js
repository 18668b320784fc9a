// Loads the packaged extension (dist/extension.js, which bundles the real
// vscode-languageclient) and runs its activate() against the real
// `palace lsp`. Only the VS Code API host is a stand-in: a `vscode` module
// with the parts the extension and the language client touch, recording
// what they register and show.
//
//   PALACE_BIN=/path/to/palace node test/activate.js
'use strict';
const assert = require('node:assert/strict');
const cp = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Module = require('node:module');

const shown = { errors: [], warnings: [], output: '' };
const registered = {};

class Disposable {
  constructor(fn) { this.fn = fn; }
  static from(...ds) { return new Disposable(() => ds.forEach((d) => d && d.dispose && d.dispose())); }
  dispose() { if (this.fn) this.fn(); }
}
class EventEmitter {
  constructor() { this.ls = []; this.event = (l) => { this.ls.push(l); return new Disposable(() => {}); }; }
  fire(e) { this.ls.forEach((l) => l(e)); }
  dispose() {}
}
class CancellationTokenSource {
  constructor() { this.token = { isCancellationRequested: false, onCancellationRequested: () => new Disposable(() => {}) }; }
  cancel() { this.token.isCancellationRequested = true; }
  dispose() {}
}
class Uri {
  constructor(scheme, p) { this.scheme = scheme; this.fsPath = p; this.path = p; }
  static file(p) { return new Uri('file', p); }
  static parse(s) { return s.startsWith('file://') ? new Uri('file', s.slice(7)) : new Uri(s.split(':')[0], s); }
  toString() { return this.scheme === 'file' ? 'file://' + this.fsPath : this.path; }
  with() { return this; }
}
const event = () => new Disposable(() => {});
// Anything the stand-in does not model is a no-op returning a disposable,
// so a feature the client registers and this test does not exercise
// cannot break activation.
function lenient(target, name) {
  return new Proxy(target, {
    get(t, k) {
      if (k in t) return t[k];
      if (typeof k === 'symbol' || k === 'then') return undefined;
      if (/^on[A-Z]/.test(k)) return event;
      if (/^register/.test(k)) {
        return (...args) => { (registered[`${name}.${k}`] ??= []).push(args); return new Disposable(() => {}); };
      }
      return () => new Disposable(() => {});
    },
  });
}

// nested turns {'hints.hover': true} into {hints: {hover: true}}.
function nested(flat) {
  const out = {};
  for (const [k, v] of Object.entries(flat)) {
    const parts = k.split('.');
    let o = out;
    for (const p of parts.slice(0, -1)) o = o[p] ??= {};
    o[parts[parts.length - 1]] = v;
  }
  return out;
}

// stub is the VS Code API with the flat palace settings as their effective
// values and, in inspect, the scopes of any (e.g. {home: {globalValue: …,
// workspaceValue: …}}).
function stub(settings, folder, inspect = {}) {
  const channel = lenient({
    name: 'palace',
    append: (s) => { shown.output += s; },
    appendLine: (s) => { shown.output += s + '\n'; },
    info: (s) => { shown.output += s + '\n'; },
    warn: (s) => { shown.output += s + '\n'; },
    error: (s) => { shown.output += s + '\n'; },
    trace: () => {}, debug: () => {}, show: () => {}, clear: () => {}, dispose: () => {},
    logLevel: 2, onDidChangeLogLevel: event,
  }, 'channel');
  const config = {
    get: (k, d) => (k in settings ? settings[k] : d),
    has: (k) => k in settings,
    inspect: (k) => inspect[k],
    update: async () => {},
  };
  const classes = {};
  const api = {
    // Marks the object as an ES module namespace, so the bundle's
    // __importStar uses it as is rather than copying its own keys.
    __esModule: true,
    version: '1.91.0',
    Disposable, EventEmitter, CancellationTokenSource, Uri,
    CancellationError: class extends Error {},
    LogLevel: { Off: 0, Trace: 1, Debug: 2, Info: 3, Warning: 4, Error: 5 },
    ViewColumn: { Beside: -2 },
    TabInputText: class {}, TabInputTextDiff: class {}, TabInputNotebook: class {}, TabInputCustom: class {},
    env: { appName: 'stand-in', language: 'en', openExternal: async () => true, machineId: 'test', sessionId: 'test' },
    workspace: lenient({
      workspaceFolders: [{ uri: Uri.file(folder), name: 'repo', index: 0 }],
      textDocuments: [], notebookDocuments: [],
      // getConfiguration('palace').get('mode'), and the whole section as
      // getConfiguration().get('palace') for clients that sync sections.
      getConfiguration: (section) => lenient(section === 'palace' ? config
        : { ...config, get: (k, d) => (k === 'palace' ? nested(settings) : d) }, 'config'),
      getWorkspaceFolder: () => undefined,
    }, 'workspace'),
    window: lenient({
      activeTextEditor: undefined, visibleTextEditors: [],
      tabGroups: { all: [], onDidChangeTabs: event, onDidChangeTabGroups: event },
      createOutputChannel: () => channel,
      showErrorMessage: async (m) => { shown.errors.push(m); },
      showWarningMessage: async (m) => { shown.warnings.push(m); },
      showInformationMessage: async () => undefined,
    }, 'window'),
    languages: lenient({
      match: () => 10,
      createDiagnosticCollection: () => lenient({ set: () => {}, delete: () => {}, clear: () => {}, dispose: () => {} }, 'diagnostics'),
    }, 'languages'),
    commands: lenient({ executeCommand: async () => undefined }, 'commands'),
  };
  // Value classes (Range, CodeLens, Diagnostic, …) the converters build:
  // plain classes keeping their arguments.
  return new Proxy(api, {
    get(t, k) {
      if (k in t || typeof k === 'symbol') return t[k];
      if (/^[A-Z]/.test(k)) {
        classes[k] ??= class { constructor(...args) { this.args = args; } };
        return classes[k];
      }
      return undefined;
    },
  });
}

async function main() {
  const bin = process.env.PALACE_BIN;
  assert.ok(bin, 'set PALACE_BIN to the palace binary');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'palace-vscode-activate-'));
  const repo = path.join(tmp, 'repo');
  fs.mkdirSync(path.join(repo, '.palace'), { recursive: true });
  cp.execFileSync('git', ['init', '-q'], { cwd: repo });
  process.env.PALACE_HOME = path.join(tmp, 'home');
  delete process.env.PALACE_MODE;
  process.chdir(repo);

  const vscode = stub({ path: bin, mode: 'human', 'hints.hover': true }, repo);
  const load = Module._load;
  Module._load = function (request, ...rest) {
    return request === 'vscode' ? vscode : load.call(this, request, ...rest);
  };
  const ext = require(path.join(__dirname, '..', 'dist', 'extension.js'));
  const context = { subscriptions: [], extensionPath: path.join(__dirname, '..'), globalState: { get: () => undefined, update: async () => {} } };
  await ext.activate(context);

  assert.deepEqual(shown.errors, [], 'activate showed an error');
  for (const cmd of ['palace.showContext', 'palace.showBrief', 'palace.recordSelection', 'palace.restart', 'palace.openCardInBrowser']) {
    assert.ok((registered['commands.registerCommand'] ?? []).some((a) => a[0] === cmd), `command ${cmd} registered`);
  }
  // The capabilities came from the real server's initialize answer.
  assert.ok(registered['languages.registerHoverProvider'], 'hover provider registered from the server capabilities');
  assert.ok(registered['languages.registerCodeLensProvider'], 'code lens provider registered from the server capabilities');
  await ext.deactivate();
  assert.doesNotMatch(shown.output, /mode.*ignored/, 'the server was sent a setting it ignores');
  assert.doesNotMatch(shown.output, /home setting.*ignored/, 'the server was sent a home setting');

  // palace.home: the user's value reaches the server as --home; a
  // workspace's (a cloned .vscode/settings.json) is ignored with a warning
  // and never opened.
  const userHome = path.join(tmp, 'user-home');
  const shipped = path.join(repo, '.vscode', 'palace');
  const withHome = stub({ path: bin, mode: 'human', home: shipped }, repo, { home: { globalValue: userHome, workspaceValue: shipped } });
  Module._load = function (request, ...rest) {
    return request === 'vscode' ? withHome : load.call(this, request, ...rest);
  };
  delete require.cache[require.resolve(path.join(__dirname, '..', 'dist', 'extension.js'))];
  const extHome = require(path.join(__dirname, '..', 'dist', 'extension.js'));
  await extHome.activate({ subscriptions: [] });
  for (let i = 0; i < 100 && !fs.existsSync(userHome); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  await extHome.deactivate();
  assert.ok(fs.existsSync(userHome), 'the server did not open the user\'s palace.home');
  assert.ok(!fs.existsSync(shipped), 'the server opened the workspace\'s palace.home');
  assert.equal(shown.warnings.filter((m) => /palace\.home in this workspace's settings is ignored/.test(m)).length, 1,
    `workspace home warning: ${JSON.stringify(shown.warnings)}`);
  assert.doesNotMatch(shown.output, /home setting.*ignored/, 'the server was sent a home setting');

  // Without palace: one clear message saying how to install it.
  shown.errors = [];
  const missing = stub({ path: path.join(tmp, 'no-such-palace') }, repo);
  Module._load = function (request, ...rest) {
    return request === 'vscode' ? missing : load.call(this, request, ...rest);
  };
  delete require.cache[require.resolve(path.join(__dirname, '..', 'dist', 'extension.js'))];
  const ext2 = require(path.join(__dirname, '..', 'dist', 'extension.js'));
  await ext2.activate({ subscriptions: [] });
  assert.equal(shown.errors.filter((m) => /go install github.com\/palacehq\/palace/.test(m)).length, 1, `install hint: ${JSON.stringify(shown.errors)}`);
  fs.rmSync(tmp, { recursive: true, force: true });
  console.log('ok: activate() starts palace lsp through the real language client');
}

main().then(() => process.exit(0), (err) => {
  console.error(err);
  console.error('output channel:\n' + shown.output);
  process.exit(1);
});
