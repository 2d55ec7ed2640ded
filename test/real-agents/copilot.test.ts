// `npm run test:agents`: the built-in `copilot` agent against the real GitHub Copilot CLI, installed
// from npm into a temporary folder (never a dependency of grove), driven over ACP (`copilot --acp`)
// by grove's bridge. Without a GitHub token its session/new refuses. With a local model provider
// that refuses connections (its offline BYOK mode, no GitHub at all) it opens a session in the
// worktree, gets the prompt, retries, then says its error as a message and ends the turn; a
// follow-up loads that session (it offers no resume), whose history shows the prompt as text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUILTIN_AGENTS } from '../../daemon/agents/agents.ts';
import { acpApprovalTests } from '../helpers/acp-approvals.ts';
import { copilotModelEnv, functionNames, startOpenAIServer, toolMessages } from '../helpers/openai-server.ts';
import { cliEnv, closedPort, daemonWithAgent, daemonWithTask, endedSession, followUp, headlessRanTxt, installCliForFile, startSession, stdoutJson } from '../helpers/real-agents.ts';

// The CLI, installed once for this file's tests.
const copilotBin = installCliForFile('@github/copilot@1.0.102');

const NO_TOKEN = { COPILOT_GITHUB_TOKEN: undefined, GH_TOKEN: undefined, GITHUB_TOKEN: undefined };

test('the built-in copilot agent over ACP: no token refused at session/new, the mode flags, the prompt sent, its error as the text, a follow-up that loads the session', async (t) => {
  const base = cliEnv(t, copilotBin(), NO_TOKEN);

  // No credentials at all: session/new refuses; the session fails saying so.
  const bare = await daemonWithAgent(t, 'copilot', base);
  const refused = await endedSession(bare.d, (await startSession(bare.d, bare.task, { agent: 'copilot', prompt: '- fix the failing test' })).id);
  assert.deepEqual([refused.status, refused.exit_code, refused.result.is_error, refused.result.text], ['failed', 1, true, 'Authentication required']);

  // Offline BYOK: a model endpoint that refuses, so no GitHub token is needed.
  const { d, task } = await daemonWithTask(t, { ...base, COPILOT_OFFLINE: 'true', COPILOT_PROVIDER_BASE_URL: `http://127.0.0.1:${await closedPort()}/v1`, COPILOT_MODEL: 'gpt-4.1' });
  const first = await startSession(d, task, { agent: 'copilot', prompt: '- fix the failing test', mode: 'edit' });
  assert.deepEqual(first.command.slice(2), ['acp-bridge', '--session', first.id, '--prompt=- fix the failing test', '--', 'copilot', '--acp', '--no-auto-update', '--allow-tool=write']);
  const s = await endedSession(d, first.id);
  const lines = await stdoutJson(d, first.id);
  const init = lines.find((l) => l.type === 'initialize').response;
  assert.equal(init.agentInfo.name, 'Copilot');
  assert.deepEqual([init.agentCapabilities.loadSession, init.agentCapabilities.sessionCapabilities?.resume ?? null], [true, null]);
  const opened = lines.find((l) => l.type === 'session');
  assert.equal(s.agent_session_id, opened.sessionId);
  assert.ok(lines.some((l) => l.type === 'prompt'));
  // Copilot CLI says its failure as a message and ends the turn: not an error in ACP's terms.
  assert.deepEqual([s.status, s.exit_code, s.result.is_error], ['exited', 0, false]);
  // Confined (DESIGN §18), the base URL's loopback port is a listener of the sandbox's own: the port
  // closed outside is a connection that ends at once inside, which Copilot CLI retries as a
  // transient error (unconfined it says "Could not connect to local model provider").
  assert.match(s.result.text, /Failed to get response from the AI model/);

  const f = await followUp(d, first.id, { prompt: '--version', mode: 'full' });
  assert.deepEqual(f.command.slice(5), ['--resume', s.agent_session_id, '--prompt=--version', '--', 'copilot', '--acp', '--no-auto-update', '--allow-all']);
  await endedSession(d, f.id);
  const again = await stdoutJson(d, f.id);
  const loaded = again.find((l) => l.type === 'session');
  assert.deepEqual([loaded.how, loaded.sessionId], ['load', s.agent_session_id], 'the same session, loaded');
  const replayed = again.filter((l) => l.replay === true && l.params.update.sessionUpdate === 'user_message_chunk').map((l) => l.params.update.content.text);
  assert.deepEqual(replayed, ['- fix the failing test'], 'the first prompt reached it as text');
});

// Against a scripted OpenAI API (test/helpers/openai-server.ts) as its own provider, offline: its
// plain headless mode (the command the built-in ran before grove's ACP bridge) runs the model's
// tool calls, and over ACP each shell call is asked about through grove.
const call = (command: string) => ({ tool_use: { name: 'bash', input: { command, description: 'Run it' } } });
// Confined (DESIGN §18) as every session is by default: a user agent gets the built-in's sandbox.
const HEADLESS = {
  command: ['copilot', '--output-format', 'json', '--no-auto-update', '--session-id', '{session}', '--allow-all', '--prompt={prompt}'],
  format: 'copilot',
  sandbox: BUILTIN_AGENTS.copilot!.sandbox,
};

test('headless --allow-all against a scripted OpenAI API: the real Copilot CLI runs the scripted shell command in the task\'s worktree, the model reads its output, the result is the scripted final text', async (t) => {
  const m = await startOpenAIServer(t, [{ text: 'Running it.', ...call('touch ran.txt') }, { text: 'Created ran.txt.' }]);
  const env = cliEnv(t, copilotBin(), { ...NO_TOKEN, ...copilotModelEnv(m.url) });
  const { s, events } = await headlessRanTxt(t, env, HEADLESS);
  const [first, second] = m.turns();
  assert.ok(functionNames(first!).includes('bash'), `--allow-all offers the shell: ${functionNames(first!)}`);
  const [back] = toolMessages(second!);
  assert.equal(back!.tool_call_id, events.find((e) => e.type === 'tool.execution_start')?.data.toolCallId);
  assert.match(back!.text, /exit code 0/);
  assert.equal(s.result.text, 'Created ran.txt.');
  assert.equal(s.result.is_error, false);
  assert.equal(events.at(-1).exitCode, 0);
  // Offline, nothing but the loop's two turns reached a server.
  assert.deepEqual(m.requests.map((r) => `${r.method} ${r.path} ${r.turn}`), ['POST /v1/chat/completions 0', 'POST /v1/chat/completions 1']);
});

acpApprovalTests({
  agent: 'copilot',
  tokens: true,
  bin: copilotBin,
  mode: 'edit',
  server: startOpenAIServer,
  env: (url, home) => ({ HOME: home, ...NO_TOKEN, ...copilotModelEnv(url) }),
  shell: call,
  told: (req) => toolMessages(req).map((m) => m.text).join('\n'),
  // Copilot CLI 1.0.102 ends the turn at a rejected call, without asking the model again.
  endsTurnSaying: /The user rejected this tool call\./,
});
