// The SSH transport against a real sshd and a real remote daemon (DESIGN §14.1).
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { Client } from 'undici';
import { parseSshUrl, type SshTarget } from '../../daemon/client/hosts-file.ts';
import { closeMaster, controlPaths, masterPid, openForward, sshDir, type ForwardOptions } from '../../daemon/client/ssh.ts';
import { startDaemon, type Cleanup, type TestDaemon } from '../helpers/daemon.ts';
import { remoteBin, startSshd, type Sshd } from '../helpers/sshd.ts';
import { until } from '../helpers/store.ts';

function runtimeDir(t: Cleanup): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'grove-r-')));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'ssh');
}

async function health(socketPath: string): Promise<any> {
  const client = new Client('http://localhost', { socketPath });
  try {
    const res = await client.request({ method: 'GET', path: '/api/health' });
    return await res.body.json();
  } finally {
    await client.close();
  }
}

// A remote daemon, and an sshd whose sessions find it: GROVE_HOME, and a `grove` on PATH.
async function remote(t: Cleanup, o: { passwords?: boolean } = {}): Promise<{ daemon: TestDaemon; sshd: Sshd; bin: string; opts: (dir: string) => ForwardOptions }> {
  const daemon = await startDaemon(t);
  const bin = remoteBin(t, daemon.socketPath);
  const sshd = await startSshd(t, { env: { PATH: `${bin}:/usr/bin:/bin`, GROVE_HOME: daemon.home }, ...o });
  const opts = (dir: string): ForwardOptions => ({ runtimeDir: dir, env: { ...process.env, GROVE_SSH_CONFIG: sshd.clientConfig } });
  return { daemon, sshd, bin, opts };
}

// Kills the host's master outright, as a crash would, and waits until ssh -O check misses it.
async function killMaster(target: SshTarget, o: ForwardOptions): Promise<void> {
  const pid = await masterPid(target, o);
  assert.ok(pid !== null);
  process.kill(pid, 'SIGKILL');
  await until(() => masterPid(target, o).then((p) => p === null), 'the master to be gone');
}

// remote(), with a runtime folder for this test and the URL of the remote daemon's socket (or
// none: asked of `grove socket`), whose master is ended after the test.
async function reachable(t: Cleanup, withSocket = true) {
  const r = await remote(t);
  const o = r.opts(runtimeDir(t));
  const url = withSocket ? r.sshd.url(r.daemon.socketPath) : r.sshd.url();
  t.after(() => closeMaster(parseSshUrl(url), o));
  return { ...r, o, target: parseSshUrl(url) };
}

test('a forward opens a master, reaches the remote daemon, and the next open reuses both', async (t) => {
  const { daemon, sshd, o, target } = await reachable(t);

  let started = performance.now();
  const first = await openForward(target, o);
  const firstMs = performance.now() - started;
  assert.equal(first.reused, false);
  assert.equal((await health(first.socketPath)).socket, daemon.socketPath);
  assert.ok((await masterPid(target, o)) !== null, 'ssh -O check finds the master');
  assert.equal(statSync(o.runtimeDir).mode & 0o777, 0o700);
  assert.ok(Buffer.byteLength(first.socketPath) <= 107);

  started = performance.now();
  const next = await openForward(target, o);
  const nextMs = performance.now() - started;
  assert.deepEqual(next, { socketPath: first.socketPath, remoteSocket: daemon.socketPath, reused: true });
  t.diagnostic(`first open ${firstMs.toFixed(0)} ms, next ${nextMs.toFixed(0)} ms`);
  // One sshd session: the master; the next open made no connection of its own.
  assert.equal(sshd.log().match(/Accepted publickey/g)?.length, 1, sshd.log());
  assert.equal((await health(next.socketPath)).status, 'ok');
});

test('without ?socket= the remote socket is asked of the remote `grove socket`, once', async (t) => {
  const { daemon, bin, o, target } = await reachable(t, false);
  const fwd = await openForward(target, o);
  assert.equal((await health(fwd.socketPath)).socket, daemon.socketPath);
  assert.equal(fwd.remoteSocket, daemon.socketPath);
  // The forward is named after the socket the remote printed.
  assert.equal(fwd.socketPath, controlPaths(target, o.runtimeDir, daemon.socketPath).forward);
  const asked = () => readFileSync(path.join(bin, 'asked'), 'utf8').split('\n').filter(Boolean).length;
  assert.equal(asked(), 1);

  // The next open (another CLI run, say) finds the live forward from what was printed.
  const started = performance.now();
  assert.deepEqual(await openForward(target, o), { ...fwd, reused: true });
  t.diagnostic(`next open without ?socket=: ${(performance.now() - started).toFixed(0)} ms`);
  assert.equal(asked(), 1, 'not asked again');

  // Its master gone, the next open asks again (the remote daemon may have moved) and forwards anew.
  await killMaster(target, o);
  const again = await openForward(target, o);
  assert.equal(again.reused, false);
  assert.equal(asked(), 2);
  assert.equal((await health(again.socketPath)).socket, daemon.socketPath);
});

