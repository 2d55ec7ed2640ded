import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, closeSync, constants, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, sharedDaemon, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { git, makeRepo, makeTempDir } from '../helpers/git.ts';
import { waitPidGone } from '../helpers/state.ts';

// Every test makes its own repository: they share one daemon, but for the one that kills it.
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

async function newTask(d: TestDaemon, repo: string, name: string) {
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name } })).json;
  return { project, task, wt: path.join(repo, task.worktree_path) };
}

// Every file under a folder with its size, by path.
function filesUnder(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) out[path.relative(dir, path.join(e.parentPath, e.name))] = statSync(path.join(e.parentPath, e.name)).size;
  }
  return out;
}

test('reads (changes, diff, conflicts) of large changed and untracked files write nothing into the repository, and leave no scratch behind', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t, { files: { 'tracked.txt': 'start\n' } });
  const { project, task, wt } = await newTask(d, repo, 'grows');
  const objects = () => ({ counted: git(repo, 'count-objects', '-v'), files: filesUnder(path.join(repo, '.git', 'objects')) });
  const before = objects();
  for (let round = 0; round < 3; round++) {
    // An untracked file that grows, and a tracked one that changes, between reads.
    appendFileSync(path.join(wt, 'grows.bin'), randomBytes(2 * 1024 * 1024));
    writeFileSync(path.join(wt, 'tracked.txt'), `round ${round}\n`.repeat(100_000));
    for (const url of [`/api/tasks/${task.id}/changes`, `/api/tasks/${task.id}/diff`, `/api/projects/${project.id}/conflicts`]) {
      const r = await d.socket('GET', url);
      assert.equal(r.status, 200, `${url}: ${r.text.slice(0, 300)}`);
    }
  }
  const changes = (await d.socket('GET', `/api/tasks/${task.id}/changes`)).json;
  assert.deepEqual(
    changes.files.map((f: any) => [f.path, f.status]),
    [
      ['grows.bin', 'untracked'],
      ['tracked.txt', 'modified'],
    ],
    'the uncommitted work is seen',
  );
  assert.deepEqual(objects(), before, 'no object added to the repository');
  assert.deepEqual(readdirSync(path.join(d.home, 'data', 'scratch')), [], 'every read removed its scratch');
});

test('diff: textconv drivers are not run, so the served diff is what git apply takes', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t, { files: { '.gitattributes': '*.up diff=upper\n', 'f.up': 'one\ntwo\n' } });
  git(repo, 'config', 'diff.upper.textconv', "sed 's/^/TEXTCONV /'");
  const { task, wt } = await newTask(d, repo, 'textconv');
  writeFileSync(path.join(wt, 'f.up'), 'one\n2\n');
  writeFileSync(path.join(wt, 'g.up'), 'new\n');
  const r = await d.socket('GET', `/api/tasks/${task.id}/diff`);
  assert.equal(r.status, 200, r.text);
  assert.doesNotMatch(r.text, /TEXTCONV/);
  assert.match(r.text, /^-two\n\+2$/m);
  const changes = (await d.socket('GET', `/api/tasks/${task.id}/changes`)).json;
  assert.deepEqual(
    changes.files.map((f: any) => [f.path, f.additions, f.deletions]),
    [
      ['f.up', 1, 1],
      ['g.up', 1, 0],
    ],
  );
  const check = makeTempDir(t);
  execFileSync('git', ['clone', '-q', repo, check]);
  git(check, 'checkout', '-q', task.base_commit);
  const patch = path.join(makeTempDir(t), 'served.diff');
  writeFileSync(patch, r.text);
  git(check, 'apply', '--check', patch);
});

