import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, statfsSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { addProject, makeHome, ROOT, sharedDaemon, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { branches, git, makeRepo, makeTempDir, worktrees } from '../helpers/git.ts';
import { liveGroupMembers } from '../helpers/sessions.ts';
import { newSince } from '../helpers/since.ts';
import { processesMatching, waitPidGone } from '../helpers/state.ts';

// Tests that need no settings of their own share one daemon (each makes its own repository);
// those that need setup and teardown cut short (at 3 s, past a loaded machine's git worktree add) share another.
const daemon = sharedDaemon();
const bounded = sharedDaemon({ config: { setup_timeout_s: 3 } });

const execFileAsync = promisify(execFile);

test('setup commands run in order in the worktree and see the task environment and ports', async (t) => {
  const d = await startDaemon(t, { config: { port_range: [23100, 23199] } });
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
  const d = await startDaemon(t, { config: { port_range: [23200, 23210] } });
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
  const d = await bounded();
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
  const d = await daemon();
  const added = await newSince(d, '/api/tasks');
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
  assert.deepEqual(added((await d.socket('GET', '/api/tasks')).json), []);
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
  const d = await startDaemon(t, { config: { port_range: [23300, 23300] } });
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
  const { gate, readSse } = await import('../helpers/sessions.ts');
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

// A project whose .grove.json copies `copy`, with the main checkout's untracked files made by `fill`
// (in `parent`, when given). A fill that takes long is asynchronous: a test that blocks its event
// loop past the daemon's keep-alive finds the shared connections closed under it (EPIPE).
async function copyProject(t: test.TestContext, d: TestDaemon, copy: string[], fill: (repo: string) => unknown, parent?: string) {
  const repo = makeRepo(t, { ...(parent ? { parent } : {}), files: { '.gitignore': 'data/\n.worktreeinclude\n', '.grove.json': JSON.stringify({ copy }) } });
  await fill(repo);
  return { repo, p: await addProject(d, repo) };
}

async function createCopying(d: TestDaemon, projectId: string, name: string) {
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: projectId, name } });
  assert.equal(r.status, 201, r.text);
  const setup = await d.socket('GET', `/api/tasks/${r.json.id}/setup`);
  return { task: r.json, log: setup.json.lines.map((l: any) => l.text) as string[], bytes: setup.text.length };
}

// 120 Mi lines: split whole, they are more elements than a V8 array holds (a fatal error that
// took the daemon down). A sparse file of zeros would be one line, so this one is written out.
async function hugeInclude(file: string): Promise<void> {
  const fh = await open(file, 'w');
  const chunk = Buffer.from('a\n'.repeat(1024 * 1024));
  for (let i = 0; i < 120; i++) await fh.write(chunk);
  await fh.close();
}

test('copy: a 240 MiB .worktreeinclude is refused unread, the creation goes on and says so; the daemon stays up for the next one', async (t) => {
  const d = await daemon();
  const { p } = await copyProject(t, d, ['data/'], async (repo) => {
    await hugeInclude(path.join(repo, '.worktreeinclude'));
    mkdirSync(path.join(repo, 'data'));
    writeFileSync(path.join(repo, 'data', 'a.env'), 'A=1\n');
  });
  for (const name of ['first', 'second']) {
    const { task, log } = await createCopying(d, p.id, name);
    assert.equal(task.status, 'ready');
    assert.deepEqual(log, ['grove: copied data/a.env', 'grove: not copied: .worktreeinclude (it is larger than 1048576 bytes, the limit of .grove.json: its patterns are not used)']);
  }
  assert.equal((await d.socket('GET', '/api/health')).json.status, 'ok');
});

test('copy: a 5 GiB sparse file is not copied (the worktree stays small) and the log says why', async (t) => {
  const d = await daemon();
  const { repo, p } = await copyProject(t, d, ['data/'], (repo) => {
    mkdirSync(path.join(repo, 'data'));
    writeFileSync(path.join(repo, 'data', 'disk.img'), '');
    truncateSync(path.join(repo, 'data', 'disk.img'), 5 * 1024 ** 3);
  });
  const { task, log } = await createCopying(d, p.id, 'sparse');
  const kib = Number(execFileSync('du', ['-sk', path.join(repo, task.worktree_path)], { encoding: 'utf8' }).split('\t')[0]);
  assert.ok(kib < 10 * 1024, `the worktree takes ${kib} KiB`);
  assert.deepEqual(log, ['grove: not copied: data/disk.img (a sparse file of 5368709120 bytes (0 on disk): a copy would write out its holes)']);
});

