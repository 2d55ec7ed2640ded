import assert from 'node:assert/strict';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, makeHome, ROOT, startDaemon, type TestDaemon } from './helpers/daemon.ts';
import { git, makeRepo, makeTempDir } from './helpers/git.ts';
import { liveGroupMembers } from './helpers/sessions.ts';
import { waitPidGone } from './helpers/state.ts';

const WEB = path.join(ROOT, 'test', 'fixtures', 'web-service.mjs');

// A daemon whose setup and teardown commands are bounded by `timeout` seconds.
async function daemon(t: test.TestContext, timeout = 30) {
  const home = makeHome(t);
  writeFileSync(path.join(home, 'config.json'), JSON.stringify({ setup_timeout_s: timeout }));
  return startDaemon(t, { home });
}

// A project with `.grove.json` = `grove`, and a way to make tasks of it.
async function project(t: test.TestContext, d: TestDaemon, grove: object, files: Record<string, string> = {}) {
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
  const d = await daemon(t);
  const outside = path.join(makeTempDir(t), 'secret');
  writeFileSync(outside, 'SECRET=outside\n');
  // Setup fails unless the copies are there, identical, when it runs.
  const setup = ['cmp .env "$GROVE_PROJECT_PATH/.env"', 'cmp local/conf.json "$GROVE_PROJECT_PATH/local/conf.json"', 'test ! -e secret.env'];
  const { repo, task } = await project(t, d, { copy: ['.env', 'secret.env', 'README.md', 'no-such-*'], setup }, { '.worktreeinclude': '# local config\nlocal/\n' });
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
  const d = await daemon(t);
  const mark = path.join(makeTempDir(t), 'mark');
  const bind = `node -e "require('net').createServer().listen(process.env.PORT, () => process.exit(0)).on('error', () => process.exit(9))"`;
  const { task } = await project(t, d, {
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
  const d = await daemon(t, 1);
  const pids = makeTempDir(t);
  const { task } = await project(t, d, { teardown: [`sleep 300 & echo $! > ${pids}/child; echo $$ > ${pids}/shell; wait`] });
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
  const { task } = await project(t, d, { teardown: [`echo $$ > ${pids}/shell; sleep 300`] });
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
  const d = await daemon(t);
  for (const [grove, where] of [
    [{ copy: 'not a list' }, '/copy'],
    [{ copy: [''] }, '/copy/0'],
    [{ services: { web: { command: '' } } }, '/services/web/command'],
    [{ services: { 'Bad Name': { command: 'x' } } }, '/services'],
    [{ services: { web: { command: 'x', restart: true } } }, '/services/web'],
    [{ teardown: ['  '] }, '/teardown/0'],
  ] as const) {
    const { repo, p } = await project(t, d, grove);
    const r = await d.socket('POST', '/api/tasks', { body: { project_id: p.id, name: 'bad' } });
    assert.equal(r.status, 422, JSON.stringify(grove));
    assert.equal(r.json.code, 'CONFIG_INVALID');
    assert.match(r.json.detail, /\.grove\.json/);
    assert.ok(r.json.errors.some((e: any) => e.path.startsWith(where)), `${JSON.stringify(r.json.errors)} names ${where}`);
    assert.deepEqual(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 1, 'no worktree');
    assert.equal(git(repo, 'branch', '--list', 'grove/*'), '', 'no branch');
  }
});
