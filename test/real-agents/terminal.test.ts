// `npm run test:agents`: the real Claude Code and Codex in terminal sessions (DESIGN §21), their
// own interactive interfaces under grove's pseudo-terminal, confined, against the scripted model
// servers. Seen through the WebSocket as a person sees it: the scripted answer on the screen; read
// from the transcript: the agent's session id and the answer as the session's result; a follow-up
// typed into the running interface through the API; its end (/exit, a kill) leaves nothing running.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { BUILTIN_AGENTS } from '../../daemon/agents/agents.ts';
import { makeTempDir } from '../helpers/git.ts';
import { claudeModelEnv, startModelServer, type RecordedRequest } from '../helpers/model-server.ts';
import { codexConfig, codexTitle, startResponsesServer } from '../helpers/openai-responses-server.ts';
import { claudePostinstall, cliEnv, daemonWithTask, installCliForFile, startSession } from '../helpers/real-agents.ts';
import { endedBy, killWhenDone, sessionWhen } from '../helpers/terminal-agents.ts';
import { attach } from '../helpers/terminal.ts';

// The versions test/real-agents/claude.test.ts and codex.test.ts are read against.
const claudeBin = installCliForFile('@anthropic-ai/claude-code@2.1.197', claudePostinstall);
const codexBin = installCliForFile('@openai/codex@0.171.0');

// Claude Code's own state (`~/.claude.json`, or `$CLAUDE_CONFIG_DIR/.claude.json`) as a person's
// is once they have used it in their repository: without each of these its interface stops at a
// first-run dialog before the prompt is sent (checked with 2.1.197). `hasCompletedOnboarding`: the
// welcome, the theme, the security notes, and a check that it reaches api.anthropic.com;
// `customApiKeyResponses`: "Detected a custom API key in your environment. Do you want to use this
// API key?" (the answer kept as the key's last 20 characters); `projects[<folder>]
// .hasTrustDialogAccepted`: "Is this a project you created or one you trust?", asked of the
// working directory unless it or a folder above it is trusted: the repository's trust covers
// its tasks' worktrees (`<repository>/.grove/worktrees/<task>`).
function claudeUsedBefore(configDir: string, repository: string, apiKey: string): void {
  const config = {
    hasCompletedOnboarding: true,
    customApiKeyResponses: { approved: [apiKey.slice(-20)], rejected: [] },
    projects: { [repository]: { hasTrustDialogAccepted: true } },
  };
  writeFileSync(path.join(configDir, '.claude.json'), JSON.stringify(config));
}

// Codex's own config (`~/.codex/config.toml`) as a person's is once they have used it in their
// repository, with the scripted server as its model provider: without these its interface stops
// before the prompt is sent (checked with 0.171.0). `[projects."<folder>"] trust_level`: "Do you
// trust the contents of this directory?", asked of the working directory unless it or its
// repository is trusted (the repository's trust covers its tasks' worktrees);
// `[notice.model_migrations]`: the model's successor announced ("Meet GPT-6 Sol … 1. Try new
// model 2. Use existing model") until the person has answered.
function codexUsedBefore(home: string, url: string, repository: string): void {
  const trust = `[projects.${JSON.stringify(repository)}]\ntrust_level = "trusted"\n`;
  const seen = '[notice.model_migrations]\n"gpt-5.5" = "gpt-6-sol"\n';
  mkdirSync(path.join(home, '.codex'), { recursive: true });
  writeFileSync(path.join(home, '.codex', 'config.toml'), codexConfig(url) + trust + seen);
}

// The text of a model request's last user message: the prompt, without the reminders Claude Code
// adds as blocks of their own (Anthropic's `messages`, OpenAI Responses' `input`).
function lastUserText(req: RecordedRequest): string {
  const content = [...(req.body.messages ?? req.body.input)].reverse().find((msg: any) => msg.role === 'user').content;
  if (typeof content === 'string') return content;
  return content.filter((b: any) => (b.type === 'text' || b.type === 'input_text') && !b.text.startsWith('<system-reminder>')).map((b: any) => b.text).join('');
}

