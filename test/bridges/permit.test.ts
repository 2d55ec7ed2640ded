// `grove approval-mcp --session ID` (Claude Code's permission prompt tool, DESIGN §15) as a child
// process, driven by the MCP SDK's own client as Claude Code drives it: each call is asked through
// the daemon for a running fixture session, shown pending, and answered with the person's verdict.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { DAEMON_ENTRY, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { agentHome, gate, readyTaskOn, sharedAgentDaemon } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';

const daemon = sharedAgentDaemon({ allow: ['Bash(git status)'] });

// The bridge for session `session` on the daemon of `home`, as Claude Code starts it.
async function bridge(t: TestContext, home: string, session: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [DAEMON_ENTRY, 'approval-mcp', '--session', session],
    env: { ...(process.env as Record<string, string>), GROVE_HOME: home },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'claude-code-test', version: '1' });
  await client.connect(transport);
  t.after(() => client.close());
  return client;
}

// A held session of the fixture agent in a project of its own, deleted when the test ends.
async function running(t: TestContext, d: TestDaemon) {
  const on = await readyTaskOn(d, t);
  const g = gate(t);
  const r = await d.socket('POST', `/api/tasks/${on.task.id}/sessions`, { body: { prompt: `wait:${g.path}` } });
  assert.equal(r.status, 201, r.text);
  t.after(() => d.socket('DELETE', `/api/sessions/${r.json.id}`).catch(() => {}));
  return { ...on, s: r.json };
}

// The tool's one text block, parsed.
async function answer(call: Promise<any>): Promise<any> {
  const r = await call;
  assert.equal(r.isError, undefined, JSON.stringify(r));
  assert.equal(r.content.length, 1);
  assert.equal(r.content[0].type, 'text');
  return JSON.parse(r.content[0].text);
}

const approve = (client: Client, args: Record<string, unknown>) => client.callTool({ name: 'approve', arguments: args }, undefined, { timeout: 120_000 });

// The pending approval of `key` in `session`, once the bridge has asked.
async function pending(d: TestDaemon, session: string, key: string): Promise<any> {
  return until(async () => (await d.socket('GET', `/api/approvals?status=pending&session_id=${session}`)).json.find((a: any) => a.key === key), `approval ${key} pending`);
}

test('approve: one tool; a Bash call is pending with its whole input until allowed, then runs its input; a denial gives the message; a rule allows at once', async (t) => {
  const d = await daemon();
  const { s } = await running(t, d);
  const client = await bridge(t, d.home, s.id);
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((x) => x.name), ['approve']);
  assert.deepEqual((tools[0]!.inputSchema as any).required, ['tool_name', 'input']);

  const input = { command: 'sh -c "touch asked.txt"', description: 'touch it' };
  const allowed = answer(approve(client, { tool_name: 'Bash', input, tool_use_id: 'toolu_allow' }));
  const a = await pending(d, s.id, 'toolu_allow');
  assert.equal(a.kind, 'tool');
  assert.equal(a.tool, 'Bash');
  assert.deepEqual(a.input, input);
  assert.equal((await d.socket('GET', `/api/sessions/${s.id}`)).json.waiting, 'approval');
  const ok = await d.socket('POST', `/api/approvals/${a.id}`, { body: { nonce: a.nonce, decision: 'allow' } });
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(await allowed, { behavior: 'allow', updatedInput: input });

  const denied = answer(approve(client, { tool_name: 'Bash', input: { command: 'rm -rf build' }, tool_use_id: 'toolu_deny' }));
  const b = await pending(d, s.id, 'toolu_deny');
  const no = await d.socket('POST', `/api/approvals/${b.id}`, { body: { nonce: b.nonce, decision: 'deny', message: 'not the build folder' } });
  assert.equal(no.status, 200, no.text);
  assert.deepEqual(await denied, { behavior: 'deny', message: 'not the build folder' });

  // The user config's rule: allowed without a pending approval.
  assert.deepEqual(await answer(approve(client, { tool_name: 'Bash', input: { command: 'git status' }, tool_use_id: 'toolu_rule' })), {
    behavior: 'allow',
    updatedInput: { command: 'git status' },
  });
  const all = (await d.socket('GET', `/api/approvals?session_id=${s.id}`)).json;
  assert.deepEqual(all.map((x: any) => [x.key, x.status]), [
    ['toolu_allow', 'allowed'],
    ['toolu_deny', 'denied'],
    ['toolu_rule', 'allowed'],
  ]);
});

test('approve: AskUserQuestion is a question, allowed with the answer as updatedInput.answers; a session that is not running is refused with the reason', async (t) => {
  const d = await daemon();
  const { s } = await running(t, d);
  const client = await bridge(t, d.home, s.id);
  const input = { questions: [{ question: 'Which database?', header: 'DB', options: [{ label: 'sqlite' }, { label: 'postgres' }], multiSelect: false }] };
  const asked = answer(approve(client, { tool_name: 'AskUserQuestion', input, tool_use_id: 'toolu_q' }));
  const q = await pending(d, s.id, 'toolu_q');
  assert.equal(q.kind, 'question');
  const r = await d.socket('POST', `/api/approvals/${q.id}`, { body: { nonce: q.nonce, decision: 'allow', answer: 'postgres' } });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(await asked, { behavior: 'allow', updatedInput: { ...input, answers: { 'Which database?': 'postgres' } } });

  // Ended: the ask API refuses, and the bridge denies the call saying so.
  assert.equal((await d.socket('DELETE', `/api/sessions/${s.id}`)).status < 300, true);
  await until(async () => !['starting', 'running'].includes((await d.socket('GET', `/api/sessions/${s.id}`)).json.status), 'the session ended');
  const late = await answer(approve(client, { tool_name: 'Bash', input: { command: 'ls' }, tool_use_id: 'toolu_late' }));
  assert.equal(late.behavior, 'deny');
  assert.match(late.message, /^grove could not ask about this call: SESSION_NOT_RUNNING: /);
});

test('approve: a daemon restart while a call is pending loses nothing: the bridge waits through it and answers the verdict given after', async (t) => {
  const home = agentHome(t);
  const d = await startDaemon(t, { home });
  const { s } = await running(t, d);
  const client = await bridge(t, home, s.id);
  const input = { command: 'make deploy' };
  const call = answer(approve(client, { tool_name: 'Bash', input, tool_use_id: 'toolu_restart' }));
  const a = await pending(d, s.id, 'toolu_restart');
  await d.stop();

  const d2 = await startDaemon(t, { home });
  try {
    const r = await d2.socket('POST', `/api/approvals/${a.id}`, { body: { nonce: a.nonce, decision: 'deny', message: 'not today' } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(await call, { behavior: 'deny', message: 'not today' });
  } finally {
    await d2.socket('DELETE', `/api/sessions/${s.id}`);
  }
});

test('grove approval-mcp without --session is a usage error (exit 2): there is no session to ask for', () => {
  const r = spawnSync(process.execPath, [DAEMON_ENTRY, 'approval-mcp'], { encoding: 'utf8', input: '' });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /grove approval-mcp needs --session <grove session id>/);
  assert.equal(r.stdout, '');
});
