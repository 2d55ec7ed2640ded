// The approvals of DESIGN §15 against a real ACP agent CLI (Gemini CLI, Qwen Code, Copilot CLI,
// …) run by grove's ACP bridge, its model a scripted server of its provider's protocol: the same
// cases for each agent, registered by its test file with what differs (the server, the
// environment, the shell tool's call, how the model is told a call's outcome).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { startDaemon, type TestDaemon } from './daemon.ts';
import { makeTempDir } from './git.ts';
import { daemonWithTask, runSession } from './real-agents.ts';
import type { RecordedRequest, ScriptedServer, Turn } from './scripted-server.ts';
import { waitSessionEnd } from './sessions.ts';
import { until } from './store.ts';

export interface AcpAgentSpec {
  /** the built-in's name */
  agent: string;
  /** the folder of its installed commands */
  bin: () => string;
  /** the grove mode in which its shell is asked about */
  mode: string;
  /** the session's extra arguments, if it needs any */
  args?: string[];
  server: (t: TestContext, script: Turn[]) => Promise<ScriptedServer>;
  /** the environment pointing the CLI at the server, its home at `home` */
  env: (url: string, home: string) => Record<string, string | undefined>;
  /** the model's call of the CLI's shell tool */
  shell: (command: string) => Extract<Turn, { tool_use: unknown }>;
  /** what the CLI sent the model back for the previous turn's tool call, as one text */
  told: (req: RecordedRequest) => string;
  /** a CLI that ends its turn at a refused call (the model is not asked again): what its failed tool call says */
  endsTurnSaying?: RegExp;
  /** whether the CLI reports the turn's tokens over ACP (its prompt response's `usage`, or
   * Gemini CLI's `_meta.quota`): then the result has them; else they stay null (docs/agents.md) */
  tokens: boolean;
  /** the daemon's user config, if it needs one */
  config?: Record<string, unknown>;
  /** the project's `.grove.json` for a model server at `url`, if it needs one (a CLI whose base
   * URL is in its own config file names the server's host in `sandbox.network`) */
  grove?: (url: string) => Record<string, unknown>;
}

const FINAL = 'Scripted: the end.';

// After a refused call (denied, expired): the model's next request says the call was refused and
// the session ends with the scripted text, or the CLI ends the turn itself, its tool call failed.
function refusedCall(t: TestContext, spec: AcpAgentSpec, m: ScriptedServer, run: { s: any; events: any[] }, how: string): void {
  if (spec.endsTurnSaying) {
    assert.equal(m.turns().length, 1, 'the model was not asked again');
    const failed = run.events.map((e) => e.params?.update).filter((u) => u?.sessionUpdate === 'tool_call_update' && u.status === 'failed');
    const said = failed.map((u) => JSON.stringify([u.content, u.rawOutput])).join('\n');
    assert.match(said, spec.endsTurnSaying);
    t.diagnostic(`${spec.agent} ended its turn, ${how}: its tool call ${said}; the result text ${JSON.stringify(run.s.result.text)}`);
    return;
  }
  const told = spec.told(m.turns()[1]!);
  t.diagnostic(`${spec.agent} told the model, ${how}: ${JSON.stringify(told)}`);
  assert.match(told, /reject|denied|declin|cancel/i);
  assert.equal(run.s.result.text, FINAL);
}

// A task on a daemon whose agent's model is a server playing `script` then FINAL.
async function setup(t: TestContext, spec: AcpAgentSpec, script: Turn[], grove: Record<string, unknown> = {}) {
  const m = await spec.server(t, [...script, { text: FINAL }]);
  const home = makeTempDir(t, `grove-${spec.agent}-home-`);
  const env = { PATH: `${spec.bin()}:${process.env.PATH}`, ...spec.env(m.url, home) };
  const project = { ...spec.grove?.(m.url), ...grove };
  const files = Object.keys(project).length > 0 ? { '.grove.json': JSON.stringify(project) } : undefined;
  return { m, env, ...(await daemonWithTask(t, env, { ...(files ? { files } : {}), ...(spec.config ? { config: spec.config } : {}) })) };
}

// The session's first pending approval, once the agent has asked (the CLI starts, then calls the model).
const pendingOf = (d: TestDaemon, sessionId: string): Promise<any> =>
  until(async () => (await d.socket('GET', `/api/approvals?session_id=${sessionId}&status=pending`)).json[0], 'a pending approval', 60_000);

const answer = (d: TestDaemon, a: any, body: Record<string, unknown>) => d.socket('POST', `/api/approvals/${a.id}`, { body: { nonce: a.nonce, ...body } });

