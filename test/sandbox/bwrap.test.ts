import '../helpers/env.ts';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { bwrapArgv } from '../../daemon/sandbox/bwrap.ts';
import { checkSandbox } from '../../daemon/sandbox/check.ts';
import { policyFor, type PolicyInput, type SandboxPolicy } from '../../daemon/sandbox/policy.ts';
import { git } from '../helpers/git.ts';
import { gone, marker, processesMatching } from '../helpers/state.ts';
import { runArgv, sandboxFixture } from '../helpers/sandbox.ts';

const PATH = process.env.PATH ?? '/usr/bin:/bin';

async function bwrapPath(): Promise<string> {
  const c = await checkSandbox({ path: PATH });
  assert.ok(c.ok, `this machine must confine for these tests: ${JSON.stringify(c)}`);
  return c.bwrap;
}

function policy(input: PolicyInput): SandboxPolicy {
  const p = policyFor(input);
  assert.ok(p.ok, JSON.stringify(p));
  return p.policy;
}

// The agent's environment: what a session passes, with the fixture's HOME.
function agentEnv(home: string): Record<string, string> {
  const keep = ['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL', 'GIT_CONFIG_NOSYSTEM', 'GIT_CONFIG_GLOBAL'];
  return { PATH, HOME: home, ...Object.fromEntries(keep.map((k) => [k, process.env[k]!])) };
}

// A shell line that tries to write `file` and prints `<label>=ok` or `<label>=refused`.
const tryWrite = (label: string, file: string) => `(echo x > "${file}") 2>/dev/null && echo ${label}=ok || echo ${label}=refused`;
const tryRead = (label: string, file: string) => `c=$(cat "${file}" 2>/dev/null); echo "${label}=[$c]"`;

test('a confined command writes its worktree and TMPDIR only: HOME, the main checkout, hooks/, config and the rest of the temporary folder are read-only', { timeout: 60_000 }, async (t) => {
  const f = sandboxFixture(t);
  const p = policy(f.input);
  const common = git(f.repo, 'rev-parse', '--path-format=absolute', '--git-common-dir');
  // Beside the session's TMPDIR, in the same temporary folder: not the session's.
  const outside = path.join(path.dirname(p.tmpdir), `grove-sandbox-escape-${process.pid}-${Date.now()}`);
  t.after(() => rmSync(outside, { force: true }));
  const script = [
    tryWrite('worktree', 'new.txt'),
    tryWrite('tmpdir', '$TMPDIR/t.txt'),
    tryWrite('state', `${f.home}/.agent/s.json`),
    tryWrite('home', `${f.home}/h.txt`),
    tryWrite('main', `${f.repo}/main.txt`),
    tryWrite('hook', `${common}/hooks/pre-commit`),
    tryWrite('config', `${common}/config`),
    tryWrite('info', `${common}/info/exclude`),
    tryWrite('gitfile', `${f.worktree}/.git`),
    tryWrite('tmp', outside),
    'echo "tmpvar=$TMPDIR" "cwd=$(pwd)"',
  ].join('; ');
  const r = runArgv(bwrapArgv(await bwrapPath(), p, ['sh', '-c', script]), agentEnv(f.home));
  assert.equal(r.status, 0, r.stderr);
  for (const ok of ['worktree', 'tmpdir', 'state']) assert.match(r.stdout, new RegExp(`^${ok}=ok$`, 'm'), r.stdout);
  for (const no of ['home', 'main', 'hook', 'config', 'info', 'gitfile', 'tmp']) assert.match(r.stdout, new RegExp(`^${no}=refused$`, 'm'), r.stdout);
  assert.match(r.stdout, new RegExp(`tmpvar=${p.tmpdir} cwd=${p.worktree}`));
  // What was allowed is on disk; what was refused is not.
  assert.equal(readFileSync(path.join(f.worktree, 'new.txt'), 'utf8'), 'x\n');
  assert.equal(readFileSync(path.join(p.tmpdir, 't.txt'), 'utf8'), 'x\n');
  assert.ok(!existsSync(path.join(f.home, 'h.txt')) && !existsSync(path.join(f.repo, 'main.txt')) && !existsSync(path.join(common, 'hooks', 'pre-commit')));
  assert.ok(!existsSync(outside));
  assert.match(readFileSync(path.join(common, 'config'), 'utf8'), /\[core\]/);
});

