import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import { addProject, startDaemon } from '../helpers/daemon.ts';
import { makeRepo, makeTempDir } from '../helpers/git.ts';
import { consistentState, repoState, waitPidGone } from '../helpers/state.ts';

test('a daemon killed with SIGKILL inside `git worktree add` leaves a branch and worktree; the next start undoes them', async (t) => {
  const d1 = await startDaemon(t);
  const dir = makeTempDir(t);
  const started = path.join(dir, 'started');
  const release = path.join(dir, 'release');
  const gitPid = path.join(dir, 'git-pid');
  execFileSync('mkfifo', [started, release]);
  const repo = makeRepo(t);
  // The hook runs inside `git worktree add`, after the branch and the folder exist.
  const hook = path.join(repo, '.git', 'hooks', 'post-checkout');
  writeFileSync(hook, `#!/bin/sh\necho $PPID > '${gitPid}'\necho in > '${started}'\nread x < '${release}'\nexit 0\n`);
  chmodSync(hook, 0o755);
  const project = await addProject(d1, repo);

  const pending = d1.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'cut short' } }).catch((e: Error) => e);
  await readFile(started, 'utf8');
  assert.equal(await d1.stop('SIGKILL'), 'SIGKILL');
  assert.ok((await pending) instanceof Error, 'the request died with the daemon');
  const journal = path.join(d1.home, 'data', 'journal');
  assert.equal(readdirSync(journal).length, 1, 'the intent was written before git ran');

  // git finishes on its own after the daemon is gone: the fault leaves real debris.
  writeFileSync(release, 'go\n');
  await waitPidGone(Number(readFileSync(gitPid, 'utf8')));
  assert.deepEqual(repoState(repo), {
    branches: ['grove/cut-short', 'main'],
    worktrees: ['.grove/worktrees/cut-short/'],
    folders: ['cut-short'],
  });

  writeFileSync(hook, '#!/bin/sh\nexit 0\n');
  const d2 = await startDaemon(t, { home: d1.home });
  await d2.waitForLog((l) => l.msg === 'undid a task creation interrupted by a daemon stop' && l.branch === 'grove/cut-short');
  assert.deepEqual(repoState(repo), { branches: ['main'], worktrees: [], folders: [] });
  assert.deepEqual((await d2.socket('GET', '/api/tasks')).json, []);
  assert.deepEqual(readdirSync(journal), []);
  // The name is free again: no -2 suffix.
  const again = await d2.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'cut short' } });
  assert.equal(again.status, 201);
  assert.equal(again.json.branch, 'grove/cut-short');
  const { problems } = await consistentState(d2, repo, project.id);
  assert.deepEqual(problems, []);
});

test('SIGKILL at random moments during concurrent creations never leaves a stray branch, worktree, row or intent', async (t) => {
  const first = await startDaemon(t);
  const home = first.home;
  const repo = makeRepo(t, { files: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`f${i}.txt`, `${i}\n`])) });
  const project = await addProject(first, repo);
  await first.stop();
  // Kill points spread over the whole creation: before git, inside it, around the insert.
  const delays = [5, 40, 90, 150, 250, 400];
  const made: string[] = [];
  for (const [round, delay] of delays.entries()) {
    const d = await startDaemon(t, { home });
    const { problems } = await consistentState(d, repo, project.id);
    assert.deepEqual(problems, [], `after the kill of round ${round - 1}`);
    const posts = Array.from({ length: 6 }, (_, i) =>
      d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: `r${round} t${i}` } }).catch((e: Error) => e),
    );
    await new Promise((r) => setTimeout(r, delay));
    await d.stop('SIGKILL');
    const answered = (await Promise.all(posts)).filter((r) => !(r instanceof Error));
    // A 201 answered before the kill is a promise kept: that task must survive.
    for (const r of answered as any[]) if (r.status === 201) made.push(r.json.id);
  }
  const d = await startDaemon(t, { home });
  const { live, problems } = await consistentState(d, repo, project.id);
  assert.deepEqual(problems, []);
  const liveIds = new Set(live.map((x) => x.id));
  assert.deepEqual(made.filter((id) => !liveIds.has(id)), [], 'every task answered 201 survived');
});
