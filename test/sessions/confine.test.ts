import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import test, { after, type TestContext } from 'node:test';
import { git as run } from '../../daemon/git/run.ts';
import { checkSandbox } from '../../daemon/sandbox/check.ts';
import { createConfine } from '../../daemon/sessions/confine.ts';
import type { SessionService } from '../../daemon/sessions/service.ts';
import { projectsTable } from '../../daemon/store/projects.ts';
import { git, makeTempDir } from '../helpers/git.ts';
import { sandboxFixture } from '../helpers/sandbox.ts';
import { openTestStore, sessionService, TEST_HOST_ID, until, type TestStore } from '../helpers/store.ts';

// Agent sessions confined by the real bubblewrap (DESIGN §18), through the session service as the
// daemon wires it: a shell as the agent tries what §18 allows and refuses, and prints each outcome.
const s = await openTestStore(after);
const machine = await checkSandbox({ path: process.env.PATH ?? '' });
assert.ok(machine.ok, `this suite needs bubblewrap (.ci/run installs it): ${machine.ok ? '' : machine.detail}`);

// `sh -c <prompt>`: the prompt is the agent's script.
const agents = { sh: { command: ['sh', '-c', '{prompt}'] } };

// A repository with two linked worktrees as grove lays them out, its project and a ready task on
// the first, and grove's own folders (data, config, socket) beside a HOME with secrets.
async function confinedSetup(t: TestContext, opts: { setting?: boolean | 'auto' } = {}) {
  const f = sandboxFixture(t);
  const project = await projectsTable(s.store.db, s.events).insert({ id: randomUUID(), name: `p-${randomUUID().slice(0, 8)}`, path: f.repo, host_id: TEST_HOST_ID, repository: null });
  const id = randomUUID();
  await s.store.db.query(
    `INSERT INTO tasks (id, project_id, name, branch, worktree_path, base, base_commit, status, host_id) VALUES ($1, $2, 'mine', 'grove/mine', '.grove/worktrees/mine/', 'main', 'HEAD', 'ready', $3)`,
    [id, project.id, project.host_id],
  );
  const socketDir = path.join(makeTempDir(t), 'grove');
  mkdirSync(socketDir);
  const socketPath = path.join(socketDir, 'grove.sock');
  const server = createServer((c) => c.end('DAEMON\n'));
  await new Promise<void>((r) => server.listen(socketPath, r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const configFile = path.join(f.groveHome, 'config.json');
  const confine = createConfine({
    check: machine,
    home: f.home,
    grove: { dataDir: s.dataDir, configFile, socketPath },
    userSetting: opts.setting,
    projectPaths: async () => [f.repo],
  });
  const service = sessionService(t, s, { agents, confine });
  return { f, task: await s.getTask(id), service, socketPath, configFile };
}

async function ended(service: SessionService, id: string) {
  await until(async () => !service.isBusy(await service.get(id)), `session ${id} to end`, 30_000);
  return { session: await service.get(id), text: (await service.lines(id, 0, 1000)).lines.map((l) => l.text) };
}

// A shell line that prints `ok:<name>` when `cmd` succeeds, else `no:<name>`.
const attempt = (name: string, cmd: string) => `if ( ${cmd} ) 2>/dev/null; then echo ok:${name}; else echo no:${name}; fi`;

test('a confined agent writes and commits in its worktree, and cannot write $HOME, the main checkout, hooks/ or config', async (t) => {
  const { f, task, service } = await confinedSetup(t);
  const hooks = path.join(f.repo, '.git', 'hooks');
  const script = [
    attempt('worktree', 'echo work > mine.txt'),
    attempt('commit', 'git add mine.txt && git -c user.name=A -c user.email=a@x commit -qm work'),
    attempt('tmpdir', 'echo t > "$TMPDIR/t"'),
    attempt('home', `echo x > ${f.home}/planted`),
    attempt('checkout', `echo x > ${f.repo}/planted`),
    attempt('hook', `echo x > ${hooks}/post-checkout`),
    attempt('config', `echo '[core]' >> ${f.repo}/.git/config`),
    // A ref deleted with packed-refs there: git takes packed-refs.lock in the repository's folder.
    attempt('branch-delete', 'git branch scratch-branch && git branch -D scratch-branch >/dev/null'),
    attempt('own-commondir', 'echo /tmp > "$(git rev-parse --git-dir)/commondir"'),
    // The repository's folder takes new files inside, and they vanish: no commondir there on disk.
    attempt('repo-commondir', `echo /tmp > ${f.repo}/.git/commondir`),
  ].join('\n');
  git(f.repo, 'pack-refs', '--all');
  const started = await service.create(task.id, { agent: 'sh', prompt: script });
  assert.deepEqual(started.sandbox, { confined: true });
  const { session, text } = await ended(service, started.id);
  assert.equal(session.status, 'exited');
  assert.deepEqual(text, ['ok:worktree', 'ok:commit', 'ok:tmpdir', 'no:home', 'no:checkout', 'no:hook', 'no:config', 'ok:branch-delete', 'no:own-commondir', 'ok:repo-commondir']);
  assert.equal(existsSync(path.join(f.repo, '.git', 'commondir')), false, 'the file made inside is not on disk');
  assert.equal(readFileSync(path.join(f.repo, '.git', 'worktrees', 'mine', 'commondir'), 'utf8'), '../..\n');
  assert.equal(git(f.worktree, 'log', '-1', '--format=%s'), 'work', 'the commit landed in the repository');
  assert.doesNotMatch(readFileSync(path.join(f.repo, '.git', 'config'), 'utf8'), /^\[core\]\n$/m);
});

test("a confined agent cannot read ~/.ssh, another session's output, grove's config or another task's worktree, nor reach the daemon's socket", async (t) => {
  const { f, task, service, socketPath, configFile } = await confinedSetup(t);
  const other = await service.create(task.id, { agent: 'sh', prompt: 'echo OTHER-SESSION-SECRET', sandbox: false });
  assert.deepEqual(other.sandbox, { confined: false, reason: 'sandbox is false (by the request)' });
  await ended(service, other.id);
  const otherOut = path.join(s.dataDir, 'sessions', other.id, 'stdout');
  assert.match(readFileSync(otherOut, 'utf8'), /OTHER-SESSION-SECRET/, 'the fixture: the output is there to read');
  const connect = `node -e "require('net').connect(process.argv[1]).on('data',()=>process.exit(0)).on('error',()=>process.exit(1))" ${socketPath}`;
  const script = [
    attempt('ssh', `grep -q SECRET ${f.home}/.ssh/id_x`),
    attempt('netrc', `grep -q SECRET ${f.home}/.netrc`),
    attempt('output', `grep -q SECRET ${otherOut}`),
    attempt('config', `grep -q secret ${configFile}`),
    attempt('other-task', `grep -q OTHER ${f.other}/theirs.txt`),
    attempt('socket', connect),
    attempt('own-file', 'test -f README.md || test -d .'),
  ].join('\n');
  const started = await service.create(task.id, { agent: 'sh', prompt: script });
  const { text } = await ended(service, started.id);
  assert.deepEqual(text, ['no:ssh', 'no:netrc', 'no:output', 'no:config', 'no:other-task', 'no:socket', 'ok:own-file']);
  // The same script unconfined reads them all: what the sandbox took away was there.
  const open = await service.create(task.id, { agent: 'sh', prompt: script, sandbox: false });
  assert.deepEqual((await ended(service, open.id)).text, ['ok:ssh', 'ok:netrc', 'ok:output', 'ok:config', 'ok:other-task', 'ok:socket', 'ok:own-file']);
});

test('the setting: the request beats .grove.json, which beats the user config; services are never confined', async (t) => {
  const { f, task, service } = await confinedSetup(t, { setting: false });
  const user = await service.create(task.id, { agent: 'sh', prompt: 'true' });
  assert.deepEqual(user.sandbox, { confined: false, reason: 'sandbox is false (by the user config)' });
  writeFileSync(path.join(f.repo, '.grove.json'), JSON.stringify({ sandbox: { enabled: true }, services: { web: { command: 'true' } } }));
  const project = await service.create(task.id, { agent: 'sh', prompt: 'true' });
  assert.deepEqual(project.sandbox, { confined: true });
  const asked = await service.create(task.id, { agent: 'sh', prompt: 'true', sandbox: false });
  assert.deepEqual(asked.sandbox, { confined: false, reason: 'sandbox is false (by the request)' });
  const web = await service.startService(task.id, 'web');
  assert.equal(web.sandbox.confined, false);
  assert.match(web.sandbox.reason ?? '', /service/);
  for (const id of [user.id, project.id, asked.id, web.id]) await ended(service, id);
});

test('.grove.json sandbox.write adds a writable path and read_deny hides one', async (t) => {
  const { f, task, service } = await confinedSetup(t);
  const extra = path.join(f.home, 'cache');
  mkdirSync(extra);
  writeFileSync(path.join(f.worktree, 'private.env'), 'TOKEN=1\n');
  writeFileSync(path.join(f.repo, '.grove.json'), JSON.stringify({ sandbox: { write: ['~/cache'], read_deny: ['.grove/worktrees/mine/private.env'] } }));
  const script = [attempt('extra', `echo x > ${extra}/x`), attempt('denied', 'grep -q TOKEN private.env')].join('\n');
  const first = await service.create(task.id, { agent: 'sh', prompt: script, sandbox: false });
  assert.deepEqual((await ended(service, first.id)).text, ['ok:extra', 'ok:denied']);
  const confined = await service.create(task.id, { agent: 'sh', prompt: script });
  assert.deepEqual((await ended(service, confined.id)).text, ['ok:extra', 'no:denied']);
});