export function acpApprovalTests(spec: AcpAgentSpec): void {
  const name = spec.agent;
  // A shell call with some text before it: what the model says before a call is not the result.
  const say = (command: string): Turn => ({ text: 'Running it.', ...spec.shell(command) });
  const session = (prompt: string, extra: Record<string, unknown> = {}) => ({ agent: name, mode: spec.mode, prompt, ...(spec.args ? { args: spec.args } : {}), ...extra });

  test(`${name} over ACP, allowed: the scripted shell command is asked about (the command in the approval), then runs in the worktree; the model reads its output; the result is the scripted text`, async (t) => {
    const { m, d, task, worktree } = await setup(t, spec, [say('touch ran.txt')]);
    let asked: any;
    const run = await runSession(d, task, session('create ran.txt'), async (id) => {
      asked = await pendingOf(d, id);
      assert.equal(existsSync(path.join(worktree, 'ran.txt')), false, 'nothing ran before the person answered');
      assert.equal((await d.socket('GET', `/api/sessions/${id}`)).json.waiting, 'approval');
      assert.equal((await answer(d, asked, { decision: 'allow' })).status, 200);
    });
    t.diagnostic(`${name} asked: ${JSON.stringify(asked.input)}`);
    assert.equal(asked.tool, 'Bash');
    assert.equal(asked.input.command, 'touch ran.txt');
    assert.equal(run.s.status, 'exited', run.said);
    assert.ok(existsSync(path.join(worktree, 'ran.txt')), 'allowed: it ran in the worktree');
    assert.equal(run.s.sandbox.confined, spec.config?.sandbox !== false, 'confined, as every session where the machine can (DESIGN §18), unless the spec says not');
    assert.equal(run.s.result.text, FINAL);
    assert.equal(run.s.result.is_error, false);
    assert.equal(m.turns().length, 2);
    t.diagnostic(`${name} told the model, allowed: ${JSON.stringify(spec.told(m.turns()[1]!))}`);
    const { input_tokens, output_tokens } = run.s.result;
    t.diagnostic(`${name} tokens over ACP: ${input_tokens} in, ${output_tokens} out`);
    if (spec.tokens) assert.ok(input_tokens > 0 && output_tokens > 0, `the turn's tokens: ${input_tokens} in, ${output_tokens} out`);
    else assert.deepEqual([input_tokens, output_tokens], [null, null], 'tokens reported: set tokens: true for this CLI');
  });

  test(`${name} over ACP, denied: the command does not run, and the model's next request carries the refusal (or the CLI ends its turn saying so)`, async (t) => {
    const { m, d, task, worktree } = await setup(t, spec, [say('touch denied.txt')]);
    const run = await runSession(d, task, session('create denied.txt'), async (id) => {
      assert.equal((await answer(d, await pendingOf(d, id), { decision: 'deny', message: 'not this one' })).status, 200);
    });
    assert.equal(run.s.status, 'exited', run.said);
    assert.equal(existsSync(path.join(worktree, 'denied.txt')), false, 'denied: it did not run');
    refusedCall(t, spec, m, run, 'denied');
  });

  test(`${name} over ACP, a rule: a .grove.json allow rule lets the command run without asking`, async (t) => {
    const { d, task, worktree } = await setup(t, spec, [say('touch ruled.txt')], { allow: ['Bash(touch ruled.txt)'] });
    const run = await runSession(d, task, session('create ruled.txt'));
    assert.equal(run.s.status, 'exited', run.said);
    assert.ok(existsSync(path.join(worktree, 'ruled.txt')), 'the rule allowed it');
    const [a] = (await d.socket('GET', `/api/approvals?session_id=${run.s.id}`)).json;
    // Allowed by the rule: recorded as decided at once, never pending.
    assert.deepEqual([a?.status, a?.reason], ['allowed', 'allowed by the rule Bash(touch ruled.txt)'], JSON.stringify(a));
    assert.equal(run.s.result.text, FINAL);
  });

  test(`${name} over ACP, remember: allowed once for the session, the same command again runs without asking`, async (t) => {
    const append = 'echo ran >> twice.txt';
    const { d, task, worktree } = await setup(t, spec, [say(append), say(append)]);
    const run = await runSession(d, task, session('append to twice.txt, twice'), async (id) => {
      assert.equal((await answer(d, await pendingOf(d, id), { decision: 'allow', remember: 'session' })).status, 200);
    });
    assert.equal(run.s.status, 'exited', run.said);
    assert.equal(readFileSync(path.join(worktree, 'twice.txt'), 'utf8'), 'ran\nran\n', 'both calls ran');
    const all = (await d.socket('GET', `/api/approvals?session_id=${run.s.id}`)).json;
    assert.deepEqual(
      all.map((a: any) => [a.status, a.remember, a.reason]),
      [
        ['allowed', 'session', null],
        ['allowed', null, `allowed by the rule Bash(${append})`],
      ],
    );
    assert.equal(run.s.result.text, FINAL);
  });

  test(`${name} over ACP, approval_timeout_s: the approval expires with "no decision within N s", the command does not run`, async (t) => {
    const { m, d, task, worktree } = await setup(t, spec, [say('touch late.txt')]);
    const run = await runSession(d, task, session('create late.txt', { approval_timeout_s: 1 }));
    assert.equal(run.s.status, 'exited', run.said);
    const [a] = (await d.socket('GET', `/api/approvals?session_id=${run.s.id}`)).json;
    assert.deepEqual([a.status, a.reason], ['expired', 'no decision within 1 s']);
    assert.equal(existsSync(path.join(worktree, 'late.txt')), false, 'expired: it did not run');
    refusedCall(t, spec, m, run, 'expired');
  });

  test(`${name} over ACP, a daemon restart while the approval is pending, then allowed: the command runs`, async (t) => {
    const { d, env, task, worktree } = await setup(t, spec, [say('touch restarted.txt')]);
    const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: session('create restarted.txt') });
    assert.equal(r.status, 201, r.text);
    const a = await pendingOf(d, r.json.id);
    await d.stop();
    const d2 = await startDaemon(t, { home: d.home, env });
    t.after(() => d2.socket('DELETE', `/api/sessions/${r.json.id}`).catch(() => {}));
    assert.equal((await answer(d2, a, { decision: 'allow' })).status, 200);
    await waitSessionEnd(d2, r.json.id);
    const s = (await d2.socket('GET', `/api/sessions/${r.json.id}`)).json;
    assert.equal(s.status, 'exited');
    assert.ok(existsSync(path.join(worktree, 'restarted.txt')), 'allowed after the restart: it ran');
    assert.equal(s.result.text, FINAL);
  });
}
