// `npm run test:agents`: the real GitHub Copilot CLI and OpenCode in terminal sessions (DESIGN §21),
// their own interactive interfaces under grove's pseudo-terminal, confined, in `edit`, against the
// scripted OpenAI server their headless tests use. Seen through the WebSocket as a person sees it:
// the mode's writes run unasked, the scripted answer on the screen; a follow-up typed into the
// running interface through the API; its end (/exit, a kill) leaves nothing running; how each
// continues a conversation in a terminal afterwards.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { makeTempDir } from '../helpers/git.ts';
import { copilotModelEnv, opencodeModelEnv, startOpenAIServer, toolMessages } from '../helpers/openai-server.ts';
import { cliEnv, daemonWithTask, endedSession, installCliForFile, startSession } from '../helpers/real-agents.ts';
import type { RecordedRequest, Turn } from '../helpers/scripted-server.ts';
import { until } from '../helpers/store.ts';
import { endedBy, killWhenDone, sessionWhen } from '../helpers/terminal-agents.ts';
import { attach } from '../helpers/terminal.ts';

// The versions test/real-agents/copilot.test.ts and opencode.test.ts are read against.
const copilotBin = installCliForFile('@github/copilot@1.0.102');
const opencodeBin = installCliForFile('opencode-ai@1.18.33');

const NO_TOKEN = { COPILOT_GITHUB_TOKEN: undefined, GH_TOKEN: undefined, GITHUB_TOKEN: undefined };

// Copilot CLI's own state (`~/.copilot/config.json`) as a person's is once they have used it in
// their repository: without it its interface stops before the prompt is sent (checked with
// 1.0.102) at "Confirm folder trust … Do you trust the files in this folder?", asked of the
// working directory unless it or a folder above it is in `trustedFolders` (its answer "Yes, and
// remember this folder" adds it): the repository's trust covers its tasks' worktrees. Offline
// (BYOK) it asks nothing else; with GitHub as its provider a person has logged in.
function copilotUsedBefore(home: string, repository: string): void {
  mkdirSync(path.join(home, '.copilot'), { recursive: true });
  writeFileSync(path.join(home, '.copilot', 'config.json'), JSON.stringify({ trustedFolders: [repository] }));
}

// The text of a Chat Completions request's last user message (Copilot CLI puts the date before it).
function lastUserText(req: RecordedRequest): string {
  const msg = [...req.body.messages].reverse().find((x: any) => x.role === 'user');
  return typeof msg.content === 'string' ? msg.content : msg.content.map((c: any) => c.text ?? '').join('');
}

// Every user message of a request, as one text: what the model was given of the conversation.
const userTexts = (req: RecordedRequest) => JSON.stringify(req.body.messages.filter((x: any) => x.role === 'user'));

// A tool call whose input names a file of the worktree, filled in once the task exists (the server
// sends a turn's input as it is when the turn is taken).
function writeCall(name: string, input: Record<string, string>, pathKey: string): { turn: Turn; at: (file: string) => void } {
  return { turn: { text: 'Writing it.', tool_use: { name, input } }, at: (file) => void (input[pathKey] = file) };
}

// No approval asked of grove; what the sandbox refused without asking.
async function nothingAsked(d: Awaited<ReturnType<typeof daemonWithTask>>['d'], id: string): Promise<unknown[]> {
  assert.deepEqual((await d.socket('GET', `/api/approvals?session_id=${id}`)).json, []);
  const s = (await d.socket('GET', `/api/sessions/${id}`)).json;
  assert.equal(s.waiting, null);
  return s.result?.blocked ?? [];
}

