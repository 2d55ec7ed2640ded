import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, test } from 'node:test';
import { addProject, sharedDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { git, makeRepo, makeTempDir } from '../helpers/git.ts';
import { slowFilter } from '../helpers/filters.ts';
import { consistentState, gone, marker, processesMatching } from '../helpers/state.ts';
import { until } from '../helpers/store.ts';
import { within } from '../helpers/within.ts';

// The daemon's temporary folder is the file's own, so that no temporary index can be left unseen.
const tmp = mkdtempSync(path.join(tmpdir(), 'grove-land-tmp-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const daemon = sharedDaemon({ env: { TMPDIR: tmp } });

const porcelain = (dir: string) => execFileSync('git', ['-C', dir, 'status', '--porcelain'], { encoding: 'utf8' });
const gitPath = (dir: string, what: string) => git(dir, 'rev-parse', '--path-format=absolute', '--git-path', what);

// Nothing half-done in a checkout: no merge or rebase in progress, no lock file git left.
function settledCheckouts(...dirs: string[]): void {
  for (const dir of dirs) {
    for (const what of ['MERGE_HEAD', 'rebase-merge', 'rebase-apply', 'index.lock', 'HEAD.lock', 'CHERRY_PICK_HEAD']) {
      assert.ok(!existsSync(gitPath(dir, what)), `${what} left in ${dir}`);
    }
  }
}

// The same, and no temporary index left behind (by the daemon whose temporary folder is `tmp`).
function settled(...dirs: string[]): void {
  assert.deepEqual(readdirSync(tmp), [], 'no temporary index left');
  settledCheckouts(...dirs);
}

// A project whose main checkout has `main` checked out, and a ready task on it.
async function project(t: test.TestContext, d: TestDaemon, files: Record<string, string> = { 'f.txt': 'one\ntwo\nthree\n', 'g.txt': 'g\n' }) {
  const repo = makeRepo(t, { files });
  const p = await addProject(d, repo);
  const task = async (name: string) => {
    const tk = (await d.socket('POST', '/api/tasks', { body: { project_id: p.id, name } })).json;
    assert.equal(tk.status, 'ready');
    return { ...tk, wt: path.join(repo, tk.worktree_path) };
  };
  return { repo, p, task };
}

// Writes a file in a checkout and commits it there.
function commitFile(dir: string, file: string, text: string, message = `edit ${file}`): string {
  writeFileSync(path.join(dir, file), text);
  git(dir, 'add', file);
  git(dir, 'commit', '-qm', message);
  return git(dir, 'rev-parse', 'HEAD');
}

test('merge: a fast-forward, then a merge commit into the checked-out base, which moves with it and stays clean; merged_at and merged_commit', async (t) => {
  const d = await daemon();
  const { repo, task } = await project(t, d);
  const a = await task('first');
  const tip = commitFile(a.wt, 'new.txt', 'new\n');
  const r = await d.tcp('POST', `/api/tasks/${a.id}/merge`, { body: {} });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json, { base: 'main', commit: tip, strategy: 'merge' });
  assert.equal(git(repo, 'rev-parse', 'main'), tip, 'fast-forwarded');
  assert.equal(readFileSync(path.join(repo, 'new.txt'), 'utf8'), 'new\n', "the main checkout's files moved with it");
  assert.equal(porcelain(repo), '');
  const merged = (await d.socket('GET', `/api/tasks/${a.id}`)).json;
  assert.equal(merged.merged_commit, tip);
  assert.ok(merged.merged_at);

  // The base moves on; the next task's merge makes a merge commit, with no body at all.
  const b = await task('second');
  const bTip = commitFile(b.wt, 'g.txt', 'g changed\n');
  const baseTip = commitFile(repo, 'f.txt', 'one\ntwo\nthree\nfour\n');
  const m = await d.socket('POST', `/api/tasks/${b.id}/merge`);
  assert.equal(m.status, 200, m.text);
  assert.equal(git(repo, 'rev-parse', 'main'), m.json.commit);
  assert.equal(git(repo, 'rev-parse', 'main^1'), baseTip);
  assert.equal(git(repo, 'rev-parse', 'main^2'), bTip);
  assert.equal(git(repo, 'log', '-1', '--format=%s', 'main'), `Merge branch '${b.branch}' into main`);
  assert.equal(readFileSync(path.join(repo, 'g.txt'), 'utf8'), 'g changed\n');
  assert.equal(porcelain(repo), '');
  assert.equal(porcelain(b.wt), '');
  settled(repo, b.wt);
  // Merging again changes nothing.
  assert.equal((await d.socket('POST', `/api/tasks/${b.id}/merge`)).json.commit, m.json.commit);
});

test('merge: squash and ff; a dirty base checkout 409 with nothing moved; a base checked out nowhere moves alone; a conflict 409 with files', async (t) => {
  const d = await daemon();
  const { repo, task } = await project(t, d);
  const a = await task('squashed');
  commitFile(a.wt, 'a1.txt', '1\n');
  commitFile(a.wt, 'a2.txt', '2\n');
  const before = git(repo, 'rev-parse', 'main');
  // A dirty tracked file in the main checkout: refused, nothing moved, the edit kept.
  writeFileSync(path.join(repo, 'f.txt'), 'edited by hand\n');
  const dirty = await d.socket('POST', `/api/tasks/${a.id}/merge`, { body: { strategy: 'squash' } });
  assert.equal(dirty.status, 409, dirty.text);
  assert.equal(dirty.json.code, 'BASE_CHECKOUT_DIRTY');
  assert.equal(git(repo, 'rev-parse', 'main'), before);
  assert.equal(porcelain(repo), ' M f.txt\n');
  git(repo, 'checkout', '--', 'f.txt');

  const sq = await d.socket('POST', `/api/tasks/${a.id}/merge`, { body: { strategy: 'squash' } });
  assert.equal(sq.status, 200, sq.text);
  assert.equal(git(repo, 'rev-parse', 'main^'), before, 'one parent');
  assert.throws(() => git(repo, 'rev-parse', '--verify', '--quiet', 'main^2'));
  assert.match(git(repo, 'log', '-1', '--format=%B', 'main'), /^squashed\n\nSquashed from grove\/squashed:\n\* edit a1\.txt\n\* edit a2\.txt/);
  assert.ok(existsSync(path.join(repo, 'a2.txt')));

  // ff when the base moved on: refused, nothing changed.
  const b = await task('ff');
  commitFile(b.wt, 'b.txt', 'b\n');
  commitFile(repo, 'g.txt', 'base\n');
  const mainNow = git(repo, 'rev-parse', 'main');
  const ff = await d.socket('POST', `/api/tasks/${b.id}/merge`, { body: { strategy: 'ff' } });
  assert.equal(ff.status, 409);
  assert.equal(ff.json.code, 'CONFLICT');
  assert.equal(git(repo, 'rev-parse', 'main'), mainNow);

  // The base checked out nowhere (the main checkout on another branch): only the ref moves.
  const c = await task('lonely');
  assert.equal(c.base, 'main');
  const cTip = commitFile(c.wt, 'c.txt', 'c\n');
  git(repo, 'checkout', '-q', '-b', 'elsewhere');
  const lone = await d.socket('POST', `/api/tasks/${c.id}/merge`, { body: { strategy: 'ff' } });
  assert.equal(lone.status, 200, lone.text);
  assert.equal(git(repo, 'rev-parse', 'main'), cTip);
  assert.equal(git(repo, 'symbolic-ref', 'HEAD'), 'refs/heads/elsewhere');
  assert.ok(!existsSync(path.join(repo, 'c.txt')), "the other checkout's files are untouched");
  assert.equal(porcelain(repo), '');
  git(repo, 'checkout', '-q', 'main');

  // Both sides change the same line: 409 CONFLICT naming the file; refs and checkouts as they were.
  const e = await task('clash');
  commitFile(e.wt, 'f.txt', 'ONE\ntwo\nthree\n');
  commitFile(repo, 'f.txt', 'uno\ntwo\nthree\n');
  const refs = git(repo, 'for-each-ref');
  const clash = await d.socket('POST', `/api/tasks/${e.id}/merge`);
  assert.equal(clash.status, 409);
  assert.equal(clash.json.code, 'CONFLICT');
  assert.deepEqual(clash.json.files, ['f.txt']);
  assert.equal(git(repo, 'for-each-ref'), refs);
  assert.equal(porcelain(repo), '');
  assert.equal(porcelain(e.wt), '');
  settled(repo, e.wt);
  // Uncommitted work in the task: commit first.
  writeFileSync(path.join(e.wt, 'loose.txt'), 'x\n');
  assert.equal((await d.socket('POST', `/api/tasks/${e.id}/merge`)).json.code, 'WORKTREE_DIRTY');
  assert.equal((await d.socket('POST', `/api/tasks/${e.id}/merge`, { body: { strategy: 'rebase' } })).json.code, 'VALIDATION_FAILED');
});

test("merge into a base branch checked out in another task's worktree: that worktree moves with it and stays clean", async (t) => {
  const d = await daemon();
  const { repo, p, task } = await project(t, d);
  const a = await task('parent');
  commitFile(a.wt, 'parent.txt', 'parent\n');
  const b = (await d.socket('POST', '/api/tasks', { body: { project_id: p.id, name: 'child', base: a.branch } })).json;
  const bWt = path.join(repo, b.worktree_path);
  const tip = commitFile(bWt, 'child.txt', 'child\n');
  writeFileSync(path.join(a.wt, 'parent.txt'), 'dirty\n');
  assert.equal((await d.socket('POST', `/api/tasks/${b.id}/merge`)).json.code, 'BASE_CHECKOUT_DIRTY');
  git(a.wt, 'checkout', '--', 'parent.txt');
  const r = await d.socket('POST', `/api/tasks/${b.id}/merge`);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json, { base: a.branch, commit: tip, strategy: 'merge' });
  assert.equal(git(a.wt, 'rev-parse', 'HEAD'), tip);
  assert.equal(readFileSync(path.join(a.wt, 'child.txt'), 'utf8'), 'child\n');
  assert.equal(porcelain(a.wt), '');
  settled(a.wt, bWt);
});

test('rebase: onto the moved base; a conflict aborts it with the files and the branch as it was; uncommitted work is 409', async (t) => {
  const d = await daemon();
  const { repo, task } = await project(t, d);
  const a = await task('rebased');
  commitFile(a.wt, 'mine.txt', 'mine\n');
  const baseTip = commitFile(repo, 'g.txt', 'base moved\n');
  const r = await d.tcp('POST', `/api/tasks/${a.id}/rebase`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.id, a.id);
  assert.equal(git(a.wt, 'rev-parse', 'HEAD^'), baseTip);
  assert.equal(git(a.wt, 'log', '-1', '--format=%s'), 'edit mine.txt');
  assert.equal(readFileSync(path.join(a.wt, 'g.txt'), 'utf8'), 'base moved\n');
  assert.equal(porcelain(a.wt), '');

  const b = await task('clashing');
  const bTip = commitFile(b.wt, 'f.txt', 'mine\ntwo\nthree\n');
  commitFile(repo, 'f.txt', 'theirs\ntwo\nthree\n');
  const c = await d.socket('POST', `/api/tasks/${b.id}/rebase`);
  assert.equal(c.status, 409, c.text);
  assert.equal(c.json.code, 'CONFLICT');
  assert.deepEqual(c.json.files, ['f.txt']);
  assert.equal(git(b.wt, 'rev-parse', 'HEAD'), bTip);
  assert.equal(git(b.wt, 'symbolic-ref', 'HEAD'), `refs/heads/${b.branch}`);
  assert.equal(porcelain(b.wt), '');
  settled(b.wt, repo);

  writeFileSync(path.join(b.wt, 'f.txt'), 'uncommitted\n');
  assert.equal((await d.socket('POST', `/api/tasks/${b.id}/rebase`)).json.code, 'WORKTREE_DIRTY');
  assert.equal(git(b.wt, 'rev-parse', 'HEAD'), bTip);
});

test('push: to origin with upstream set; NO_REMOTE; REMOTE_FAILED with git\'s message; a remote asking for a password fails at once', async (t) => {
  const d = await daemon();
  const { repo, task } = await project(t, d);
  const a = await task('pushed');
  const tip = commitFile(a.wt, 'p.txt', 'p\n');
  const none = await d.socket('POST', `/api/tasks/${a.id}/push`, { body: {} });
  assert.equal(none.status, 422);
  assert.equal(none.json.code, 'NO_REMOTE');

  const bare = makeTempDir(t);
  git(bare, 'init', '-q', '--bare');
  git(repo, 'remote', 'add', 'origin', bare);
  const r = await d.tcp('POST', `/api/tasks/${a.id}/push`);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json, { remote: 'origin', branch: a.branch });
  assert.equal(git(bare, 'rev-parse', a.branch), tip);
  assert.equal(git(repo, 'config', `branch.${a.branch}.remote`), 'origin');
  assert.equal((await d.socket('POST', `/api/tasks/${a.id}/push`, { body: { remote: 'nope' } })).json.code, 'NO_REMOTE');

  git(repo, 'remote', 'add', 'gone', path.join(bare, 'no-such-repo'));
  const gone = await d.socket('POST', `/api/tasks/${a.id}/push`, { body: { remote: 'gone' } });
  assert.equal(gone.status, 502);
  assert.equal(gone.json.code, 'REMOTE_FAILED');
  assert.match(gone.json.detail, /does not appear to be a git repository|not found|Could not read/i);

  // An HTTP remote that wants a password: no prompt is waited for.
  const server = createServer((_req, res) => res.writeHead(401, { 'www-authenticate': 'Basic realm="grove test"' }).end());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  git(repo, 'remote', 'add', 'locked', `http://127.0.0.1:${(server.address() as AddressInfo).port}/repo.git`);
  const started = Date.now();
  const locked = await d.socket('POST', `/api/tasks/${a.id}/push`, { body: { remote: 'locked' } });
  assert.equal(locked.status, 502, locked.text);
  assert.ok(Date.now() - started < 30_000);
});