test('git commit in a confined worktree writes objects, refs and logs: the branch moves', { timeout: 60_000 }, async (t) => {
  const f = sandboxFixture(t);
  const p = policy(f.input);
  const before = git(f.repo, 'rev-parse', 'grove/mine');
  const script = 'echo work > work.txt && git add work.txt && git commit -qm "confined work" && git rev-parse HEAD';
  const r = runArgv(bwrapArgv(await bwrapPath(), p, ['sh', '-c', script]), agentEnv(f.home));
  assert.equal(r.status, 0, r.stderr);
  const after = git(f.repo, 'rev-parse', 'grove/mine');
  assert.notEqual(after, before);
  assert.equal(r.stdout.trim(), after);
  assert.equal(git(f.repo, 'log', '-1', '--format=%s', 'grove/mine'), 'confined work');
  assert.equal(git(f.repo, 'rev-parse', 'grove/mine@{1}'), before, 'the reflog was written');
  assert.equal(git(f.repo, 'rev-parse', 'main'), git(f.repo, 'rev-parse', 'grove/other'), 'other branches are where they were');
});

test("a confined command cannot read HOME's keys, grove's data and config, or another task's worktree", { timeout: 60_000 }, async (t) => {
  const f = sandboxFixture(t);
  const p = policy(f.input);
  const script = [
    tryRead('ssh', `${f.home}/.ssh/id_x`),
    tryRead('netrc', `${f.home}/.netrc`),
    tryRead('data', `${f.groveHome}/data/store.db`),
    tryRead('config', `${f.groveHome}/config.json`),
    tryRead('other', `${f.other}/theirs.txt`),
    `echo "otherls=[$(ls -A '${f.other}' 2>/dev/null)]"`,
    tryRead('readme', `${f.worktree}/README.md`),
  ].join('; ');
  const r = runArgv(bwrapArgv(await bwrapPath(), p, ['sh', '-c', script]), agentEnv(f.home));
  assert.equal(r.status, 0, r.stderr);
  for (const hidden of ['ssh', 'netrc', 'data', 'config', 'other', 'otherls']) assert.match(r.stdout, new RegExp(`^${hidden}=\\[\\]$`, 'm'), r.stdout);
  assert.match(r.stdout, /^readme=\[# fixture\]$/m, 'everything else stays readable');
  // Hidden is not removed: the files are still there for the user.
  assert.equal(readFileSync(path.join(f.home, '.ssh', 'id_x'), 'utf8'), 'SECRET-KEY\n');
  assert.deepEqual(readdirSync(f.other).includes('theirs.txt'), true);
});

test("a repository with per-worktree config: the worktree's config.worktree stays read-only", { timeout: 60_000 }, async (t) => {
  const f = sandboxFixture(t);
  git(f.repo, 'config', 'extensions.worktreeConfig', 'true');
  git(f.worktree, 'config', '--worktree', 'user.name', 'task');
  const own = path.join(git(f.worktree, 'rev-parse', '--path-format=absolute', '--git-dir'), 'config.worktree');
  const p = policy(f.input);
  assert.ok(p.readOnly.includes(own), JSON.stringify(p.readOnly));
  const script = `git config --worktree core.hooksPath /tmp 2>/dev/null && echo set=ok || echo set=refused; ${tryWrite('file', own)}`;
  const r = runArgv(bwrapArgv(await bwrapPath(), p, ['sh', '-c', script]), agentEnv(f.home));
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^set=refused$/m, r.stdout);
  assert.match(r.stdout, /^file=refused$/m, r.stdout);
  assert.doesNotMatch(readFileSync(own, 'utf8'), /hooksPath/);
});

test('the most specific rule wins: a denied file inside the worktree is hidden, a TMPDIR inside a hidden folder is writable', { timeout: 60_000 }, async (t) => {
  const f = sandboxFixture(t);
  writeFileSync(path.join(f.worktree, '.env'), 'DOTENV-SECRET\n');
  const tmpdir = path.join(f.groveHome, 'data', 'session-tmp');
  mkdirSync(tmpdir);
  const p = policy({ ...f.input, tmpdir, readDeny: [path.join(f.worktree, '.env')], write: [path.join(f.home, 'not-yet')] });
  assert.deepEqual(p.skipped, [path.join(f.home, 'not-yet')]);
  const script = [tryRead('env', `${f.worktree}/.env`), tryWrite('tmp', '$TMPDIR/x'), tryRead('data', `${f.groveHome}/data/store.db`), tryWrite('wt', 'ok.txt')].join('; ');
  const r = runArgv(bwrapArgv(await bwrapPath(), p, ['sh', '-c', script]), agentEnv(f.home));
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^env=\[\]$/m, r.stdout);
  assert.match(r.stdout, /^tmp=ok$/m, r.stdout);
  assert.match(r.stdout, /^data=\[\]$/m, r.stdout);
  assert.match(r.stdout, /^wt=ok$/m, r.stdout);
  assert.equal(readFileSync(path.join(tmpdir, 'x'), 'utf8'), 'x\n');
});

