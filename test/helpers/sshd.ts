// A real OpenSSH server for one test (DESIGN §14.1): its own host key, a client key it accepts,
// and an ssh config for the client side, all in a temporary folder, on a free loopback port.
import { execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseSshUrl } from '../../daemon/client/hosts-file.ts';
import { closeMaster, sshDir } from '../../daemon/client/ssh.ts';
import { DAEMON_ENTRY, makeHome, startDaemon, type Cleanup, type TestDaemon } from './daemon.ts';
import { agentHome } from './sessions.ts';

const run = promisify(execFile);
export const SSHD = '/usr/sbin/sshd';

export interface Sshd {
  port: number;
  pid: number;
  /** ssh://user@127.0.0.1:port, with ?socket= when given */
  url(socket?: string): string;
  /** the client's ssh config (IdentityFile, known hosts in the temp folder): GROVE_SSH_CONFIG */
  clientConfig: string;
  /** the same with a key the server does not accept */
  strangerConfig: string;
  /** the sshd log so far (sshd -e writes it to stderr) */
  log(): string;
}

export interface SshdOptions {
  /** the remote session's environment (sshd_config SetEnv): PATH to a `grove`, GROVE_HOME */
  env?: Record<string, string>;
  /** also offer password and keyboard-interactive logins (no password works): what a client
   * without BatchMode would prompt for */
  passwords?: boolean;
}

// A free loopback port: bound by the kernel, then released (for sshd to take, or to stay closed).
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

async function keygen(file: string): Promise<string> {
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'grove-test', '-f', file]);
  return readFileSync(`${file}.pub`, 'utf8').trim();
}

// The pids whose parent is `pid`: sshd's per-connection children outlive a killed listener.
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

export async function startSshd(t: Cleanup, opts: SshdOptions = {}): Promise<Sshd> {
  if (!existsSync('/run/sshd')) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'grove-ssh-')));
  chmodSync(dir, 0o700);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const hostKey = path.join(dir, 'host_key');
  const hostPub = await keygen(hostKey);
  const clientKey = path.join(dir, 'id_client');
  const clientPub = await keygen(clientKey);
  const strangerKey = path.join(dir, 'id_stranger');
  await keygen(strangerKey);
  const authorized = path.join(dir, 'authorized_keys');
  writeFileSync(authorized, `${clientPub}\n`, { mode: 0o600 });

  const port = await freePort();
  const env = Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`);
  const config = path.join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `AuthorizedKeysFile ${authorized}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      'PermitRootLogin prohibit-password',
      `PasswordAuthentication ${opts.passwords ? 'yes' : 'no'}`,
      `KbdInteractiveAuthentication ${opts.passwords ? 'yes' : 'no'}`,
      'UsePAM no',
      // Our files sit under the world-writable temporary folder, which StrictModes refuses.
      'StrictModes no',
      'AllowStreamLocalForwarding yes',
      'X11Forwarding no',
      'LogLevel VERBOSE',
      ...(env.length > 0 ? [`SetEnv ${env.join(' ')}`] : []),
      '',
    ].join('\n'),
  );
  const knownHosts = path.join(dir, 'known_hosts');
  writeFileSync(knownHosts, `[127.0.0.1]:${port} ${hostPub}\n`);
  const user = userInfo().username;
  const clientConfig = (identity: string) =>
    [
      'Host *',
      `  IdentityFile ${identity}`,
      '  IdentitiesOnly yes',
      `  UserKnownHostsFile ${knownHosts}`,
      '  GlobalKnownHostsFile /dev/null',
      '  StrictHostKeyChecking yes',
      '  LogLevel ERROR',
      '',
    ].join('\n');
  const configFile = path.join(dir, 'ssh_config');
  writeFileSync(configFile, clientConfig(clientKey));
  const strangerConfig = path.join(dir, 'ssh_config_stranger');
  writeFileSync(strangerConfig, clientConfig(strangerKey));

  const proc = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (log += d));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  t.after(async () => {
    const children = proc.pid === undefined ? [] : childrenOf(proc.pid);
    proc.kill('SIGTERM');
    for (const pid of children) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // ended by itself
      }
    }
    await exited;
  });
  // Ready once it logs that it listens; an exit before that is a broken config.
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sshd did not start: ${log}`)), 30_000);
    const check = () => {
      if (!/Server listening on/.test(log)) return;
      clearTimeout(timer);
      resolve();
    };
    proc.stderr!.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`sshd exited: ${log}`));
    });
    check();
  });
  return {
    port,
    pid: proc.pid!,
    url: (socket) => `ssh://${user}@127.0.0.1:${port}${socket === undefined ? '' : `?socket=${encodeURIComponent(socket)}`}`,
    clientConfig: configFile,
    strangerConfig,
    log: () => log,
  };
}

