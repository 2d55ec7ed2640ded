import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { Pool } from 'undici';
import { addProject, sharedDaemon, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { git, makeRepo, makeTempDir } from '../helpers/git.ts';
import { gone, marker, processesMatching } from '../helpers/state.ts';
import { within } from '../helpers/within.ts';

// Resolves once `cond` holds, polling; fails naming `what` after `ms`.
async function until(what: string, cond: () => boolean, ms = 15_000): Promise<void> {
  for (const deadline = Date.now() + ms; !cond(); ) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

// Each test makes its own repositories: those with the same settings share a daemon.
const daemon = sharedDaemon();
const gitBounded = sharedDaemon({ config: { git_timeout_s: 1 } });

// A project whose repository cleans *.txt through a filter that sleeps (`sleep <m>`), and a
// ready task whose worktree has an untracked x.txt: every read of its work runs the filter.
async function slowProject(t: test.TestContext, d: TestDaemon, m: string) {
  const repo = makeRepo(t, { files: { '.gitattributes': '*.txt filter=slow\n', 'README.md': '# slow\n' } });
  const project = await addProject(d, repo);
  const created = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'slow' } });
  assert.equal(created.status, 201, created.text);
  git(repo, 'config', 'filter.slow.clean', `sleep ${m}; cat`);
  writeFileSync(path.join(repo, created.json.worktree_path, 'x.txt'), 'x\n');
  return { repo, project, task: created.json };
}

test("reads whose clients go stop their git and its filters; meanwhile another project's task creation and reads answer at once", { timeout: 120_000 }, async (t) => {
  const d = await daemon();
  const logsBefore = d.logs.length;
  const m = marker(t);
  const { repo, task } = await slowProject(t, d, m);
  const client = new Pool('http://localhost', { socketPath: d.socketPath, connections: 24 });
  t.after(() => client.destroy());
  // More reads than the whole worker pool has room for (16 on two cores), each left hanging in the filter.
  const clients = Array.from({ length: 20 }, () => new AbortController());
  const reads = clients.map((c, i) =>
    client.request({ method: 'GET', path: `/api/tasks/${task.id}/${i % 2 ? 'diff' : 'changes'}`, signal: c.signal }).then(
      (r) => ({ status: r.statusCode }),
      (err: Error) => ({ status: 0, err: err.name }),
    ),
  );
  await until('the slow filter runs', () => processesMatching(m).length > 0);

  const other = await addProject(d, makeRepo(t));
  const started = Date.now();
  const created = await within(20_000, "another project's task creation", d.socket('POST', '/api/tasks', { body: { project_id: other.id, name: 'meanwhile' } }));
  assert.equal(created.status, 201, created.text);
  t.diagnostic(`the other project's task was created in ${Date.now() - started} ms while the reads hung`);
  const read = await within(20_000, "a read of another project's task", d.socket('GET', `/api/tasks/${created.json.id}/changes`));
  assert.equal(read.status, 200, read.text);

  for (const c of clients) c.abort();
  for (const r of await Promise.all(reads)) assert.equal(r.status, 0, 'every read was left by its client');
  await gone(m);
  // The project's reads work again once the filter is quick.
  git(repo, 'config', 'filter.slow.clean', 'cat');
  const again = await d.socket('GET', `/api/tasks/${task.id}/changes`);
  assert.equal(again.status, 200, again.text);
  assert.deepEqual(again.json.files.map((f: any) => f.path), ['x.txt']);
  assert.deepEqual(d.logs.slice(logsBefore).filter((l) => l?.level >= 50), [], 'no request failed as an internal error');
});

