import assert from 'node:assert/strict';
import { chmodSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test, { type TestContext } from 'node:test';
import { addProject, makeHome, startDaemon, type TestDaemon } from './helpers/daemon.ts';
import { git, makeRepo, makeTempDir } from './helpers/git.ts';
import { consistentState, gone, marker, processesMatching } from './helpers/state.ts';
import { until } from './helpers/store.ts';
import { within } from './helpers/within.ts';

const gitPath = (dir: string, what: string) => git(dir, 'rev-parse', '--path-format=absolute', '--git-path', what);

// A daemon whose git runs under a 1 s git_timeout_s.
async function daemon(t: TestContext): Promise<TestDaemon> {
  const home = makeHome(t);
  writeFileSync(path.join(home, 'config.json'), JSON.stringify({ git_timeout_s: 1 }));
  return startDaemon(t, { home });
}

// A smudge filter for the repository's `pattern` that sleeps (its marker in the process table)
// while `hang` exists; `once` makes it hang a single time (it removes the file as it starts).
function slowSmudge(t: TestContext, repo: string, m: string, opts: { once: boolean }) {
  const dir = makeTempDir(t);
  const hang = path.join(dir, 'hang');
  const script = path.join(dir, 'smudge');
  writeFileSync(script, `#!/bin/sh\nif [ -e '${hang}' ]; then ${opts.once ? `rm -f '${hang}'; ` : ''}sleep ${m}; fi\nexec cat\n`);
  chmodSync(script, 0o755);
  git(repo, 'config', 'filter.slow.smudge', script);
  return { on: () => writeFileSync(hang, ''), off: () => rmSync(hang, { force: true }) };
}

// Nothing half-done in a checkout: no rebase or merge state, no lock file git left.
function settled(...dirs: string[]): void {
  for (const dir of dirs) {
    for (const what of ['rebase-merge', 'rebase-apply', 'MERGE_HEAD', 'index.lock', 'HEAD.lock']) {
      assert.ok(!existsSync(gitPath(dir, what)), `${what} left in ${dir}`);
    }
  }
}

test('a rebase whose abort hangs in a smudge filter answers GIT_TIMEOUT; what it left is put right before the next rebase', { timeout: 120_000 }, async (t) => {
  const d = await daemon(t);
  const m = marker(t);
  const repo = makeRepo(t, { files: { '.gitattributes': '*.txt filter=slow\n', 'a.txt': 'a\n' } });
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'hung-abort' } })).json;
  const wt = path.join(repo, task.worktree_path);
  writeFileSync(path.join(wt, 'c.txt'), 'c\n');
  git(wt, 'add', 'c.txt');
  git(wt, 'commit', '-qm', 'task work');
  const head = git(wt, 'rev-parse', 'HEAD');
  writeFileSync(path.join(repo, 'b.txt'), 'b\n');
  git(repo, 'add', 'b.txt');
  git(repo, 'commit', '-qm', 'base moves on');
  // Every file written out hangs: the rebase's checkout of the base, then its abort's of the task's files.
  const filter = slowSmudge(t, repo, m, { once: false });
  filter.on();

  const started = Date.now();
  const r = await within(20_000, 'the rebase', d.socket('POST', `/api/tasks/${task.id}/rebase`));
  t.diagnostic(`answered ${r.status} after ${Date.now() - started} ms`);
  assert.equal(r.status, 504, r.text);
  assert.equal(r.json.code, 'GIT_TIMEOUT');
  assert.match(r.json.detail, /^the rebase took longer than git_timeout_s \(1 s\) and was stopped; what it had begun could not be put right yet/);
  await gone(m);
  assert.equal(existsSync(gitPath(wt, 'index.lock')), false, 'no index.lock is left');
  assert.equal(git(wt, 'rev-parse', `refs/heads/${task.branch}`), head, 'the branch has not moved');

  // The task's turn was given back, and the next rebase first puts right what the last one left.
  filter.off();
  const again = await within(20_000, 'the next rebase', d.socket('POST', `/api/tasks/${task.id}/rebase`));
  assert.equal(again.status, 200, again.text);
  assert.equal(git(wt, 'symbolic-ref', 'HEAD'), `refs/heads/${task.branch}`);
  assert.equal(git(wt, 'rev-parse', 'HEAD~1'), git(repo, 'rev-parse', 'main'), 'rebased onto the base');
  assert.equal(git(wt, 'status', '--porcelain'), '');
  settled(wt);
  const { problems } = await consistentState(d, repo, project.id);
  assert.deepEqual(problems, []);
  assert.ok(d.logs.some((l) => l?.msg === 'put right a landing that was interrupted' && l.outcome === 'undone'), 'the rebase left was undone');
});

test("a merge whose read-tree -u hangs in a smudge filter is stopped at git_timeout_s and undone; the project's task creation did not wait for it", { timeout: 120_000 }, async (t) => {
  const d = await daemon(t);
  const m = marker(t);
  const repo = makeRepo(t, { files: { '.gitattributes': '*.slow filter=slow\n', 'README.md': '# r\n' } });
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'hung-merge' } })).json;
  const wt = path.join(repo, task.worktree_path);
  // a.txt is written out before b.slow hangs: the base's checkout is left half-written.
  writeFileSync(path.join(wt, 'a.txt'), 'a\n');
  writeFileSync(path.join(wt, 'b.slow'), 'b\n');
  git(wt, 'add', '.');
  git(wt, 'commit', '-qm', 'task work');
  const old = git(repo, 'rev-parse', 'main');
  const filter = slowSmudge(t, repo, m, { once: true });
  filter.on();

  const merge = d.socket('POST', `/api/tasks/${task.id}/merge`, { body: {} });
  await until(() => processesMatching(m).length > 0, 'the merge reaches the filter');
  const created = await within(20_000, 'a task creation in the same project', d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'meanwhile' } }));
  assert.equal(created.status, 201, created.text);
  const r = await within(20_000, 'the merge', merge);
  assert.equal(r.status, 504, r.text);
  assert.equal(r.json.code, 'GIT_TIMEOUT');
  assert.match(r.json.detail, /^the merge took longer than git_timeout_s \(1 s\) and was stopped; grove then undid what it had begun$/);
  await gone(m);
  assert.equal(git(repo, 'rev-parse', 'main'), old, 'the base has not moved');
  assert.equal(git(repo, 'status', '--porcelain'), '', 'the base checkout is as it was');
  assert.equal(existsSync(path.join(repo, 'a.txt')), false, "the merge's file written out before the stop was taken back");
  settled(repo);
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}`)).json.merged_commit, null);

  // The filter is quick now: the merge goes through.
  const again = await within(20_000, 'the next merge', d.socket('POST', `/api/tasks/${task.id}/merge`, { body: {} }));
  assert.equal(again.status, 200, again.text);
  assert.equal(git(repo, 'rev-parse', 'main'), again.json.commit);
  assert.equal(git(repo, 'status', '--porcelain'), '');
  settled(repo);
  const { problems } = await consistentState(d, repo, project.id);
  assert.deepEqual(problems, []);
});
