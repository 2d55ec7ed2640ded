// `npm run test:agents`: the built-in `copilot` agent against the real GitHub Copilot CLI, installed
// from npm into a temporary folder (never a dependency of grove). Without a GitHub token it exits
// at once asking for one. With a local model provider that refuses connections (its offline BYOK
// mode, no GitHub at all) it takes the session id grove pins, echoes the prompt as the user's
// message, retries, then ends in an error; a follow-up runs `copilot … --resume=<that id>`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeTempDir } from '../helpers/git.ts';
import { closedPort, daemonWithTask, installCli } from '../helpers/real-agents.ts';
import { allLines, waitSessionEnd } from '../helpers/sessions.ts';

test('the built-in copilot agent: the prompt attached as text, the pinned session id, the mode flags, its error as the result, a follow-up with --resume=', async (t) => {
  const bin = installCli(t, '@github/copilot');
  const base = { PATH: `${bin}:${process.env.PATH}`, HOME: makeTempDir(t, 'grove-copilot-home-'), COPILOT_GITHUB_TOKEN: undefined, GH_TOKEN: undefined, GITHUB_TOKEN: undefined };

  // No credentials at all: it refuses before any session starts, and prints no JSON.
  const bare = await daemonWithTask(t, base);
  assert.equal((await bare.d.socket('GET', '/api/agents')).json.find((a: any) => a.name === 'copilot').available, true);
  const b = await bare.d.socket('POST', `/api/tasks/${bare.task.id}/sessions`, { body: { agent: 'copilot', prompt: '- fix the failing test' } });
  assert.equal(b.status, 201, b.text);
  await waitSessionEnd(bare.d, b.json.id);
  const refused = (await bare.d.socket('GET', `/api/sessions/${b.json.id}`)).json;
  assert.equal(refused.exit_code, 1);
  assert.equal(refused.result, null, 'nothing structured was printed');
  const said = (await allLines(bare.d, b.json.id)).map((l) => l.text).join('\n');
  assert.match(said, /No authentication information found/);
  assert.doesNotMatch(said, /Invalid command format|prompt was not quoted/, 'the prompt starting with - was read as text');

  // Offline BYOK: a model endpoint that refuses, so no GitHub token is needed.
  const { d, task } = await daemonWithTask(t, { ...base, COPILOT_OFFLINE: 'true', COPILOT_PROVIDER_BASE_URL: `http://127.0.0.1:${await closedPort()}/v1`, COPILOT_MODEL: 'gpt-4.1' });
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'copilot', prompt: '- fix the failing test', mode: 'read' } });
  assert.equal(r.status, 201, r.text);
  const id = r.json.agent_session_id;
  assert.deepEqual(r.json.command, ['copilot', '--output-format', 'json', '--no-auto-update', '--session-id', id, '--deny-tool=write', '--deny-tool=shell', '--prompt=- fix the failing test']);
  await waitSessionEnd(d, r.json.id);
  const s = (await d.socket('GET', `/api/sessions/${r.json.id}`)).json;
  const events = (await allLines(d, r.json.id)).filter((l) => l.stream === 'stdout').map((l) => JSON.parse(l.text));
  assert.equal(events.find((e) => e.type === 'user.message')?.data.content, '- fix the failing test', 'the prompt arrived as text');
  const end = events.at(-1);
  assert.equal(end.type, 'result');
  assert.equal(end.sessionId, id, 'Copilot CLI took the pinned session id');
  assert.equal(s.exit_code, 1);
  assert.equal(s.result.is_error, true);
  assert.match(s.result.text, /Could not connect to local model provider/);

  const f = await d.socket('POST', `/api/sessions/${r.json.id}/messages`, { body: { prompt: '--version', mode: 'full' } });
  assert.equal(f.status, 201, f.text);
  assert.deepEqual(f.json.command, ['copilot', '--output-format', 'json', '--no-auto-update', `--resume=${id}`, '--allow-all', '--prompt=--version']);
  await waitSessionEnd(d, f.json.id);
  const again = (await allLines(d, f.json.id)).filter((l) => l.stream === 'stdout').map((l) => JSON.parse(l.text));
  assert.equal(again.find((e) => e.type === 'user.message')?.data.content, '--version', 'the prompt --version did not print its version');
  assert.equal(again.at(-1).sessionId, id, 'the same session continued');
});
