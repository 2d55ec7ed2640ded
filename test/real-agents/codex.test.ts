// `npm run test:agents`: the built-in `codex` agent against the real Codex CLI, installed from
// npm into a temporary folder (never a dependency of grove). With no network it prints its
// thread id and then retries forever: `timeout_s` bounds it, and a follow-up runs
// `codex exec resume` with that thread id.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, startDaemon } from '../helpers/daemon.ts';
import { makeRepo, makeTempDir } from '../helpers/git.ts';
import { allLines, waitSessionEnd } from '../helpers/sessions.ts';

test('the built-in codex agent: the prompt as text, thread_id captured, timeout_s ends it killed, a follow-up resumes the thread', async (t) => {
  const prefix = makeTempDir(t, 'grove-codex-');
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', prefix, '@openai/codex'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 300_000,
  });
  const bin = path.join(prefix, 'node_modules', '.bin');
  // No credentials: a home of its own and no API key.
  const env = { PATH: `${bin}:${process.env.PATH}`, HOME: makeTempDir(t, 'grove-codex-home-'), OPENAI_API_KEY: undefined, CODEX_API_KEY: undefined };
  const d = await startDaemon(t, { env });
  assert.equal((await d.socket('GET', '/api/agents')).json.find((a: any) => a.name === 'codex').available, true);

  const project = await addProject(d, makeRepo(t));
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'codex' } })).json;
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'codex', prompt: '- fix the failing test', timeout_s: 20 } });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json.command, ['codex', 'exec', '--json', '-c', 'sandbox_mode=workspace-write', '--', '- fix the failing test']);
  await waitSessionEnd(d, r.json.id);
  const s = (await d.socket('GET', `/api/sessions/${r.json.id}`)).json;
  assert.equal(s.status, 'killed', 'it retried until the time limit');
  assert.equal(s.timed_out, true);
  assert.ok(Date.parse(s.ended_at) - Date.parse(s.created_at) >= 20_000);

  const lines = await allLines(d, r.json.id);
  assert.ok(!lines.some((l) => /unknown option|unexpected argument|Usage:/i.test(l.text)), lines.map((l) => l.text).join('\n'));
  const first = JSON.parse(lines.find((l) => l.stream === 'stdout').text);
  assert.equal(first.type, 'thread.started');
  assert.equal(s.agent_session_id, first.thread_id, 'the thread id, read from its first line');

  const f = await d.tcp('POST', `/api/sessions/${r.json.id}/messages`, { body: { prompt: '--version', timeout_s: 5 } });
  assert.equal(f.status, 201, f.text);
  assert.deepEqual(f.json.command, ['codex', 'exec', 'resume', '--json', first.thread_id, '-c', 'sandbox_mode=workspace-write', '--', '--version']);
  await waitSessionEnd(d, f.json.id);
  const resumed = (await d.socket('GET', `/api/sessions/${f.json.id}`)).json;
  assert.equal(resumed.timed_out, true);
  const again = await allLines(d, f.json.id);
  assert.ok(!again.some((l) => /^codex-cli \d/.test(l.text)), 'the prompt --version did not print its version');
  assert.equal(JSON.parse(again.find((l) => l.stream === 'stdout').text).thread_id, first.thread_id, 'the same thread continued');
});
