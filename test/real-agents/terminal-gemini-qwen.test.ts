// `npm run test:agents`: the real Gemini CLI and Qwen Code in terminal sessions (DESIGN §21), their
// own interactive interfaces under grove's pseudo-terminal, confined, in `edit`, against the
// scripted model servers of their headless tests. Seen through the WebSocket as a person sees it:
// the scripted answer on the screen; a follow-up typed into the running interface through the
// API, whose prompt the model server gets; its end (its /quit typed) leaves nothing running; a
// follow-up to the ended session continues the conversation (`terminal_resume`, the id grove
// pinned) in a new terminal session, with the turns before it sent to the model.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { BUILTIN_AGENTS } from '../../daemon/agents/agents.ts';
import type { TestDaemon } from '../helpers/daemon.ts';
import { geminiModelEnv, startGeminiServer } from '../helpers/gemini-server.ts';
import { qwenModelEnv, startOpenAIServer } from '../helpers/openai-server.ts';
import { cliEnv, daemonWithTask, installCliForFile, startSession } from '../helpers/real-agents.ts';
import type { RecordedRequest, ScriptedServer } from '../helpers/scripted-server.ts';
import { endedBy, killWhenDone } from '../helpers/terminal-agents.ts';
import { attach } from '../helpers/terminal.ts';

// The versions test/real-agents/gemini.test.ts and qwen.test.ts are read against.
const geminiBin = installCliForFile('@google/gemini-cli@0.61.0');
const qwenBin = installCliForFile('@qwen-code/qwen-code@0.24.4');

const SCRIPT = [{ text: 'The first scripted answer.' }, { text: 'The second scripted answer.' }, { text: 'The third scripted answer.' }];

// The texts of a model request's user turns, in order (Gemini's `contents`, OpenAI's `messages`):
// each turn's text parts joined, but for the context each CLI puts before the first prompt, in
// parts of its own (Gemini CLI's `<session_context>`, Qwen Code 0.24's `<system-reminder>`s).
const CONTEXT_PART = /^<(session_context|system-reminder)>/;
function userTexts(req: RecordedRequest): string[] {
  const turns = req.body.contents ?? req.body.messages;
  return turns
    .filter((msg: any) => msg.role === 'user')
    .map((msg: any) => {
      const parts = msg.parts ?? msg.content;
      if (typeof parts === 'string') return parts;
      return parts.filter((p: any) => typeof p.text === 'string' && !CONTEXT_PART.test(p.text)).map((p: any) => p.text).join('');
    });
}
const lastUserText = (req: RecordedRequest) => userTexts(req).at(-1);

interface Case {
  agent: 'gemini' | 'qwen';
  /** the command of its first session, given the id grove pinned */
  command: (pinned: string) => string[];
  /** the command of a follow-up to the ended session */
  resume: (pinned: string) => string[];
}