// A scratch folder in memory (/dev/shm) where the machine has one with room for `files` small
// files (a page and an inode each), else in the temporary folder: for a fixture of many files,
// which a disk makes slow to write, copy and remove.
function memoryDir(t: test.TestContext, files: number): string {
  let base = tmpdir();
  try {
    const fs = statfsSync('/dev/shm');
    if (fs.bavail * fs.bsize >= 2 * files * 4096 && fs.ffree >= 2 * files) base = '/dev/shm';
  } catch {
    // no /dev/shm: the temporary folder it is
  }
  const dir = realpathSync(mkdtempSync(path.join(base, 'grove-mem-')));
  // rm(1), not rmSync: it removes a few hundred thousand files much faster; and asynchronously,
  // for the same reason as copyProject's fill.
  t.after(() => execFileAsync('rm', ['-rf', dir]));
  return dir;
}

test('copy: 100,000 files are copied and the setup log names the first 20, then counts', async (t) => {
  const d = await daemon();
  const { repo, p } = await copyProject(
    t,
    d,
    ['data/'],
    (repo) => {
      mkdirSync(path.join(repo, 'data'));
      // data/f00000 … data/f99999, holding "0\n" … "99999\n": one process writes them all.
      return execFileAsync('sh', ['-c', 'seq 0 99999 | split -l 1 -a 5 -d - f'], { cwd: path.join(repo, 'data') });
    },
    // The files, and their copies in the worktree.
    memoryDir(t, 200_000),
  );
  const { task, log, bytes } = await createCopying(d, p.id, 'many');
  assert.equal(task.status, 'ready');
  assert.equal(log.length, 21, log.join('\n'));
  assert.equal(log.at(-1), '... and 99980 more copied (100000 files, 588890 bytes in all)'.replace(/^/, 'grove: '));
  assert.ok(bytes < 10_000, `the setup log is ${bytes} bytes`);
  assert.equal(execFileSync('sh', ['-c', 'ls | wc -l'], { cwd: path.join(repo, task.worktree_path, 'data'), encoding: 'utf8' }).trim(), '100000');
});

const WEB = path.join(ROOT, 'test', 'fixtures', 'web-service.mjs');

// A project with `.grove.json` = `grove`, and a way to make tasks of it.
async function groveProject(t: test.TestContext, d: TestDaemon, grove: object, files: Record<string, string> = {}) {
  const repo = makeRepo(t, { files: { '.gitignore': '.env\nlocal/\nsecret.env\n', 'README.md': 'tracked\n', '.grove.json': JSON.stringify(grove), ...files } });
  const p = await addProject(d, repo);
  const task = async (name: string) => {
    const r = await d.socket('POST', '/api/tasks', { body: { project_id: p.id, name } });
    assert.equal(r.status, 201, r.text);
    return { ...r.json, wt: path.join(repo, r.json.worktree_path) };
  };
  return { repo, p, task };
}

