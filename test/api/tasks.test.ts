import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, sharedDaemon } from '../helpers/daemon.ts';
import { branches, git, gitSucceeds, makeRepo, makeTempDir, worktrees } from '../helpers/git.ts';
import { newSince } from '../helpers/since.ts';

// Every test makes its own repositories: they share one daemon.
const daemon = sharedDaemon();

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

test('a task on a fresh repository is ready, on its own branch and worktree, main checkout clean', async (t) => {
  const d = await daemon();
  const added = await newSince(d, '/api/tasks');
  const repo = makeRepo(t);
  const project = await addProject(d, repo);

  const r = await d.tcp('POST', '/api/tasks', { body: { project_id: project.id, name: 'Fix the login bug' } });
  assert.equal(r.status, 201, r.text);
  const task = r.json;
  assert.equal(task.status, 'ready');
  assert.equal(task.name, 'Fix the login bug');
  assert.equal(task.branch, 'grove/fix-the-login-bug');
  assert.equal(task.worktree_path, '.grove/worktrees/fix-the-login-bug/');
  assert.equal(task.project_id, project.id);
  assert.equal(task.base, 'main');
  assert.equal(task.base_commit, git(repo, 'rev-parse', 'main'));
  assert.deepEqual(task.ports, {});
  assert.match(task.created_at, ISO_MS);
  assert.equal(task.archived_at, null);

  assert.ok(gitSucceeds(repo, 'check-ref-format', '--branch', task.branch));
  const wt = path.join(repo, task.worktree_path);
  assert.equal(git(wt, 'rev-parse', '--abbrev-ref', 'HEAD'), task.branch);
  assert.equal(git(wt, 'rev-parse', '--show-toplevel'), wt.replace(/\/$/, ''));
  assert.deepEqual(worktrees(repo), [repo, wt.replace(/\/$/, '')]);
  assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=all'), '', 'the main checkout stays clean');
  // No upstream is configured for the new branch.
  assert.ok(!gitSucceeds(repo, 'rev-parse', '--abbrev-ref', `${task.branch}@{upstream}`));

  // A second task: `/.grove/` is in info/exclude exactly once.
  assert.equal((await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'second' } })).status, 201);
  const exclude = readFileSync(path.join(repo, '.git', 'info', 'exclude'), 'utf8');
  assert.equal(exclude.split('\n').filter((l) => l === '/.grove/').length, 1);

  for (const via of [d.socket, d.tcp]) {
    assert.deepEqual((await via('GET', `/api/tasks/${task.id}`)).json, task);
    const list = await via('GET', `/api/tasks?project_id=${project.id}`);
    assert.deepEqual(list.json.map((x: any) => x.name), ['Fix the login bug', 'second']);
    assert.equal(added((await via('GET', '/api/tasks')).json).length, 2);
  }
  const setup = await d.socket('GET', `/api/tasks/${task.id}/setup`);
  assert.deepEqual(setup.json, { status: 'ready', commands: [], lines: [] });
});

test('base defaults to the current branch and can be any commit-ish', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const first = git(repo, 'rev-parse', 'HEAD');
  git(repo, 'checkout', '-q', '-b', 'develop');
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'on develop');
  git(repo, 'tag', 'v1', first);
  const project = await addProject(d, repo);

  const dflt = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'a' } });
  assert.equal(dflt.json.base, 'develop');
  assert.equal(dflt.json.base_commit, git(repo, 'rev-parse', 'develop'));
  const tagged = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'b', base: 'v1' } });
  assert.equal(tagged.status, 201, tagged.text);
  assert.equal(tagged.json.base, 'v1');
  assert.equal(git(path.join(repo, tagged.json.worktree_path), 'rev-parse', 'HEAD'), first);
  const explicit = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'c', branch: 'feature/x-1', base: 'main' } });
  assert.equal(explicit.status, 201, explicit.text);
  assert.equal(explicit.json.branch, 'feature/x-1');
  assert.equal(explicit.json.worktree_path, '.grove/worktrees/c/');
  assert.deepEqual(branches(repo), ['develop', 'feature/x-1', 'grove/a', 'grove/b', 'main']);
});

test('unknown projects and tasks are 404, malformed ids 400', async (t) => {
  const d = await daemon();
  const missing = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: missing, name: 'x' } });
  assert.equal(r.status, 404);
  assert.equal(r.json.code, 'NOT_FOUND');
  for (const p of [`/api/tasks/${missing}`, `/api/tasks/${missing}/setup`]) assert.equal((await d.socket('GET', p)).status, 404);
  assert.equal((await d.socket('DELETE', `/api/tasks/${missing}`)).status, 404);
  assert.equal((await d.socket('GET', '/api/tasks/NOPE/setup')).json.code, 'INVALID_ID');
  assert.equal((await d.socket('GET', '/api/tasks?project_id=nope')).json.code, 'VALIDATION_FAILED');
  assert.equal((await d.socket('DELETE', `/api/tasks/${missing}?force=maybe`)).json.code, 'VALIDATION_FAILED');
});

function cloneOf(t: Parameters<typeof makeRepo>[0], origin: string): string {
  const dir = path.join(makeTempDir(t), 'clone');
  execFileSync('git', ['clone', '-q', origin, dir]);
  return dir;
}

function run(cmd: string, args: string[]): Promise<number> {
  return new Promise((resolve) => spawn(cmd, args, { stdio: 'ignore' }).once('exit', (c) => resolve(c ?? 1)));
}