test('a read past git_timeout_s answers GIT_TIMEOUT and leaves no process', { timeout: 120_000 }, async (t) => {
  const d = await gitBounded();
  const m = marker(t);
  const { task, project } = await slowProject(t, d, m);
  for (const what of ['changes', 'diff']) {
    const r = await within(20_000, `GET ${what}`, d.socket('GET', `/api/tasks/${task.id}/${what}`));
    assert.equal(r.status, 504, r.text);
    assert.equal(r.json.code, 'GIT_TIMEOUT');
    assert.equal(r.json.title, 'git took too long');
    assert.match(r.json.detail, /took longer than git_timeout_s \(1 s\)/);
    assert.doesNotMatch(r.json.detail, /\n|at .*\.js/);
    await gone(m);
  }
  const c = await within(20_000, 'GET conflicts', d.socket('GET', `/api/projects/${project.id}/conflicts`));
  assert.equal(c.status, 504, c.text);
  assert.equal(c.json.code, 'GIT_TIMEOUT');
  await gone(m);
});

test("a commit whose pre-commit hook is slow does not hold up a task creation in the same project", { timeout: 120_000 }, async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'hooked' } })).json;
  const dir = makeTempDir(t);
  const [entered, go] = [path.join(dir, 'entered'), path.join(dir, 'go')];
  // The hook waits for \`go\`, or for its folder to be removed when the test ends early.
  const hook = path.join(repo, '.git', 'hooks', 'pre-commit');
  writeFileSync(hook, `#!/bin/sh\n: > '${entered}'\nwhile [ ! -e '${go}' ] && [ -d '${dir}' ]; do sleep 0.05; done\n`);
  chmodSync(hook, 0o755);
  writeFileSync(path.join(repo, task.worktree_path, 'work.txt'), 'work\n');
  const commit = d.socket('POST', `/api/tasks/${task.id}/commit`, { body: { message: 'work' } });
  await until('the pre-commit hook runs', () => existsSync(entered));

  const started = Date.now();
  const created = await within(20_000, 'a task creation in the same project', d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'meanwhile' } }));
  assert.equal(created.status, 201, created.text);
  t.diagnostic(`created in ${Date.now() - started} ms while the hook held the commit`);
  assert.equal(existsSync(go), false, 'the hook still holds the commit');

  writeFileSync(go, '');
  const done = await commit;
  assert.equal(done.status, 201, done.text);
  assert.deepEqual(done.json.files, ['work.txt']);
});

test('a push whose remote hangs, with a child that left its group holding the pipes, answers GIT_TIMEOUT within git_timeout_s and leaves nothing running', { timeout: 120_000 }, async (t) => {
  const d = await gitBounded();
  const m = marker(t);
  const repo = makeRepo(t);
  const dir = makeTempDir(t);
  const remote = path.join(dir, 'remote.git');
  git(dir, 'init', '-q', '--bare', remote);
  // The "receive-pack" of a local remote runs here: it leaves a child in a session of its own
  // that keeps git's stderr, and never answers.
  const helper = path.join(dir, 'receive-pack');
  writeFileSync(helper, `#!/bin/sh\nsetsid sleep ${m}1 &\nexec sleep ${m}2\n`);
  chmodSync(helper, 0o755);
  git(repo, 'remote', 'add', 'origin', remote);
  git(repo, 'config', 'remote.origin.receivepack', helper);
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'pushed' } })).json;

  const started = Date.now();
  const r = await within(30_000, 'the push', d.socket('POST', `/api/tasks/${task.id}/push`, { body: {} }));
  const took = Date.now() - started;
  assert.equal(r.status, 504, r.text);
  assert.equal(r.json.code, 'GIT_TIMEOUT');
  assert.match(r.json.detail, /git push took longer than git_timeout_s \(1 s\)/);
  assert.ok(took < 10_000, `answered after ${took} ms`);
  await gone(m);
});

// A path in a worktree's git folder (its index, a rebase's state), absolute.
const gitPath = (wt: string, name: string) => execFileSync('git', ['-C', wt, 'rev-parse', '--path-format=absolute', '--git-path', name], { encoding: 'utf8' }).trim();

