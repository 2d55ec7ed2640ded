import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, startDaemon } from './helpers/daemon.ts';
import { branches, git, gitSucceeds, makeRepo, makeTempDir, worktrees } from './helpers/git.ts';

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
  for (let attempt = 0; attempt < 3 && failures === 0; attempt++) {
    const raw = cloneOf(t, origin);
    const codes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => run('git', ['-C', raw, 'worktree', 'add', '-q', '-b', `raw-${i}`, path.join(raw, 'wt', `${i}`), 'origin/main'])),
    );
    failures = codes.filter((c) => c !== 0).length;
  }
  assert.ok(failures > 0, 'raw parallel worktree adds on one repository fail');

  const d = await startDaemon(t);
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
  const d = await startDaemon(t);
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