test('claude in a terminal session: the scripted answer on its screen and as its result (read from the transcript), a follow-up typed into it, /exit ends it with nothing left running', async (t) => {
  const m = await startModelServer(t, [{ text: 'The first scripted answer.' }, { text: 'The second scripted answer.' }]);
  // The built-in agent's env keeps its interface from installing the plugin marketplace at start
  // (downloads.claude.ai, github.com): confined in edit, each host would be asked about.
  const env = cliEnv(t, claudeBin(), { CLAUDE_CODE_OAUTH_TOKEN: undefined, CLAUDE_CONFIG_DIR: undefined, ...claudeModelEnv(m.url) });
  const { d, task, worktree } = await daemonWithTask(t, env);
  const project = (await d.socket('GET', `/api/projects/${task.project_id}`)).json;
  claudeUsedBefore(env.HOME!, project.path, env.ANTHROPIC_API_KEY!);

  // As root Claude Code refuses bypassPermissions (full) unless told it is in a sandbox: edit.
  const s = await startSession(d, task, { agent: 'claude', prompt: 'say the first thing', interface: 'terminal', mode: 'edit' });
  killWhenDone(t, d, s);
  const pinned = s.agent_session_id;
  assert.match(pinned, /^[0-9a-f-]{36}$/);
  assert.deepEqual(s.command, ['claude', '--session-id', pinned, '--permission-mode', 'acceptEdits', '--', 'say the first thing']);
  const c = await attach(t, d, s.id);
  await c.waitScreen('The first scripted answer.', 60_000);
  const first = await sessionWhen(d, s.id, (x) => x.result?.text === 'The first scripted answer.', 'the first answer as the result');
  assert.equal(first.status, 'running');
  assert.equal(first.agent_session_id, pinned);
  // Its conversation, as the dashboard reads it: the transcript's lines.
  const view = (await d.socket('GET', `/api/sessions/${s.id}/transcript`)).json;
  assert.equal(view.kind, 'claude');
  assert.ok(view.lines.some((l: any) => l.text.includes('The first scripted answer.')), JSON.stringify(view).slice(0, 500));
  assert.equal(first.result.is_error, false);
  assert.deepEqual(first.sandbox, { confined: true });
  // Nothing asked, nothing refused: the scripted server is the base URL in its environment.
  assert.equal(first.waiting, null);
  assert.deepEqual((await d.socket('GET', `/api/approvals?session_id=${s.id}`)).json, []);
  assert.deepEqual(first.result.blocked, []);

  // A follow-up to the running session is typed into its interface: the same session, 200.
  const r = await d.socket('POST', `/api/sessions/${s.id}/messages`, { body: { prompt: 'say the second thing' } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.id, s.id);
  await c.waitScreen('The second scripted answer.', 60_000);
  const second = await sessionWhen(d, s.id, (x) => x.result?.text === 'The second scripted answer.', 'the second answer as the result');
  assert.equal(second.agent_session_id, pinned);
  assert.deepEqual([second.result.input_tokens, second.result.output_tokens], [20, 28], "both turns' messages, each counted once");
  assert.deepEqual(m.turns().map(lastUserText), ['say the first thing', 'say the second thing'], 'each prompt one request of its loop, as typed');

  // /exit, typed as a person would: the program ends, and with it its holder.
  const { exit, ended } = await endedBy(d, c, s, worktree, () => {
    c.send({ type: 'input', data: '/exit' });
    c.send({ type: 'input', data: '\r' });
  });
  assert.deepEqual(exit, { type: 'exit', code: 0 });
  assert.equal(ended.status, 'exited');
  assert.equal(ended.result.text, 'The second scripted answer.');
});

test('codex in a terminal session: the scripted answer on its screen, its thread id and the answer as the result (read from its rollout), a follow-up typed into it, a kill leaves nothing running; a follow-up to it ended continues its thread in a new terminal session', async (t) => {
  const m = await startResponsesServer(t, [{ text: 'The first scripted answer.' }, { text: 'The second scripted answer.' }, { text: 'The third scripted answer.' }], { side: codexTitle('Say things') });
  // Not in the system's temporary folder, as in codex.test.ts: Codex's own sandbox fails there.
  const home = makeTempDir(t, 'grove-codex-home-', '/var/tmp');
  const env = cliEnv(t, codexBin(), { HOME: home, OPENAI_API_KEY: undefined, CODEX_API_KEY: undefined, CODEX_HOME: undefined });
  // Its model provider is in its own config, not its environment: the project lets its host through.
  const { d, task, worktree } = await daemonWithTask(t, env, { files: { '.grove.json': JSON.stringify({ sandbox: { network: [new URL(m.url).host] } }) } });
  const project = (await d.socket('GET', `/api/projects/${task.project_id}`)).json;
  codexUsedBefore(home, m.url, project.path);

  const s = await startSession(d, task, { agent: 'codex', prompt: 'say the first thing', interface: 'terminal', mode: 'edit' });
  killWhenDone(t, d, s);
  assert.deepEqual(s.command, ['codex', '--no-daemon', '-c', 'sandbox_mode=workspace-write', '--', 'say the first thing']);
  assert.equal(s.agent_session_id, null, 'Codex names its thread itself');
  const c = await attach(t, d, s.id);
  await c.waitScreen('The first scripted answer.', 60_000);
  const first = await sessionWhen(d, s.id, (x) => x.result?.text === 'The first scripted answer.', 'the first answer as the result');
  assert.equal(first.status, 'running');
  assert.match(first.agent_session_id, /^[0-9a-f-]{36}$/);
  const view = (await d.socket('GET', `/api/sessions/${s.id}/transcript`)).json;
  assert.equal(view.kind, 'codex');
  assert.ok(view.lines.some((l: any) => l.text.includes('The first scripted answer.')), JSON.stringify(view).slice(0, 500));
  const rollouts = readdirSync(path.join(home, '.codex', 'sessions'), { recursive: true }).map(String).filter((f) => f.endsWith('.jsonl'));
  assert.deepEqual(rollouts.map((f) => f.endsWith(`-${first.agent_session_id}.jsonl`)), [true], 'the thread of its one rollout');
  assert.equal(first.result.is_error, false);
  assert.deepEqual(first.sandbox, { confined: true });
  // Nothing asked: what its interface reaches for at start (a tip to show, its curated plugins) is
  // refused without asking.
  assert.deepEqual((await d.socket('GET', `/api/approvals?session_id=${s.id}`)).json.map((a: any) => [a.kind, a.input]), []);
  assert.equal(first.waiting, null);
  const refused = BUILTIN_AGENTS.codex!.sandbox!.refuse!.map((host) => `${host}:443`);
  assert.deepEqual(first.result.blocked.filter((b: any) => !refused.includes(b.target)), []);

  const r = await d.socket('POST', `/api/sessions/${s.id}/messages`, { body: { prompt: 'say the second thing' } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.id, s.id);
  await c.waitScreen('The second scripted answer.', 60_000);
  const second = await sessionWhen(d, s.id, (x) => x.result?.text === 'The second scripted answer.', 'the second answer as the result');
  assert.equal(second.agent_session_id, first.agent_session_id);
  assert.deepEqual(m.turns().map(lastUserText), ['say the first thing', 'say the second thing'], 'each prompt one request of its loop, as typed');

  // Killed: its holder's group, the program's, and anything it started are gone.
  const { ended } = await endedBy(d, c, s, worktree, async () => {
    const killed = await d.socket('DELETE', `/api/sessions/${s.id}`);
    assert.equal(killed.status, 200, killed.text);
  });
  assert.equal(ended.status, 'killed');
  assert.equal(ended.result.text, 'The second scripted answer.');
  assert.ok(!readdirSync(path.join(home, '.codex')).includes('app-server-daemon'), 'no shared background server');

  // A follow-up to the ended session: its interface resumes the thread with the prompt, in a new
  // terminal session of the same conversation, and the answer is read from the same rollout.
  const thread = first.agent_session_id;
  const next = await d.socket('POST', `/api/sessions/${s.id}/messages`, { body: { prompt: 'say the third thing' } });
  assert.equal(next.status, 201, next.text);
  const s2 = next.json;
  killWhenDone(t, d, s2);
  assert.equal(s2.interface, 'terminal');
  assert.equal(s2.conversation_id, s.conversation_id);
  assert.deepEqual(s2.command, ['codex', 'resume', '--no-daemon', thread, '-c', 'sandbox_mode=workspace-write', '--', 'say the third thing']);
  const c2 = await attach(t, d, s2.id);
  await c2.waitScreen('The third scripted answer.', 60_000);
  const third = await sessionWhen(d, s2.id, (x) => x.result?.text === 'The third scripted answer.', 'the third answer as its result');
  assert.equal(third.agent_session_id, thread, 'the same thread');
  assert.deepEqual(m.turns().map(lastUserText).at(-1), 'say the third thing');
  const again = readdirSync(path.join(home, '.codex', 'sessions'), { recursive: true }).map(String).filter((f) => f.endsWith('.jsonl'));
  assert.equal(again.length, 1, 'appended to the thread\'s rollout');
  const { ended: ended2 } = await endedBy(d, c2, s2, worktree, async () => {
    assert.equal((await d.socket('DELETE', `/api/sessions/${s2.id}`)).status, 200);
  });
  assert.equal(ended2.result.text, 'The third scripted answer.');
});