// One terminal session of `agent` in edit against `m`, driven to its end, then continued.
async function terminalConversation(t: { after(fn: () => unknown): void }, d: TestDaemon, task: { id: string }, worktree: string, m: ScriptedServer, spec: Case) {
  const s = await startSession(d, task, { agent: spec.agent, prompt: 'say the first thing', interface: 'terminal', mode: 'edit' });
  killWhenDone(t, d, s);
  const pinned = s.agent_session_id;
  assert.match(pinned, /^[0-9a-f-]{36}$/, 'grove pins the id it gives the CLI');
  assert.deepEqual(s.command, spec.command(pinned));
  const c = await attach(t, d, s.id);
  await c.waitScreen('The first scripted answer.', 90_000);
  const first = (await d.socket('GET', `/api/sessions/${s.id}`)).json;
  assert.equal(first.status, 'running');
  assert.equal(first.agent_session_id, pinned);
  assert.deepEqual(first.sandbox, { confined: true });
  // Nothing asked through grove: the person at the terminal answers the CLI's own questions.
  assert.deepEqual((await d.socket('GET', `/api/approvals?session_id=${s.id}`)).json.map((a: any) => [a.kind, a.input]), []);
  assert.equal(first.waiting, null);

  // A follow-up to the running session is typed into its interface: the same session, 200.
  const r = await d.socket('POST', `/api/sessions/${s.id}/messages`, { body: { prompt: 'say the second thing' } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.id, s.id);
  await c.waitScreen('The second scripted answer.', 60_000);
  assert.deepEqual(m.turns().map(lastUserText), ['say the first thing', 'say the second thing'], 'each prompt one request of its loop, as typed');

  // /quit, typed as a person would: Enter once its command list shows it (an Enter right behind
  // the text is lost to Qwen Code's), then the program ends, and with it its holder.
  const { exit, ended } = await endedBy(d, c, s, worktree, async () => {
    c.send({ type: 'input', data: '/quit' });
    await c.waitScreen(/exit the cli/i);
    c.send({ type: 'input', data: '\r' });
  });
  assert.deepEqual(exit, { type: 'exit', code: 0 });
  assert.equal(ended.status, 'exited');
  // Nothing reached the network: what its interface reaches for by itself (its update check, its
  // usage statistics) is refused without asking.
  const refused = (host: string) => (BUILTIN_AGENTS[spec.agent]!.sandbox!.refuse ?? []).some((entry) => (entry.startsWith('*.') ? host.endsWith(entry.slice(1)) : host === entry));
  assert.deepEqual((ended.result?.blocked ?? []).filter((b: any) => !refused(b.target.replace(/:443$/, ''))), [], 'nothing blocked but what its sandbox refuses');

  // A follow-up to the ended session: a new terminal session that resumes the pinned id.
  const next = await d.socket('POST', `/api/sessions/${s.id}/messages`, { body: { prompt: 'say the third thing' } });
  assert.equal(next.status, 201, next.text);
  killWhenDone(t, d, next.json);
  assert.notEqual(next.json.id, s.id);
  assert.equal(next.json.interface, 'terminal');
  assert.deepEqual(next.json.command, spec.resume(pinned));
  const again = await attach(t, d, next.json.id);
  await again.waitScreen('The third scripted answer.', 90_000);
  const third = m.turns()[2]!;
  assert.deepEqual(userTexts(third).filter((text) => text.startsWith('say the ')), ['say the first thing', 'say the second thing', 'say the third thing'], 'the conversation before it sent with the prompt');
  assert.ok(JSON.stringify(third.body).includes('The second scripted answer.'), 'its answers too');
  const { ended: killed } = await endedBy(d, again, next.json, worktree, async () => {
    const k = await d.socket('DELETE', `/api/sessions/${next.json.id}`);
    assert.equal(k.status, 200, k.text);
  });
  assert.equal(killed.status, 'killed');
}

test('gemini in a terminal session: --prompt-interactive sends the prompt, its answer on the screen, a follow-up typed into it, /quit ends it with nothing left running, a follow-up after its end resumes the pinned id', async (t) => {
  const m = await startGeminiServer(t, SCRIPT);
  const env = cliEnv(t, geminiBin(), { GOOGLE_API_KEY: undefined, GOOGLE_CLOUD_PROJECT: undefined });
  // The auth a person chose at its first start ("How would you like to authenticate for this
  // project?", asked before anything else, Gemini API Key preselected when GEMINI_API_KEY is
  // set): `security.auth.selectedType` in ~/.gemini/settings.json. Folder trust ("Do you trust
  // the files in this folder?") is not asked: the built-in passes --skip-trust.
  Object.assign(env, geminiModelEnv(m.url, env.HOME!));
  const { d, task, worktree } = await daemonWithTask(t, env);
  await terminalConversation(t, d, task, worktree, m, {
    agent: 'gemini',
    command: (id) => ['gemini', '--skip-trust', '--session-id', id, '--approval-mode', 'auto_edit', '--prompt-interactive=say the first thing'],
    resume: (id) => ['gemini', '--skip-trust', '--resume', id, '--approval-mode', 'auto_edit', '--prompt-interactive=say the third thing'],
  });
});

test('qwen in a terminal session: --prompt-interactive sends the prompt, its answer on the screen, a follow-up typed into it, /quit ends it with nothing left running, a follow-up after its end resumes the pinned id', async (t) => {
  const m = await startOpenAIServer(t, SCRIPT);
  // With an OpenAI key in its environment it asks nothing before the prompt is sent (without
  // credentials: "Select Authentication Method"; folder trust is off unless its settings turn it on).
  const env = cliEnv(t, qwenBin(), { DASHSCOPE_API_KEY: undefined, GEMINI_API_KEY: undefined, ANTHROPIC_API_KEY: undefined, ...qwenModelEnv(m.url) });
  // After each turn its interface runs a memory agent of its own and (0.24) asks the model for a
  // follow-up to suggest, model requests that offer tools, which the scripted server would answer
  // with the script's next turn: turned off in its settings, as a person may.
  mkdirSync(path.join(env.HOME!, '.qwen'), { recursive: true });
  writeFileSync(path.join(env.HOME!, '.qwen', 'settings.json'), JSON.stringify({ memory: { enableManagedAutoMemory: false }, ui: { enableFollowupSuggestions: false } }));
  const { d, task, worktree } = await daemonWithTask(t, env);
  await terminalConversation(t, d, task, worktree, m, {
    agent: 'qwen',
    command: (id) => ['qwen', '--session-id', id, '--approval-mode', 'auto-edit', '--prompt-interactive=say the first thing'],
    resume: (id) => ['qwen', '--resume', id, '--approval-mode', 'auto-edit', '--prompt-interactive=say the third thing'],
  });
});
