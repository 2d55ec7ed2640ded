// `grove --host NAME|URL <command>` and GROVE_HOST (DESIGN §14.1): every command family against a
// second daemon over a real sshd, compared with the same command on that daemon's own socket.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parseSshUrl } from '../../daemon/client/hosts-file.ts';
import { closeMaster, controlPaths, masterPid, sshDir } from '../../daemon/client/ssh.ts';
import { grove, running, type CliRun } from '../helpers/cli.ts';
import { makeHome, ROOT, sharedForFile, startDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { waitSessionEnd } from '../helpers/sessions.ts';
import { freePort, sshHostWorld, startSshd } from '../helpers/sshd.ts';
import { until } from '../helpers/store.ts';

const WEB = path.join(ROOT, 'test', 'fixtures', 'web-service.mjs');
const STREAM = path.join(ROOT, 'test', 'fixtures', 'stream-agent.mjs');
// An agent that prints its session id, so that `grove say` can continue its conversation.
const world = sharedForFile((c) => sshHostWorld(c, { agents: { talk: { command: [STREAM, '--', '{prompt}'], resume: [STREAM, '--resume', '{session}', '--', '{prompt}'], format: 'claude' } } }));

// What moves between two runs a moment apart: an uptime, a heartbeat's age.
const still = (s: string) => s.replace(/up (\d+[hms] ?)+/g, 'up T').replace(/"uptime_s": \d+/g, '"uptime_s": T').replace(/((\d+[hms] )*\d+[hms]) ago/g, 'T ago').replace(/"seen_at": "[^"]+"/g, '"seen_at": T');

async function both(args: string[]): Promise<{ direct: CliRun; via: CliRun }> {
  const w = await world();
  // Straight at the remote daemon's socket, then through ssh: the same client home either way.
  const direct = await grove(w.client, args, { env: { GROVE_SOCKET: w.remote.socketPath } });
  const via = await grove(w.client, ['--host', 'box', ...args], { env: w.env });
  return { direct, via };
}

// The command answers the same through --host as on the remote's own socket: stdout and status.
async function same(args: string[], code = 0): Promise<CliRun> {
  const { direct, via } = await both(args);
  assert.equal(direct.code, code, `${args.join(' ')} directly: ${direct.stderr}`);
  assert.equal(via.code, direct.code, `${args.join(' ')} through --host: ${via.stderr}`);
  assert.equal(still(via.stdout), still(direct.stdout), args.join(' '));
  return via;
}

async function via(args: string[]): Promise<CliRun> {
  const w = await world();
  const r = await grove(w.client, ['--host', 'box', ...args], { env: w.env });
  assert.equal(r.code, 0, `${args.join(' ')} through --host: ${r.stderr}`);
  return r;
}

test('every command family through --host answers as on the remote daemon’s own socket: same stdout, same --json, same exit status', async (t) => {
  const w = await world();
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture', ports: [3000], services: { web: { command: `exec node ${WEB}` } } }) } });

  // project
  const added = await via(['project', 'add', repo, '--name', 'far', '--json']);
  assert.equal(added.json.path, repo);
  await same(['project', 'ls']);
  await same(['project', 'ls', '--json']);
  // task
  const task = (await via(['task', 'new', 'far', 'work', '--json'])).json;
  assert.equal(task.status, 'ready');
  await same(['task', 'ls']);
  await same(['task', 'ls', 'far', '--json']);
  await same(['task', 'show', 'work']);
  await same(['task', 'show', 'nosuch', '--json'], 1);
  await same(['task', 'show'], 2);
  // session, logs, say
  const s = (await via(['session', 'start', 'work', '--agent', 'talk', '--prompt', 'write:notes.txt=far away', '--json'])).json;
  await waitSessionEnd(w.remote, s.id);
  await same(['session', 'ls', 'work']);
  await same(['session', 'show', s.id, '--json']);
  await same(['logs', s.id]);
  await same(['logs', s.id, '--json']);
  const said = (await via(['say', s.id, 'and again', '--json'])).json;
  assert.equal(said.conversation_id, s.conversation_id);
  await waitSessionEnd(w.remote, said.id);
  await same(['logs', said.id]);
  await same(['session', 'ls', 'work', '--conversation', s.conversation_id]);
  // service
  await same(['service', 'ls', 'work']);
  assert.match((await via(['service', 'start', 'work', 'web'])).stdout, /^service web (starting|running), pid \d+/);
  await same(['service', 'start', 'work', 'web', '--json'], 1);
  assert.equal((await via(['service', 'stop', 'work', 'web'])).stdout, 'service web stopped\n');
  await same(['service', 'ls', 'work']);
  // approvals, approve, deny: the remote's list, and its refusals as they are
  await same(['approvals', '--all']);
  await same(['approvals', '--all', '--json']);
  await same(['approve', 'ffffffff', '--json'], 1);
  await same(['deny', 'ffffffff', '-m', 'no'], 1);
  // changes, diff, commit, rebase, merge, push
  await same(['changes', 'work']);
  await same(['diff', 'work']);
  assert.match((await via(['commit', 'work', '-m', 'notes from afar'])).stdout, /notes from afar|[0-9a-f]{7}/);
  await same(['changes', 'work', '--json']);
  await same(['rebase', 'work', '--json']);
  await same(['push', 'work', '--json'], 1);
  await same(['conflicts', 'far']);
  await same(['pool', 'far']);
  await via(['merge', 'work', '-m', 'landed from afar']);
  await same(['merge', 'work', '--json']);
  // the daemon itself, its agents, its hosts
  await same(['status']);
  await same(['status', '--json']);
  await same(['agents']);
  await same(['agents', '--json']);
  await same(['host', 'ls']);
  await same(['host', 'ls', '--json']);
});

test('grove --host X events: the last ten as on the remote, then live over the forward (SSE)', async (t) => {
  const w = await world();
  const far = running(w.client, ['--host', 'box', 'events', '--json'], false, w.env);
  t.after(far.stop);
  const near = running(w.client, ['events', '--json'], false, { GROVE_SOCKET: w.remote.socketPath });
  t.after(near.stop);
  const lines = (text: string) => text.split('\n').filter((l) => l !== '');
  await until(() => lines(far.output()).length >= 1 && lines(near.output()).length === lines(far.output()).length, 'both to print the recent events');
  assert.deepEqual(lines(far.output()), lines(near.output()));
  const repo = makeRepo(t);
  const p = (await grove(w.client, ['project', 'add', repo, '--name', 'live', '--json'], { env: { GROVE_SOCKET: w.remote.socketPath } })).json;
  await far.waitFor(new RegExp(`"type":"project.added"[^\\n]*"project_id":"${p.id}"`));
});

test('a warm master is reused: the second command opens no ssh connection; a master that died leaves a stale socket, replaced', async (t) => {
  const w = await world();
  // A runtime folder of this test's own: its first command starts the master.
  const env = { ...w.env, XDG_RUNTIME_DIR: makeHome(t) };
  const accepted = () => w.sshd.log().match(/Accepted publickey/g)?.length ?? 0;
  const before = accepted();
  const run = async () => {
    const r = await grove(w.client, ['--host', 'box', 'status', '--json'], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.json.socket, w.remote.socketPath);
  };
  await run();
  // sshd's log comes through a pipe: waited for, not read at once.
  await until(() => accepted() === before + 1, 'the first command to open the master');
  const target = parseSshUrl(w.sshd.url());
  const opts = { runtimeDir: sshDir({ ...process.env, ...env }, process.getuid!()), env: { ...process.env, ...env } };
  t.after(() => closeMaster(target, opts));
  const pid = await masterPid(target, opts);
  assert.ok(pid !== null);
  await run();
  assert.equal(accepted(), before + 1, 'the second command reused it');
  assert.equal(await masterPid(target, opts), pid);

  // The master dies as in a crash: its forward's socket file stays behind, answering no one.
  process.kill(pid, 'SIGKILL');
  await until(() => masterPid(target, opts).then((p) => p === null), 'the master to be gone');
  const forward = controlPaths(target, opts.runtimeDir, w.remote.socketPath).forward;
  assert.ok(existsSync(forward), 'the stale socket is there');
  await run();
  await until(() => accepted() === before + 2, 'a new master');
  assert.notEqual(await masterPid(target, opts), pid);
});

test('GROVE_HOST: commands go to that host; grove socket stays this machine’s unless --host is before it; host add stays local', async (t) => {
  const w = await world();
  const env = { ...w.env, GROVE_HOST: 'box' };
  const status = await grove(w.client, ['status', '--json'], { env });
  assert.equal(status.code, 0, status.stderr);
  assert.equal(status.json.socket, w.remote.socketPath);
  // --host before the command in either spelling, after another option too; it wins over GROVE_HOST.
  for (const args of [['--host=box', 'status', '--json'], ['--json', '--host', 'box', 'status']]) {
    const r = await grove(w.client, args, { env: { ...w.env, GROVE_HOST: 'nosuch' } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.json.socket, w.remote.socketPath, args.join(' '));
  }
  // `grove socket` is what ssh asks a remote: its own, whatever GROVE_HOST says.
  assert.equal((await grove(w.client, ['socket'], { env })).stdout, `${path.join(w.client, 'grove.sock')}\n`);
  // With --host before it: the local end of the forward, which reaches the remote daemon.
  const forward = (await grove(w.client, ['--host', 'box', 'socket'], { env: w.env })).stdout.trim();
  assert.notEqual(forward, w.remote.socketPath);
  const through = await grove(w.client, ['status', '--json'], { env: { GROVE_SOCKET: forward } });
  assert.equal(through.json.socket, w.remote.socketPath);
  // hosts.json is this machine's: GROVE_HOST does not send `host add` anywhere.
  const home = makeHome(t);
  const addedHere = await grove(home, ['host', 'add', 'other', 'ssh://me@elsewhere'], { env });
  assert.equal(addedHere.code, 0, addedHere.stderr);
  assert.match(readFileSync(path.join(home, 'hosts.json'), 'utf8'), /ssh:\/\/me@elsewhere/);
});

test('exit statuses: 2 for an unknown host, a misplaced --host, or a command of this machine; 1 for the remote’s refusals; 3 when the remote daemon is down', async (t) => {
  const w = await world();
  const run = (args: string[], env: Record<string, string> = w.env) => grove(w.client, args, { env });
  const unknown = await run(['--host', 'nosuch', 'status']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /no saved host named "nosuch"/);
  const after = await run(['status', '--host', 'box']);
  assert.equal(after.code, 2);
  assert.match(after.stderr, /--host goes before the command: grove --host box status/);
  for (const args of [['host', 'add', 'x', 'ssh://a'], ['install', '--dry-run'], ['daemon']]) {
    const r = await run(['--host', 'box', ...args]);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, /runs on this machine only/);
  }
  for (const args of [['takeover', 'ffffffff'], ['open']]) {
    const r = await run(args, { ...w.env, GROVE_HOST: 'box' });
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, /with a host \(box\)/);
  }
  assert.equal((await run(['--host', 'box', 'project', 'rm', 'nosuch'])).code, 1);

  // A daemon that stopped: its socket is gone, the forward to it answers nothing.
  const gone = await startDaemon(t);
  await gone.stop();
  const down = await run(['--host', w.sshd.url(gone.socketPath), 'status']);
  assert.equal(down.code, 3, down.stderr);
  assert.equal(down.stdout, '');
  assert.match(down.stderr, new RegExp(`^grove: grove daemon on ssh://[^ ]+ is not running \\(no answer on ${gone.socketPath} there\\)`));
});

