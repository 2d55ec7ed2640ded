// `npm run test:agents`: the built-in `qwen` agent against the real Qwen Code CLI, installed from
// npm into a temporary folder (never a dependency of grove), driven over ACP (`qwen --acp`) by
// grove's bridge. Without credentials its session/new refuses, and the session fails saying so.
// With an OpenAI key (`--auth-type=openai`, as its ACP auth method says) and a model endpoint that
// fails every call it opens a session in the worktree, takes the ACP mode of the session's mode,
// and its prompt ends in a JSON-RPC error that grove reads as the result; a follow-up continues
// that session (resumed: 0.24 answers session/resume, which 0.15.10 offered but did not answer).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUILTIN_AGENTS } from '../../daemon/agents/agents.ts';
import { acpApprovalTests } from '../helpers/acp-approvals.ts';
import { functionNames, promptOf, qwenModelEnv, startOpenAIServer, toolMessages } from '../helpers/openai-server.ts';
import { cliEnv, daemonWithAgent, daemonWithTask, endedSession, followUp, headlessRanTxt, installCliForFile, startSession, stdoutJson } from '../helpers/real-agents.ts';

// The CLI, installed once for this file's tests.
// The version docs/agents.md says was checked: a newer Qwen Code is checked on purpose, not by
// whatever npm has that day (0.24 added an `auto` mode and ends its turn at a refused call).
const qwenBin = installCliForFile('@qwen-code/qwen-code@0.24.4');

const NO_KEY = { OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined, DASHSCOPE_API_KEY: undefined, GEMINI_API_KEY: undefined, ANTHROPIC_API_KEY: undefined };

test('the built-in qwen agent over ACP: no credentials refused at session/new, its ACP modes, the prompt sent, a failed model call as the result, a follow-up of the same session', async (t) => {
  const base = cliEnv(t, qwenBin(), NO_KEY);

  // No credentials: session/new refuses, the session fails with its message.
  const bare = await daemonWithAgent(t, 'qwen', base);
  const refused = await endedSession(bare.d, (await startSession(bare.d, bare.task, { agent: 'qwen', prompt: '- fix the failing test' })).id);
  assert.equal(refused.status, 'failed');
  assert.equal(refused.exit_code, 1);
  assert.equal(refused.result.is_error, true);
  assert.match(refused.result.text, /^Authentication required/);

  // A model endpoint that fails every call (a script of no turns answers each 400). Not a closed
  // port: confined, its relay accepts and closes the connection, which Qwen Code 0.24 retries for
  // minutes (docs/agents.md).
  const m = await startOpenAIServer(t, []);
  const FAILED = 'Internal error: 400 the script has 0 turns; request 1 of the loop has none';
  // The requests of its loop (those offering tools: its model calls for the prompt).
  const loop = () => m.requests.filter((r) => functionNames(r).length > 0);
  const env = { ...base, ...qwenModelEnv(m.url) };
  const { d, task } = await daemonWithTask(t, env);
  const first = await startSession(d, task, { agent: 'qwen', prompt: '- fix the failing test', args: ['--auth-type=openai'] });
  assert.deepEqual(first.command.slice(2), ['acp-bridge', '--session', first.id, '--acp-mode', 'auto-edit', '--prompt=- fix the failing test', '--', 'qwen', '--acp', '--auth-type=openai']);
  const s = await endedSession(d, first.id);
  const lines = await stdoutJson(d, first.id);
  const init = lines.find((l) => l.type === 'initialize').response;
  assert.equal(init.agentInfo.name, 'qwen-code');
  assert.deepEqual([init.agentCapabilities.loadSession, Boolean(init.agentCapabilities.sessionCapabilities?.resume)], [true, true]);
  const opened = lines.find((l) => l.type === 'session');
  // `auto` (0.24) lets a model of its own approve calls without asking: never what grove leaves it in.
  assert.deepEqual(opened.response.modes.availableModes.map((x: any) => x.id), ['plan', 'default', 'auto-edit', 'auto', 'yolo']);
  assert.equal(opened.response.modes.currentModeId, 'auto');
  assert.equal(s.agent_session_id, opened.sessionId);
  assert.ok(lines.some((l) => l.type === 'mode' && l.modeId === 'auto-edit'));
  assert.ok(lines.some((l) => l.type === 'prompt'));
  assert.deepEqual([s.status, s.exit_code, s.result.is_error, s.result.text], ['failed', 1, true, FAILED]);
  assert.deepEqual(loop().map(promptOf), ['- fix the failing test'], 'the prompt reached the model as text, once');

  const f = await followUp(d, first.id, { prompt: '--version', mode: 'read', args: ['--auth-type=openai'] });
  assert.deepEqual(f.command.slice(5, 10), ['--resume', s.agent_session_id, '--acp-mode', 'default', '--prompt=--version']);
  const next = await endedSession(d, f.id);
  const again = await stdoutJson(d, f.id);
  const continued = again.find((l) => l.type === 'session');
  assert.ok(continued, JSON.stringify(again.at(-1)));
  assert.deepEqual([continued.how, continued.sessionId], ['resume', s.agent_session_id], 'the same session, resumed');
  assert.equal(again.some((l) => l.replay === true), false, 'resumed, not replayed');
  assert.ok(again.some((l) => l.type === 'mode' && l.modeId === 'default'), 'read: its mode set again on the resumed session');
  assert.ok(again.some((l) => l.type === 'prompt'), 'the prompt --version went to the model, it did not print a version');
  assert.deepEqual(loop().map(promptOf), ['- fix the failing test', '--version']);
  assert.ok(JSON.stringify(loop()[1]!.body.messages).includes('- fix the failing test'), 'the conversation before it sent with it');
  assert.deepEqual([next.status, next.result.text], ['failed', FAILED]);
  assert.equal(next.agent_session_id, s.agent_session_id);
});

