import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, sharedDaemon } from '../helpers/daemon.ts';
import { branches, git, gitSucceeds, makeRepo, makeTempDir, worktrees } from '../helpers/git.ts';
import { newSince } from '../helpers/since.ts';

// The tests share one daemon (each makes its own repository, and counts only the tasks it made).
const daemon = sharedDaemon();

test('branch and base values that are options, traversal or invalid refs are refused, creating nothing', async (t) => {
  const d = await daemon();
  const added = await newSince(d, '/api/tasks');
  // A folder of its own around the repository, so that nothing else writes beside it.
  const repo = makeRepo(t, { parent: makeTempDir(t) });
  const project = await addProject(d, repo);
  const before = readdirSync(path.dirname(repo)).sort();
  const cases: Array<[string, Record<string, string>, number, string]> = [
    ['branch option', { branch: '-x' }, 400, 'VALIDATION_FAILED'],
    ['branch long option', { branch: '--upload-pack=touch /tmp/pwned' }, 400, 'VALIDATION_FAILED'],
    ['branch traversal', { branch: '../x' }, 400, 'VALIDATION_FAILED'],
    ['branch traversal inside', { branch: 'a/../../x' }, 400, 'VALIDATION_FAILED'],
    ['branch range', { branch: 'a..b' }, 400, 'VALIDATION_FAILED'],
    ['branch .lock', { branch: 'x.lock' }, 400, 'VALIDATION_FAILED'],
    ['branch HEAD', { branch: 'HEAD' }, 400, 'VALIDATION_FAILED'],
    ['branch @{-1}', { branch: '@{-1}' }, 400, 'VALIDATION_FAILED'],
    ['branch space', { branch: 'a b' }, 400, 'VALIDATION_FAILED'],
    ['branch control char', { branch: 'a\u0001b' }, 400, 'VALIDATION_FAILED'],
    ['branch NUL', { branch: 'a\u0000b' }, 400, 'VALIDATION_FAILED'],
    ['branch trailing slash', { branch: 'feat/' }, 400, 'VALIDATION_FAILED'],
    ['branch colon', { branch: 'a:b' }, 400, 'VALIDATION_FAILED'],
    ['branch tilde', { branch: 'a~1' }, 400, 'VALIDATION_FAILED'],
    ['existing branch', { branch: 'main' }, 409, 'BRANCH_EXISTS'],
    ['base option', { base: '-x' }, 400, 'VALIDATION_FAILED'],
    ['base long option', { base: '--output=/tmp/pwned' }, 400, 'VALIDATION_FAILED'],
    ['base range', { base: 'main..main' }, 422, 'BASE_NOT_FOUND'],
    ['base traversal', { base: '../x' }, 422, 'BASE_NOT_FOUND'],
    ['base missing', { base: 'nope' }, 422, 'BASE_NOT_FOUND'],
    ['base path', { base: `${repo}/README.md` }, 422, 'BASE_NOT_FOUND'],
    ['base SQL-ish', { base: "main'; DROP TABLE tasks; --" }, 422, 'BASE_NOT_FOUND'],
  ];
  for (const [what, extra, status, code] of cases) {
    const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'x', ...extra } });
    assert.equal(r.status, status, `${what}: ${r.text}`);
    assert.equal(r.json.code, code, what);
  }
  assert.deepEqual(added((await d.socket('GET', '/api/tasks')).json), []);
  assert.deepEqual(branches(repo), ['main']);
  assert.deepEqual(worktrees(repo), [repo]);
  assert.deepEqual(readdirSync(path.dirname(repo)).sort(), before, 'nothing made beside the repository');
  assert.ok(!existsSync('/tmp/pwned'));
  assert.equal(git(repo, 'status', '--porcelain'), '');
});

test('hostile task names still yield a safe branch and folder', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const names: Array<[string, string]> = [
    ['../../etc/passwd; rm -rf ~ --force', 'etc-passwd-rm-rf-force'],
    ['--upload-pack=evil', 'upload-pack-evil'],
    ['Café Ünïcödé', 'cafe-unicode'],
    ['日本語', 'task'],
    ['a'.repeat(200), 'a'.repeat(48)],
    ['x.lock', 'x-lock'],
    ['HEAD', 'head'],
  ];
  for (const [name, slug] of names) {
    const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name } });
    assert.equal(r.status, 201, `${name}: ${r.text}`);
    assert.equal(r.json.name, name);
    assert.equal(r.json.branch, `grove/${slug}`);
    assert.equal(r.json.worktree_path, `.grove/worktrees/${slug}/`);
    assert.ok(gitSucceeds(repo, 'check-ref-format', '--branch', r.json.branch));
    assert.ok(existsSync(path.join(repo, r.json.worktree_path)));
  }
  assert.deepEqual(readdirSync(path.join(repo, '.grove', 'worktrees')).length, names.length);
});

