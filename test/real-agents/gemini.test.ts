// `npm run test:agents`: the built-in `gemini` agent against the real Gemini CLI, installed from
// npm into a temporary folder (never a dependency of grove). With a key but no network it takes
// the session id grove pins, echoes the prompt as the user's message, then retries forever:
// `timeout_s` bounds it, and a follow-up runs `gemini … --resume <that id>`.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, startDaemon } from '../helpers/daemon.ts';
import { makeRepo, makeTempDir } from '../helpers/git.ts';
import { allLines, waitSessionEnd } from '../helpers/sessions.ts';

test('the built-in gemini agent: --skip-trust in a new worktree, the prompt as text, the pinned session id, timeout_s, a follow-up with --resume', async (t) => {
  const prefix = makeTempDir(t, 'grove-gemini-');
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', prefix, '@google/gemini-cli'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 300_000,
  });
  const bin = path.join(prefix, 'node_modules', '.bin');
  // A key that no server will see (the network is closed): without one it exits asking for auth.
  const env = { PATH: `${bin}:${process.env.PATH}`, HOME: makeTempDir(t, 'grove-gemini-home-'), GEMINI_API_KEY: 'grove-test-no-such-key' };
  const d = await startDaemon(t, { env });
  const project = await addProject(d, makeRepo(t));
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'gemini' } })).json;

  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'gemini', prompt: '- fix the failing test', timeout_s: 12 } });
  assert.equal(r.status, 201, r.text);
  const id = r.json.agent_session_id;
  assert.deepEqual(r.json.command, ['gemini', '--output-format', 'stream-json', '--skip-trust', '--session-id', id, '--approval-mode', 'auto_edit', '--prompt=- fix the failing test']);
  await waitSessionEnd(d, r.json.id);
  const s = (await d.socket('GET', `/api/sessions/${r.json.id}`)).json;
  assert.equal(s.status, 'killed');
  assert.equal(s.timed_out, true);
  const events = (await allLines(d, r.json.id)).filter((l) => l.stream === 'stdout').map((l) => JSON.parse(l.text));
  assert.equal(events[0].type, 'init');
  assert.equal(events[0].session_id, id, 'Gemini CLI took the pinned session id');
  assert.deepEqual(events.find((e) => e.type === 'message' && e.role === 'user')?.content, '- fix the failing test', 'the prompt arrived as text');

  const f = await d.socket('POST', `/api/sessions/${r.json.id}/messages`, { body: { prompt: 'go on', mode: 'read', timeout_s: 12 } });
  assert.equal(f.status, 201, f.text);
  assert.deepEqual(f.json.command, ['gemini', '--output-format', 'stream-json', '--skip-trust', '--resume', id, '--approval-mode', 'default', '--prompt=go on']);
  await waitSessionEnd(d, f.json.id);
  const said = (await allLines(d, f.json.id)).map((l) => l.text).join('\n');
  assert.doesNotMatch(said, /Unknown argument|not running in a trusted directory/i, said);
});
