// grove's Codex bridge (daemon/bridges/codex.ts): what it asks about each request of `codex
// app-server`, how a verdict is answered, and `grove codex-bridge` over a stand-in server
// (test/fixtures/codex-app-server.mjs) for its turn, its output and its exit code. Against the
// real CLI and a daemon: test/real-agents/codex.test.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { answerOf, askOf, innerCommand, POLICY } from '../../daemon/bridges/codex.ts';
import { ROOT } from '../../daemon/runtime/root.ts';
import { DAEMON_ENTRY } from '../helpers/daemon.ts';
import { makeTempDir } from '../helpers/git.ts';

// The lines of a real app-server turn (codex-cli 0.169.0): an escalated `touch esc.txt`, declined.
const recorded = readFileSync(path.join(ROOT, 'test', 'fixtures', 'agent-output', 'codex-app-declined.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l));

test('innerCommand: the command inside `/bin/bash -lc \'…\'`, its quotes undone; anything else as is', () => {
  assert.equal(innerCommand("/bin/bash -lc 'touch esc.txt'"), 'touch esc.txt');
  assert.equal(innerCommand(`bash -c 'echo '\\''hi'\\'' > a'`), "echo 'hi' > a");
  assert.equal(innerCommand("/usr/bin/zsh -lc 'npm test'"), 'npm test');
  assert.equal(innerCommand('npm test'), 'npm test');
  assert.equal(innerCommand("/bin/bash -lc 'a' 'b'"), "/bin/bash -lc 'a' 'b'", 'not one quoted command');
});

test('askOf: a command approval of the recorded turn is a Bash call with the command the model asked for, keyed by turn and call id', () => {
  const request = recorded.find((m) => m.method === 'item/commandExecution/requestApproval');
  const items = new Map([[request.params.itemId, recorded.find((m) => m.method === 'item/started' && m.params.item.type === 'commandExecution').params.item]]);
  assert.deepEqual(askOf(request.method, request.params, items), {
    key: `codex:${request.params.turnId}:call_scripted_0002`,
    kind: 'tool',
    tool: 'Bash',
    input: { command: 'touch esc.txt', cwd: '/users/u/work/task', reason: 'Run it' },
  });
  // A second callback of the same item (zsh-exec-bridge subcommands) has a key of its own.
  assert.equal(askOf(request.method, { ...request.params, approvalId: 'cb-2' }, items)!.key, `codex:${request.params.turnId}:call_scripted_0002:cb-2`);
  // Without the command in the request, the item's.
  const { command: _, ...bare } = request.params;
  assert.equal(askOf(request.method, bare, items)!.input.command, 'touch esc.txt');
});

test('askOf: a file change is an Edit with the changes its item announced (file_path when one); requests grove does not ask about are null', () => {
  const changes = [{ path: '/users/u/work/task/a.txt', kind: { type: 'add' }, diff: 'hello\n' }];
  const items = new Map([['call_7', { type: 'fileChange', id: 'call_7', changes }]]);
  assert.deepEqual(askOf('item/fileChange/requestApproval', { threadId: 't', turnId: 'u', itemId: 'call_7', reason: null, grantRoot: null }, items), {
    key: 'codex:u:call_7',
    kind: 'tool',
    tool: 'Edit',
    input: { file_path: '/users/u/work/task/a.txt', changes },
  });
  const two = new Map([['call_8', { changes: [...changes, { path: '/users/u/work/task/b.txt' }] }]]);
  assert.equal('file_path' in askOf('item/fileChange/requestApproval', { turnId: 'u', itemId: 'call_8' }, two)!.input, false);
  assert.equal(askOf('item/tool/requestUserInput', { turnId: 'u', itemId: 'call_9' }, items), null);
  assert.equal(askOf('item/commandExecution/requestApproval', { turnId: 'u' }, items), null, 'no item id: nothing to key it by');
});

test("answerOf: allow accepts; deny and expiry decline (Codex tells the model \"rejected by user\") and grove's own words are steered in", () => {
  const ask = { key: 'k', kind: 'tool' as const, tool: 'Bash', input: { command: 'touch a' } };
  assert.deepEqual(answerOf(ask, { behavior: 'allow', answer: null }), { decision: 'accept', say: null });
  assert.deepEqual(answerOf(ask, { behavior: 'deny', message: 'not now' }), { decision: 'decline', say: 'grove: the command `touch a` was not run: not now' });
  assert.deepEqual(answerOf({ ...ask, tool: 'Edit', input: {} }, { behavior: 'expired', message: 'no decision within 2 s' }), {
    decision: 'decline',
    say: 'grove: the file change was not made: no decision within 2 s',
  });
});

test('POLICY: read and edit keep their sandbox and ask on request (the model escalates what the sandbox would refuse)', () => {
  assert.deepEqual(POLICY, { read: { sandbox: 'read-only', approvalPolicy: 'on-request' }, edit: { sandbox: 'workspace-write', approvalPolicy: 'on-request' } });
});

// `grove codex-bridge` over the stand-in server, with no daemon (a turn that asks nothing needs none).
function bridge(t: test.TestContext, args: string[], turn: string) {
  const dir = makeTempDir(t, 'grove-codex-bridge-');
  const log = path.join(dir, 'log.jsonl');
  const fake = path.join(ROOT, 'test', 'fixtures', 'codex-app-server.mjs');
  const r = spawnSync(process.execPath, [DAEMON_ENTRY, 'codex-bridge', '--session', 's-1', ...args, '--', process.execPath, fake], {
    env: { ...process.env, GROVE_SOCKET: path.join(dir, 'none.sock'), FAKE_LOG: log, FAKE_TURN: turn },
    encoding: 'utf8',
    timeout: 60_000,
  });
  let sent: any[] = [];
  try {
    sent = readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  } catch {
    // the bridge never wrote to the server
  }
  return { code: r.status, lines: r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)), stderr: r.stderr, sent };
}