// Against a scripted OpenAI API (test/helpers/openai-server.ts): its plain headless mode (the
// command the built-in ran before grove's ACP bridge) runs the model's tool calls, and over ACP
// each shell call is asked about through grove.
const call = (command: string) => ({ tool_use: { name: 'run_shell_command', input: { command, description: 'Run it' } } });
// Confined (DESIGN §18) as every session is by default: a user agent gets the built-in's sandbox.
const HEADLESS = {
  command: ['qwen', '--output-format', 'stream-json', '--session-id', '{session}', '--approval-mode', 'yolo', '--prompt={prompt}'],
  format: 'qwen',
  sandbox: BUILTIN_AGENTS.qwen!.sandbox,
};

test('headless yolo against a scripted OpenAI API: the real Qwen Code runs the scripted shell command in the task\'s worktree, the model reads its output, the result is the scripted final text', async (t) => {
  const m = await startOpenAIServer(t, [{ text: 'Running it.', ...call('touch ran.txt') }, { text: 'Created ran.txt.' }]);
  const env = cliEnv(t, qwenBin(), { ...NO_KEY, ...qwenModelEnv(m.url) });
  const { s, events } = await headlessRanTxt(t, env, HEADLESS);
  const [first, second] = m.turns();
  assert.ok(functionNames(first!).includes('run_shell_command'), `yolo offers the shell: ${functionNames(first!)}`);
  const [back] = toolMessages(second!);
  assert.equal(back!.tool_call_id, events.find((e) => e.type === 'assistant' && e.message.content[0].type === 'tool_use').message.content[0].id);
  assert.match(back!.text, /^Command: touch ran.txt\n[^]*Exit Code: 0/);
  assert.equal(s.result.text, 'Created ran.txt.');
  assert.equal(s.result.is_error, false);
  assert.deepEqual(s.result.denials ?? [], []);
});

acpApprovalTests({
  agent: 'qwen',
  tokens: true,
  bin: qwenBin,
  mode: 'edit',
  // Its ACP auth method for an OpenAI key.
  args: ['--auth-type=openai'],
  server: startOpenAIServer,
  env: (url, home) => ({ HOME: home, ...NO_KEY, ...qwenModelEnv(url) }),
  shell: call,
  told: (req) => toolMessages(req).map((m) => m.text).join('\n'),
  // 0.24 ends its turn at any refused call (a reject is its cancel, which stops the turn; no answer
  // of ACP's lets it go on), so the model is not told: docs/agents.md.
  endsTurnSaying: /Tool \\"run_shell_command\\" was canceled by the user\./,
});