test('root in the sandbox cannot undo it: no remount of / writable, no unmount of a hidden folder', { timeout: 60_000 }, async (t) => {
  assert.equal(process.getuid?.(), 0, 'the suite runs as root (docs/testing.md)');
  const f = sandboxFixture(t);
  const p = policy(f.input);
  const script = [
    'mount -o remount,rw / 2>/dev/null',
    tryWrite('etc', `${f.repo}/escape.txt`),
    `umount "${f.home}/.ssh" 2>/dev/null`,
    tryRead('ssh', `${f.home}/.ssh/id_x`),
  ].join('; ');
  const r = runArgv(bwrapArgv(await bwrapPath(), p, ['sh', '-c', script]), agentEnv(f.home));
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^etc=refused$/m, r.stdout);
  assert.match(r.stdout, /^ssh=\[\]$/m, r.stdout);
  assert.ok(!existsSync(path.join(f.repo, 'escape.txt')));
});

test("System V shared memory made outside is not the sandbox's", { timeout: 60_000 }, async (t) => {
  const f = sandboxFixture(t);
  const p = policy(f.input);
  const id = /(\d+)\s*$/.exec(runArgv(['ipcmk', '-M', '4096'], { PATH }).stdout)?.[1];
  assert.ok(id, 'ipcmk made a segment');
  t.after(() => runArgv(['ipcrm', '-m', id], { PATH }));
  const list = `ipcs -m | awk '{print $2}' | grep -x ${id} >/dev/null && echo seen=yes || echo seen=no`;
  assert.match(runArgv(['sh', '-c', list], { PATH }).stdout, /^seen=yes$/m, 'visible outside');
  const r = runArgv(bwrapArgv(await bwrapPath(), p, ['sh', '-c', list]), agentEnv(f.home));
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^seen=no$/m, r.stdout);
});

