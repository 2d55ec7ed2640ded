import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, sharedDaemon, startDaemon, type Reply, type TestDaemon } from '../helpers/daemon.ts';
import { branches, git, makeRepo, makeTempDir, worktrees } from '../helpers/git.ts';
import { newSince } from '../helpers/since.ts';

// Paths a client may send as a project, and `.grove.json` files a repository may hold: each
// one refused with a clear 4xx, never a 500, and nothing made. One daemon serves the file;
// a second one, with git's ownership check switched off, shows grove's own check at work.
const daemon = sharedDaemon();

function assertProblem(r: Reply, status: number, code: string, what: string) {
  assert.equal(r.status, status, `${what}: ${r.text.slice(0, 500)}`);
  assert.match(String(r.headers['content-type']), /^application\/problem\+json/, what);
  assert.equal(r.json.code, code, what);
  assert.ok(!/\bat .+:\d+:\d+/.test(r.text), `${what}: no stack trace`);
}

const NOBODY = 65534;

// A repository given to another user, as root can (the tests run as root, as CI does).
function giveAway(dir: string, recursive: boolean) {
  assert.equal(process.getuid!(), 0, 'giving a repository to another user needs root');
  execFileSync('chown', [...(recursive ? ['-R'] : []), `${NOBODY}:${NOBODY}`, dir]);
}

