// End-to-end test of `palace mcp` with a client no one on the palace team
// wrote: the official MCP TypeScript SDK's stdio client, against the real
// binary.
//
//   node run.mjs /path/to/palace        (or PALACE_BIN=/path/to/palace)
//
// Every check is a node:test test; the process exits non-zero when one
// fails. The script makes its own palace home and git checkout in a
// temporary directory and removes them at the end.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, realpathSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

const bin = resolve(process.argv[2] ?? process.env.PALACE_BIN ?? '');
if (!process.argv[2] && !process.env.PALACE_BIN) {
  console.error('usage: node run.mjs /path/to/palace');
  process.exit(2);
}

const AGENT_TOOLS = ['palace_brief', 'palace_cards', 'palace_context', 'palace_distill', 'palace_feedback', 'palace_gate', 'palace_link', 'palace_mailbox_file', 'palace_record', 'palace_research', 'palace_verify'];
const HUMAN_ONLY = ['palace_audit_action', 'palace_demote', 'palace_promote', 'palace_publish', 'palace_resolve', 'palace_retire'];

const root = realpathSync(mkdtempSync(join(tmpdir(), 'palace-mcp-e2e-')));
const home = join(root, 'home');
const repo = join(root, 'repo');

// Only what palace needs: no PALACE_* from the caller's environment.
const baseEnv = { PATH: process.env.PATH, HOME: process.env.HOME ?? root, USER: 'tester', PALACE_HOME: home, NO_COLOR: '1' };

function git(...args) {
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: repo, env: { ...baseEnv, GIT_CONFIG_GLOBAL: '/dev/null' } });
}

