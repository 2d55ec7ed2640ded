// The SSH transport (DESIGN §14.1): the system's `ssh`, one master connection per host, and a
// stream-local forward of the remote daemon's unix socket to a local one, as `docker -H ssh://`
// does. SSH does the authentication; only unix sockets are opened on this machine.
// node:child_process, not execa: the ssh master and forwards are long-lived children whose
// stderr is read as it comes, on the CLI's path.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import path from 'node:path';
import type { SshTarget } from './hosts-file.ts';

// How long a master outlives its last use: a CLI run right after another, or the dashboard's
// next look, finds the connection open; a host left alone is let go.
export const CONTROL_PERSIST_S = 600;
// The default bound of one ssh call, start to end, whatever ssh itself waits for.
export const SSH_TIMEOUT_MS = 20_000;

export type SshFailureCode =
  /** ssh exited with an error: a refused key, an unknown host key, no route, a refused forward */
  | 'SSH_FAILED'
  /** an ssh call ran past its bound and was stopped */
  | 'SSH_TIMEOUT'
  /** the remote `grove socket` did not print a socket path */
  | 'NO_REMOTE_SOCKET';

// What the CLI shows (exit 3) and the daemon answers as HOST_UNREACHABLE: ssh's own words.
export class SshError extends Error {
  constructor(
    readonly code: SshFailureCode,
    message: string,
  ) {
    super(message);
    this.name = 'SshError';
  }
}

export interface ForwardOptions {
  /** the 0700 folder of masters and forwards: sshDir() */
  runtimeDir: string;
  /** the environment ssh runs with; GROVE_SSH_CONFIG there is passed to ssh as -F */
  env?: NodeJS.ProcessEnv;
  /** the bound of each ssh call */
  timeoutMs?: number;
}

export interface Forward {
  /** the local socket that reaches the remote daemon's API */
  socketPath: string;
  /** the remote daemon's socket it reaches: the URL's, or what `grove socket` printed */
  remoteSocket: string;
  /** true when a live forward was found and nothing was run */
  reused: boolean;
}

// $XDG_RUNTIME_DIR/grove/ssh, else /tmp/grove-<uid>/ssh (beside the default daemon socket).
export function sshDir(env: NodeJS.ProcessEnv, uid: number): string {
  const runtime = env.XDG_RUNTIME_DIR;
  return runtime && path.isAbsolute(runtime) ? path.join(runtime, 'grove', 'ssh') : path.join('/tmp', `grove-${uid}`, 'ssh');
}

// Short names from a hash: a unix socket path holds at most 107 bytes, and a destination may be
// long. The forward's name includes the remote socket, which another URL may name differently.
export function controlPaths(target: SshTarget, runtimeDir: string, remoteSocket?: string): { master: string; forward: string; remembered: string } {
  const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);
  const host = `${target.destination}\0${target.port ?? ''}`;
  return {
    master: path.join(runtimeDir, `${hash(host)}.m`),
    forward: path.join(runtimeDir, `${hash(`${host}\0${remoteSocket ?? ''}`)}.s`),
    // What the host's `grove socket` printed last, so that the next open need not ask again.
    remembered: path.join(runtimeDir, `${hash(host)}.r`),
  };
}

function remembered(file: string): string | undefined {
  try {
    const socket = readFileSync(file, 'utf8').trim();
    return path.isAbsolute(socket) ? socket : undefined;
  } catch {
    return undefined;
  }
}

// The options every call shares: the master's socket, never a prompt, a bounded connect.
function baseArgs(target: SshTarget, master: string, opts: ForwardOptions): string[] {
  const config = opts.env?.GROVE_SSH_CONFIG;
  const connectS = Math.max(1, Math.floor((opts.timeoutMs ?? SSH_TIMEOUT_MS) / 2000));
  return [
    ...(config ? ['-F', config] : []),
    '-o', 'ControlMaster=auto',
    '-o', `ControlPath=${master}`,
    '-o', `ControlPersist=${CONTROL_PERSIST_S}`,
    '-o', 'BatchMode=yes',
    '-o', `ConnectTimeout=${connectS}`,
    '-o', 'ExitOnForwardFailure=yes',
    '-o', 'StreamLocalBindUnlink=yes',
    ...(target.port === undefined ? [] : ['-p', String(target.port)]),
  ];
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

// One ssh call with no input (nothing can be typed to it) and a bound: past it, it is killed.
function ssh(args: string[], opts: ForwardOptions): Promise<Ran> {
  const timeoutMs = opts.timeoutMs ?? SSH_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const child = spawn('ssh', args, { env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new SshError('SSH_TIMEOUT', `ssh did not finish within ${Math.round(timeoutMs / 1000)} s${stderr.trim() ? `: ${stderr.trim()}` : ''}`));
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new SshError('SSH_FAILED', `cannot run ssh: ${err.message}`));
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function failure(what: string, ran: Ran): SshError {
  const said = ran.stderr.trim();
  return new SshError('SSH_FAILED', said === '' ? `${what}: ssh exited with status ${ran.code}` : said);
}

// Whether something accepts connections on the socket now (a master's forward answers at once).
function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createConnection(socketPath);
    const done = (ok: boolean) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), 2000);
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

function prepareDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700); // the umask may have taken bits off mkdir's mode, or the folder was there
}

// The master for this host unless one answers already: a first call that runs `true` leaves
// it behind (ControlPersist). Not -f -N: of two processes starting one at once, the one that
// cannot take the control socket would stay in the background for good, as a plain connection.
async function ensureMaster(target: SshTarget, master: string, opts: ForwardOptions): Promise<void> {
  if ((await masterPid(target, opts)) !== null) return;
  const started = await ssh([...baseArgs(target, master, opts), '--', target.destination, 'true'], opts);
  if (started.code !== 0) throw failure(`cannot connect to ${target.destination}`, started);
}

// The remote daemon's socket, as the remote `grove socket` prints it.
async function askSocket(target: SshTarget, master: string, opts: ForwardOptions): Promise<string> {
  const ran = await ssh([...baseArgs(target, master, opts), '--', target.destination, 'grove socket'], opts);
  if (ran.code !== 0) throw new SshError('NO_REMOTE_SOCKET', `\`grove socket\` failed on ${target.destination}: ${ran.stderr.trim() || `status ${ran.code}`}`);
  const socket = ran.stdout.trim().split('\n')[0]?.trim() ?? '';
  if (!path.isAbsolute(socket)) throw new SshError('NO_REMOTE_SOCKET', `\`grove socket\` on ${target.destination} printed no socket path: ${JSON.stringify(ran.stdout.trim())}`);
  return socket;
}

// A socket file no one answers on: left by a master that died. Removed, so the forward can bind.
function removeStale(socketPath: string): void {
  try {
    if (lstatSync(socketPath).isSocket()) unlinkSync(socketPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

// A local socket that reaches the remote daemon's API: the one already open, or a new forward
// over the host's master (started if need be). Fails with an SshError, never waits for a person.
export async function openForward(target: SshTarget, opts: ForwardOptions): Promise<Forward> {
  prepareDir(opts.runtimeDir);
  const paths = controlPaths(target, opts.runtimeDir);
  // A live forward is found without running ssh at all: to the socket the URL names, or else to
  // the one the host's `grove socket` printed last time.
  const known = target.socket ?? remembered(paths.remembered);
  if (known !== undefined) {
    const { forward } = controlPaths(target, opts.runtimeDir, known);
    if (await answers(forward)) return { socketPath: forward, remoteSocket: known, reused: true };
  }
  await ensureMaster(target, paths.master, opts);
  let remote = target.socket;
  if (remote === undefined) {
    remote = await askSocket(target, paths.master, opts);
    writeFileSync(paths.remembered, `${remote}\n`, { mode: 0o600 });
  }
  const { forward } = controlPaths(target, opts.runtimeDir, remote);
  if (await answers(forward)) return { socketPath: forward, remoteSocket: remote, reused: true };
  removeStale(forward);
  const base = baseArgs(target, paths.master, opts);
  const spec = `${forward}:${remote}`;
  const add = async () => {
    const added = await ssh([...base, '-O', 'forward', '-L', spec, '--', target.destination], opts);
    if (added.code !== 0) throw failure(`cannot forward ${remote} of ${target.destination}`, added);
    return answers(forward);
  };
  // The master takes the same forward twice as one (another process may have just added it),
  // but then does not bind again a socket file someone removed: cancelled and added anew.
  if (!(await add())) {
    await ssh([...base, '-O', 'cancel', '-L', spec, '--', target.destination], opts);
    if (!(await add())) throw new SshError('SSH_FAILED', `the forward of ${remote} of ${target.destination} does not answer`);
  }
  return { socketPath: forward, remoteSocket: remote, reused: false };
}

// The pid of this host's master (ssh -O check), null when none runs.
export async function masterPid(target: SshTarget, opts: ForwardOptions): Promise<number | null> {
  const { master } = controlPaths(target, opts.runtimeDir);
  const ran = await ssh([...baseArgs(target, master, opts), '-O', 'check', '--', target.destination], opts);
  const pid = /pid=(\d+)/.exec(ran.stderr);
  return ran.code === 0 && pid ? Number(pid[1]) : null;
}

// Ends this host's master and its forwards (ssh -O exit); nothing to do when none runs.
export async function closeMaster(target: SshTarget, opts: ForwardOptions): Promise<void> {
  const { master } = controlPaths(target, opts.runtimeDir);
  await ssh([...baseArgs(target, master, opts), '-O', 'exit', '--', target.destination], opts);
}