test('a rebase past git_timeout_s and a commit past setup_timeout_s answer GIT_TIMEOUT; the branch, the worktree and its index are as they were', { timeout: 120_000 }, async (t) => {
  // 3 s, not 1: the bound counts from the request's arrival (a thread's start included), and git
  // must reach the filter and the hook before it ends.
  const d = await startDaemon(t, { config: { git_timeout_s: 3, setup_timeout_s: 3 } });
  const m = marker(t);
  const dir = makeTempDir(t);
  const repo = makeRepo(t, { files: { '.gitattributes': '*.txt filter=slow\n', 'a.txt': 'a\n' } });
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'bounded' } })).json;
  const wt = path.join(repo, task.worktree_path);
  writeFileSync(path.join(wt, 'c.txt'), 'c\n');
  git(wt, 'add', 'c.txt');
  git(wt, 'commit', '-qm', 'task work');
  writeFileSync(path.join(repo, 'b.txt'), 'b\n');
  git(repo, 'add', 'b.txt');
  git(repo, 'commit', '-qm', 'base moves on');
  // The first file git writes out (the rebase's checkout of the base) hangs; later ones do not.
  const smudge = path.join(dir, 'smudge');
  writeFileSync(smudge, `#!/bin/sh\nif [ ! -e '${dir}/slept' ]; then : > '${dir}/slept'; sleep ${m}; fi\nexec cat\n`);
  chmodSync(smudge, 0o755);
  git(repo, 'config', 'filter.slow.smudge', smudge);
  const head = git(wt, 'rev-parse', 'HEAD');

  const rebased = await within(20_000, 'the rebase', d.socket('POST', `/api/tasks/${task.id}/rebase`));
  assert.equal(rebased.status, 504, rebased.text);
  assert.equal(rebased.json.code, 'GIT_TIMEOUT');
  assert.match(rebased.json.detail, /the rebase took longer than git_timeout_s \(3 s\)/);
  assert.ok(existsSync(path.join(dir, 'slept')), 'the rebase reached the filter');
  await gone(m);
  assert.equal(git(wt, 'rev-parse', 'HEAD'), head, 'the branch is where it was');
  assert.equal(git(wt, 'symbolic-ref', 'HEAD'), `refs/heads/${task.branch}`, 'HEAD is on the branch, not detached');
  assert.equal(existsSync(gitPath(wt, 'rebase-merge')), false, 'no rebase in progress');
  assert.equal(git(wt, 'status', '--porcelain'), '', 'the worktree is clean');

  const m2 = marker(t);
  const hook = path.join(repo, '.git', 'hooks', 'pre-commit');
  writeFileSync(hook, `#!/bin/sh\nsleep ${m2}\n`);
  chmodSync(hook, 0o755);
  writeFileSync(path.join(wt, 'new.txt'), 'new\n');
  const index = readFileSync(gitPath(wt, 'index'));
  const committed = await within(20_000, 'the commit', d.socket('POST', `/api/tasks/${task.id}/commit`, { body: { message: 'hooked' } }));
  assert.equal(committed.status, 504, committed.text);
  assert.equal(committed.json.code, 'GIT_TIMEOUT');
  assert.match(committed.json.detail, /setup_timeout_s \(3 s\)/);
  await gone(m2);
  assert.equal(git(wt, 'rev-parse', 'HEAD'), head, 'nothing was committed');
  assert.deepEqual(readFileSync(gitPath(wt, 'index')), index, 'the index is as it was');
  assert.equal(existsSync(`${gitPath(wt, 'index')}.lock`), false, 'no index.lock is left');
  assert.equal(git(wt, 'status', '--porcelain'), '?? new.txt');
});

test('a daemon that stops while a read hangs stops its git and filters', { timeout: 120_000 }, async (t) => {
  const d = await startDaemon(t);
  const m = marker(t);
  const { task } = await slowProject(t, d, m);
  const read = d.socket('GET', `/api/tasks/${task.id}/changes`).catch((err: Error) => err);
  await until('the slow filter runs', () => processesMatching(m).length > 0);
  assert.equal(await d.stop(), 0);
  await read;
  await gone(m);
});