/** palace runs the CLI and returns stdout; extraEnv can set PALACE_MODE. */
function palace(args, extraEnv = {}) {
  return execFileSync(bin, args, { cwd: repo, env: { ...baseEnv, ...extraEnv }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function palaceJSON(args, extraEnv = {}) {
  return JSON.parse(palace([...args, '--format', 'json'], extraEnv));
}

/** connect starts `palace mcp …args` and connects the SDK client to it. */
async function connect(args = [], extraEnv = {}) {
  const transport = new StdioClientTransport({
    command: bin,
    args: ['mcp', ...args],
    cwd: repo,
    env: { ...baseEnv, ...extraEnv },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'palace-e2e', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

const text = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

async function ok(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert.ok(!res.isError, `${name} failed: ${text(res)}`);
  return res;
}

let agent, human, seededCard;

before(async () => {
  mkdirSync(repo, { recursive: true });
  git('init', '-q', '-b', 'main');
  git('remote', 'add', 'origin', 'git@github.com:acme/widgets.git');
  // A promoted card, through the CLI in human mode, for context to find.
  const seen = palaceJSON(['record', '--content', 'without WAL the tests flake with database is locked', '--field', 'storage', '--source-ref', 'ci#12']).id;
  const fixed = palaceJSON(['record', '--content', 'with WAL 50 of 50 runs pass', '--field', 'storage']).id;
  seededCard = palaceJSON(['distill', '--statement', 'Open SQLite in WAL mode', '--tier', 'qi', '--field', 'storage',
    '--supporting', seen, '--verification', fixed, '--scope-path', 'store/**', '--intent', 'debug', '--persistence', 'foundational']).id;
  palace(['promote', seededCard, '--reason', 'verified in CI']);
  agent = await connect();
  human = await connect(['--mode', 'human']);
});

after(async () => {
  await agent?.close();
  await human?.close();
  rmSync(root, { recursive: true, force: true });
});

test('the server introduces itself with a guide for the model', () => {
  assert.equal(agent.getServerVersion().name, 'palace');
  assert.match(agent.getInstructions(), /palace_context/);
});

test('tools/list differs by mode exactly', async () => {
  const names = async (c) => (await c.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(await names(agent), AGENT_TOOLS);
  assert.deepEqual(await names(human), [...AGENT_TOOLS, ...HUMAN_ONLY].sort());
});

test('PALACE_MODE=agent cannot be raised by --mode human', async () => {
  const c = await connect(['--mode', 'human'], { PALACE_MODE: 'agent' });
  try {
    const names = (await c.listTools()).tools.map((t) => t.name);
    assert.ok(!names.includes('palace_promote'), `listed: ${names}`);
  } finally {
    await c.close();
  }
});

test('palace_promote in agent mode is JSON-RPC error -32602', async () => {
  for (const name of HUMAN_ONLY) {
    await assert.rejects(
      agent.callTool({ name, arguments: { id: seededCard, reason: 'r' } }),
      (err) => {
        assert.ok(err instanceof McpError, `not an McpError: ${err}`);
        assert.equal(err.code, -32602);
        assert.ok(err.message.endsWith(`Tool "${name}" not available in agent mode`), err.message);
        return true;
      },
    );
  }
  // And nothing moved.
  assert.equal(palaceJSON(['card', 'show', seededCard]).status, 'promoted');
});

test('palace_record → palace_distill → palace_gate round-trips', async () => {
  const ev = (await ok(agent, 'palace_record', { content: 'make lint catches the unused import before CI does', field: 'build', source_ref: 'make lint' })).structuredContent;
  assert.match(ev.id, /^ev_/);
  assert.equal(ev.provenance, 'runtime');
  assert.equal(ev.actor_type, 'agent');
  const card = (await ok(agent, 'palace_distill', { statement: 'Run make lint before pushing', tier: 'shu', field: 'build', supporting: [ev.id] })).structuredContent;
  assert.equal(card.status, 'candidate');
  assert.equal(card.counts.supporting, 1);
  const gate = (await ok(agent, 'palace_gate', { id: card.id })).structuredContent;
  assert.equal(gate.card_id, card.id);
  assert.equal(gate.allow, false);
  assert.deepEqual(gate.missing, { verification: 1 });
  assert.equal(gate.reviewer.type, 'agent');
  // The CLI sees the same card, untouched by the gate.
  const shown = palaceJSON(['card', 'show', card.id]);
  assert.equal(shown.status, 'candidate');
  assert.equal(shown.links[0].evidence_id, ev.id);
  const events = (await ok(agent, 'palace_cards', { action: 'events', id: card.id })).structuredContent.events;
  assert.deepEqual(events.map((e) => e.type), ['created']);
  // The agent verifies the claim and links the verification: the gate now allows.
  const check = (await ok(agent, 'palace_record', { content: 'make lint failed on the unused import; CI never saw it', field: 'build', source_ref: 'make lint' })).structuredContent;
  const linked = (await ok(agent, 'palace_link', { id: card.id, role: 'verification', evidence_id: check.id })).structuredContent;
  assert.equal(linked.added, true);
  assert.equal(linked.card.status, 'candidate');
  const again = (await ok(agent, 'palace_gate', { id: card.id })).structuredContent;
  assert.equal(again.allow, true);
});

test('palace_context returns the same pack as the CLI', async () => {
  const args = ['context', 'sqlite locking', '--file', 'store/store.go', '--intent', 'debug', '--instruction', 'answer in plain text',
    '--budget', '4000', '--dry-run', '--request-id', 'rq_e2e'];
  const cli = palaceJSON(args, { PALACE_MODE: 'agent' });
  const res = await ok(agent, 'palace_context', { query: 'sqlite locking', file: 'store/store.go', intents: ['debug'],
    instructions: ['answer in plain text'], budget: 4000, dry_run: true, request_id: 'rq_e2e' });
  // The same pack, except that an agent over MCP is told to fetch a card
  // with the palace_cards tool where the CLI names its own command.
  const asMCP = (s) => s.replaceAll('`palace card show ID`', 'palace_cards get `ID`').replace(/`palace card show (kc_\w+)`/g, 'palace_cards get `$1`');
  assert.deepEqual(res.structuredContent, { ...cli, rendered: asMCP(cli.rendered) });
  assert.equal(text(res), asMCP(cli.rendered));
  assert.ok(!text(res).includes('palace card show'), text(res));
  assert.equal(palace(args, { PALACE_MODE: 'agent' }), cli.rendered, 'text output is the rendered pack');
  assert.ok(cli.rendered.includes(seededCard), `the pack does not render ${seededCard}:\n${cli.rendered}`);
});

test('palace_brief returns the same brief as the CLI', async () => {
  const cli = palaceJSON(['brief', 'sqlite', '--file', 'store/store.go', '--intent', 'debug'], { PALACE_MODE: 'agent' });
  const res = await ok(agent, 'palace_brief', { query: 'sqlite', file: 'store/store.go', intents: ['debug'] });
  assert.deepEqual(res.structuredContent, cli);
  assert.equal(cli.key_facts[0].card_id, seededCard);
});

test('palace_mailbox_file appends a letter to the spool, and refuses a secret', async () => {
  const res = await ok(agent, 'palace_mailbox_file', { class: 'tool_error', what: 'make lint needs staticcheck on PATH', tool: 'make lint' });
  const lines = readFileSync(join(home, 'field-reports.jsonl'), 'utf8').trim().split('\n');
  assert.equal(lines.length, 1);
  const letter = JSON.parse(lines[0]);
  assert.equal(letter.what, 'make lint needs staticcheck on PATH');
  assert.equal(letter.agent, 'agent');
  assert.equal(res.structuredContent.id, createHash('sha256').update(lines[0]).digest('hex').slice(0, 12));
  const refused = await agent.callTool({ name: 'palace_mailbox_file', arguments: { class: 'tool_error', what: 'login', snippet: 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' } });
  assert.ok(refused.isError);
  assert.match(text(refused), /^palace: letter refused, it contains a secret/);
  assert.equal(readFileSync(join(home, 'field-reports.jsonl'), 'utf8').trim().split('\n').length, 1);
});

test('a rendered pack is never recorded back', async () => {
  const pack = text(await ok(agent, 'palace_context', { query: 'sqlite', file: 'store/store.go', intents: ['debug'] }));
  const before = palaceJSON(['evidence', 'list', '--anchor', 'all', '--all-repos']).total;
  const res = await agent.callTool({ name: 'palace_record', arguments: { content: `notes:\n${pack}` } });
  assert.ok(res.isError);
  assert.match(text(res), /^palace: content is refused: .*memory must not feed on its own echo/s);
  assert.equal(palaceJSON(['evidence', 'list', '--anchor', 'all', '--all-repos']).total, before);
});

test('errors are tool results with the CLI message; bad arguments name the field', async () => {
  const cases = [
    [{ content: 'x', contnet: 'y' }, /^palace: argument "contnet" is not known to palace_record/],
    [{ content: 42 }, /^palace: argument "content" must be a string, got a number$/],
    [{ content: 'x', provenance: 'dream' }, /^palace: provenance "dream" is not valid: use one of runtime, research, human$/],
  ];
  for (const [args, want] of cases) {
    const res = await agent.callTool({ name: 'palace_record', arguments: args });
    assert.ok(res.isError, JSON.stringify(args));
    assert.match(text(res), want);
  }
  // The same failure through the CLI prints the same message, in the CLI's
  // words (flags, commands) where MCP names arguments and tools.
  let stderr = '';
  try {
    palace(['distill', '--statement', 's', '--tier', 'qi', '--supporting', 'ev_nope']);
  } catch (err) {
    stderr = err.stderr.toString();
  }
  const res = await agent.callTool({ name: 'palace_distill', arguments: { statement: 's', tier: 'qi', supporting: ['ev_nope'] } });
  assert.ok(res.isError);
  assert.equal(stderr.trimEnd(), 'palace: --supporting ev_nope: no such evidence; record it first with `palace record`');
  assert.equal(text(res), 'palace: supporting ev_nope: no such evidence; record it first with palace_record');
});

test('concurrent tool calls are answered correctly, in any order', async () => {
  const calls = [];
  for (let i = 0; i < 40; i++) {
    switch (i % 4) {
      case 0:
        calls.push(agent.callTool({ name: 'palace_record', arguments: { content: `concurrent evidence ${i}` } })
          .then((r) => assert.equal(r.structuredContent.content, `concurrent evidence ${i}`)));
        break;
      case 1:
        calls.push(agent.callTool({ name: 'palace_gate', arguments: { id: seededCard } })
          .then((r) => assert.equal(r.structuredContent.card_id, seededCard)));
        break;
      case 2:
        calls.push(agent.callTool({ name: 'palace_cards', arguments: { action: 'get', id: `kc_missing${i}` } })
          .then((r) => { assert.ok(r.isError); assert.ok(text(r).includes(`kc_missing${i}`), text(r)); }));
        break;
      case 3:
        calls.push(agent.callTool({ name: 'palace_context', arguments: { query: `sqlite ${i}`, dry_run: true, request_id: `rq_${i}` } })
          .then((r) => assert.equal(r.structuredContent.request_id, `rq_${i}`)));
        break;
    }
  }
  await Promise.all(calls);
});

test('human mode promotes through the gate', async () => {
  const seen = (await ok(human, 'palace_record', { content: 'go vet flags the copied lock', field: 'build' })).structuredContent.id;
  const fixed = (await ok(human, 'palace_record', { content: 'after the fix go vet is clean', field: 'build' })).structuredContent.id;
  const card = (await ok(human, 'palace_distill', { statement: 'Never copy a sync.Mutex', tier: 'qi', supporting: [seen] })).structuredContent;
  const denied = await human.callTool({ name: 'palace_promote', arguments: { id: card.id, reason: 'r' } });
  assert.ok(denied.isError);
  assert.match(text(denied), new RegExp(`^palace: gate denied promoting ${card.id} to promoted\\n  - `));
  const res = await ok(human, 'palace_promote', { id: card.id, reason: 'verified', verification: [fixed] });
  assert.equal(res.structuredContent.card.status, 'promoted');
});
