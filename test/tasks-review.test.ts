import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, sharedDaemon, type TestDaemon } from './helpers/daemon.ts';
import { git, makeRepo, makeTempDir } from './helpers/git.ts';

const daemon = sharedDaemon();

// A project (with a .gitignore) and a ready task whose worktree has every kind of change: a
// committed edit and rename, an uncommitted edit and deletion, an untracked text and binary
// file, an ignored file; and a base that moved on by one commit.
async function reviewed(t: test.TestContext, d: TestDaemon) {
  const repo = makeRepo(t, { files: { '.gitignore': '*.log\n', 'a.txt': 'a\n', 'b.txt': 'b1\nb2\n', 'c.txt': 'c\n', 'd.txt': 'rename me\n'.repeat(20) } });
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'review' } })).json;
  const wt = path.join(repo, task.worktree_path);
  writeFileSync(path.join(wt, 'a.txt'), 'a\nmore\n');
  git(wt, 'mv', 'd.txt', 'e.txt');
  git(wt, 'commit', '-qam', 'edit a, rename d');
  writeFileSync(path.join(wt, 'b.txt'), 'b1\n');
  unlinkSync(path.join(wt, 'c.txt'));
  writeFileSync(path.join(wt, 'new.txt'), 'fresh\n');
  writeFileSync(path.join(wt, 'bin.dat'), Buffer.from([0, 1, 2, 0, 255]));
  writeFileSync(path.join(wt, 'debug.log'), 'ignored\n');
  writeFileSync(path.join(repo, 'base.txt'), 'base moved\n');
  git(repo, 'add', 'base.txt');
  git(repo, 'commit', '-qm', 'base moves on');
  return { repo, task, wt };
}

// `git status --porcelain`, untrimmed (its first column may be a space).
const porcelain = (wt: string, ...more: string[]) => execFileSync('git', ['-C', wt, 'status', '--porcelain', ...more], { encoding: 'utf8' });

// What a read must leave as it was: refs, the worktree's index, and its status.
function state(repo: string, wt: string) {
  const index = execFileSync('git', ['-C', wt, 'rev-parse', '--path-format=absolute', '--git-path', 'index'], { encoding: 'utf8' }).trim();
  return { refs: git(repo, 'for-each-ref'), index: readFileSync(index).toString('base64') };
}

test('changes: committed, uncommitted, untracked, renamed, deleted and binary files since the merge-base; ahead, behind; nothing touched', async (t) => {
  const d = await daemon();
  const { repo, task, wt } = await reviewed(t, d);
  const before = state(repo, wt);
  const r = await d.tcp('GET', `/api/tasks/${task.id}/changes`);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(state(repo, wt), before, 'no ref and no index changed');
  const c = r.json;
  assert.equal(c.base, task.base);
  assert.equal(c.merge_base, task.base_commit);
  assert.equal(c.head, git(wt, 'rev-parse', 'HEAD'));
  assert.equal(c.ahead, 1);
  assert.equal(c.behind, 1);
  assert.equal(c.uncommitted, 4, 'b.txt, c.txt, new.txt, bin.dat');
  const byPath = Object.fromEntries(c.files.map((f: any) => [f.path, f]));
  assert.deepEqual(Object.keys(byPath).sort(), ['a.txt', 'b.txt', 'bin.dat', 'c.txt', 'e.txt', 'new.txt']);
  assert.deepEqual(byPath['a.txt'], { path: 'a.txt', status: 'modified', additions: 1, deletions: 0, binary: false });
  assert.deepEqual(byPath['b.txt'], { path: 'b.txt', status: 'modified', additions: 0, deletions: 1, binary: false });
  assert.deepEqual(byPath['c.txt'], { path: 'c.txt', status: 'deleted', additions: 0, deletions: 1, binary: false });
  assert.deepEqual(byPath['e.txt'], { path: 'e.txt', old_path: 'd.txt', status: 'renamed', additions: 0, deletions: 0, binary: false });
  assert.deepEqual(byPath['new.txt'], { path: 'new.txt', status: 'untracked', additions: 1, deletions: 0, binary: false });
  assert.deepEqual(byPath['bin.dat'], { path: 'bin.dat', status: 'untracked', additions: 0, deletions: 0, binary: true });
  assert.equal(porcelain(wt), ' M b.txt\n D c.txt\n?? bin.dat\n?? new.txt\n', 'the worktree as it was');
});