test('project paths: relative, odd, linked, inside .git or owned by another user', async (t) => {
  const d = await daemon();
  const add = (p: unknown, via: TestDaemon['socket'] = d.socket) => via('POST', '/api/projects', { body: { path: p } });
  const added = await newSince(d, '/api/projects');
  const projectPaths = async () => added((await d.socket('GET', '/api/projects')).json).map((p: any) => p.path).sort();

  await t.test('relative, empty and missing paths are refused by validation', async () => {
    const relative = ['repo', './repo', '../repo', '~/repo', '~', 'repo/../..', 'C:\\repo', 'file:///tmp/repo', ' /tmp', '\\\\server\\share', ''];
    for (const p of relative) {
      const r = await add(p);
      assertProblem(r, 400, 'VALIDATION_FAILED', JSON.stringify(p));
      assert.deepEqual([...new Set(r.json.errors.map((e: any) => e.path))], ['/path'], JSON.stringify(p));
    }
    const missing = await d.tcp('POST', '/api/projects', { body: { Path: '/tmp' } });
    assertProblem(missing, 400, 'VALIDATION_FAILED', 'Path instead of path');
    assert.deepEqual(missing.json.errors.map((e: any) => e.path).sort(), ['/Path', '/path']);
    assertProblem(await add('/' + 'p'.repeat(5000)), 400, 'VALIDATION_FAILED', 'longer than PATH_MAX');
  });

  await t.test('files, devices, dangling links and name-too-long are 422 NOT_A_GIT_REPO', async () => {
    const repo = makeRepo(t);
    const scratch = makeTempDir(t);
    const loopA = path.join(scratch, 'loop-a');
    const loopB = path.join(scratch, 'loop-b');
    symlinkSync(loopB, loopA);
    symlinkSync(loopA, loopB);
    symlinkSync(path.join(scratch, 'gone'), path.join(scratch, 'dangling'));
    symlinkSync(path.join(repo, 'README.md'), path.join(scratch, 'to-file'));
    const cases: Array<[string, string, RegExp]> = [
      ['a file in a repository', path.join(repo, 'README.md'), /not a directory/],
      ['a link to a file', path.join(scratch, 'to-file'), /not a directory/],
      ['a device', '/dev/null', /not a directory/],
      ['a two-link loop', loopA, /symlink loop/],
      ['a dangling link', path.join(scratch, 'dangling'), /does not exist/],
      ['under a file', path.join(repo, 'README.md', 'x'), /does not exist/],
      ['a 300-character name', path.join(scratch, 'n'.repeat(300)), /cannot be resolved|does not exist/],
      ['the root folder', '/', /not inside a git work tree/],
    ];
    for (const [what, p, why] of cases) {
      const r = await add(p);
      assertProblem(r, 422, 'NOT_A_GIT_REPO', what);
      assert.match(r.json.detail, why, what);
      assert.ok(r.json.detail.includes(p), `${what}: the detail names the path`);
    }
    assert.deepEqual(await projectPaths(), []);
  });

  await t.test('folders inside .git, a bare repository or a linked worktree\'s .git file are refused', async () => {
    const repo = makeRepo(t);
    const bare = path.join(makeTempDir(t), 'bare.git');
    git(repo, 'clone', '-q', '--bare', repo, bare);
    const linked = path.join(makeTempDir(t), 'linked');
    git(repo, 'worktree', 'add', '-q', '-b', 'side', linked);
    const cases: Array<[string, string]> = [
      ['.git/refs/heads', path.join(repo, '.git', 'refs', 'heads')],
      ['.git/objects', path.join(repo, '.git', 'objects')],
      ['.git/hooks', path.join(repo, '.git', 'hooks')],
      ['.git/worktrees/<name>', path.join(repo, '.git', 'worktrees', 'linked')],
      ['a folder in a bare repository', path.join(bare, 'refs')],
      ["a linked worktree's .git file", path.join(linked, '.git')],
    ];
    for (const [what, p] of cases) {
      const r = await add(p);
      assertProblem(r, 422, 'NOT_A_GIT_REPO', what);
      assert.ok(r.json.detail.includes(p), `${what}: the detail names the path`);
    }
    assert.deepEqual(await projectPaths(), []);
  });

  await t.test('links and dot segments resolve to the canonical top level', async () => {
    const repo = makeRepo(t);
    mkdirSync(path.join(repo, 'a', 'b'), { recursive: true });
    const links = makeTempDir(t);
    symlinkSync(repo, path.join(links, 'first'));
    symlinkSync(path.join(links, 'first'), path.join(links, 'second'));
    // Added through a link the first time: the realpath is stored, the name is the repository's.
    const r = await add(path.join(links, 'first'));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.path, repo);
    assert.equal(r.json.name, path.basename(repo));
    const spellings = [
      path.join(links, 'second'),
      `${links}/second/a/b/`,
      `${repo}/a/../a/./b//`,
      `${repo}/`,
      `${repo}/.`,
      `${links}/first/a/..`,
    ];
    for (const p of spellings) {
      const dup = await add(p);
      assertProblem(dup, 409, 'PROJECT_EXISTS', p);
      assert.ok(dup.json.detail.includes(repo), `${p}: names the canonical path`);
    }
    assert.equal((await d.socket('DELETE', `/api/projects/${r.json.id}`)).status, 204);
  });

  await t.test('folder names with shell syntax and leading dashes are just names', async () => {
    const parent = makeTempDir(t);
    const made: string[] = [];
    for (const name of ['a $(touch pwned) `touch pwned` \'b" ;x', '-rf', '--upload-pack=touch pwned']) {
      const dir = path.join(parent, name);
      mkdirSync(dir);
      git(dir, 'init', '-q', '-b', 'main');
      writeFileSync(path.join(dir, 'f'), 'x');
      git(dir, 'add', '-A');
      git(dir, 'commit', '-q', '-m', 'i');
      made.push(dir);
      const r = await add(dir);
      assert.equal(r.status, 201, `${name}: ${r.text}`);
      assert.equal(r.json.path, dir);
      const task = await d.socket('POST', '/api/tasks', { body: { project_id: r.json.id, name: 'work' } });
      assert.equal(task.status, 201, `${name}: ${task.text}`);
      assert.ok(existsSync(path.join(dir, '.grove', 'worktrees', 'work')));
      assert.equal((await d.socket('DELETE', `/api/tasks/${task.json.id}`)).status, 200);
      assert.equal((await d.socket('DELETE', `/api/projects/${r.json.id}`)).status, 204);
    }
    // Wherever a shell would have run it: the daemon's folder, the repositories, their worktrees.
    for (const where of [process.cwd(), parent, ...made, ...made.map((m) => path.join(m, '.grove', 'worktrees', 'work'))]) {
      assert.ok(!existsSync(path.join(where, 'pwned')), `no shell ran in ${where}`);
    }
  });

  await t.test("a grove task's worktree is not a project of its own", async () => {
    const repo = makeRepo(t);
    const project = await addProject(d, repo);
    const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'nested' } })).json;
    const wt = path.join(repo, task.worktree_path);
    mkdirSync(path.join(wt, 'sub'));
    for (const p of [wt, path.join(wt, 'sub')]) {
      const r = await add(p);
      assertProblem(r, 422, 'NOT_A_GIT_REPO', p);
      assert.match(r.json.detail, /grove task worktree/);
    }
    assert.equal((await d.socket('DELETE', `/api/tasks/${task.id}`)).status, 200);
    assert.equal((await d.socket('DELETE', `/api/projects/${project.id}`)).status, 204);
  });

  await t.test("another user's repository: 422 saying who owns it, whether git or grove notices", async () => {
    const all = makeRepo(t);
    mkdirSync(path.join(all, 'sub'));
    giveAway(all, true);
    const topOnly = makeRepo(t);
    mkdirSync(path.join(topOnly, 'mine'));
    giveAway(topOnly, false);
    const gitDirOnly = makeRepo(t);
    giveAway(path.join(gitDirOnly, '.git'), true);
    const cases: Array<[string, string]> = [
      ['owned by nobody, all of it', all],
      ['a folder in it', path.join(all, 'sub')],
      ['only its top level given away, a folder of ours inside', path.join(topOnly, 'mine')],
      ['only its .git given away', gitDirOnly],
    ];
    for (const [what, p] of cases) {
      for (const via of [d.socket, d.tcp]) {
        const r = await add(p, via);
        assertProblem(r, 422, 'NOT_A_GIT_REPO', what);
        assert.match(r.json.detail, new RegExp(`owned by another user .*uid ${NOBODY}.*the daemon runs as uid 0`), what);
        assert.ok(!/safe\.directory/.test(r.json.detail), `${what}: no advice to switch git's check off`);
      }
    }
    assert.deepEqual(await projectPaths(), []);
  });
});