test('diff: one over 100 MB is read as a stream and cut at 10 MiB, with Grove-Diff-Truncated: true', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const { task, wt } = await newTask(d, repo, 'huge');
  const line = `${'y'.repeat(99)}\n`.repeat(280_000); // 28 MB
  for (let i = 0; i < 4; i++) writeFileSync(path.join(wt, `big${i}.txt`), line);
  const r = await d.socket('GET', `/api/tasks/${task.id}/diff`);
  assert.equal(r.status, 200, r.text.slice(0, 300));
  assert.equal(r.headers['grove-diff-truncated'], 'true');
  assert.equal(Buffer.byteLength(r.text), 10 * 1024 * 1024);
  assert.match(r.text, /^diff --git a\/big0\.txt b\/big0\.txt$/m);
  // The reads after it are answered as usual.
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}/changes`)).json.files.length, 4);
});

test('a tracked path that is a FIFO: changes, diff and conflicts answer 409 UNSUPPORTED_FILE naming it, without git internals', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t, { files: { 'pipe.txt': 'a file at first\n', 'other.txt': 'x\n' } });
  const { project, task, wt } = await newTask(d, repo, 'fifo');
  unlinkSync(path.join(wt, 'pipe.txt'));
  execFileSync('mkfifo', [path.join(wt, 'pipe.txt')]);
  for (const url of [`/api/tasks/${task.id}/changes`, `/api/tasks/${task.id}/diff`, `/api/projects/${project.id}/conflicts`]) {
    const r = await d.socket('GET', url);
    assert.equal(r.status, 409, `${url}: ${r.text}`);
    assert.equal(r.json.code, 'UNSUPPORTED_FILE', url);
    assert.match(r.json.detail, /"pipe\.txt"/, url);
    assert.doesNotMatch(r.json.detail, /fatal|error:|git |can only add|cannot hash/, url);
  }
  assert.deepEqual(readdirSync(path.join(d.home, 'data', 'scratch')), [], 'a failed read removed its scratch too');
});

test('diff ?path= naming a folder is refused (VALIDATION_FAILED at /query/path); a file in it is served', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t, { files: { 'src/a.txt': 'a\n', 'src/b.txt': 'b\n' } });
  const { task, wt } = await newTask(d, repo, 'folder');
  writeFileSync(path.join(wt, 'src', 'a.txt'), 'a2\n');
  mkdirSync(path.join(wt, 'lib'));
  writeFileSync(path.join(wt, 'lib', 'c.txt'), 'c\n');
  for (const folder of ['src', 'src/', 'lib']) {
    const r = await d.socket('GET', `/api/tasks/${task.id}/diff?path=${encodeURIComponent(folder)}`);
    assert.equal(r.status, 400, `${folder}: ${r.text}`);
    assert.equal(r.json.code, 'VALIDATION_FAILED');
    assert.deepEqual(r.json.errors.map((e: any) => e.path), ['/query/path']);
    assert.match(r.json.detail, /must name a file/);
  }
  const one = await d.socket('GET', `/api/tasks/${task.id}/diff?path=src/a.txt`);
  assert.equal(one.status, 200);
  assert.deepEqual(one.text.match(/^diff --git .*$/gm), ['diff --git a/src/a.txt b/src/a.txt']);
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}/diff?path=gone.txt`)).text, '', 'a path with no change has an empty diff');
});

// Files under `dir` that hold a git index (they start with "DIRC"), with their modes.
function indexFiles(dir: string): Array<{ file: string; mode: number }> {
  const found: Array<{ file: string; mode: number }> = [];
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const file = path.join(e.parentPath, e.name);
    const head = Buffer.alloc(4);
    const fd = openSync(file, 'r');
    readSync(fd, head, 0, 4, 0);
    closeSync(fd);
    if (head.toString('latin1') === 'DIRC') found.push({ file, mode: statSync(file).mode & 0o777 });
  }
  return found;
}

// Every folder from `dir` down to `file`'s, with their modes.
function foldersTo(dir: string, file: string): number[] {
  const modes: number[] = [];
  for (let d = path.dirname(file); d.startsWith(dir) && d !== path.dirname(dir); d = path.dirname(d)) modes.push(statSync(d).mode & 0o777);
  return modes;
}