test('collisions get -2, -3…: names differing in case, kept branches of archived tasks, feat vs feat/x', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  const post = (body: object) => d.socket('POST', '/api/tasks', { body: { project_id: project.id, ...body } });

  assert.equal((await post({ name: 'Feat' })).json.branch, 'grove/feat');
  assert.equal((await post({ name: 'feat' })).json.branch, 'grove/feat-2');
  const third = await post({ name: 'FEAT' });
  assert.equal(third.json.branch, 'grove/feat-3');
  assert.equal(third.json.worktree_path, '.grove/worktrees/feat-3/');
  // An archived task keeps its branch, so the name stays taken.
  assert.equal((await d.socket('DELETE', `/api/tasks/${third.json.id}`)).json.status, 'archived');
  assert.equal((await post({ name: 'feat' })).json.branch, 'grove/feat-4');
  // A 48-character slug keeps its suffix within 48 characters.
  const long = 'b'.repeat(60);
  await post({ name: long });
  const second = await post({ name: long });
  assert.equal(second.json.branch, `grove/${'b'.repeat(46)}-2`);

  // Explicit branches: `feat/x` blocks `feat` and the other way round.
  git(repo, 'branch', 'feat/x');
  const blocked = await post({ name: 'y', branch: 'feat' });
  assert.equal(blocked.status, 409);
  assert.equal(blocked.json.code, 'BRANCH_EXISTS');
  git(repo, 'branch', 'solo');
  const under = await post({ name: 'z', branch: 'solo/sub' });
  assert.equal(under.status, 409);
  assert.equal(under.json.code, 'BRANCH_EXISTS');
  // A grove/<slug>/… branch made by hand pushes the default branch name on.
  git(repo, 'branch', 'grove/bar/baz');
  assert.equal((await post({ name: 'bar' })).json.branch, 'grove/bar-2');
  assert.ok(!branches(repo).includes('y') && !branches(repo).includes('feat'));
});

test('a repository without commits cannot have tasks: 422 BASE_NOT_FOUND', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const empty = path.join(repo, 'nested-empty');
  git(repo, 'init', '-q', '-b', 'main', empty);
  const project = await addProject(d, empty);
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'x' } });
  assert.equal(r.status, 422);
  assert.equal(r.json.code, 'BASE_NOT_FOUND');
  assert.deepEqual(worktrees(empty), [empty]);
});

test('explicit branches differing only in case, and feat vs feat/x made by grove: separate folders or a clean 409', async (t) => {
  const d = await daemon();
  const added = await newSince(d, '/api/tasks');
  // A folder of its own around the repository, so that anything made beside it shows.
  const parent = makeTempDir(t);
  const runs = path.join(parent, 'setup-runs');
  const repo = makeRepo(t, { parent, files: { '.grove.json': JSON.stringify({ setup: [`printf '%s\\n' "$GROVE_BRANCH" >> '${runs}'`] }) } });
  const project = await addProject(d, repo);
  const topBefore = readdirSync(repo).sort();
  const post = (body: object) => d.socket('POST', '/api/tasks', { body: { project_id: project.id, ...body } });
  const refused = async (body: object, what: string) => {
    const r = await post(body);
    assert.equal(r.status, 409, `${what}: ${r.text}`);
    assert.equal(r.json.code, 'BRANCH_EXISTS', what);
  };

  // This filesystem is case-sensitive, so git keeps all three branches; their folders come
  // from the names' slugs, which collide, so each one gets its own suffix.
  const made: Array<[string, string]> = [];
  for (const name of ['Feat', 'feat', 'FEAT']) {
    const r = await post({ name, branch: name });
    assert.equal(r.status, 201, `${name}: ${r.text}`);
    assert.equal(r.json.branch, name);
    made.push([r.json.branch, r.json.worktree_path]);
  }
  assert.deepEqual(made.map(([, wt]) => wt), ['.grove/worktrees/feat/', '.grove/worktrees/feat-2/', '.grove/worktrees/feat-3/']);
  for (const [branch, wt] of made) assert.equal(git(path.join(repo, wt), 'branch', '--show-current'), branch, `${wt} has its own branch`);
  await refused({ name: 'again', branch: 'feat' }, 'the same branch again');

  // A branch below an existing one, and above one, cannot be made (git keeps refs as files).
  await refused({ name: 'x', branch: 'feat/x' }, 'feat/x with feat');
  const lib = await post({ name: 'lib x', branch: 'lib/x' });
  assert.equal(lib.status, 201, lib.text);
  await refused({ name: 'lib', branch: 'lib' }, 'lib with lib/x');
  await refused({ name: 'deeper', branch: 'lib/x/y' }, 'lib/x/y with lib/x');
  // The same once the refs are packed into one file, where git itself would not notice at once.
  git(repo, 'pack-refs', '--all');
  await refused({ name: 'x', branch: 'Feat/x' }, 'Feat/x with packed Feat');
  await refused({ name: 'lib', branch: 'lib' }, 'lib with packed lib/x');
  // An archived task keeps its branch, and with it the clash.
  assert.equal((await d.socket('DELETE', `/api/tasks/${lib.json.id}`)).json.status, 'archived');
  await refused({ name: 'lib', branch: 'lib' }, 'lib with the kept lib/x');

  assert.deepEqual(branches(repo), ['FEAT', 'Feat', 'feat', 'lib/x', 'main']);
  assert.deepEqual(worktrees(repo), [repo, ...made.map(([, wt]) => path.join(repo, wt).slice(0, -1))]);
  assert.equal(added((await d.socket('GET', '/api/tasks')).json).length, 4);
  // Setup ran once for each task made, and for none of the refused ones.
  assert.deepEqual(readFileSync(runs, 'utf8').split('\n').filter(Boolean), ['Feat', 'feat', 'FEAT', 'lib/x']);
  // Nothing outside .grove/worktrees/: the checkout gained `.grove` only, which holds only the
  // worktrees folder, which holds only the live tasks' folders; nothing beside the repository.
  assert.deepEqual(readdirSync(repo).sort(), [...topBefore, '.grove'].sort());
  assert.deepEqual(readdirSync(path.join(repo, '.grove')), ['worktrees']);
  assert.deepEqual(readdirSync(path.join(repo, '.grove', 'worktrees')).sort(), ['feat', 'feat-2', 'feat-3']);
  assert.deepEqual(readdirSync(parent).sort(), [path.basename(repo), 'setup-runs'].sort());
  assert.equal(git(repo, 'status', '--porcelain'), '');
});
