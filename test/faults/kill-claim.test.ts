import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import { addProject, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { git, makeRepo, makeTempDir } from '../helpers/git.ts';
import { until } from '../helpers/store.ts';
import { repoState, waitPidGone } from '../helpers/state.ts';

// A warm pool claim (DESIGN §16) cut short by SIGKILL while `git branch -m` renames the slot's
// placeholder branch to the task's. The repository's reference-transaction hook stops that
// rename at `phase` (the placeholder's deletion, `prepared` or `committed`) until the test lets
// it go on, or makes it fail; other ref changes pass.
async function killMidClaim(t: test.TestContext, phase: 'prepared' | 'committed', then: 'go' | 'abort') {
  const dir = makeTempDir(t);
  const [armed, started, release, gitPid] = ['armed', 'started', 'release', 'git-pid'].map((f) => path.join(dir, f)) as [string, string, string, string];
  execFileSync('mkfifo', [started, release]);
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ ports: [3000], pool: { size: 1 } }) } });
  const hook = path.join(repo, '.git', 'hooks', 'reference-transaction');
  writeFileSync(
    hook,
    `#!/bin/sh
[ -e '${armed}' ] && [ "$1" = "$(cat '${armed}')" ] || exit 0
case "$(cat)" in *" 0000000000000000000000000000000000000000 refs/heads/grove/pool-"*) ;; *) exit 0;; esac
echo $PPID > '${gitPid}'
echo in > '${started}'
read x < '${release}'
[ "$x" = go ]
`,
  );
  chmodSync(hook, 0o755);
  const d1 = await startDaemon(t);
  const project = await addProject(d1, repo);
  const [slot] = await readySlots(d1, project.id);
  const placeholder = `grove/pool-${slot.id.slice(0, 8)}`;
  const whole = repoState(repo);
  assert.deepEqual(whole.branches, ['main', placeholder].sort());

  writeFileSync(armed, phase);
  const pending = d1.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'cut short' } }).catch((e: Error) => e);
  await readFile(started, 'utf8');
  assert.equal(await d1.stop('SIGKILL'), 'SIGKILL');
  assert.ok((await pending) instanceof Error, 'the request died with the daemon');
  // git goes on (or fails) on its own after the daemon is gone: the fault leaves real debris.
  writeFileSync(release, `${then}\n`);
  await waitPidGone(Number(readFileSync(gitPid, 'utf8')));
  rmSync(armed);
  return { d1, repo, project, slot, placeholder, whole };
}

function readySlots(d: TestDaemon, projectId: string): Promise<any[]> {
  return until(async () => {
    const { slots } = (await d.socket('GET', `/api/projects/${projectId}/pool`)).json;
    return slots.length === 1 && slots[0].status === 'ready' && slots;
  }, 'a ready slot', 60_000);
}

// After the restart: the same slot, whole (its placeholder branch, worktree, ports), no task; and
// a claim by the same name gets it with the name's own branch (no -2).
async function slotIsWhole(d2: TestDaemon, s: Awaited<ReturnType<typeof killMidClaim>>) {
  const [slot] = await readySlots(d2, s.project.id);
  assert.equal(slot.id, s.slot.id, 'the slot is kept, not made again');
  assert.deepEqual(repoState(s.repo), s.whole);
  assert.equal(git(path.join(s.repo, '.grove', 'worktrees', `pool-${slot.id.slice(0, 8)}`), 'symbolic-ref', '--short', 'HEAD'), s.placeholder);
  assert.deepEqual((await d2.socket('GET', `/api/tasks?project_id=${s.project.id}`)).json, []);
  const again = await d2.socket('POST', '/api/tasks', { body: { project_id: s.project.id, name: 'cut short' } });
  assert.equal(again.status, 201, again.text);
  assert.equal(again.json.id, s.slot.id);
  assert.equal(again.json.pooled, true);
  assert.equal(again.json.branch, 'grove/cut-short');
  assert.equal(git(path.join(s.repo, again.json.worktree_path), 'symbolic-ref', '--short', 'HEAD'), 'grove/cut-short');
  // Branches only: the refill the claim started may be inside `git worktree add` right now.
  assert.equal(git(s.repo, 'branch', '--list', s.placeholder), '', 'the placeholder branch is gone');
  // The refill the claim started ends before the repository is removed.
  const [next] = await readySlots(d2, s.project.id);
  assert.notEqual(next.id, s.slot.id);
  await d2.stop();
}

test('a daemon killed after `git branch -m` renamed a claimed slot, before the row became the task: the next start names the branch back and the slot is whole', async (t) => {
  const s = await killMidClaim(t, 'committed', 'go');
  assert.deepEqual(repoState(s.repo).branches, ['grove/cut-short', 'main'], 'the rename happened: a branch without its task');
  const d2 = await startDaemon(t, { home: s.d1.home });
  await d2.waitForLog((l) => l.msg === 'undid a warm pool claim interrupted by a daemon stop' && l.branch === 'grove/cut-short', 60_000);
  await slotIsWhole(d2, s);
});

test('a daemon killed before `git branch -m` renamed a claimed slot (the rename then failed): the next start frees the slot as it is', async (t) => {
  const s = await killMidClaim(t, 'prepared', 'abort');
  assert.deepEqual(repoState(s.repo), s.whole, 'the rename did not happen');
  const d2 = await startDaemon(t, { home: s.d1.home });
  await slotIsWhole(d2, s);
});