test('conflicts: pairs of tasks (uncommitted work included), a file where another has a folder, a folder renamed under another, a task against its newer base; reported exactly, nothing changed', async (t) => {
  const d = await daemon();
  const { repo, p, task } = await project(t, d, { 'f.txt': 'one\ntwo\nthree\n', 'g.txt': 'g1\ng2\n', 'h.txt': 'h\n', 'd/one': '1\n', 'd/two': '2\n' });
  const [t1, t2, t3, t4, t5, t6, t7, t8] = await Promise.all(['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight'].map(task));
  commitFile(t1!.wt, 'f.txt', 'ONE\ntwo\nthree\n');
  writeFileSync(path.join(t2!.wt, 'f.txt'), 'uno\ntwo\nthree\n'); // uncommitted
  commitFile(t3!.wt, 'g.txt', 'G1\ng2\n');
  writeFileSync(path.join(t4!.wt, 'h.txt'), 'h changed\n');
  commitFile(t5!.wt, 'zz', 'a file\n');
  mkdirSync(path.join(t6!.wt, 'zz'));
  commitFile(t6!.wt, 'zz/inner.txt', 'in a folder\n');
  git(t7!.wt, 'mv', 'd', 'e');
  git(t7!.wt, 'commit', '-qm', 'rename d to e');
  commitFile(t8!.wt, 'd/three', '3\n');
  commitFile(repo, 'g.txt', 'gee\ng2\n'); // the base moves on against t3
  const all = [repo, ...[t1, t2, t3, t4, t5, t6, t7, t8].map((x) => x!.wt)];
  const snapshot = () => ({
    refs: git(repo, 'for-each-ref'),
    status: all.map(porcelain),
    index: all.map((w) => readFileSync(gitPath(w, 'index')).toString('base64')),
    files: [t2!.wt, t4!.wt].map((w) => execFileSync('git', ['-C', w, 'diff'], { encoding: 'utf8' })),
  });
  const before = snapshot();
  const r = await d.tcp('GET', `/api/projects/${p.id}/conflicts`);
  assert.equal(r.status, 200, r.text);
  const got = r.json.map((c: any) => [c.task_id, c.with, c.files]);
  assert.deepEqual(got.slice(0, 2), [
    [t3!.id, 'base', ['g.txt']],
    [t1!.id, t2!.id, ['f.txt']],
  ]);
  assert.deepEqual(got.slice(2).map((c: any) => [c[0], c[1]]), [
    [t5!.id, t6!.id],
    [t7!.id, t8!.id],
  ]);
  assert.match(got[2][2].join(), /^zz/, 'the file/folder clash');
  assert.deepEqual(got[3][2], ['e/three'], 'the new file in a renamed folder');
  assert.deepEqual(snapshot(), before, 'no ref, index or file changed');
  settled(...all);
  assert.equal((await d.socket('GET', `/api/projects/${crypto.randomUUID()}/conflicts`)).status, 404);
});

