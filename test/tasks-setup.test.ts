import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, makeHome, sharedDaemon, startDaemon } from './helpers/daemon.ts';
import { processesMatching } from './helpers/state.ts';
import { branches, makeRepo, worktrees } from './helpers/git.ts';

// Tests that need no settings of their own share one daemon (each makes its own repository).
const daemon = sharedDaemon();

function configHome(t: Parameters<typeof makeHome>[0], config: object): string {
  const home = makeHome(t);
  writeFileSync(path.join(home, 'config.json'), JSON.stringify(config));
  return home;
}

test('setup commands run in order in the worktree and see the task environment and ports', async (t) => {
  const d = await startDaemon(t, { home: configHome(t, { port_range: [23100, 23199] }) });
  const grove = {
    setup: [
      'echo "id=$GROVE_TASK_ID name=$GROVE_TASK_NAME branch=$GROVE_BRANCH"',
      'echo "project=$GROVE_PROJECT_ID path=$GROVE_PROJECT_PATH wt=$GROVE_WORKTREE cwd=$(pwd)"',
      'echo "foo=$FOO port=$PORT grove_port=$GROVE_PORT p3000=$GROVE_PORT_3000 p5173=$GROVE_PORT_5173"',
      'echo to-stderr >&2; printf "no newline at end"',
    ],
    ports: [3000, 5173],
    env: { FOO: 'bar baz' },
  };
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify(grove) } });
  const project = await addProject(d, repo);

  const a = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'one' } });
  assert.equal(a.status, 201, a.text);
  assert.equal(a.json.status, 'ready');
  const ports = a.json.ports;
  assert.deepEqual(Object.keys(ports), ['3000', '5173']);
  for (const p of Object.values(ports) as number[]) assert.ok(p >= 23100 && p <= 23199, `port ${p} in port_range`);

  const wt = path.join(repo, a.json.worktree_path).replace(/\/$/, '');
  const setup = (await d.socket('GET', `/api/tasks/${a.json.id}/setup`)).json;
  assert.equal(setup.status, 'ready');
  assert.deepEqual(setup.commands.map((c: any) => [c.command, c.exit_code, c.timed_out]), grove.setup.map((c) => [c, 0, false]));
  for (const c of setup.commands) assert.ok(c.started_at <= c.ended_at);
  assert.deepEqual(
    setup.lines.map((l: any) => [l.seq, l.stream, l.text]),
    [
      [1, 'stdout', `id=${a.json.id} name=one branch=grove/one`],
      [2, 'stdout', `project=${project.id} path=${repo} wt=${wt} cwd=${wt}`],
      [3, 'stdout', `foo=bar baz port=${ports['3000']} grove_port=${ports['3000']} p3000=${ports['3000']} p5173=${ports['5173']}`],
      [4, 'stderr', 'to-stderr'],
      [5, 'stdout', 'no newline at end'],
    ],
  );

  // Two live tasks never share a port; an archived task's ports go back to the range.
  const b = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'two' } });
  const held = [...Object.values(ports), ...Object.values(b.json.ports)];
  assert.equal(new Set(held).size, 4, `distinct ports: ${held}`);
  const archived = await d.socket('DELETE', `/api/tasks/${a.json.id}?force=true`);
  assert.deepEqual(archived.json.ports, {});
  const c = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'three' } });
  assert.deepEqual(Object.values(c.json.ports).sort(), Object.values(ports).sort(), 'released ports are handed out again');
});

test('a port bound by another program is skipped', async (t) => {
  const { createServer } = await import('node:net');
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(23200, '127.0.0.1', r));
  t.after(() => blocker.close());
  const d = await startDaemon(t, { home: configHome(t, { port_range: [23200, 23210] }) });
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ ports: [8080] }) } });
  const project = await addProject(d, repo);
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'x' } });
  assert.deepEqual(r.json.ports, { '8080': 23201 });
});

test('the first failing command stops setup: setup_failed with its stderr and exit code', async (t) => {
  const d = await daemon();
  const grove = { setup: ['echo step one', 'echo about to fail; echo "no such thing" >&2; exit 3', 'echo never'] };
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify(grove) } });
  const project = await addProject(d, repo);
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'broken' } });
  assert.equal(r.status, 201);
  assert.equal(r.json.status, 'setup_failed');
  const setup = (await d.tcp('GET', `/api/tasks/${r.json.id}/setup`)).json;
  assert.equal(setup.status, 'setup_failed');
  assert.deepEqual(setup.commands.map((c: any) => c.exit_code), [0, 3]);
  assert.deepEqual(
    setup.lines.map((l: any) => [l.stream, l.text]),
    [
      ['stdout', 'step one'],
      ['stdout', 'about to fail'],
      ['stderr', 'no such thing'],
    ],
  );
  // The worktree stays for inspection; the task can still be archived.
  assert.equal(worktrees(repo).length, 2);
  assert.equal((await d.socket('DELETE', `/api/tasks/${r.json.id}`)).json.status, 'archived');
});