// A folder for the remote session's PATH with a `grove` that runs this checkout's CLI with the
// remote daemon's socket (so the real `grove socket` prints it), and adds a line to the folder's
// `asked` each time it is asked `grove socket`.
export function remoteBin(t: Cleanup, socket: string): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'grove-bin-')));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const script = [
    '#!/bin/sh',
    `if [ "$1" = socket ]; then echo asked >> '${path.join(dir, 'asked')}'; fi`,
    `GROVE_SOCKET='${socket}' exec '${process.execPath}' '${DAEMON_ENTRY}' "$@"`,
    '',
  ].join('\n');
  writeFileSync(path.join(dir, 'grove'), script, { mode: 0o755 });
  chmodSync(dir, 0o755);
  return dir;
}

export interface SshHostWorld {
  /** the remote machine's daemon (with the fixture agent) */
  remote: TestDaemon;
  sshd: Sshd;
  /** this machine's GROVE_HOME: hosts.json with the remote saved as `box`, and no daemon */
  client: string;
  /** what this machine's grove runs with: the ssh config, a runtime folder of its own */
  env: Record<string, string>;
}

// A laptop and a box: a remote daemon reached by an sshd whose sessions run the real `grove`
// against it, and a client home that saved it as `box` (URL without ?socket=: asked of the
// remote). The host's master is ended after the file.
export async function sshHostWorld(c: Cleanup, config: Record<string, unknown> = {}): Promise<SshHostWorld> {
  const remote = await startDaemon(c, { home: agentHome(c, config) });
  const bin = remoteBin(c, remote.socketPath);
  const sshd = await startSshd(c, { env: { PATH: `${bin}:/usr/bin:/bin`, GROVE_HOME: remote.home } });
  const client = makeHome(c);
  const env = { GROVE_SSH_CONFIG: sshd.clientConfig, XDG_RUNTIME_DIR: makeHome(c) };
  writeFileSync(path.join(client, 'hosts.json'), `${JSON.stringify({ hosts: [{ name: 'box', url: sshd.url() }] })}\n`, { mode: 0o600 });
  const full = { ...process.env, ...env };
  c.after(() => closeMaster(parseSshUrl(sshd.url()), { runtimeDir: sshDir(full, process.getuid!()), env: full }));
  return { remote, sshd, client, env };
}

export interface Tap {
  /** each connection that went through, with its bytes from the client so far */
  taps: Array<{ data: string; closed: boolean }>;
  /** every byte any client sent through, in order of connections */
  reached(): string;
}

// A unix socket at `at` in front of the daemon's socket that `target` names when a connection
// comes (a restarted daemon's): what went through shows what reached that daemon, and by which way.
export async function tapSocket(t: Cleanup, at: string, target: () => string): Promise<Tap> {
  const taps: Tap['taps'] = [];
  const conns: Socket[] = [];
  const tap = createServer((client) => {
    const seen = { data: '', closed: false };
    taps.push(seen);
    const up = createConnection(target());
    conns.push(client, up);
    client.on('data', (d) => (seen.data += d.toString('latin1')));
    client.on('close', () => (seen.closed = true));
    client.pipe(up).pipe(client);
    client.on('error', () => up.destroy());
    up.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => tap.listen(at, resolve));
  t.after(() => {
    for (const s of conns) s.destroy();
    tap.close();
  });
  return { taps, reached: () => taps.map((x) => x.data).join('') };
}
