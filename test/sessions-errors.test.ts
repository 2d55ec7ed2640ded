import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, startDaemon } from './helpers/daemon.ts';
import { makeRepo } from './helpers/git.ts';
import { agentHome, AGENT, readyTask } from './helpers/sessions.ts';

test('agent choice: body, then .grove.json, then default_agent, else 422 AGENT_REQUIRED', async (t) => {
  const home = agentHome(t, { agents: { other: { command: [AGENT, 'echo:other', '{prompt}'] }, third: { command: [AGENT, 'echo:third'] } } });
  const d = await startDaemon(t, { home });
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'x' } })).json;
  const start = (body: object) => d.socket('POST', `/api/tasks/${task.id}/sessions`, { body });

  const none = await start({});
  assert.equal(none.status, 422);
  assert.equal(none.json.code, 'AGENT_REQUIRED');
  writeFileSync(path.join(repo, '.grove.json'), JSON.stringify({ agent: 'other' }));
  assert.equal((await start({})).json.agent, 'other');
  const explicit = await start({ agent: 'fixture', prompt: 'echo:hi' });
  assert.equal(explicit.json.agent, 'fixture');
  assert.deepEqual(explicit.json.command, [AGENT, 'echo:hi']);
  // Without a prompt the {prompt} element is dropped; args go where it stood.
  const noPrompt = await start({ agent: 'other', args: ['exit:0'] });
  assert.deepEqual(noPrompt.json.command, [AGENT, 'echo:other', 'exit:0']);
});

test('default_agent from the user config applies when nothing else names one', async (t) => {
  const d = await startDaemon(t, { home: agentHome(t, { default_agent: 'fixture' }) });
  const project = await addProject(d, makeRepo(t));
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'x' } })).json;
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'exit:0' } });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.agent, 'fixture');
});

test('unknown, uninstalled and invalid agents, tasks not ready, bad bodies: 4xx and nothing started', async (t) => {
  const { d, task, project } = await readyTask(t, { config: { agents: { ghost: { command: ['grove-no-such-agent-cli', '{prompt}'] } } } });
  const post = (body: unknown, id = task.id) => d.socket('POST', `/api/tasks/${id}/sessions`, { body });
  const cases: Array<[string, unknown, number, string]> = [
    ['unknown agent', { agent: 'nobody' }, 422, 'UNKNOWN_AGENT'],
    ['not installed', { agent: 'ghost' }, 422, 'AGENT_NOT_INSTALLED'],
    ['agent name with path', { agent: '../fixture' }, 400, 'VALIDATION_FAILED'],
    ['agent wrong type', { agent: 1 }, 400, 'VALIDATION_FAILED'],
    ['prompt with NUL', { prompt: 'a\u0000b' }, 400, 'VALIDATION_FAILED'],
    ['empty prompt', { prompt: '' }, 400, 'VALIDATION_FAILED'],
    ['blank prompt', { prompt: ' \n\t ' }, 400, 'VALIDATION_FAILED'],
    ['args not array', { args: 'exit:0' }, 400, 'VALIDATION_FAILED'],
    ['args with number', { args: [1] }, 400, 'VALIDATION_FAILED'],
    ['unknown field', { agent: 'fixture', shell: true }, 400, 'VALIDATION_FAILED'],
  ];
  for (const [what, body, status, code] of cases) {
    const r = await post(body);
    assert.equal(r.status, status, `${what}: ${r.text}`);
    assert.equal(r.json.code, code, what);
  }
  // The non-blank check is linear: a pattern that backtracks takes seconds on a long prompt.
  const t0 = performance.now();
  const long = await post({ prompt: `${'x'.repeat(100_000)}\u0000` });
  assert.equal(long.json.code, 'VALIDATION_FAILED');
  assert.ok(performance.now() - t0 < 1000, `a long prompt with a NUL took ${Math.round(performance.now() - t0)} ms to refuse`);
  assert.equal((await post({}, '3f2504e0-4f89-41d3-9a0c-0305e82c3301')).status, 404);
  assert.equal((await d.socket('GET', '/api/sessions/3f2504e0-4f89-41d3-9a0c-0305e82c3301')).status, 404);
  assert.equal((await d.socket('DELETE', '/api/sessions/NOPE')).json.code, 'INVALID_ID');
  assert.deepEqual((await d.socket('GET', `/api/tasks/${task.id}/sessions`)).json, []);

  // A task whose setup failed is not ready.
  const broken = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'broken' } })).json;
  assert.equal(broken.status, 'ready');
  const repoConfig = { agent: 'fixture', setup: ['exit 1'] };
  writeFileSync(path.join(project.path, '.grove.json'), JSON.stringify(repoConfig));
  const failed = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'failed' } })).json;
  assert.equal(failed.status, 'setup_failed');
  const r = await post({}, failed.id);
  assert.equal(r.status, 409);
  assert.equal(r.json.code, 'TASK_NOT_READY');
});

test('GET /api/agents lists the built-ins and the user agents with whether each is installed', async (t) => {
  const d = await startDaemon(t, { home: agentHome(t, { agents: { ghost: { command: ['grove-no-such-agent-cli'] }, claude: { command: [AGENT, 'echo:mine'] } } }) });
  const agents = (await d.tcp('GET', '/api/agents')).json;
  const byName = Object.fromEntries(agents.map((a: any) => [a.name, a]));
  for (const name of ['claude', 'codex', 'gemini', 'aider', 'amp', 'opencode', 'cursor', 'fixture', 'ghost']) assert.ok(byName[name], name);
  assert.equal(byName.fixture.available, true);
  assert.equal(byName.ghost.available, false);
  assert.deepEqual(byName.claude.command, [AGENT, 'echo:mine'], 'the user config overrides a built-in');
  assert.equal(byName.claude.builtin, false);
  assert.equal(byName.codex.builtin, true);
  assert.deepEqual(byName.codex.command.slice(0, 2), ['codex', 'exec']);
});

test('a default_agent that names no agent stops the daemon at start', async (t) => {
  const { spawnDaemon, stopProcess } = await import('./helpers/daemon.ts');
  // `constructor` is a member of every object, not an agent.
  for (const name of ['nobody', 'constructor']) {
    const home = agentHome(t, { default_agent: name });
    const d = spawnDaemon(home);
    t.after(() => stopProcess(d.proc, d.exited));
    assert.equal(await d.exited, 78, name);
    assert.match(d.stderr(), /default_agent/);
  }
});

test('a .grove.json agent named like an Object member is 422 UNKNOWN_AGENT', async (t) => {
  const { d, task } = await readyTask(t, { grove: { agent: 'constructor' } });
  const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'echo:x' } });
  assert.equal(r.status, 422, r.text);
  assert.equal(r.json.code, 'UNKNOWN_AGENT');
  assert.deepEqual((await d.socket('GET', `/api/tasks/${task.id}/sessions`)).json, []);
});