test('ssh failures exit 3 with ssh’s own words, quickly, without a prompt: a refused key (on a terminal too), no route, no grove on the remote', async (t) => {
  // An sshd that would take a password, and whose sessions find no `grove`.
  const sshd = await startSshd(t, { passwords: true, env: { PATH: '/usr/bin:/bin' } });
  const client = makeHome(t);
  const env = (config: string) => ({ GROVE_SSH_CONFIG: config, XDG_RUNTIME_DIR: makeHome(t) });
  const timed = async (run: () => Promise<{ code: number; text: string }>) => {
    const started = Date.now();
    const r = await run();
    return { ...r, ms: Date.now() - started };
  };
  // stdin /dev/null
  const refused = await timed(async () => {
    const r = await grove(client, ['--host', sshd.url(), 'status'], { env: env(sshd.strangerConfig) });
    return { code: r.code, text: r.stderr };
  });
  assert.equal(refused.code, 3, refused.text);
  assert.match(refused.text, /^grove: cannot reach ssh:\/\/\S+ over ssh: .*Permission denied \(publickey,password,keyboard-interactive\)/);
  // stdin and stdout a pseudo-terminal: still no prompt, the same end.
  const onTty = await timed(async () => {
    const r = running(client, ['--host', sshd.url(), 'status'], true, env(sshd.strangerConfig));
    return { code: await r.exited, text: r.output() };
  });
  assert.equal(onTty.code, 3, onTty.text);
  assert.match(onTty.text, /Permission denied/);
  assert.doesNotMatch(onTty.text, /password:/i);
  // A host key ssh has never seen, with ssh's default of asking about it: BatchMode refuses at once.
  const unknownKey = path.join(makeHome(t), 'ssh_config');
  writeFileSync(unknownKey, readFileSync(sshd.clientConfig, 'utf8').replace(/^\s*StrictHostKeyChecking.*$/m, '').replace(/UserKnownHostsFile \S+/, `UserKnownHostsFile ${path.join(makeHome(t), 'known_hosts')}`));
  const unknownHost = await grove(client, ['--host', sshd.url(), 'status'], { env: env(unknownKey) });
  assert.equal(unknownHost.code, 3);
  assert.match(unknownHost.stderr, /Host key verification failed/);
  // Nothing listens on that port.
  const port = await freePort();
  const noRoute = await grove(client, ['--host', `ssh://me@127.0.0.1:${port}`, 'status'], { env: env(sshd.clientConfig) });
  assert.equal(noRoute.code, 3);
  assert.match(noRoute.stderr, /Connection refused/);
  // The key is taken, but there is no `grove` there to say where its daemon listens.
  const accepted = env(sshd.clientConfig);
  const full = { ...process.env, ...accepted };
  t.after(() => closeMaster(parseSshUrl(sshd.url()), { runtimeDir: sshDir(full, process.getuid!()), env: full }));
  const noGrove = await grove(client, ['--host', sshd.url(), 'status'], { env: accepted });
  assert.equal(noGrove.code, 3);
  assert.match(noGrove.stderr, /`grove socket` failed on \S+: .*grove: (command )?not found/);
  t.diagnostic(`refused key: ${refused.ms} ms (stdin /dev/null), ${onTty.ms} ms (a terminal)`);
  for (const r of [refused, onTty]) assert.ok(r.ms < 15_000, `bounded: ${r.ms} ms`);
});