test('a merge racing a commit and a rebase on the same task: each is answered, one at a time, and the branch is whole', async (t) => {
  const d = await daemon();
  const { repo, task } = await project(t, d);
  const a = await task('race');
  commitFile(a.wt, 'r1.txt', '1\n');
  writeFileSync(path.join(a.wt, 'r2.txt'), '2\n');
  commitFile(repo, 'g.txt', 'moved\n');
  const answers = await Promise.all([
    d.socket('POST', `/api/tasks/${a.id}/merge`),
    d.socket('POST', `/api/tasks/${a.id}/commit`, { body: { message: 'the rest' } }),
    d.socket('POST', `/api/tasks/${a.id}/rebase`),
  ]);
  for (const r of answers) assert.ok([200, 201, 409].includes(r.status), `${r.status} ${r.text}`);
  assert.equal(answers[1]!.status, 201, 'the commit always lands');
  settled(repo, a.wt);
  assert.equal(porcelain(a.wt), '');
  execFileSync('git', ['-C', repo, 'fsck', '--no-dangling'], { stdio: 'ignore' });
  assert.ok(git(a.wt, 'log', '--format=%s').includes('the rest'));
});

// A daemon whose git runs under a 1 s git_timeout_s, shared by the tests of its bounds.
// The bound counts from the request's arrival (a thread's start, the landing journal's check
// included): 3 s leaves git time to reach the hanging filter before it ends.
const gitBounded = sharedDaemon({ config: { git_timeout_s: 3 } });


