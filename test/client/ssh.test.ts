// The SSH transport against a real sshd and a real remote daemon (DESIGN §14.1).
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { Client } from 'undici';
import { parseSshUrl } from '../../daemon/client/hosts-file.ts';
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

function endMaster(t: Cleanup, url: string, o: ForwardOptions): void {
  t.after(() => closeMaster(parseSshUrl(url), o));
}

test('a forward opens a master, reaches the remote daemon, and the next open reuses both', async (t) => {
  const { daemon, sshd, opts } = await remote(t);
  const dir = runtimeDir(t);
  const o = opts(dir);
  const url = sshd.url(daemon.socketPath);
  endMaster(t, url, o);
  const target = parseSshUrl(url);

  let started = performance.now();
  const first = await openForward(target, o);
  const firstMs = performance.now() - started;
  assert.equal(first.reused, false);
  assert.equal((await health(first.socketPath)).socket, daemon.socketPath);
  assert.ok((await masterPid(target, o)) !== null, 'ssh -O check finds the master');
  assert.equal(statSync(dir).mode & 0o777, 0o700);
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
  const { daemon, sshd, bin, opts } = await remote(t);
  const o = opts(runtimeDir(t));
  const url = sshd.url();
  endMaster(t, url, o);
  const target = parseSshUrl(url);
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
  process.kill((await masterPid(target, o))!, 'SIGKILL');
  await until(() => masterPid(target, o).then((p) => p === null), 'the master to be gone');
  const again = await openForward(target, o);
  assert.equal(again.reused, false);
  assert.equal(asked(), 2);
  assert.equal((await health(again.socketPath)).socket, daemon.socketPath);
});

test('a stale local socket (its master gone) is removed and the forward opened again', async (t) => {
  const { daemon, sshd, opts } = await remote(t);
  const o = opts(runtimeDir(t));
  const url = sshd.url(daemon.socketPath);
  endMaster(t, url, o);
  const target = parseSshUrl(url);
  const first = await openForward(target, o);
  // A master killed outright leaves its forward's socket file behind, with no one listening.
  const pid = await masterPid(target, o);
  assert.ok(pid !== null);
  process.kill(pid, 'SIGKILL');
  await until(() => masterPid(target, o).then((p) => p === null), 'the master to be gone');
  assert.ok(existsSync(first.socketPath), 'the stale socket file is there');

  const fwd = await openForward(target, o);
  assert.equal(fwd.reused, false);
  assert.equal((await health(fwd.socketPath)).status, 'ok');
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
