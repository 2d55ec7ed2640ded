import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { pino } from 'pino';
import { createBaseWatch, type BaseWatch } from '../../daemon/projects/base-watch.ts';
import { commitFile, git, makeRepo, makeTempDir } from '../helpers/git.ts';

function bases(t: test.TestContext): BaseWatch {
  const b = createBaseWatch({ log: pino({ level: 'silent' }) });
  t.after(() => b.close());
  return b;
}

// Runs `act`, and resolves at the first change of `root` told after it began.
function told(b: BaseWatch, root: string, what: string, act: () => void): Promise<void> {
  const change = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no change told: ${what}`));
    }, 10_000);
    const off = b.changes.onChange(root, () => {
      clearTimeout(timer);
      off();
      resolve();
    });
  });
  act();
  return change;
}

// A commit on `branch` made without its checkout, as a landing from another worktree does.
function moveElsewhere(repo: string, branch: string): void {
  const tip = git(repo, 'commit-tree', '-p', branch, '-m', 'elsewhere', `${branch}^{tree}`);
  git(repo, 'update-ref', `refs/heads/${branch}`, tip);
}

test('base watch: a commit on the checked-out branch is told', async (t) => {
  const b = bases(t);
  const repo = makeRepo(t);
  await b.watch(repo);
  await told(b, repo, 'a commit', () => commitFile(repo, 'a.txt'));
});

test('base watch: a branch moved from elsewhere, its ref packed by git gc, is told when it moves again', async (t) => {
  const b = bases(t);
  const repo = makeRepo(t);
  git(repo, 'pack-refs', '--all');
  assert.ok(!existsSync(path.join(repo, '.git', 'refs', 'heads', 'main')), 'main is in packed-refs only');
  await b.watch(repo);
  await told(b, repo, 'a move of a packed branch', () => moveElsewhere(repo, 'main'));
});

test('base watch: a checkout of another branch is told, and that branch is watched from then on', async (t) => {
  const b = bases(t);
  const repo = makeRepo(t);
  git(repo, 'branch', 'nested/other');
  await b.watch(repo);
  await told(b, repo, 'a checkout', () => git(repo, 'checkout', '-q', 'nested/other'));
  await b.watch(repo);
  await told(b, repo, 'a move of the branch checked out now', () => moveElsewhere(repo, 'nested/other'));
});

test('base watch: a project that is a linked worktree is told a commit on its branch (its refs are the main repository\'s)', async (t) => {
  const b = bases(t);
  const repo = makeRepo(t);
  const linked = path.join(makeTempDir(t), 'linked');
  git(repo, 'worktree', 'add', '-q', '-b', 'feature', linked);
  await b.watch(linked);
  await told(b, linked, 'a commit in the linked worktree', () => commitFile(linked, 'b.txt'));
});