test('copilot in a terminal session: --interactive sends the prompt, edit writes unasked, the answer on its screen, a follow-up typed into it, /exit ends it with nothing left running, a follow-up resumes its pinned session in a new terminal', async (t) => {
  const write = writeCall('create', { path: '', file_text: 'made\n' }, 'path');
  const m = await startOpenAIServer(t, [write.turn, { text: 'The first scripted answer.' }, { text: 'The second scripted answer.' }, { text: 'The third scripted answer.' }]);
  // Offline BYOK (no GitHub account): the scripted server is the base URL in its environment.
  const env = cliEnv(t, copilotBin(), { ...NO_TOKEN, ...copilotModelEnv(m.url) });
  const { d, task, worktree } = await daemonWithTask(t, env);
  const project = (await d.socket('GET', `/api/projects/${task.project_id}`)).json;
  copilotUsedBefore(env.HOME!, project.path);
  write.at(path.join(worktree, 'made.txt'));

  const s = await startSession(d, task, { agent: 'copilot', prompt: 'say the first thing', interface: 'terminal', mode: 'edit' });
  killWhenDone(t, d, s);
  const pinned = s.agent_session_id;
  assert.match(pinned, /^[0-9a-f-]{36}$/);
  assert.deepEqual(s.command, ['copilot', '--no-auto-update', `--session-id=${pinned}`, '--allow-tool=write', '--interactive=say the first thing']);
  const c = await attach(t, d, s.id);
  await c.waitScreen('The first scripted answer.', 60_000);
  // edit: its file write ran without its interface asking.
  assert.ok(existsSync(path.join(worktree, 'made.txt')), 'the scripted write ran in the worktree');
  const [asked, told] = m.turns();
  assert.ok(lastUserText(asked!).endsWith('say the first thing'), lastUserText(asked!));
  assert.match(toolMessages(told!).map((x) => x.text).join('\n'), /Created file/);
  const first = (await d.socket('GET', `/api/sessions/${s.id}`)).json;
  assert.deepEqual([first.status, first.agent_session_id, first.sandbox], ['running', pinned, { confined: true }]);
  // Offline it reaches nothing at start (no update check, no telemetry).
  assert.deepEqual(await nothingAsked(d, s.id), []);

  // A follow-up to the running session is typed into its interface: the same session, 200.
  const r = await d.socket('POST', `/api/sessions/${s.id}/messages`, { body: { prompt: 'say the second thing' } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.id, s.id);
  await c.waitScreen('The second scripted answer.', 60_000);
  assert.ok(lastUserText(m.turns()[2]!).endsWith('say the second thing'), lastUserText(m.turns()[2]!));

  // /exit, typed as a person would: the program ends, and with it its holder.
  const { exit, ended } = await endedBy(d, c, s, worktree, () => {
    c.send({ type: 'input', data: '/exit' });
    c.send({ type: 'input', data: '\r' });
  });
  assert.deepEqual(exit, { type: 'exit', code: 0 });
  assert.equal(ended.status, 'exited');

  // A follow-up to the ended session: a new terminal session resuming the pinned one.
  const f = await d.socket('POST', `/api/sessions/${s.id}/messages`, { body: { prompt: 'say the third thing', mode: 'edit' } });
  assert.equal(f.status, 201, f.text);
  const next = f.json;
  killWhenDone(t, d, next);
  assert.equal(next.interface, 'terminal');
  assert.deepEqual(next.command, ['copilot', '--no-auto-update', `--resume=${pinned}`, '--allow-tool=write', '--interactive=say the third thing']);
  const c2 = await attach(t, d, next.id);
  await c2.waitScreen('The third scripted answer.', 60_000);
  const third = m.turns()[3]!;
  assert.ok(lastUserText(third).endsWith('say the third thing'), lastUserText(third));
  assert.match(userTexts(third), /say the first thing.*say the second thing/, 'the conversation before it');
  const { ended: killed } = await endedBy(d, c2, next, worktree, async () => {
    const k = await d.socket('DELETE', `/api/sessions/${next.id}`);
    assert.equal(k.status, 200, k.text);
  });
  assert.equal(killed.status, 'killed');
});

// OpenCode's provider is in its own config file (opencodeModelEnv), not its environment: the
// project lets the server's host through. Its update check is left to the built-in's environment.
async function opencodeTask(t: Parameters<typeof cliEnv>[0], url: string) {
  const env = cliEnv(t, opencodeBin(), { ...opencodeModelEnv(url, makeTempDir(t, 'grove-opencode-home-')), OPENCODE_DISABLE_AUTOUPDATE: undefined });
  return daemonWithTask(t, env, { files: { '.grove.json': JSON.stringify({ sandbox: { network: [new URL(url).host] } }) } });
}

test("opencode in a terminal session: --prompt sends the prompt, grove's edit agent writes unasked, the answer on its screen, a follow-up typed into it, /exit ends it with nothing left running; its session id unknown, no follow-up after", async (t) => {
  const write = writeCall('write', { filePath: '', content: 'made\n' }, 'filePath');
  const m = await startOpenAIServer(t, [write.turn, { text: 'The first scripted answer.' }, { text: 'The second scripted answer.' }], { side: () => 'Scripted title' });
  const { d, task, worktree } = await opencodeTask(t, m.url);
  write.at(path.join(worktree, 'made.txt'));

  const s = await startSession(d, task, { agent: 'opencode', prompt: 'say the first thing', interface: 'terminal', mode: 'edit' });
  killWhenDone(t, d, s);
  assert.deepEqual(s.command, ['opencode', '--agent', 'grove-edit', '--prompt=say the first thing']);
  assert.equal(s.agent_session_id, null, 'OpenCode names its session itself');
  const c = await attach(t, d, s.id);
  await c.waitScreen('The first scripted answer.', 90_000);
  assert.ok(existsSync(path.join(worktree, 'made.txt')), 'the scripted write ran in the worktree');
  const [asked, told] = m.turns();
  assert.equal(lastUserText(asked!), 'say the first thing');
  assert.match(toolMessages(told!).map((x) => x.text).join('\n'), /Wrote file successfully/);
  const first = (await d.socket('GET', `/api/sessions/${s.id}`)).json;
  assert.deepEqual([first.status, first.agent_session_id, first.sandbox], ['running', null, { confined: true }]);
  // One connection to the npm registry, refused (the built-in's `refuse`): its config folder's
  // plugin install. Its update check, a second one, is off (OPENCODE_DISABLE_AUTOUPDATE).
  assert.deepEqual(await nothingAsked(d, s.id), [{ kind: 'network', count: 1, target: 'registry.npmjs.org:443' }]);

  const r = await d.socket('POST', `/api/sessions/${s.id}/messages`, { body: { prompt: 'say the second thing' } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.id, s.id);
  await c.waitScreen('The second scripted answer.', 60_000);
  assert.equal(lastUserText(m.turns()[2]!), 'say the second thing');

  // /exit, typed as a person would: Enter once its input shows it and /exit heads the commands it
  // lists for it (Enter runs the first listed: typed at once, it ran /export).
  const { exit, ended } = await endedBy(d, c, s, worktree, async () => {
    c.send({ type: 'input', data: '/exit' });
    await until(async () => {
      const lines = (await c.screen()).split('\n');
      const listed = lines.map((l) => /^\s*┃ (\/\S+) {2,}\S/.exec(l)?.[1]).filter((x) => x !== undefined);
      return listed[0] === '/exit' && lines.some((l) => /^\s*┃\s+\/exit\s*$/.test(l));
    }, 'its input and commands at /exit', 10_000);
    c.send({ type: 'input', data: '\r' });
  });
  assert.deepEqual(exit, { type: 'exit', code: 0 });
  assert.equal(ended.status, 'exited');
  const after = await d.socket('POST', `/api/sessions/${s.id}/messages`, { body: { prompt: 'say the third thing' } });
  assert.equal(after.status, 409, after.text);
  assert.equal(after.json.code, 'RESUME_UNAVAILABLE');
});

test('opencode: a headless conversation continued in a terminal session runs its minimal interface on the session, which sends the prompt with the conversation before it', async (t) => {
  const m = await startOpenAIServer(t, [{ text: 'The headless answer.' }, { text: 'The terminal answer.' }], { side: () => 'Scripted title' });
  const { d, task, worktree } = await opencodeTask(t, m.url);
  const h = await startSession(d, task, { agent: 'opencode', prompt: 'say the headless thing', mode: 'edit' });
  const headless = await endedSession(d, h.id);
  assert.equal(headless.result?.text, 'The headless answer.', JSON.stringify(headless));
  assert.match(headless.agent_session_id, /^ses_/);

  const f = await d.socket('POST', `/api/sessions/${h.id}/messages`, { body: { prompt: 'say the terminal thing', interface: 'terminal', mode: 'edit' } });
  assert.equal(f.status, 201, f.text);
  const s = f.json;
  killWhenDone(t, d, s);
  assert.deepEqual(s.command, ['opencode', '--mini', '--session', headless.agent_session_id, '--agent', 'grove-edit', '--prompt=say the terminal thing']);
  const c = await attach(t, d, s.id);
  await c.waitScreen('The terminal answer.', 90_000);
  const last = m.turns()[1]!;
  assert.equal(lastUserText(last), 'say the terminal thing');
  assert.match(userTexts(last), /say the headless thing/, 'the conversation before it');
  await sessionWhen(d, s.id, (x) => x.status === 'running', 'running');
  const { ended } = await endedBy(d, c, s, worktree, async () => {
    const k = await d.socket('DELETE', `/api/sessions/${s.id}`);
    assert.equal(k.status, 200, k.text);
  });
  assert.equal(ended.status, 'killed');
});
