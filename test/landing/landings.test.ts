import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { writeIntent } from '../../daemon/journal/intents.ts';
import type { MergeIntent } from '../../schemas/journal.ts';
import { createLandingJournal } from '../../daemon/journal/landing.ts';
import { createLandings, touching } from '../../daemon/landing/landings.ts';
import { git } from '../helpers/git.ts';
import { taskParts } from '../helpers/tasks.ts';

test('tasks/landings: intents are put right by scope, never while their landing runs, at once after it fails', async (t) => {
  const parts = await taskParts(t);
  const journal = createLandingJournal(path.dirname(parts.journal.fileFor(randomUUID())));
  const landings = createLandings({ journal, pool: parts.pool, tasks: parts.tasks, log: parts.log, gitTimeoutS: 120 });

  // A project whose main checkout holds a merge staged on the old tip (read-tree ended, the ref not moved).
  async function stagedMerge() {
    const project = await parts.project();
    const repo = project.path;
    const old = git(repo, 'rev-parse', 'main');
    git(repo, 'checkout', '-q', '-b', 'feature');
    writeFileSync(path.join(repo, 'new.txt'), 'new\n');
    git(repo, 'add', 'new.txt');
    git(repo, 'commit', '-qm', 'feature');
    const next = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'checkout', '-q', 'main');
    git(repo, 'read-tree', '-m', '-u', old, next);
    const id = randomUUID();
    await parts.tasks.insert({ id, project_id: project.id, name: 'feature', branch: 'feature', worktree_path: '.grove/worktrees/feature/', base: 'main', base_commit: old, status: 'ready' }, {});
    const intent: MergeIntent = { kind: 'merge', task: id, repo, checkout: repo, ref: 'refs/heads/main', old, next };
    const file = journal.fileFor(id, 'merge');
    writeIntent(file, intent);
    return { repo, id, old, next, file };
  }

  await t.test('a settle outside its scope leaves an intent; one in scope finishes the merge and marks the task merged', async () => {
    const m = await stagedMerge();
    await landings.settle(touching(randomUUID(), path.join(m.repo, 'elsewhere')));
    assert.ok(existsSync(m.file));
    assert.equal(git(m.repo, 'rev-parse', 'main'), m.old);
    await landings.settle((i) => i.repo === m.repo);
    assert.ok(!existsSync(m.file));
    assert.equal(git(m.repo, 'rev-parse', 'main'), m.next);
    assert.equal((await parts.tasks.get(m.id))?.merged_commit, m.next);
  });

  await t.test("a landing's own intent is not recovered while it runs; after it fails, at once", async () => {
    const m = await stagedMerge();
    const res = await landings.run(m.file, async () => {
      await landings.settle(() => true);
      assert.ok(existsSync(m.file), 'left to its landing');
      assert.equal(git(m.repo, 'rev-parse', 'main'), m.old);
      return { ok: false as const, code: 'INTERNAL' as const, message: 'git was cut short' };
    });
    assert.equal(!res.ok && res.message, 'git was cut short; yet it had gone through, and grove completed it');
    assert.ok(!existsSync(m.file));
    assert.equal(git(m.repo, 'rev-parse', 'main'), m.next);
  });

  await t.test('one that cannot be put right refuses writes in its scope with LANDING_INTERRUPTED, and stays', async () => {
    const m = await stagedMerge();
    writeFileSync(path.join(m.repo, 'mine.txt'), 'staged by the user\n');
    git(m.repo, 'add', 'mine.txt');
    await assert.rejects(landings.settle((i) => i.repo === m.repo), { code: 'LANDING_INTERRUPTED' });
    assert.ok(existsSync(m.file));
    await landings.recoverAll(); // at start: logged, kept
    assert.ok(existsSync(m.file));
    git(m.repo, 'read-tree', m.old);
    await landings.recoverAll();
    assert.ok(!existsSync(m.file));
    assert.equal(git(m.repo, 'rev-parse', 'main'), m.old, 'undone');
    assert.equal((await parts.tasks.get(m.id))?.merged_commit, null);
  });
});
