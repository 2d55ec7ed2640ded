import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { sharedDaemon, startDaemon } from '../helpers/daemon.ts';
import { git, makeRepo, makeTempDir } from '../helpers/git.ts';
import { newSince } from '../helpers/since.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// Tests that need no daemon of their own share one (each makes its own repositories).
const daemon = sharedDaemon();

test('projects are added, listed, fetched and removed, over the socket and TCP', async (t) => {
  const d = await daemon();
  const added = await newSince(d, '/api/projects');
  const repoA = makeRepo(t);
  const repoB = makeRepo(t);

  const a = await d.socket('POST', '/api/projects', { body: { path: repoA, name: 'alpha' } });
  assert.equal(a.status, 201, a.text);
  assert.match(a.json.id, UUID);
  assert.equal(a.json.name, 'alpha');
  assert.equal(a.json.path, repoA);
  assert.match(a.json.created_at, /Z$/);

  const b = await d.tcp('POST', '/api/projects', { body: { path: repoB } });
  assert.equal(b.status, 201, b.text);
  assert.equal(b.json.name, path.basename(repoB), 'the default name is the folder name');

  for (const via of [d.socket, d.tcp]) {
    const list = await via('GET', '/api/projects');
    assert.equal(list.status, 200);
    assert.deepEqual(added(list.json).map((p: any) => p.id), [a.json.id, b.json.id]);
    const one = await via('GET', `/api/projects/${a.json.id}`);
    assert.deepEqual(one.json, a.json);
  }

  const del = await d.tcp('DELETE', `/api/projects/${a.json.id}`);
  assert.equal(del.status, 204);
  assert.equal(del.text, '');
  assert.equal((await d.socket('GET', `/api/projects/${a.json.id}`)).json.code, 'NOT_FOUND');
  assert.equal((await d.socket('DELETE', `/api/projects/${a.json.id}`)).status, 404);
  assert.deepEqual(added((await d.socket('GET', '/api/projects')).json).map((p: any) => p.id), [b.json.id]);
  // Removing a project never touches the repository.
  assert.equal(git(repoA, 'status', '--porcelain'), '');
});

test('projects survive a restart of the daemon', async (t) => {
  const d1 = await startDaemon(t);
  const repo = makeRepo(t);
  const added = await d1.socket('POST', '/api/projects', { body: { path: repo, name: 'keep-me' } });
  assert.equal(added.status, 201);
  assert.equal(await d1.stop(), 0);

  const d2 = await startDaemon(t, { home: d1.home });
  const list = await d2.socket('GET', '/api/projects');
  assert.deepEqual(list.json, [added.json]);
});

test('a path inside a work tree resolves to the top level, through symlinks', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  mkdirSync(path.join(repo, 'src', 'deep'), { recursive: true });
  const r = await d.socket('POST', '/api/projects', { body: { path: path.join(repo, 'src', 'deep') } });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.path, repo);

  const links = makeTempDir(t);
  symlinkSync(repo, path.join(links, 'link'));
  const again = await d.socket('POST', '/api/projects', { body: { path: path.join(links, 'link') } });
  assert.equal(again.status, 409, 'the same repository through a symlink is a duplicate');
  assert.equal(again.json.code, 'PROJECT_EXISTS');
  assert.match(again.headers['content-type'] as string, /^application\/problem\+json/);
});

test('duplicates are refused with 409 PROJECT_EXISTS; default names get a suffix', async (t) => {
  const d = await daemon();
  const added = await newSince(d, '/api/projects');
  const repo = makeRepo(t);
  assert.equal((await d.socket('POST', '/api/projects', { body: { path: repo } })).status, 201);
  const dup = await d.socket('POST', '/api/projects', { body: { path: repo, name: 'other' } });
  assert.equal(dup.status, 409);
  assert.equal(dup.json.code, 'PROJECT_EXISTS');

  // Two repositories whose folders share a name: the second default name is `<name>-2`.
  const parent = makeTempDir(t);
  const names = [];
  for (const sub of ['x', 'y']) {
    const dir = path.join(parent, sub, 'app');
    mkdirSync(dir, { recursive: true });
    git(dir, 'init', '-q', '-b', 'main');
    const r = await d.socket('POST', '/api/projects', { body: { path: dir } });
    assert.equal(r.status, 201, r.text);
    names.push(r.json.name);
  }
  assert.deepEqual(names, ['app', 'app-2']);
  const taken = await d.socket('POST', '/api/projects', { body: { path: makeRepo(t), name: 'app' } });
  assert.equal(taken.status, 409);
  assert.equal(taken.json.code, 'PROJECT_EXISTS');
  assert.equal(added((await d.socket('GET', '/api/projects')).json).length, 3);
});

test('paths that are not git work trees get 422 NOT_A_GIT_REPO and add nothing', async (t) => {
  const d = await daemon();
  const added = await newSince(d, '/api/projects');
  const plain = makeTempDir(t);
  const file = path.join(plain, 'file.txt');
  writeFileSync(file, 'x');
  const repo = makeRepo(t);
  const bare = path.join(makeTempDir(t), 'bare.git');
  git(plain, 'init', '-q', '--bare', bare);
  const loop = path.join(plain, 'loop');
  symlinkSync(loop, loop);

  const cases = {
    'plain folder': plain,
    file,
    missing: path.join(plain, 'nope'),
    'bare repository': bare,
    '.git folder': path.join(repo, '.git'),
    'symlink loop': loop,
  };
  for (const [what, p] of Object.entries(cases)) {
    const r = await d.socket('POST', '/api/projects', { body: { path: p } });
    assert.equal(r.status, 422, `${what}: ${r.text}`);
    assert.equal(r.json.code, 'NOT_A_GIT_REPO', what);
    assert.ok(r.json.detail.includes(p), `${what}: the detail names the path`);
  }
  assert.deepEqual(added((await d.socket('GET', '/api/projects')).json), []);
});