test('as another user (nobody): the commit lands, HOME and the hooks stay read-only, the key unreadable', { timeout: 60_000 }, async (t) => {
  const f = sandboxFixture(t);
  // The user owns its repository, HOME and TMPDIR, as a real user does.
  const nobody = Number(runArgv(['id', '-u', 'nobody'], { PATH }).stdout.trim());
  for (const dir of [f.repo, f.home, f.groveHome, f.input.tmpdir]) chownTree(dir, nobody);
  const p = policy(f.input);
  chownTree(path.dirname(f.input.scratchDir), nobody); // the session's own folder, made by the policy
  const script = [
    'echo work > work.txt && git add work.txt && git commit -qm "as nobody" && echo commit=ok || echo commit=failed',
    tryWrite('home', `${f.home}/h.txt`),
    tryWrite('hook', `${f.repo}/.git/hooks/post-checkout`),
    tryRead('ssh', `${f.home}/.ssh/id_x`),
    'echo "uid=$(id -u)"',
  ].join('; ');
  const env = { ...agentEnv(f.home), GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*' };
  const r = runArgv(bwrapArgv(await bwrapPath(), p, ['sh', '-c', script]), env, { user: 'nobody' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^uid=${nobody}$`, 'm'), r.stdout);
  assert.match(r.stdout, /^commit=ok$/m, r.stdout);
  assert.match(r.stdout, /^home=refused$/m, r.stdout);
  assert.match(r.stdout, /^hook=refused$/m, r.stdout);
  assert.match(r.stdout, /^ssh=\[\]$/m, r.stdout);
  assert.equal(git(f.repo, '-c', 'safe.directory=*', 'log', '-1', '--format=%s', 'grove/mine'), 'as nobody');
  assert.ok(!existsSync(path.join(f.home, 'h.txt')));
});

// Outside a sandbox, a double fork that also left the group escapes a kill (docs/decisions/sessions.md).
test("a KILL of the session's process group ends every process in the sandbox, a double-forked one that left the group included", { timeout: 60_000 }, async (t) => {
  const f = sandboxFixture(t);
  const p = policy(f.input);
  const m = marker(t);
  const argv = bwrapArgv(await bwrapPath(), p, ['sh', '-c', `(setsid sleep ${m} &); sleep ${m} & echo started; wait`]);
  // As a session is started: the leader of its own process group, output to a pipe here.
  const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: ['ignore', 'pipe', 'inherit'], env: agentEnv(f.home) });
  t.after(() => child.kill('SIGKILL'));
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  for (const deadline = Date.now() + 10_000; sleeps(m).length < 2; ) {
    assert.ok(Date.now() < deadline, `the sleeps never both ran: ${processesMatching(m).join('; ')}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  process.kill(-child.pid!, 'SIGKILL');
  await gone(m);
});

test("a TERM to the session's process group reaches the agent inside, which may end in its own way", { timeout: 60_000 }, async (t) => {
  const f = sandboxFixture(t);
  const p = policy(f.input);
  const m = marker(t);
  const script = `trap 'echo term > "$TMPDIR/got"; kill $! 2>/dev/null; exit 0' TERM; sleep ${m} & echo started; wait`;
  const argv = bwrapArgv(await bwrapPath(), p, ['sh', '-c', script]);
  const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: ['ignore', 'pipe', 'inherit'], env: agentEnv(f.home) });
  t.after(() => child.kill('SIGKILL'));
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  // The sleep has run its own program: a TERM before that would find the shell's trap in it.
  for (const deadline = Date.now() + 10_000; sleeps(m).length === 0; ) {
    assert.ok(Date.now() < deadline, 'the sleep never ran');
    await new Promise((r) => setTimeout(r, 25));
  }
  process.kill(-child.pid!, 'SIGTERM');
  await gone(m);
  const got = path.join(p.tmpdir, 'got');
  for (const deadline = Date.now() + 10_000; !existsSync(got); ) {
    assert.ok(Date.now() < deadline, 'the agent never ran its TERM trap');
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.equal(readFileSync(got, 'utf8'), 'term\n');
});

test('a confined agent outlives the process that started it (a daemon restart, DESIGN §5)', { timeout: 60_000 }, async (t) => {
  const f = sandboxFixture(t);
  const p = policy(f.input);
  const fifo = path.join(p.tmpdir, 'fifo');
  runArgv(['mkfifo', fifo], { PATH });
  const m = marker(t);
  const argv = bwrapArgv(await bwrapPath(), p, ['sh', '-c', `echo ready; read x < "$TMPDIR/fifo"; echo "$x" > "$TMPDIR/answer"; exec sleep ${m}`]);
  // The "daemon": starts the sandbox in the background and exits once the agent runs.
  const quoted = argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const parent = spawn('sh', ['-c', `${quoted} </dev/null & read x`], { detached: true, stdio: ['pipe', 'pipe', 'inherit'], env: agentEnv(f.home) });
  t.after(() => parent.kill('SIGKILL'));
  const exited = new Promise<void>((resolve) => parent.once('exit', () => resolve()));
  await new Promise<void>((resolve) => parent.stdout!.once('data', () => resolve()));
  parent.stdin!.end();
  await exited;
  // Opening the FIFO for writing waits for its reader: only an agent still alive answers.
  const w = runArgv(['sh', '-c', `echo alive > '${fifo}'`], { PATH }, { timeoutMs: 10_000 });
  assert.equal(w.status, 0, `the agent died with its parent: ${w.stderr}`);
  for (const deadline = Date.now() + 10_000; sleeps(m).length === 0; ) {
    assert.ok(Date.now() < deadline, 'the agent never went on');
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.equal(readFileSync(path.join(p.tmpdir, 'answer'), 'utf8'), 'alive\n');
});

// The marker's sleeps themselves: bwrap's and the shell's command lines hold the marker too.
function sleeps(m: string): string[] {
  return processesMatching(m).filter((args) => args.startsWith('sleep '));
}

// chown -R, without a shell.
function chownTree(dir: string, uid: number): void {
  chownSync(dir, uid, uid);
  if (!statSync(dir).isDirectory()) return;
  chmodSync(dir, 0o755);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) chownTree(p, uid);
    else chownSync(p, uid, uid);
  }
}
