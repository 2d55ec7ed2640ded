import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { GRACE_MS, terminate } from '../proc/terminate.ts';

export interface GitResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** the signal stopped it (a bound, a client gone): its output is not to be trusted */
  stopped?: true;
}

// `env` adds variables after the cleaning below (a temporary index: GIT_INDEX_FILE); `input` is
// git's stdin (a commit message), else it has none; `signal` stops git, its hooks and filters.
export type Git = (cwd: string, args: string[], opts?: { env?: Record<string, string>; input?: string; signal?: AbortSignal | undefined }) => Promise<GitResult>;

// Variables that would point git at another repository than the one we name with -C.
const REPO_ENV = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_CEILING_DIRECTORIES',
  'GIT_DISCOVERY_ACROSS_FILESYSTEM',
];

// After git exits, how long something it started (a hook's background child, ssh) may keep its
// pipes open before they are closed on it: git's own output is complete once it has exited.
const DRAIN_MS = 300;

// The daemon's environment minus anything that would redirect git away from `-C <dir>`.
export function gitEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
  for (const k of REPO_ENV) delete env[k];
  return env;
}

// Resolves once `stream` has ended, or after `ms`, whichever is first.
function ended(stream: Readable, ms: number): Promise<void> {
  if (stream.readableEnded || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    stream.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

// Runs git with an argument array (never a shell) in `cwd`; failures are data, not throws. git is
// the leader of its own process group, so that a stop reaches its hooks, filters and helpers too
// (TERM, so that git removes its lock files, then KILL); the answer never waits on a pipe that
// something git started still holds.
export const git: Git = (cwd, args, opts = {}) => {
  const { signal } = opts;
  if (signal?.aborted) return Promise.resolve({ exitCode: 128, stdout: '', stderr: 'git was not run: stopped', stopped: true });
  return new Promise((resolve) => {
    const child = spawn('git', ['-C', cwd, ...args], {
      env: { ...gitEnv(), ...(opts.env ?? {}) },
      stdio: [opts.input !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const stdout = child.stdout!;
    const stderr = child.stderr!;
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    stdout.on('data', (b: Buffer) => out.push(b));
    stderr.on('data', (b: Buffer) => err.push(b));
    let stopped = false;
    const stop = () => {
      if (stopped || child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      stopped = true;
      void terminate(child.pid, { graceMs: GRACE_MS.git });
    };
    signal?.addEventListener('abort', stop, { once: true });
    if (opts.input !== undefined) {
      child.stdin!.on('error', () => {}); // git may exit without reading it all
      child.stdin!.end(opts.input);
    }
    let done = false;
    const finish = async (exitCode: number, spawnError?: string) => {
      if (done) return;
      done = true;
      signal?.removeEventListener('abort', stop);
      await Promise.all([ended(stdout, DRAIN_MS), ended(stderr, DRAIN_MS)]);
      stdout.destroy();
      stderr.destroy();
      const said = spawnError ?? Buffer.concat(err).toString().replace(/\n$/, '');
      resolve({
        exitCode,
        stdout: Buffer.concat(out).toString().replace(/\n$/, ''),
        ...(stopped ? { stderr: `git was stopped (${stopReason(signal)})`, stopped: true as const } : { stderr: said }),
      });
    };
    child.once('error', (e) => void finish(128, e.message));
    child.once('exit', (code) => void finish(code ?? 128));
  });
};

// What stopped a git: its time bound, or its caller.
function stopReason(signal: AbortSignal | undefined): string {
  return (signal?.reason as Error | undefined)?.name === 'TimeoutError' ? 'timed out' : 'cancelled';
}
