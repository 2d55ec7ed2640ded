import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { addProject, makeHome, ROOT, startDaemon, type TestDaemon } from './helpers/daemon.ts';
import { makeRepo } from './helpers/git.ts';
import { allLines, waitSessionEnd } from './helpers/sessions.ts';

// Speaks Claude Code's stream-json; its first line holds the arguments it was given.
const STREAM = path.join(ROOT, 'test', 'fixtures', 'stream-agent.mjs');

// A daemon whose user config defines `stream` (three modes, its prompt after `--`) and `plain`
// (no modes: `edit` only, its prompt last), and one task of a project with `.grove.json` `grove`.
async function setup(t: test.TestContext, config: Record<string, unknown> = {}, grove: Record<string, unknown> = {}) {
  const home = makeHome(t);
  const agents = {
    stream: { command: [STREAM, '--json', '--', '{prompt}', '--after'], modes: { read: ['--read-only'], edit: [], full: ['--yolo', '--no-ask'] } },
    plain: { command: [STREAM, '{prompt}'] },
  };
  writeFileSync(path.join(home, 'config.json'), JSON.stringify({ agents, ...config }));
  const d = await startDaemon(t, { home });
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'stream', ...grove }) } });
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'modes' } })).json;
  return { d, repo, task };
}

// Starts a session, waits for its end, and returns it with the arguments the agent received.
async function run(d: TestDaemon, via: 'socket' | 'tcp', taskId: string, body: object) {
  const r = await d[via]('POST', `/api/tasks/${taskId}/sessions`, { body });
  assert.equal(r.status, 201, r.text);
  await waitSessionEnd(d, r.json.id);
  const session = (await d.socket('GET', `/api/sessions/${r.json.id}`)).json;
  const [first] = await allLines(d, r.json.id);
  return { session, argv: JSON.parse(first.text).argv as string[] };
}

test('a prompt reaches the agent unchanged as one argument, read as text: after the mode and the request args, behind `--`', async (t) => {
  const { d, task } = await setup(t);
  const prompts = ['- fix the failing test', '--version', '--', '-p', 'two\nlines\n', 'ünïcødé ✓ 日本語 🌳', ' spaced '];
  for (const [i, prompt] of prompts.entries()) {
    const via = i % 2 === 0 ? 'socket' : 'tcp';
    const { session, argv } = await run(d, via, task.id, { prompt, mode: 'full', args: ['--model', 'x'] });
    assert.deepEqual(argv, ['--json', '--yolo', '--no-ask', '--model', 'x', '--', prompt, '--after'], JSON.stringify(prompt));
    assert.deepEqual(session.command, [STREAM, ...argv]);
    assert.equal(session.status, 'exited');
    assert.equal(session.prompt, prompt);
    assert.equal(session.mode, 'full');
  }
  // Without a prompt, `{prompt}` goes with the `--` before it; the options stay.
  const { session, argv } = await run(d, 'socket', task.id, { args: ['--model', 'x'] });
  assert.deepEqual(argv, ['--json', '--model', 'x', '--after']);
  assert.equal(session.prompt, null);
});

test('the mode comes from the body, else .grove.json, else the user config, else edit; each adds its own flags and nothing else', async (t) => {
  const bare = await setup(t);
  assert.deepEqual((await run(bare.d, 'socket', bare.task.id, { prompt: 'p' })).argv, ['--json', '--', 'p', '--after'], 'edit by default');
  assert.equal((await run(bare.d, 'socket', bare.task.id, { prompt: 'p' })).session.mode, 'edit');
  assert.deepEqual((await run(bare.d, 'tcp', bare.task.id, { prompt: 'p', mode: 'read' })).argv, ['--json', '--read-only', '--', 'p', '--after']);

  const user = await setup(t, { default_mode: 'read' });
  assert.deepEqual((await run(user.d, 'socket', user.task.id, { prompt: 'p' })).argv, ['--json', '--read-only', '--', 'p', '--after'], 'the user default');
  writeFileSync(path.join(user.repo, '.grove.json'), JSON.stringify({ agent: 'stream', mode: 'full' }));
  const fromProject = await run(user.d, 'socket', user.task.id, { prompt: 'p' });
  assert.deepEqual(fromProject.argv, ['--json', '--yolo', '--no-ask', '--', 'p', '--after'], '.grove.json beats the user default');
  assert.equal(fromProject.session.mode, 'full');
  const fromBody = await run(user.d, 'socket', user.task.id, { prompt: 'p', mode: 'edit' });
  assert.deepEqual(fromBody.argv, ['--json', '--', 'p', '--after'], 'the body beats both');
  // An agent without modes runs in edit, with nothing added.
  assert.deepEqual((await run(user.d, 'socket', user.task.id, { agent: 'plain', prompt: 'p', mode: 'edit' })).argv, ['p']);
});

test('a mode the agent cannot honour is 422 MODE_UNSUPPORTED, an unknown mode 400, an invalid .grove.json mode 422: nothing started', async (t) => {
  const { d, repo, task } = await setup(t);
  const sessionsDir = path.join(d.home, 'data', 'sessions');
  const nothingStarted = async () => {
    assert.deepEqual((await d.socket('GET', `/api/tasks/${task.id}/sessions`)).json, []);
    assert.ok(!existsSync(sessionsDir) || readdirSync(sessionsDir).length === 0, 'no session folder');
  };
  for (const via of ['socket', 'tcp'] as const) {
    const r = await d[via]('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'plain', prompt: 'p', mode: 'read' } });
    assert.equal(r.status, 422, r.text);
    assert.equal(r.json.code, 'MODE_UNSUPPORTED');
    assert.match(r.headers['content-type'] as string, /^application\/problem\+json/);
    assert.match(r.json.detail, /plain cannot run in mode read; it supports edit/);
    assert.deepEqual(r.json.errors, [{ path: '/mode', message: 'is not a mode of agent plain' }]);
  }
  const unknown = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'p', mode: 'yolo' } });
  assert.equal(unknown.status, 400);
  assert.equal(unknown.json.code, 'VALIDATION_FAILED');
  assert.ok(unknown.json.errors.some((e: any) => e.path === '/mode'), unknown.text);
  // A mode from .grove.json that the agent lacks is refused the same way.
  writeFileSync(path.join(repo, '.grove.json'), JSON.stringify({ agent: 'plain', mode: 'full' }));
  const fromConfig = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'p' } });
  assert.equal(fromConfig.json.code, 'MODE_UNSUPPORTED', fromConfig.text);
  writeFileSync(path.join(repo, '.grove.json'), JSON.stringify({ agent: 'plain', mode: 'everything' }));
  const invalid = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'p' } });
  assert.equal(invalid.status, 422);
  assert.equal(invalid.json.code, 'CONFIG_INVALID');
  assert.ok(invalid.json.errors.some((e: any) => e.path === '/mode'), invalid.text);
  await nothingStarted();
});