test('copy and .worktreeinclude: untracked files copied with their modes before setup; a link out of the project not followed; tracked files untouched', async (t) => {
  const d = await daemon();
  const outside = path.join(makeTempDir(t), 'secret');
  writeFileSync(outside, 'SECRET=outside\n');
  // Setup fails unless the copies are there, identical, when it runs.
  const setup = ['cmp .env "$GROVE_PROJECT_PATH/.env"', 'cmp local/conf.json "$GROVE_PROJECT_PATH/local/conf.json"', 'test ! -e secret.env'];
  const { repo, task } = await groveProject(t, d, { copy: ['.env', 'secret.env', 'README.md', 'no-such-*'], setup }, { '.worktreeinclude': '# local config\nlocal/\n' });
  writeFileSync(path.join(repo, '.env'), 'TOKEN=abc\n');
  chmodSync(path.join(repo, '.env'), 0o600);
  mkdirSync(path.join(repo, 'local'));
  writeFileSync(path.join(repo, 'local', 'conf.json'), '{"debug": true}\n');
  chmodSync(path.join(repo, 'local', 'conf.json'), 0o750);
  symlinkSync(outside, path.join(repo, 'secret.env'));
  writeFileSync(path.join(repo, 'README.md'), 'changed in the main checkout, not committed\n');

  const a = await task('with copies');
  assert.equal(a.status, 'ready', 'setup saw the copies');
  assert.equal(readFileSync(path.join(a.wt, '.env'), 'utf8'), 'TOKEN=abc\n');
  assert.equal(statSync(path.join(a.wt, '.env')).mode & 0o777, 0o600);
  assert.equal(statSync(path.join(a.wt, 'local', 'conf.json')).mode & 0o777, 0o750);
  assert.ok(!lstatSync(path.join(a.wt, '.env')).isSymbolicLink(), 'copied, not linked');
  assert.ok(!existsSync(path.join(a.wt, 'secret.env')), 'the link out of the project was not followed');
  assert.equal(readFileSync(path.join(a.wt, 'README.md'), 'utf8'), 'tracked\n', 'a tracked file is never copied');
  assert.equal(git(a.wt, 'status', '--porcelain'), '', 'the copies are ignored files, the worktree clean');
  const log = (await d.socket('GET', `/api/tasks/${a.id}/setup`)).json;
  const said = log.lines.map((l: any) => l.text);
  assert.deepEqual(said.slice(0, 3).sort(), ['grove: copied .env', 'grove: copied local/conf.json', 'grove: not copied: secret.env (a link out of the project: not followed)']);
  assert.deepEqual(log.commands.map((c: any) => c.exit_code), [0, 0, 0]);
});

test('teardown: after the services stopped (it binds their port), in the worktree; a failure is recorded and the task archived anyway', async (t) => {
  const d = await daemon();
  const mark = path.join(makeTempDir(t), 'mark');
  const bind = `node -e "require('net').createServer().listen(process.env.PORT, () => process.exit(0)).on('error', () => process.exit(9))"`;
  const { task } = await groveProject(t, d, {
    ports: [3000],
    services: { web: { command: `exec node ${WEB}`, autostart: true } },
    teardown: [`${bind} && pwd > ${mark}`, 'echo cleaning up; exit 3', 'echo after the failure'],
  });
  const a = await task('torn down');
  const [svc] = (await d.socket('GET', `/api/tasks/${a.id}/services`)).json;
  assert.ok(svc.session, 'the service was started');
  const r = await d.socket('DELETE', `/api/tasks/${a.id}`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.status, 'archived');
  assert.equal(readFileSync(mark, 'utf8').trim(), a.wt.replace(/\/$/, ''), 'ran in the worktree, with the port free');
  assert.ok(!existsSync(a.wt), 'the worktree is gone');
  assert.deepEqual(liveGroupMembers(svc.session.pid), []);
  const td = (await d.socket('GET', `/api/tasks/${a.id}/teardown`)).json;
  assert.equal(td.status, 'archived');
  assert.deepEqual(td.commands.map((c: any) => c.exit_code), [0, 3, 0], 'every command ran, the failure recorded');
  assert.deepEqual(td.commands.map((c: any) => c.interrupted), [false, false, false]);
  assert.deepEqual(td.lines.map((l: any) => l.text), ['cleaning up', 'after the failure']);
  assert.deepEqual((await d.socket('GET', `/api/tasks/${a.id}/setup`)).json.commands, [], 'the setup log is its own');
});