test('a hanging setup command is killed at the timeout with its whole process group', async (t) => {
  const d = await startDaemon(t, { home: configHome(t, { setup_timeout_s: 1 }) });
  const marker = `${Math.floor(Math.random() * 1e6) + 7_000_000}`;
  const grove = { setup: [`sleep ${marker}1 & sleep ${marker}2; echo never`] };
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify(grove) } });
  const project = await addProject(d, repo);
  const t0 = Date.now();
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'hangs' } });
  assert.ok(Date.now() - t0 < 10_000);
  assert.equal(r.json.status, 'setup_failed');
  const [cmd] = (await d.socket('GET', `/api/tasks/${r.json.id}/setup`)).json.commands;
  assert.equal(cmd.timed_out, true);
  assert.equal(cmd.exit_code, null);
  assert.equal(cmd.signal, 'SIGTERM');
  assert.deepEqual(processesMatching(`sleep ${marker}`), [], 'nothing left running');
});

test('background children of a setup command do not outlive it', async (t) => {
  const d = await daemon();
  const marker = `${Math.floor(Math.random() * 1e6) + 8_000_000}`;
  const grove = { setup: [`(sleep ${marker} &) ; echo started`] };
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify(grove) } });
  const project = await addProject(d, repo);
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'bg' } });
  assert.equal(r.json.status, 'ready');
  assert.deepEqual(processesMatching(`sleep ${marker}`), []);
});

test('wait:false answers 202 setting_up; the task becomes ready when setup ends', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ setup: ['sleep 1', 'echo done'] }) } });
  const project = await addProject(d, repo);
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'later', wait: false } });
  assert.equal(r.status, 202);
  assert.equal(r.json.status, 'setting_up');
  assert.equal((await d.socket('GET', `/api/tasks/${r.json.id}`)).json.status, 'setting_up');
  await d.waitForLog((l) => l.msg === 'setup finished' && l.task === r.json.id);
  const after = await d.socket('GET', `/api/tasks/${r.json.id}/setup`);
  assert.equal(after.json.status, 'ready');
  assert.deepEqual(after.json.lines.map((l: any) => l.text), ['done']);
});

test('an invalid .grove.json is 422 CONFIG_INVALID naming the file and the JSON path, creating nothing', async (t) => {
  const d = await startDaemon(t);
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const file = path.join(repo, '.grove.json');
  const cases: Array<[string, string, string]> = [
    ['unknown key', '{"colour": "red"}', '/colour'],
    ['setup not an array', '{"setup": "npm ci"}', '/setup'],
    ['setup item wrong type', '{"setup": [1]}', '/setup/0'],
    ['port 0', '{"ports": [0]}', '/ports/0'],
    ['port too big', '{"ports": [3000, 70000]}', '/ports/1'],
    ['port not integer', '{"ports": [30.5]}', '/ports/0'],
    ['repeated port', '{"ports": [3000, 3000]}', '/ports'],
    ['bad env name', '{"env": {"1BAD": "x"}}', '/env/1BAD'],
    ['env name with =', '{"env": {"A=B": "x"}}', '/env/A=B'],
    ['env value not string', '{"env": {"A": 1}}', '/env/A'],
    ['NUL in env value', '{"env": {"A": "x\\u0000y"}}', '/env/A'],
    ['NUL in setup', '{"setup": ["echo \\u0000"]}', '/setup/0'],
    ['agent wrong type', '{"agent": 5}', '/agent'],
    ['not an object', '[]', '/'],
    ['unparsable', '{"setup": [', '/'],
  ];
  for (const [what, text, pointer] of cases) {
    writeFileSync(file, text);
    const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'x' } });
    assert.equal(r.status, 422, `${what}: ${r.text}`);
    assert.equal(r.json.code, 'CONFIG_INVALID', what);
    assert.ok(r.json.detail.includes(file), `${what}: names the file`);
    assert.ok(r.json.errors.some((e: any) => e.path === pointer), `${what}: ${JSON.stringify(r.json.errors)}`);
  }
  assert.deepEqual((await d.socket('GET', '/api/tasks')).json, []);
  assert.deepEqual(branches(repo), ['main']);
  assert.deepEqual(worktrees(repo), [repo]);
});

