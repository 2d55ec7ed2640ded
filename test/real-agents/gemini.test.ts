// `npm run test:agents`: the built-in `gemini` agent against the real Gemini CLI, installed from
// npm into a temporary folder (never a dependency of grove), driven over ACP (`gemini --acp`) by
// grove's bridge. With a key but no network it opens a session in the worktree (no model needed),
// takes the ACP mode of the session's mode, gets the prompt, then retries forever: `timeout_s`
// bounds it, and a follow-up asks to load that session (`session/load`: Gemini CLI offers no resume).
import assert from 'node:assert/strict';
import { BUILTIN_AGENTS } from '../../daemon/agents/agents.ts';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { acpApprovalTests } from '../helpers/acp-approvals.ts';
import { functionNames, functionResponses, geminiModelEnv, startGeminiServer } from '../helpers/gemini-server.ts';
import { makeTempDir } from '../helpers/git.ts';
import { cliEnv, daemonWithAgent, endedSession, followUp, headlessRanTxt, installCliForFile, startSession, stdoutJson } from '../helpers/real-agents.ts';
import type { Turn } from '../helpers/scripted-server.ts';

// The CLI, installed once for this file's tests.
const geminiBin = installCliForFile('@google/gemini-cli@0.61.0');

test('the built-in gemini agent over ACP: --skip-trust in a new worktree, its ACP mode set, the prompt sent, timeout_s, a follow-up that asks to load the session', async (t) => {
  // A key that no server will see (the network is closed).
  const env = cliEnv(t, geminiBin(), { GEMINI_API_KEY: 'grove-test-no-such-key' });
  // The auth type a login leaves in the settings: without it Gemini CLI's session/load answers
  // "Authentication required" (its session/new falls back on GEMINI_API_KEY by itself).
  mkdirSync(path.join(env.HOME!, '.gemini'));
  writeFileSync(path.join(env.HOME!, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
  const { d, task } = await daemonWithAgent(t, 'gemini', env);

  const first = await startSession(d, task, { agent: 'gemini', prompt: '- fix the failing test', timeout_s: 12 });
  assert.deepEqual(first.command.slice(2), ['acp-bridge', '--session', first.id, '--acp-mode', 'autoEdit', '--prompt=- fix the failing test', '--', 'gemini', '--acp', '--skip-trust']);
  const s = await endedSession(d, first.id);
  assert.equal(s.status, 'killed');
  assert.equal(s.timed_out, true);
  const lines = await stdoutJson(d, first.id);
  const init = lines.find((l) => l.type === 'initialize').response;
  assert.equal(init.agentInfo.name, 'gemini-cli');
  assert.equal(init.agentCapabilities.loadSession, true);
  const opened = lines.find((l) => l.type === 'session');
  assert.deepEqual(opened.response.modes.availableModes.map((m: any) => m.id).sort(), ['autoEdit', 'default', 'plan', 'yolo']);
  assert.equal(s.agent_session_id, opened.sessionId, "grove took Gemini CLI's session id");
  assert.ok(lines.some((l) => l.type === 'mode' && l.modeId === 'autoEdit'), 'edit set autoEdit');
  assert.ok(lines.some((l) => l.type === 'prompt'), 'the prompt was sent, in a session opened in the worktree');

  const f = await followUp(d, first.id, { prompt: 'go on', mode: 'read', timeout_s: 12 });
  assert.deepEqual(f.command.slice(5), ['--resume', s.agent_session_id, '--acp-mode', 'default', '--prompt=go on', '--', 'gemini', '--acp', '--skip-trust']);
  // Gemini CLI 0.61.0 lists only sessions that reached its model: offline, the first turn was not
  // kept, and its session/load says so (a load that works needs a model: the scripted-server tests).
  const next = await endedSession(d, f.id);
  assert.equal(next.status, 'failed');
  assert.equal(next.result.is_error, true);
  assert.match(next.result.text, /No previous sessions found for this project/);
});

// Against a scripted Gemini API (test/helpers/gemini-server.ts): its plain headless mode (the
// command the built-in ran before grove's ACP bridge) runs the model's tool calls, and over ACP
// each shell call is asked about through grove.
const call = (command: string) => ({ tool_use: { name: 'run_shell_command', input: { command, description: 'Run it' } } });
const shell = (command: string): Turn => ({ text: 'Running it.', ...call(command) });
// A user's agent: confined, it names Gemini CLI's state folder as the built-in does (DESIGN §18).
const HEADLESS = {
  command: ['gemini', '--output-format', 'stream-json', '--skip-trust', '--session-id', '{session}', '--approval-mode', 'yolo', '--prompt={prompt}'],
  format: 'gemini',
  sandbox: BUILTIN_AGENTS.gemini!.sandbox,
};

test('headless yolo against a scripted Gemini API: the real Gemini CLI runs the scripted shell command in the task\'s worktree, the model reads its output, the result is the scripted final text', async (t) => {
  const m = await startGeminiServer(t, [shell('touch ran.txt'), { text: 'Created ran.txt.' }]);
  const env = { PATH: `${geminiBin()}:${process.env.PATH}`, ...geminiModelEnv(m.url, makeTempDir(t, 'grove-gemini-home-')) };
  const { s, events } = await headlessRanTxt(t, env, HEADLESS);
  const [first, second] = m.turns();
  assert.ok(functionNames(first!).includes('run_shell_command'), `yolo offers the shell: ${functionNames(first!)}`);
  const [response] = functionResponses(second!);
  assert.equal(response!.name, 'run_shell_command');
  assert.match(response!.response.output, /Output: \(empty\)/);
  assert.deepEqual(events.filter((e) => e.type === 'tool_result').map((e) => e.status), ['success']);
  assert.equal(s.result.text, 'Created ran.txt.');
  assert.equal(s.result.is_error, false);
  assert.equal(s.result.input_tokens, events.at(-1).stats.input_tokens);
  // Besides the loop's two turns, only its router's side request, which asks for JSON.
  assert.deepEqual(m.requests.filter((r) => r.turn === null).map((r) => [r.path.split(':')[1], r.body.generationConfig?.responseMimeType]), [['generateContent', 'application/json']]);
});

acpApprovalTests({
  agent: 'gemini',
  tokens: true,
  bin: geminiBin,
  mode: 'edit',
  server: startGeminiServer,
  env: geminiModelEnv,
  shell: call,
  told: (req) => JSON.stringify(functionResponses(req).map((r) => r.response)),
});