test('parallel raw `git worktree add` on one repository fails; 20 concurrent POST /api/tasks all succeed', async (t) => {
  const origin = makeRepo(t, { files: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}.txt`, `${i}\n`])) });

  // The problem: branches made from a remote-tracking ref write .git/config, and parallel adds race on its lock.
  let failures = 0;
  // A race, so not every round shows it: up to 10 rounds, stopping at the first that does.
  for (let attempt = 0; attempt < 10 && failures === 0; attempt++) {
    const raw = cloneOf(t, origin);
    const codes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => run('git', ['-C', raw, 'worktree', 'add', '-q', '-b', `raw-${i}`, path.join(raw, 'wt', `${i}`), 'origin/main'])),
    );
    failures = codes.filter((c) => c !== 0).length;
  }
  assert.ok(failures > 0, 'raw parallel worktree adds on one repository fail');

  const d = await daemon();
  const repo = cloneOf(t, origin);
  const project = await addProject(d, repo);
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      (i % 2 ? d.socket : d.tcp)('POST', '/api/tasks', { body: { project_id: project.id, name: 'same name', base: 'origin/main' } }),
    ),
  );
  for (const r of results) assert.equal(r.status, 201, r.text);
  const names = new Set(results.map((r) => r.json.branch));
  assert.equal(names.size, 20);
  assert.equal(new Set(results.map((r) => r.json.worktree_path)).size, 20);
  assert.equal(worktrees(repo).length, 21);
  assert.equal(branches(repo).filter((b) => b.startsWith('grove/same-name')).length, 20);
  assert.ok(!gitSucceeds(repo, 'config', '--get-regexp', '^branch\\.grove/'), 'no upstream tracking was configured');
  for (const r of results) {
    assert.equal(git(path.join(repo, r.json.worktree_path), 'rev-parse', '--abbrev-ref', 'HEAD'), r.json.branch);
  }
});

test('worktree creation is serialised per project and runs in parallel across projects', async (t) => {
  const d = await daemon();
  const dir = makeTempDir(t);
  const started = path.join(dir, 'started');
  const release = path.join(dir, 'release');
  execFileSync('mkfifo', [started, release]);
  // A post-checkout hook that reports it runs, then waits to be released: it holds `git worktree add` open.
  const slow = makeRepo(t);
  const hook = path.join(slow, '.git', 'hooks', 'post-checkout');
  writeFileSync(hook, `#!/bin/sh\necho "$PWD" > '${started}'\nread x < '${release}'\nexit 0\n`);
  chmodSync(hook, 0o755);
  const fast = makeRepo(t);
  const pSlow = await addProject(d, slow);
  const pFast = await addProject(d, fast);

  const slow1 = d.socket('POST', '/api/tasks', { body: { project_id: pSlow.id, name: 'one' } });
  const inHook1 = (await readFile(started, 'utf8')).trim();
  assert.match(inHook1, /\/\.grove\/worktrees\/one$/);
  let slow2Done = false;
  const slow2 = d.socket('POST', '/api/tasks', { body: { project_id: pSlow.id, name: 'two' } }).then((r) => {
    slow2Done = true;
    return r;
  });

  // Another project is not held up by the blocked one.
  const other = await d.socket('POST', '/api/tasks', { body: { project_id: pFast.id, name: 'other' } });
  assert.equal(other.status, 201);
  assert.equal(slow2Done, false, 'the same project waits its turn');
  assert.equal(worktrees(slow).length, 2, 'only the first worktree of the blocked project exists');

  writeFileSync(release, 'go\n');
  assert.equal((await slow1).status, 201);
  const inHook2 = (await readFile(started, 'utf8')).trim();
  assert.match(inHook2, /\/\.grove\/worktrees\/two$/);
  writeFileSync(release, 'go\n');
  assert.equal((await slow2).status, 201);
});

test('by repository instead of project_id: a project of it on this host (an origin URL or its normalised form); both, neither or an unknown one refused', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const name = `placed-${path.basename(repo)}`;
  git(repo, 'remote', 'add', 'origin', `git@example.com:team/${name}.git`);
  const project = await addProject(d, repo);
  assert.equal(project.repository, `example.com/team/${name}`);
  for (const repository of [project.repository, `https://example.com/team/${name}`]) {
    const r = await d.socket('POST', '/api/tasks', { body: { repository, name: `by ${repository}` } });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.project_id, project.id);
  }
  const named = await d.socket('GET', '/api/hosts');
  const me = named.json.find((h: any) => h.id === project.host_id).name;
  assert.equal((await d.socket('POST', '/api/tasks', { body: { repository: project.repository, host: me, name: 'named' } })).status, 201);
  for (const [body, status, code] of [
    [{ repository: project.repository, project_id: project.id }, 400, 'VALIDATION_FAILED'],
    [{}, 400, 'VALIDATION_FAILED'],
    [{ project_id: project.id, host: me }, 400, 'VALIDATION_FAILED'],
    [{ repository: 'example.com/team/nobody-has-it' }, 404, 'NOT_FOUND'],
    [{ repository: project.repository, host: 'no-such-host' }, 404, 'NOT_FOUND'],
  ] as const) {
    const r = await d.socket('POST', '/api/tasks', { body: { name: 'refused', ...body } });
    assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
    assert.equal(r.json.code, code);
  }
});
