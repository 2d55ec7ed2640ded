// `npm run test:agents`: the built-in `opencode` agent against the real OpenCode CLI, installed
// from npm into a temporary folder (never a dependency of grove). With no network it prints
// nothing and waits forever: `timeout_s` bounds it, and since it never printed its sessionID
// there is nothing to resume (409 RESUME_UNAVAILABLE).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, startDaemon } from '../helpers/daemon.ts';
import { makeRepo, makeTempDir } from '../helpers/git.ts';
import { allLines, waitSessionEnd } from '../helpers/sessions.ts';

test('the built-in opencode agent: the prompt after --, timeout_s ends it killed, no session id printed so a follow-up is RESUME_UNAVAILABLE', async (t) => {
  const prefix = makeTempDir(t, 'grove-opencode-');
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', prefix, 'opencode-ai'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 300_000,
  });
  const bin = path.join(prefix, 'node_modules', '.bin');
  const d = await startDaemon(t, { env: { PATH: `${bin}:${process.env.PATH}`, HOME: makeTempDir(t, 'grove-opencode-home-') } });
  const project = await addProject(d, makeRepo(t));
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'opencode' } })).json;

  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'opencode', prompt: '- fix the failing test', timeout_s: 10 } });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json.command, ['opencode', 'run', '--format', 'json', '--agent', 'build', '--', '- fix the failing test']);
  assert.equal((await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'opencode', mode: 'read' } })).json.code, 'MODE_UNSUPPORTED');
  await waitSessionEnd(d, r.json.id);
  const s = (await d.socket('GET', `/api/sessions/${r.json.id}`)).json;
  assert.equal(s.status, 'killed');
  assert.equal(s.timed_out, true);
  const said = (await allLines(d, r.json.id)).map((l) => l.text).join('\n');
  assert.doesNotMatch(said, /unknown (option|argument)|Usage:/i, said);

  const f = await d.socket('POST', `/api/sessions/${r.json.id}/messages`, { body: { prompt: 'go on' } });
  assert.equal(f.status, s.agent_session_id === null ? 409 : 201, f.text);
  if (s.agent_session_id === null) assert.equal(f.json.code, 'RESUME_UNAVAILABLE');
  else assert.ok(f.json.command.includes(s.agent_session_id));
});