test("grove refuses another user's repository even when git's own check is switched off", async (t) => {
  // `safe.directory=*` as git configuration from the environment: git would accept anything.
  const d = await startDaemon(t, { env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*' } });
  const foreign = makeRepo(t);
  giveAway(foreign, true);
  const gitDirOnly = makeRepo(t);
  giveAway(path.join(gitDirOnly, '.git'), true);
  for (const p of [foreign, gitDirOnly]) {
    const r = await d.socket('POST', '/api/projects', { body: { path: p } });
    assertProblem(r, 422, 'NOT_A_GIT_REPO', p);
    assert.match(r.json.detail, new RegExp(`owned by another user \\(${p}(/\\.git)? belongs to uid ${NOBODY}`));
  }
  assert.deepEqual((await d.socket('GET', '/api/projects')).json, []);
  // The same daemon adds a repository of its own user.
  const mine = makeRepo(t);
  assert.equal((await d.socket('POST', '/api/projects', { body: { path: mine } })).status, 201);
});

test('.grove.json: every kind of invalid value or file is 422 CONFIG_INVALID with file and JSON path, creating nothing', async (t) => {
  const d = await daemon();
  const added = await newSince(d, '/api/tasks');
  const parent = makeTempDir(t);
  const repo = makeRepo(t, { parent });
  const project = await addProject(d, repo);
  const file = path.join(repo, '.grove.json');
  // Every config below that has room for it also asks to run this: it must never run.
  const marker = path.join(parent, 'setup-ran');
  const touch = [`touch '${marker}'`];
  const post = () => d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'x' } });
  const place = (make: () => void) => {
    rmSync(file, { recursive: true, force: true });
    make();
  };
  const check = async (what: string, pointer: string, detail?: RegExp) => {
    const r = await post();
    assertProblem(r, 422, 'CONFIG_INVALID', what);
    assert.ok(r.json.detail.includes(file), `${what}: names the file: ${r.json.detail.slice(0, 300)}`);
    assert.ok(
      (r.json.errors ?? []).some((e: any) => e.path === pointer),
      `${what}: JSON path ${pointer} in ${JSON.stringify(r.json.errors)?.slice(0, 300)}`,
    );
    if (detail) assert.match(r.json.detail, detail, what);
    return r;
  };

  await t.test('texts that are not a JSON object', async () => {
    const texts: Array<[string, string]> = [
      ['empty file', ''],
      ['only whitespace', ' \n'],
      ['YAML', 'setup:\n  - npm ci\n'],
      ['trailing comma', `{"setup": ${JSON.stringify(touch)},}`],
      ['comment', `// setup\n{"setup": ${JSON.stringify(touch)}}`],
      ['single quotes', "{'setup': []}"],
      ['two objects', '{} {}'],
      ['null', 'null'],
      ['a string', '"{}"'],
      ['a number', '42'],
      ['true', 'true'],
      ['an array of a config', `[{"setup": ${JSON.stringify(touch)}}]`],
    ];
    for (const [what, text] of texts) {
      place(() => writeFileSync(file, text));
      await check(what, '/');
    }
    // Bad bytes are not quietly turned into U+FFFD inside a command that would then run.
    place(() => writeFileSync(file, Buffer.concat([Buffer.from(`{"setup": ["touch '${marker}' \\u0020`), Buffer.from([0xff, 0xfe]), Buffer.from('"]}')])));
    await check('invalid UTF-8', '/', /UTF-8/);
  });

  await t.test('values of the wrong type, out of range or unknown', async () => {
    const configs: Array<[string, Record<string, unknown>, string]> = [
      ['setup null', { setup: null }, '/setup'],
      ['setup an object', { setup: { 0: 'x' } }, '/setup'],
      ['setup item null', { setup: [...touch, null] }, '/setup/1'],
      ['setup item an array', { setup: [touch] }, '/setup/0'],
      ['setup item an object', { setup: [{ run: 'x' }] }, '/setup/0'],
      ['setup item true', { setup: [true] }, '/setup/0'],
      ['empty setup command', { setup: [...touch, ''] }, '/setup/1'],
      ['blank setup command', { setup: [...touch, ' \t\n '] }, '/setup/1'],
      ['setup command over 128 KiB', { setup: [...touch, `echo ${'x'.repeat(140 * 1024)}`] }, '/setup/1'],
      ['negative port', { setup: touch, ports: [-1] }, '/ports/0'],
      ['port 65536', { setup: touch, ports: [65536] }, '/ports/0'],
      ['port 1e20', { setup: touch, ports: [1e20] }, '/ports/0'],
      ['port past 2^53', { setup: touch, ports: [2 ** 53 + 2] }, '/ports/0'],
      ['port 3000.5', { setup: touch, ports: [3000.5] }, '/ports/0'],
      ['port as a string', { setup: touch, ports: ['3000'] }, '/ports/0'],
      ['port null', { setup: touch, ports: [null] }, '/ports/0'],
      ['port true', { setup: touch, ports: [true] }, '/ports/0'],
      ['port in an array', { setup: touch, ports: [[3000]] }, '/ports/0'],
      ['ports an object', { setup: touch, ports: { 3000: 1 } }, '/ports'],
      ['ports a number', { setup: touch, ports: 3000 }, '/ports'],
      ['ports repeated apart', { setup: touch, ports: [3000, 3001, 3000] }, '/ports'],
      ['env an array', { setup: touch, env: [] }, '/env'],
      ['env a string', { setup: touch, env: 'A=1' }, '/env'],
      ['env null', { setup: touch, env: null }, '/env'],
      ['env value null', { setup: touch, env: { A: null } }, '/env/A'],
      ['env value true', { setup: touch, env: { A: true } }, '/env/A'],
      ['env value an object', { setup: touch, env: { A: { B: 'c' } } }, '/env/A'],
      ['env value an array', { setup: touch, env: { A: ['x'] } }, '/env/A'],
      ['env value over 128 KiB', { setup: touch, env: { BIG: 'x'.repeat(140 * 1024) } }, '/env/BIG'],
      ['env name empty', { setup: touch, env: { '': 'x' } }, '/env/'],
      ['env name with -', { setup: touch, env: { 'A-B': 'x' } }, '/env/A-B'],
      ['env name with space', { setup: touch, env: { 'A B': 'x' } }, '/env/A B'],
      ['env name with .', { setup: touch, env: { 'A.B': 'x' } }, '/env/A.B'],
      ['env name non-ASCII', { setup: touch, env: { É: 'x' } }, '/env/É'],
      ['env name shell', { setup: touch, env: { '$(id)': 'x' } }, '/env/$(id)'],
      ['env name with NUL', { setup: touch, env: { 'A\u0000': 'x' } }, '/env/A\u0000'],
      ['env name with /', { setup: touch, env: { 'A/B': 'x' } }, '/env/A~1B'],
      ['agent empty', { setup: touch, agent: '' }, '/agent'],
      ['agent with a newline', { setup: touch, agent: 'a\nb' }, '/agent'],
      ['agent null', { setup: touch, agent: null }, '/agent'],
      ['agent an array', { setup: touch, agent: ['claude'] }, '/agent'],
      ['unknown field in another case', { Setup: touch }, '/Setup'],
      ['unknown field beside valid ones', { setup: touch, env: { A: 'b' }, extra: 1 }, '/extra'],
      ['prototype', { setup: touch, prototype: { setup: touch } }, '/prototype'],
    ];
    for (const [what, config, pointer] of configs) {
      place(() => writeFileSync(file, JSON.stringify(config)));
      await check(what, pointer);
    }
    // Raw text: JSON.stringify would not write these keys the way a file can hold them.
    const raw: Array<[string, string, string]> = [
      ['__proto__ key', `{"__proto__": {"setup": ${JSON.stringify(touch)}}}`, '/__proto__'],
      ['constructor key', `{"setup": ${JSON.stringify(touch)}, "constructor": {"prototype": {"polluted": 1}}}`, '/constructor'],
      ['__proto__ env value an object', `{"setup": ${JSON.stringify(touch)}, "env": {"__proto__": {"polluted": "1"}}}`, '/env/__proto__'],
      ['port 1e400', `{"setup": ${JSON.stringify(touch)}, "ports": [1e400]}`, '/ports/0'],
      ['port -0', `{"setup": ${JSON.stringify(touch)}, "ports": [3000, -0]}`, '/ports/1'],
    ];
    for (const [what, text, pointer] of raw) {
      place(() => writeFileSync(file, text));
      await check(what, pointer);
    }
  });

  await t.test('files that are links, folders, pipes or huge', { timeout: 30_000 }, async () => {
    const outside = makeTempDir(t);
    const valid = path.join(outside, 'config.json');
    writeFileSync(valid, JSON.stringify({ setup: touch }));
    const secret = path.join(outside, 'secret');
    writeFileSync(secret, 'SECRET-TOKEN-1234567890');
    const kinds: Array<[string, () => void, RegExp]> = [
      // Grove would read (and quote in errors) whatever the repository points it at.
      ['a link to a valid config outside the repository', () => symlinkSync(valid, file), /outside the project/],
      ['a relative link out of the repository', () => symlinkSync(path.relative(repo, valid), file), /outside the project/],
      ['a link to a secret outside the repository', () => symlinkSync(secret, file), /outside the project/],
      ['a link to /dev/zero', () => symlinkSync('/dev/zero', file), /outside the project/],
      ['a dangling link', () => symlinkSync(path.join(repo, 'gone.json'), file), /cannot be read/],
      ['a link to itself', () => symlinkSync(file, file), /cannot be read/],
      ['a link to the project folder', () => symlinkSync(repo, file), /not a regular file/],
      ['a folder', () => mkdirSync(file), /not a regular file/],
      ['a folder holding a config', () => (mkdirSync(file), writeFileSync(path.join(file, '.grove.json'), '{}')), /not a regular file/],
      // A synchronous read of a pipe with no writer would block the daemon for good.
      ['a named pipe', () => execFileSync('mkfifo', [file]), /not a regular file/],
      ['5 MiB of valid JSON', () => writeFileSync(file, JSON.stringify({ setup: touch, env: { A: 'x'.repeat(5 * 1024 * 1024) } })), /limit/],
      ['a sparse 3 GiB file', () => (writeFileSync(file, '{}'), execFileSync('truncate', ['-s', '3G', file])), /limit/],
    ];
    for (const [what, make, why] of kinds) {
      place(make);
      const r = await check(what, '/', why);
      assert.ok(!r.text.includes('SECRET-TOKEN'), `${what}: the target's content is not quoted`);
    }
    assert.equal((await d.socket('GET', '/api/health')).status, 200, 'the daemon still answers');
  });

  await t.test('nothing was created, and a valid config works again', async () => {
    assert.deepEqual(added((await d.socket('GET', '/api/tasks')).json), []);
    assert.deepEqual(branches(repo), ['main']);
    assert.deepEqual(worktrees(repo), [repo]);
    assert.ok(!existsSync(path.join(repo, '.grove')) || readdirSync(path.join(repo, '.grove', 'worktrees')).length === 0);
    assert.ok(!existsSync(marker), 'no setup command ran');
    // Decision: a link that stays inside the project is followed (a config kept elsewhere in
    // the repository); only links that leave it are refused.
    mkdirSync(path.join(repo, 'config'));
    writeFileSync(path.join(repo, 'config', 'grove.json'), JSON.stringify({ setup: touch }));
    place(() => symlinkSync(path.join('config', 'grove.json'), file));
    const r = await post();
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.status, 'ready');
    assert.ok(existsSync(marker), 'the linked config was used');
  });
});