test('a rebase whose abort hangs in a smudge filter answers GIT_TIMEOUT; what it left is put right before the next rebase', { timeout: 120_000 }, async (t) => {
  const d = await gitBounded();
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
  const filter = slowFilter(t, repo, 'smudge', m);
  filter.on();

  const started = Date.now();
  const r = await within(20_000, 'the rebase', d.socket('POST', `/api/tasks/${task.id}/rebase`));
  t.diagnostic(`answered ${r.status} after ${Date.now() - started} ms`);
  assert.equal(r.status, 504, r.text);
  assert.equal(r.json.code, 'GIT_TIMEOUT');
  assert.match(r.json.detail, /^the rebase took longer than git_timeout_s \(3 s\) and was stopped; what it had begun could not be put right yet/);
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
  settledCheckouts(wt);
  const { problems } = await consistentState(d, repo, project.id);
  assert.deepEqual(problems, []);
  assert.ok(d.logs.some((l) => l?.msg === 'put right a landing that was interrupted' && l.outcome === 'undone'), 'the rebase left was undone');
});

test("a merge whose read-tree -u hangs in a smudge filter is stopped at git_timeout_s and undone; the project's task creation did not wait for it", { timeout: 120_000 }, async (t) => {
  const d = await gitBounded();
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
  const filter = slowFilter(t, repo, 'smudge', m, { once: true });
  filter.on();

  const merge = d.socket('POST', `/api/tasks/${task.id}/merge`, { body: {} });
  await until(() => processesMatching(m).length > 0, 'the merge reaches the filter');
  const created = await within(20_000, 'a task creation in the same project', d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'meanwhile' } }));
  assert.equal(created.status, 201, created.text);
  const r = await within(20_000, 'the merge', merge);
  assert.equal(r.status, 504, r.text);
  assert.equal(r.json.code, 'GIT_TIMEOUT');
  assert.match(r.json.detail, /^the merge took longer than git_timeout_s \(3 s\) and was stopped; grove then undid what it had begun$/);
  await gone(m);
  assert.equal(git(repo, 'rev-parse', 'main'), old, 'the base has not moved');
  assert.equal(git(repo, 'status', '--porcelain'), '', 'the base checkout is as it was');
  assert.equal(existsSync(path.join(repo, 'a.txt')), false, "the merge's file written out before the stop was taken back");
  settledCheckouts(repo);
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}`)).json.merged_commit, null);

  // The filter is quick now: the merge goes through.
  const again = await within(20_000, 'the next merge', d.socket('POST', `/api/tasks/${task.id}/merge`, { body: {} }));
  assert.equal(again.status, 200, again.text);
  assert.equal(git(repo, 'rev-parse', 'main'), again.json.commit);
  assert.equal(git(repo, 'status', '--porcelain'), '');
  settledCheckouts(repo);
  const { problems } = await consistentState(d, repo, project.id);
  assert.deepEqual(problems, []);
});