test('diff: the unified diff of the same, which git apply takes on the merge-base (untracked and binary included); one file with ?path=', async (t) => {
  const d = await daemon();
  const { repo, task, wt } = await reviewed(t, d);
  const before = state(repo, wt);
  const r = await d.socket('GET', `/api/tasks/${task.id}/diff`);
  assert.equal(r.status, 200);
  assert.match(r.headers['content-type'] as string, /^text\/x-diff/);
  assert.equal(r.headers['grove-diff-truncated'], undefined);
  assert.deepEqual(state(repo, wt), before);
  assert.match(r.text, /^diff --git a\/a\.txt b\/a\.txt$/m);
  assert.match(r.text, /^rename from d\.txt$/m);
  assert.match(r.text, /^GIT binary patch$/m);
  assert.doesNotMatch(r.text, /debug\.log/, 'ignored files are not part of it');
  // Applied to a checkout of the merge-base, it gives the worktree's files.
  const check = makeTempDir(t);
  execFileSync('git', ['clone', '-q', repo, check]);
  git(check, 'checkout', '-q', task.base_commit);
  writeFileSync(path.join(check, '..', `${path.basename(check)}.diff`), r.text);
  git(check, 'apply', '--index', path.join(check, '..', `${path.basename(check)}.diff`));
  for (const f of ['a.txt', 'b.txt', 'e.txt', 'new.txt', 'bin.dat']) assert.deepEqual(readFileSync(path.join(check, f)), readFileSync(path.join(wt, f)), f);
  assert.throws(() => readFileSync(path.join(check, 'c.txt')), 'deleted');
  rmSync(path.join(check, '..', `${path.basename(check)}.diff`));

  const one = await d.tcp('GET', `/api/tasks/${task.id}/diff?path=b.txt`);
  assert.equal(one.status, 200);
  assert.deepEqual(one.text.match(/^diff --git .*$/gm), ['diff --git a/b.txt b/b.txt']);
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}/diff?path=*.txt`)).text, '', 'a path is literal, not a pattern');
});

test('diff: over 10 MiB it is cut there, with Grove-Diff-Truncated: true', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'huge' } })).json;
  writeFileSync(path.join(repo, task.worktree_path, 'big.txt'), `${'x'.repeat(99)}\n`.repeat(110_000)); // 11 MB
  const r = await d.socket('GET', `/api/tasks/${task.id}/diff`);
  assert.equal(r.status, 200);
  assert.equal(r.headers['grove-diff-truncated'], 'true');
  assert.equal(Buffer.byteLength(r.text), 10 * 1024 * 1024);
  assert.match(r.text, /^diff --git a\/big\.txt b\/big\.txt$/m);
});

test('commit: everything uncommitted, untracked included and ignored excluded; NOTHING_TO_COMMIT; a refusing hook leaves the index as it was', async (t) => {
  const d = await daemon();
  const { repo, task, wt } = await reviewed(t, d);
  // A hook that refuses: git's message comes back, and the index is as it was.
  git(wt, 'add', 'b.txt'); // something staged, something not
  const staged = porcelain(wt);
  const hook = path.join(repo, '.git', 'hooks', 'pre-commit');
  writeFileSync(hook, '#!/bin/sh\necho "no commits today" >&2\nexit 1\n');
  chmodSync(hook, 0o755);
  const refused = await d.socket('POST', `/api/tasks/${task.id}/commit`, { body: { message: 'all of it' } });
  assert.equal(refused.status, 422, refused.text);
  assert.equal(refused.json.code, 'COMMIT_FAILED');
  assert.match(refused.json.detail, /no commits today/);
  assert.equal(porcelain(wt), staged);
  renameSync(hook, `${hook}.off`);

  const head = git(wt, 'rev-parse', 'HEAD');
  const r = await d.tcp('POST', `/api/tasks/${task.id}/commit`, { body: { message: 'all of it\n\nwith a body' } });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.commit, git(repo, 'rev-parse', task.branch));
  assert.deepEqual(r.json.files.sort(), ['b.txt', 'bin.dat', 'c.txt', 'new.txt']);
  assert.equal(git(wt, 'rev-parse', 'HEAD^'), head);
  assert.equal(git(wt, 'log', '-1', '--format=%B'), 'all of it\n\nwith a body');
  assert.equal(porcelain(wt, '--ignored'), '!! debug.log\n', 'clean but for the ignored file');

  const again = await d.socket('POST', `/api/tasks/${task.id}/commit`, { body: { message: 'more' } });
  assert.equal(again.status, 409);
  assert.equal(again.json.code, 'NOTHING_TO_COMMIT');
  for (const body of [{}, { message: '' }, { message: '   ' }, { message: 'x', extra: 1 }]) {
    assert.equal((await d.socket('POST', `/api/tasks/${task.id}/commit`, { body })).json.code, 'VALIDATION_FAILED', JSON.stringify(body));
  }
  assert.equal(git(repo, 'rev-parse', task.branch), r.json.commit, 'nothing more committed');
});

test('review of an archived, unknown or malformed task: 409, 404, 400', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'gone' } })).json;
  assert.equal((await d.socket('DELETE', `/api/tasks/${task.id}`)).status, 200);
  for (const [method, url] of [
    ['GET', 'changes'],
    ['GET', 'diff'],
    ['POST', 'commit'],
  ] as const) {
    const body = method === 'POST' ? { message: 'x' } : undefined;
    assert.equal((await d.socket(method, `/api/tasks/${task.id}/${url}`, { body })).json.code, 'TASK_NOT_READY', url);
    assert.equal((await d.socket(method, `/api/tasks/${crypto.randomUUID()}/${url}`, { body })).status, 404, url);
    assert.equal((await d.socket(method, `/api/tasks/nope/${url}`, { body })).json.code, 'INVALID_ID', url);
  }
});

test('reads (changes, diff, conflicts) racing an archive that removes the worktree answer 200 or TASK_NOT_READY, never a 500', async (t) => {
  const d = await daemon();
  // Many files: the removal and the reads take long enough to overlap.
  const repo = makeRepo(t, { files: Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`f${i}.txt`, `${i}\n`])) });
  const project = await addProject(d, repo);
  const seen = new Map<string, number>();
  for (let round = 0; round < 4; round++) {
    const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: `race ${round}` } })).json;
    writeFileSync(path.join(repo, task.worktree_path, 'f0.txt'), 'changed\n');
    let archiving = true;
    const archived = d.socket('DELETE', `/api/tasks/${task.id}?force=true`).finally(() => (archiving = false));
    const reads: Promise<void>[] = [];
    do {
      for (const url of [`/api/tasks/${task.id}/changes`, `/api/tasks/${task.id}/diff`, `/api/projects/${project.id}/conflicts`]) {
        reads.push(
          d.socket('GET', url).then((r) => {
            const key = `${r.status} ${r.json?.code ?? ''}`.trim();
            seen.set(key, (seen.get(key) ?? 0) + 1);
          }),
        );
      }
      await new Promise((resolve) => setImmediate(resolve));
    } while (archiving && reads.length < 400);
    assert.equal((await archived).status, 200);
    await Promise.all(reads);
  }
  assert.deepEqual([...seen.keys()].filter((k) => k !== '200' && k !== '409 TASK_NOT_READY'), [], `answers seen: ${JSON.stringify([...seen])}`);
});
