// Schema test of `palace mcp` with clients that take tool schemas at their
// word: every tool's input and output schema must compile under ajv's
// strict mode (JSON Schema 2020-12, the MCP default), and a call of every
// tool whose arguments follow its input schema must succeed with a
// structuredContent that its output schema accepts. The official SDK
// client validates structuredContent too.
//
//   node schemas.mjs /path/to/palace        (or PALACE_BIN=/path/to/palace)

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const bin = resolve(process.argv[2] ?? process.env.PALACE_BIN ?? '');
if (!process.argv[2] && !process.env.PALACE_BIN) {
  console.error('usage: node schemas.mjs /path/to/palace');
  process.exit(2);
}

const root = realpathSync(mkdtempSync(join(tmpdir(), 'palace-mcp-schemas-')));
const home = join(root, 'home');
const repo = join(root, 'repo');
const baseEnv = { PATH: process.env.PATH, HOME: process.env.HOME ?? root, USER: 'tester', PALACE_HOME: home, NO_COLOR: '1' };

function git(...args) {
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: repo, env: { ...baseEnv, GIT_CONFIG_GLOBAL: '/dev/null' } });
}

function palaceJSON(args) {
  return JSON.parse(execFileSync(bin, [...args, '--format', 'json'], { cwd: repo, env: baseEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
}

async function connect(mode) {
  const transport = new StdioClientTransport({ command: bin, args: ['mcp', '--mode', mode], cwd: repo, env: baseEnv, stderr: 'pipe' });
  const client = new Client({ name: 'palace-schemas', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** strictAjv is ajv as strict as it goes: unknown keywords, union types,
 * keywords that do not apply to the declared type and required properties
 * that are not declared all fail compilation. */
function strictAjv() {
  const ajv = new Ajv2020({ strict: true, strictTypes: true, strictTuples: true, strictRequired: true, allErrors: true });
  addFormats(ajv);
  return ajv;
}

const text = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

let agent, human, seeded, fixed;

before(async () => {
  mkdirSync(repo, { recursive: true });
  git('init', '-q', '-b', 'main');
  git('remote', 'add', 'origin', 'git@github.com:acme/widgets.git');
  // Code a card can cite, committed, for palace_verify.
  mkdirSync(join(repo, 'sync'), { recursive: true });
  writeFileSync(join(repo, 'sync', 'lock.go'), 'package sync\n\n// Guard holds the lock by pointer.\ntype Guard struct{ mu *Mutex }\n');
  git('add', 'sync/lock.go');
  git('commit', '-q', '-m', 'lock');
  const seen = palaceJSON(['record', '--content', 'without WAL the tests flake with database is locked', '--field', 'storage']).id;
  fixed = palaceJSON(['record', '--content', 'with WAL 50 of 50 runs pass', '--field', 'storage']).id;
  seeded = palaceJSON(['distill', '--statement', 'Open SQLite in WAL mode', '--tier', 'qi', '--field', 'storage',
    '--supporting', seen, '--verification', fixed, '--scope-path', 'store/**']).id;
  palaceJSON(['promote', seeded, '--reason', 'verified in CI']);
  agent = await connect('agent');
  human = await connect('human');
});

after(async () => {
  await agent?.close();
  await human?.close();
  rmSync(root, { recursive: true, force: true });
});

for (const mode of ['agent', 'human']) {
  test(`${mode} mode: every input and output schema compiles under ajv strict mode`, async () => {
    const { tools } = await (mode === 'agent' ? agent : human).listTools();
    assert.ok(tools.length >= 10, `only ${tools.length} tools`);
    const problems = [];
    for (const t of tools) {
      for (const [which, schema] of [['inputSchema', t.inputSchema], ['outputSchema', t.outputSchema]]) {
        if (!schema) {
          problems.push(`${t.name}: no ${which}`);
          continue;
        }
        try {
          strictAjv().compile(schema);
        } catch (err) {
          problems.push(`${t.name} ${which}: ${err.message}`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });
}

const report = {
  report_id: 'rr-schema', title: 'Edge caching', about: 'project',
  sources: [{ id: 's1', url: 'https://example.com/caching', title: 'Caching guide' }],
  findings: [{ id: 'f1', content: 'Edge caches keep stale pages 60 s', source: 's1', field: 'caching' }],
  candidate_insights: [{ statement: 'Purge the edge cache on deploy', tier: 'shu', findings: ['f1'] }],
};

// steps calls the tools in an order where each call's ids exist: a list of
// [tool, arguments (a function of what earlier calls returned), check].
function steps(mode) {
  const s = {};
  const agentSteps = [
    ['palace_record', () => ({ content: `go vet flags the copied lock (${mode})`, field: 'build', tags: ['schema'] }), (r) => { s.ev = r.id; }],
    ['palace_distill', () => ({ statement: `Never copy a sync.Mutex (${mode} mode)`, tier: 'qi', field: 'build', supporting: [s.ev] }), (r) => { s.card = r.id; }],
    ['palace_record', () => ({ content: `after the fix go vet is clean (${mode})`, field: 'build' }), (r) => { s.check = r.id; }],
    ['palace_link', () => ({ id: s.card, role: 'verification', evidence_id: s.check }), (r) => assert.equal(r.added, true)],
    ['palace_gate', () => ({ id: s.card }), (r) => assert.equal(r.card_id, s.card)],
    ['palace_cards', () => ({ action: 'list', limit: 1 }), (r) => { assert.equal(r.cards.length, 1); assert.ok(r.total >= 2, `total ${r.total}`); }],
    ['palace_cards', () => ({ action: 'get', id: seeded }), (r) => assert.equal(r.id, seeded)],
    ['palace_cards', () => ({ action: 'events', id: seeded }), (r) => assert.ok(r.events.some((e) => e.decision) && r.events.some((e) => e.data), JSON.stringify(r.events))],
    ['palace_context', () => ({ query: 'sqlite locking', file: 'store/store.go', budget: 4000, dry_run: true }), (r) => assert.ok(r.rendered.includes(seeded))],
    ['palace_brief', () => ({ query: 'sqlite', file: 'store/store.go' }), (r) => assert.equal(r.key_facts[0].card_id, seeded)],
    ['palace_mailbox_file', () => ({ class: 'question', what: `make lint needs staticcheck on PATH (${mode})`, tool: 'make lint' }), (r) => assert.match(r.id, /^[0-9a-f]{12}$/)],
    ['palace_feedback', () => ({ signal: 'used', card_id: seeded, note: 'the pack named WAL and it fixed the flake' }), () => {}],
    ['palace_research', () => ({ action: 'validate', report }), () => {}],
    ['palace_record', () => ({ content: `Guard holds the lock by pointer (${mode})`, field: 'build', source_ref: 'sync/lock.go#L3-L4' }), (r) => { s.code = r.id; }],
    ['palace_distill', () => ({ statement: `Hold locks by pointer (${mode} mode)`, tier: 'qi', field: 'build', supporting: [s.code] }), (r) => { s.codeCard = r.id; }],
    ['palace_verify', () => ({ id: s.codeCard, note: 'the lines still say it' }), (r) => assert.equal(r.card.id, s.codeCard)],
  ];
  if (mode === 'agent') return agentSteps;
  return [
    ...agentSteps,
    ['palace_research', () => ({ action: 'plan', report }), () => {}],
    ['palace_promote', () => ({ id: s.card, reason: 'verified by go vet' }), (r) => assert.equal(r.card.status, 'promoted')],
    ['palace_audit_action', () => ({ id: s.card, action: 'set_review_after', value: '2031-01-01', reason: 'check again next year' }), (r) => assert.equal(r.card.id, s.card)],
    ['palace_publish', () => ({ id: s.card, to: 'repo', reason: 'holds in every checkout' }), (r) => { s.copy = r.card?.id ?? r.copy?.id; }],
    ['palace_record', () => ({ content: 'a copied sync.Mutex passed go vet in the generated code', field: 'build' }), (r) => { s.contra = r.id; }],
    ['palace_feedback', () => ({ signal: 'contradiction', card_id: seeded, evidence_id: s.contra, note: 'generated code copies it' }), () => {}],
    ['palace_record', () => ({ content: 'with WAL 100 of 100 runs pass after the upgrade', field: 'storage' }), (r) => { s.newer = r.id; }],
    ['palace_resolve', () => ({ id: seeded, verification: [s.newer], reason: 'the contradiction was generated code' }), (r) => assert.equal(r.card.id, seeded)],
    ['palace_record', () => ({ content: 'go vet copylocks misses a copy through an interface', field: 'build' }), (r) => { s.counter = r.id; }],
    ['palace_demote', () => ({ id: s.card, reason: 'go vet misses a case', counterexample: [s.counter] }), (r) => assert.equal(r.card.status, 'demoted')],
    ['palace_retire', () => ({ id: s.card, reason: 'superseded' }), (r) => assert.equal(r.card.status, 'retired')],
  ];
}

for (const mode of ['agent', 'human']) {
  test(`${mode} mode: a call of every tool that follows its schema succeeds and returns what its output schema says`, async () => {
    const client = mode === 'agent' ? agent : human;
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    const called = new Set();
    for (const [name, args, check] of steps(mode)) {
      const tool = byName.get(name);
      assert.ok(tool, `${name} is not listed in ${mode} mode`);
      const ajv = strictAjv();
      const a = args();
      const validIn = ajv.compile(tool.inputSchema);
      assert.ok(validIn(a), `${name} ${JSON.stringify(a)} does not follow the input schema: ${ajv.errorsText(validIn.errors)}`);
      const res = await client.callTool({ name, arguments: a });
      assert.ok(!res.isError, `${name} ${JSON.stringify(a)} failed: ${text(res)}`);
      const validOut = ajv.compile(tool.outputSchema);
      assert.ok(validOut(res.structuredContent), `${name}: structuredContent does not follow the output schema: ${ajv.errorsText(validOut.errors)}`);
      check(res.structuredContent);
      called.add(name);
    }
    assert.deepEqual([...called].sort(), [...byName.keys()].sort(), 'every listed tool is called');
  });
}