test('index copies of a read or commit are private, in the data folder: none in the temporary folder, even after a kill -9; the next start removes what was left', async (t) => {
  const dir = makeTempDir(t);
  const tmp = path.join(dir, 'tmp');
  mkdirSync(tmp);
  const [started, release, armed, gitPid] = ['started', 'release', 'armed', 'git-pid'].map((f) => path.join(dir, f)) as [string, string, string, string];
  execFileSync('mkfifo', [started, release]);
  // Should an assertion fail while something is held, let it go rather than leave it waiting.
  t.after(() => {
    try {
      const fd = openSync(release, constants.O_WRONLY | constants.O_NONBLOCK);
      writeSync(fd, 'go\n');
      closeSync(fd);
    } catch {
      // nothing waits
    }
  });
  const repo = makeRepo(t, { files: { '.gitattributes': '*.hold filter=hold\n', 'x.hold': 'x\n', 'a.txt': 'a\n' } });
  // A clean filter that, once armed, holds the git that runs it until released.
  git(repo, 'config', 'filter.hold.clean', `if [ -e '${armed}' ]; then echo $PPID > '${gitPid}'; echo in > '${started}'; read x < '${release}'; fi; cat`);
  const d1 = await startDaemon(t, { env: { TMPDIR: tmp } });
  const { task, wt } = await newTask(d1, repo, 'held');
  const scratch = path.join(d1.home, 'data', 'scratch');
  const privateOnly = (what: string) => {
    assert.deepEqual(indexFiles(tmp), [], `${what}: no index copy in the temporary folder`);
    const copies = indexFiles(scratch);
    assert.ok(copies.length > 0, `${what}: the index copy is in the scratch folder`);
    for (const c of copies) assert.deepEqual(foldersTo(scratch, c.file), foldersTo(scratch, c.file).map(() => 0o700), `${what}: ${c.file} is in private folders`);
    return copies;
  };

  // A commit held in its pre-commit hook: its backup of the index is private (0600).
  const hook = path.join(repo, '.git', 'hooks', 'pre-commit');
  writeFileSync(hook, `#!/bin/sh\necho in > '${started}'\nread x < '${release}'\n`);
  chmodSync(hook, 0o755);
  writeFileSync(path.join(wt, 'a.txt'), 'a2\n');
  const commit = d1.socket('POST', `/api/tasks/${task.id}/commit`, { body: { message: 'held' } });
  await readFile(started, 'utf8');
  for (const c of privateOnly('commit')) assert.equal(c.mode, 0o600, c.file);
  writeFileSync(release, 'go\n');
  assert.equal((await commit).status, 201);
  rmSync(hook);

  // A read held by the filter; the daemon and its git are killed with SIGKILL.
  writeFileSync(armed, '');
  writeFileSync(path.join(wt, 'x.hold'), 'x2\n');
  const read = d1.socket('GET', `/api/tasks/${task.id}/diff`).catch((e: Error) => e);
  await readFile(started, 'utf8');
  privateOnly('read');
  assert.equal(await d1.stop('SIGKILL'), 'SIGKILL');
  const held = Number(readFileSync(gitPid, 'utf8'));
  process.kill(held, 'SIGKILL');
  writeFileSync(release, 'go\n');
  await waitPidGone(held);
  assert.ok((await read) instanceof Error, 'the read died with the daemon');
  assert.ok(readdirSync(scratch).length > 0, 'the kill left debris in the scratch folder');
  assert.deepEqual(indexFiles(tmp), []);

  unlinkSync(armed);
  const d2 = await startDaemon(t, { home: d1.home, env: { TMPDIR: tmp } });
  assert.deepEqual(readdirSync(scratch), [], 'the next start emptied the scratch folder');
  assert.equal(statSync(scratch).mode & 0o777, 0o700);
  const r = await d2.socket('GET', `/api/tasks/${task.id}/changes`);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(
    r.json.files.map((f: any) => f.path),
    ['a.txt', 'x.hold'],
  );
});
