// `npm run test:agents`: the built-in `opencode` agent against the real OpenCode CLI, installed
// from npm into a temporary folder (never a dependency of grove), driven over ACP (`opencode acp`)
// by grove's bridge. With no network it opens a session in the worktree (its id is ses_…), takes
// grove's agent for the mode through its `mode` config option, gets the prompt and waits forever:
// `timeout_s` bounds it, and a follow-up resumes that session.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUILTIN_AGENTS } from '../../daemon/agents/agents.ts';
import { acpApprovalTests } from '../helpers/acp-approvals.ts';
import { makeTempDir } from '../helpers/git.ts';
import { functionNames, opencodeModelEnv, startOpenAIServer, toolMessages } from '../helpers/openai-server.ts';
import { cliEnv, daemonWithAgent, endedSession, followUp, headlessRanTxt, installCliForFile, startSession, stdoutJson } from '../helpers/real-agents.ts';

// The CLI, installed once for this file's tests.
const opencodeBin = installCliForFile('opencode-ai@1.18.33');

test("the built-in opencode agent over ACP: grove's agent per mode as its mode option, the prompt sent, timeout_s ends it killed, a follow-up resumes the session", async (t) => {
  const { d, task } = await daemonWithAgent(t, 'opencode', cliEnv(t, opencodeBin()));
  // OpenCode answers initialize and session/new after several seconds on a loaded machine (its
  // first run in a new home): the bound leaves room for both before it ends the session.
  const first = await startSession(d, task, { agent: 'opencode', prompt: '- fix the failing test', timeout_s: 25 });
  assert.deepEqual(first.command.slice(5), ['--acp-mode', 'grove-edit', '--prompt=- fix the failing test', '--', 'opencode', 'acp']);
  const s = await endedSession(d, first.id);
  assert.deepEqual([s.status, s.timed_out], ['killed', true]);
  const lines = await stdoutJson(d, first.id);
  const init = lines.find((l) => l.type === 'initialize').response;
  assert.equal(init.agentInfo.name, 'OpenCode');
  assert.ok(init.agentCapabilities.sessionCapabilities.resume, 'it offers resume');
  const opened = lines.find((l) => l.type === 'session');
  assert.match(opened.sessionId, /^ses_/);
  assert.equal(s.agent_session_id, opened.sessionId);
  const option = opened.response.configOptions.find((o: any) => o.category === 'mode');
  assert.deepEqual(option.options.map((o: any) => o.value).filter((v: string) => v.startsWith('grove-')).sort(), ['grove-edit', 'grove-full', 'grove-read'], "grove's agents are offered");
  assert.ok(lines.some((l) => l.type === 'mode' && l.configId === 'mode' && l.modeId === 'grove-edit'), 'edit set grove-edit');
  assert.ok(lines.some((l) => l.type === 'prompt'));

  const f = await followUp(d, first.id, { prompt: 'go on', mode: 'read' });
  assert.deepEqual(f.command.slice(5, 9), ['--resume', s.agent_session_id, '--acp-mode', 'grove-read']);
  const next = await endedSession(d, f.id);
  assert.deepEqual([next.status, next.timed_out], ['killed', true], 'the time limit of the session it follows');
  const again = await stdoutJson(d, f.id);
  const resumed = again.find((l) => l.type === 'session');
  assert.deepEqual([resumed.how, resumed.sessionId], ['resume', s.agent_session_id]);
  assert.ok(again.some((l) => l.type === 'mode' && l.modeId === 'grove-read'));
});

// Against a scripted OpenAI API (test/helpers/openai-server.ts) as a provider of its own: its plain
// headless mode (the command the built-in ran before grove's ACP bridge) runs the model's tool
// calls, and over ACP each shell call in grove's edit agent is asked about through grove.
const call = (command: string) => ({ tool_use: { name: 'bash', input: { command, description: 'Run it' } } });
// Confined (DESIGN §18): the provider's base URL is in OpenCode's own config file, not in its
// environment, so the project names its host in `sandbox.network`; a user agent gets the
// built-in's sandbox. Over ACP its client reaches its own server on 127.0.0.1:4096 inside the
// sandbox: loopback is not proxied there (docs/decisions/sandbox.md).
const network = (url: string) => ({ sandbox: { network: [new URL(url).host] } });
const HEADLESS = { command: ['opencode', 'run', '--format', 'json', '--auto', '--', '{prompt}'], format: 'opencode', sandbox: BUILTIN_AGENTS.opencode!.sandbox };

test('headless --auto against a scripted OpenAI API: the real OpenCode runs the scripted shell command in the task\'s worktree, the model reads its output, the result is the scripted final text', async (t) => {
  const m = await startOpenAIServer(t, [{ text: 'Running it.', ...call('touch ran.txt') }, { text: 'Created ran.txt.' }], { side: () => 'Scripted title' });
  const env = { PATH: `${opencodeBin()}:${process.env.PATH}`, ...opencodeModelEnv(m.url, makeTempDir(t, 'grove-opencode-home-')) };
  const { s, events } = await headlessRanTxt(t, env, HEADLESS, { files: { '.grove.json': JSON.stringify(network(m.url)) } });
  const [first, second] = m.turns();
  assert.ok(functionNames(first!).includes('bash'), `--auto offers the shell: ${functionNames(first!)}`);
  const tool = events.find((e) => e.type === 'tool_use')?.part;
  assert.deepEqual([tool?.tool, tool?.state.status, tool?.state.metadata.exit], ['bash', 'completed', 0]);
  assert.deepEqual(toolMessages(second!), [{ tool_call_id: tool.callID, text: '(no output)' }]);
  assert.equal(s.result.text, 'Created ran.txt.');
  assert.equal(s.result.is_error, false);
  assert.equal(s.agent_session_id, events[0].sessionID);
  // Besides the loop's two turns, its title request (no tools offered).
  assert.deepEqual(m.requests.map((r) => `${r.method} ${r.path} ${r.turn}`), ['POST /v1/chat/completions null', 'POST /v1/chat/completions 0', 'POST /v1/chat/completions 1']);
});

acpApprovalTests({
  agent: 'opencode',
  tokens: true,
  bin: opencodeBin,
  mode: 'edit',
  server: (t, script) => startOpenAIServer(t, script, { side: () => 'Scripted title' }),
  env: opencodeModelEnv,
  shell: call,
  told: (req) => toolMessages(req).map((m) => m.text).join('\n'),
  // OpenCode 1.18.33 ends the turn at a rejected call, without asking the model again.
  endsTurnSaying: /The user rejected permission to use this specific tool call\./,
  grove: network,
});