test('teardown: a hanging command is killed at setup_timeout_s with nothing left; a dirty worktree is refused before it runs', async (t) => {
  const d = await bounded();
  const pids = makeTempDir(t);
  const { task } = await groveProject(t, d, { teardown: [`sleep 300 & echo $! > ${pids}/child; echo $$ > ${pids}/shell; wait`] });
  const a = await task('hangs');
  writeFileSync(path.join(a.wt, 'work.txt'), 'not committed\n');
  const dirty = await d.socket('DELETE', `/api/tasks/${a.id}`);
  assert.equal(dirty.json.code, 'WORKTREE_DIRTY');
  assert.deepEqual((await d.socket('GET', `/api/tasks/${a.id}/teardown`)).json.commands, [], 'no teardown ran');
  const r = await d.socket('DELETE', `/api/tasks/${a.id}?force=true`);
  assert.equal(r.json.status, 'archived');
  const [cmd] = (await d.socket('GET', `/api/tasks/${a.id}/teardown`)).json.commands;
  assert.equal(cmd.timed_out, true);
  for (const f of ['child', 'shell']) await waitPidGone(Number(readFileSync(path.join(pids, f), 'utf8')), 5000);
});

test('teardown cut short by a daemon SIGKILL: at the next start the task ends archived and no teardown process is left', async (t) => {
  const home = makeHome(t);
  const d = await startDaemon(t, { home });
  const pids = makeTempDir(t);
  const { task } = await groveProject(t, d, { teardown: [`echo $$ > ${pids}/shell; sleep 300`] });
  const a = await task('interrupted');
  const archiving = d.socket('DELETE', `/api/tasks/${a.id}`).catch(() => null);
  // Its process group is on record once this is logged: a daemon killed from then on can stop it.
  await d.waitForLog((l) => l.msg === 'teardown command spawned' && l.task === a.id, 10_000);
  for (let i = 0; !existsSync(path.join(pids, 'shell')) || readFileSync(path.join(pids, 'shell'), 'utf8') === ''; i++) {
    assert.ok(i < 400, 'the teardown wrote its pid');
    await new Promise((r) => setTimeout(r, 25));
  }
  const shell = Number(readFileSync(path.join(pids, 'shell'), 'utf8'));
  assert.equal(await d.stop('SIGKILL'), 'SIGKILL');
  await archiving;
  assert.ok(existsSync(`/proc/${shell}`), 'the teardown outlived the daemon');
  const d2 = await startDaemon(t, { home });
  await d2.waitForLog((l) => /archive was interrupted/.test(l.msg ?? ''), 20_000);
  await waitPidGone(shell, 10_000);
  const after = (await d2.socket('GET', `/api/tasks/${a.id}`)).json;
  assert.equal(after.status, 'archived');
  assert.ok(!existsSync(a.wt));
  const td = (await d2.socket('GET', `/api/tasks/${a.id}/teardown`)).json;
  assert.match(td.lines.at(-1).text, /teardown interrupted/);
  // The command itself says it was cut short, not only its missing exit code.
  assert.deepEqual(td.commands.map((c: any) => [c.exit_code, c.interrupted, c.ended_at !== null]), [[null, true, true]]);
});

test('invalid copy, services or teardown: 422 CONFIG_INVALID naming the file and the JSON path, nothing made', async (t) => {
  const d = await daemon();
  for (const [grove, where] of [
    [{ copy: 'not a list' }, '/copy'],
    [{ copy: [''] }, '/copy/0'],
    [{ services: { web: { command: '' } } }, '/services/web/command'],
    [{ services: { 'Bad Name': { command: 'x' } } }, '/services'],
    [{ services: { web: { command: 'x', restart: true } } }, '/services/web'],
    [{ teardown: ['  '] }, '/teardown/0'],
  ] as const) {
    const { repo, p } = await groveProject(t, d, grove);
    const r = await d.socket('POST', '/api/tasks', { body: { project_id: p.id, name: 'bad' } });
    assert.equal(r.status, 422, JSON.stringify(grove));
    assert.equal(r.json.code, 'CONFIG_INVALID');
    assert.match(r.json.detail, /\.grove\.json/);
    assert.ok(r.json.errors.some((e: any) => e.path.startsWith(where)), `${JSON.stringify(r.json.errors)} names ${where}`);
    assert.deepEqual(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 1, 'no worktree');
    assert.equal(git(repo, 'branch', '--list', 'grove/*'), '', 'no branch');
  }
});