test('grove codex-bridge: initialize, thread/start with the mode\'s sandbox and policy, turn/start with the prompt; every server line on stdout; exit 0 when the turn completes', (t) => {
  const run = bridge(t, ['--mode', 'edit', '--prompt=- fix it'], 'completed');
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(run.sent.map((m) => m.method), ['initialize', 'initialized', 'thread/start', 'turn/start']);
  assert.deepEqual(run.sent[2].params, { sandbox: 'workspace-write', approvalPolicy: 'on-request' });
  assert.deepEqual(run.sent[3].params, { threadId: 'thread-1', input: [{ type: 'text', text: '- fix it', text_elements: [] }] });
  assert.deepEqual(run.lines.map((l) => l.method ?? `reply ${l.id}`), ['reply 1', 'reply 2', 'thread/started', 'reply 3', 'item/completed', 'turn/completed']);
  assert.equal(run.lines[4].params.item.text, 'heard: - fix it');
});

test('grove codex-bridge: a follow-up resumes its thread (read: read-only); a failed turn exits 1; a server that exits before the turn ends, with its code (1 when it cannot start)', (t) => {
  const resumed = bridge(t, ['--mode', 'read', '--resume', 'thread-9', '--prompt=go on'], 'completed');
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual(resumed.sent[2], { method: 'thread/resume', id: 2, params: { threadId: 'thread-9', sandbox: 'read-only', approvalPolicy: 'on-request' } });
  assert.equal(resumed.sent[3].params.threadId, 'thread-9');
  assert.equal(bridge(t, ['--mode', 'edit', '--prompt=x'], 'failed').code, 1);
  const gone = bridge(t, ['--mode', 'edit', '--prompt=x'], 'exit');
  assert.equal(gone.code, 3);
  assert.equal(gone.lines.at(-1).id, 3, 'what it printed before it went is on stdout');
  const missing = spawnSync(process.execPath, [DAEMON_ENTRY, 'codex-bridge', '--session', 's-1', '--mode', 'edit', '--prompt=x', '--', path.join(ROOT, 'no-such-codex')], {
    env: { ...process.env, GROVE_SOCKET: path.join(ROOT, 'none.sock') },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(missing.status, 1, 'a server that cannot start');
  assert.match(missing.stderr, /ENOENT/);
});

test('grove codex-bridge: without --session, a mode of read or edit, or the server\'s command, it is a usage error', () => {
  for (const args of [['--mode', 'edit', '--', 'codex', 'app-server'], ['--session', 's', '--mode', 'full', '--', 'codex'], ['--session', 's', '--mode', 'edit']]) {
    const r = spawnSync(process.execPath, [DAEMON_ENTRY, 'codex-bridge', ...args], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /grove codex-bridge needs/);
  }
});