// The ssh processes whose command line names this control socket (a master shows it too).
function sshProcessesOf(master: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmd.includes(master)) out.push(`${pid} ${cmd}`);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

test('two opens at once (the CLI and the daemon, say) leave one master and nothing else behind', async (t) => {
  const { o, target } = await reachable(t);
  const [a, b] = await Promise.all([openForward(target, o), openForward(target, o)]);
  assert.equal(a.socketPath, b.socketPath);
  assert.equal((await health(a.socketPath)).status, 'ok');
  const { master } = controlPaths(target, o.runtimeDir);
  await until(() => sshProcessesOf(master).length === 1, 'one ssh process: the master');
  assert.match(sshProcessesOf(master)[0]!, /\[mux\]/);
});

test('a stale local socket (its master gone) is removed and the forward opened again', async (t) => {
  const { o, target } = await reachable(t);
  const first = await openForward(target, o);
  // A master killed outright leaves its forward's socket file behind, with no one listening.
  await killMaster(target, o);
  assert.ok(existsSync(first.socketPath), 'the stale socket file is there');

  const fwd = await openForward(target, o);
  assert.equal(fwd.reused, false);
  assert.equal((await health(fwd.socketPath)).status, 'ok');
});

test('a forward whose socket file was removed (its master still running) is made again', async (t) => {
  const { o, target } = await reachable(t);
  const first = await openForward(target, o);
  const pid = await masterPid(target, o);
  unlinkSync(first.socketPath);
  const again = await openForward(target, o);
  assert.equal(again.reused, false);
  assert.equal(await masterPid(target, o), pid, 'the same master');
  assert.equal((await health(again.socketPath)).status, 'ok');
});

test('a refused key fails at once with ssh\'s own message, and never prompts for the password the server offers', async (t) => {
  const { daemon, sshd } = await remote(t, { passwords: true });
  const dir = runtimeDir(t);
  // An askpass program ssh would run for any prompt (SSH_ASKPASS_REQUIRE=force): it leaves a mark.
  const asked = path.join(path.dirname(dir), 'asked');
  const askpass = path.join(path.dirname(dir), 'askpass');
  writeFileSync(askpass, `#!/bin/sh\necho "$1" >> '${asked}'\necho wrong\n`, { mode: 0o755 });
  const env = { ...process.env, GROVE_SSH_CONFIG: sshd.strangerConfig, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force' };
  const o: ForwardOptions = { runtimeDir: dir, env, timeoutMs: 60_000 };
  const started = performance.now();
  await assert.rejects(openForward(parseSshUrl(sshd.url(daemon.socketPath)), o), (err: any) => {
    assert.equal(err.code, 'SSH_FAILED');
    assert.match(err.message, /Permission denied \(publickey,password,keyboard-interactive\)/);
    return true;
  });
  assert.equal(existsSync(asked), false, 'ssh asked for nothing');
  // Far inside the bound: ssh gave up rather than waiting for someone to type.
  assert.ok(performance.now() - started < 30_000);
});

test('an unknown host key is refused with ssh\'s message', async (t) => {
  const { daemon, sshd } = await remote(t);
  const dir = runtimeDir(t);
  mkdirSync(dir, { recursive: true });
  // The same config but no known host: StrictHostKeyChecking refuses.
  const config = path.join(path.dirname(dir), 'config');
  writeFileSync(config, `Host *\n  UserKnownHostsFile /dev/null\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n`);
  chmodSync(config, 0o600);
  const o: ForwardOptions = { runtimeDir: dir, env: { ...process.env, GROVE_SSH_CONFIG: config } };
  await assert.rejects(openForward(parseSshUrl(sshd.url(daemon.socketPath)), o), /Host key verification failed/);
});

test('a host that accepts and never answers is given up on within the bound', async (t) => {
  // A loopback listener that says nothing: ssh waits for a banner that never comes.
  const sockets: Socket[] = [];
  const silent = createServer((s) => void sockets.push(s));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const port = (silent.address() as { port: number }).port;
  const o: ForwardOptions = { runtimeDir: runtimeDir(t), env: { ...process.env, GROVE_SSH_CONFIG: '/dev/null' }, timeoutMs: 4000 };
  const started = performance.now();
  await assert.rejects(openForward(parseSshUrl(`ssh://nobody@127.0.0.1:${port}?socket=/x.sock`), o), (err: any) => {
    assert.ok(err.code === 'SSH_FAILED' || err.code === 'SSH_TIMEOUT', err.message);
    return true;
  });
  assert.ok(performance.now() - started < 15_000, 'bounded');
});

test('sshDir is the runtime folder of the user', () => {
  assert.equal(sshDir({ XDG_RUNTIME_DIR: '/run/user/7' }, 7), '/run/user/7/grove/ssh');
  assert.equal(sshDir({}, 7), '/tmp/grove-7/ssh');
  assert.equal(sshDir({ XDG_RUNTIME_DIR: 'relative' }, 7), '/tmp/grove-7/ssh');
});