test('.grove.json is watched: an invalid edit is logged, a fix applies to the next task', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ setup: ['echo first'] }) } });
  const project = await addProject(d, repo);
  const file = path.join(repo, '.grove.json');
  const one = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'one' } });
  assert.deepEqual((await d.socket('GET', `/api/tasks/${one.json.id}/setup`)).json.lines.map((l: any) => l.text), ['first']);

  writeFileSync(file, '{"ports": ["x"]}');
  const warned = await d.waitForLog((l) => l.level === 40 && l.file === file);
  assert.match(warned.msg, /invalid/);
  assert.equal((await d.socket('GET', '/api/health')).status, 200, 'the daemon keeps running');

  writeFileSync(file, JSON.stringify({ setup: ['echo second'] }));
  const two = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'two' } });
  assert.equal(two.status, 201, two.text);
  assert.deepEqual((await d.socket('GET', `/api/tasks/${two.json.id}/setup`)).json.lines.map((l: any) => l.text), ['second']);
});

test('a creation that fails after the worktree was made leaves no branch, worktree or row', async (t) => {
  const { createServer } = await import('node:net');
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(23300, '127.0.0.1', r));
  t.after(() => blocker.close());
  // The only port in the range is taken: allocation fails after `git worktree add` succeeded.
  const d = await startDaemon(t, { home: configHome(t, { port_range: [23300, 23300] }) });
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ ports: [3000] }) } });
  const project = await addProject(d, repo);
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'no port' } });
  assert.equal(r.status, 503, r.text);
  assert.equal(r.json.code, 'UNAVAILABLE');
  assert.match(r.json.detail, /port_range/);
  assert.deepEqual((await d.socket('GET', '/api/tasks')).json, []);
  assert.deepEqual(branches(repo), ['main']);
  assert.deepEqual(worktrees(repo), [repo]);
});

test('archiving a task during its setup stops the setup and its processes', async (t) => {
  const d = await daemon();
  const marker = `${Math.floor(Math.random() * 1e6) + 6_000_000}`;
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ setup: [`sleep ${marker}`, 'echo never'] }) } });
  const project = await addProject(d, repo);
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'cut short', wait: false } });
  assert.equal(r.status, 202);
  await d.waitForLog((l) => l.msg === 'setup command started' && l.task === r.json.id);
  const del = await d.socket('DELETE', `/api/tasks/${r.json.id}?force=true`);
  assert.equal(del.status, 200, del.text);
  assert.equal(del.json.status, 'archived');
  assert.deepEqual(processesMatching(`sleep ${marker}`), []);
  const setup = (await d.socket('GET', `/api/tasks/${r.json.id}/setup`)).json;
  assert.equal(setup.commands.length, 1, 'the second command never ran');
  assert.equal(setup.commands[0].signal, 'SIGTERM');
});

test('GET /api/tasks/:id/setup as an event stream follows setup live to its end', async (t) => {
  const d = await daemon();
  const { gate, readSse } = await import('./helpers/sessions.ts');
  const g = gate(t);
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ setup: ['echo one', `read x < '${g.path}'; echo two`] }) } });
  const project = await addProject(d, repo);
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'live', wait: false } });
  const url = `http://127.0.0.1:${d.port}/api/tasks/${r.json.id}/setup`;
  // While the second command waits at the gate, the stream shows it started and not ended.
  const early = await readSse(url, { until: (evs) => evs.some((e) => e.event === 'command' && e.data.idx === 1) });
  const started = early.find((e) => e.event === 'command' && e.data.idx === 1)!;
  assert.equal(started.data.command, `read x < '${g.path}'; echo two`);
  assert.equal(started.data.exit_code, null);
  assert.equal(started.data.ended_at, null);
  assert.deepEqual(early.filter((e) => e.event === 'line').map((e) => e.data.text), ['one']);

  const rest = readSse(url, { until: (evs) => evs.some((e) => e.event === 'end') });
  g.release();
  const all = await rest;
  const end = all.at(-1)!;
  assert.equal(end.event, 'end');
  assert.equal(end.data.status, 'ready');
  assert.deepEqual(all.filter((e) => e.event === 'line').map((e) => [e.data.seq, e.data.text]), [
    [1, 'one'],
    [2, 'two'],
  ]);
  const last = new Map(all.filter((e) => e.event === 'command').map((e) => [e.data.idx, e.data.exit_code]));
  assert.deepEqual([...last], [
    [0, 0],
    [1, 0],
  ]);
});
