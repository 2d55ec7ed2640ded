// node:child_process, not execa: the one git runner needs the bare process for its own stop
// (terminate() of its process group, a grace) and its own bounded reading of the output.
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
export type Git = (cwd: string, args: string[], opts?: GitOptions) => Promise<GitResult>;

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

export type GitOptions = { env?: Record<string, string>; input?: string; signal?: AbortSignal | undefined };

// git's raw run: its stdout as bytes (at most `maxBytes`: past that git is stopped, so that a huge
// output is never held whole), its stderr, and how it ended.
interface RawRun {
  exitCode: number;
  stdout: Buffer;
  stderr: string;
  /** the signal stopped it */
  stopped: boolean;
  /** it wrote more than `maxBytes`: it was stopped there */
  truncated: boolean;
}

// git's stderr kept for a failure's message; the rest is dropped.
const STDERR_KEPT = 64 * 1024;

// Runs git with an argument array (never a shell) in `cwd`. git is the leader of its own process
// group, so that a stop reaches its hooks, filters and helpers too (TERM, so that git removes its
// lock files, then KILL); the answer never waits on a pipe that something git started still holds.
function runGit(cwd: string, args: string[], opts: GitOptions & { maxBytes?: number }): Promise<RawRun> {
  const { signal } = opts;
  if (signal?.aborted) return Promise.resolve({ exitCode: 128, stdout: Buffer.alloc(0), stderr: 'git was not run: stopped', stopped: true, truncated: false });
  return new Promise((resolve) => {
    const child = spawn('git', ['-C', cwd, ...args], {
      env: { ...gitEnv(), ...(opts.env ?? {}) },
      stdio: [opts.input !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const stdout = child.stdout!;
    const stderr = child.stderr!;
    const out: Buffer[] = [];
    let size = 0;
    let err = '';
    let stopped = false;
    let truncated = false;
    const stop = () => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      void terminate(child.pid, { graceMs: GRACE_MS.git });
    };
    const onAbort = () => {
      if (stopped || truncated) return;
      stopped = true;
      stop();
    };
    stdout.on('data', (b: Buffer) => {
      if (truncated) return;
      const room = (opts.maxBytes ?? Infinity) - size;
      if (b.length <= room) {
        out.push(b);
        size += b.length;
        return;
      }
      out.push(b.subarray(0, room));
      size += room;
      truncated = true;
      stop();
    });
    stderr.setEncoding('utf8').on('data', (t: string) => {
      if (err.length < STDERR_KEPT) err += t.slice(0, STDERR_KEPT - err.length);
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.input !== undefined) {
      child.stdin!.on('error', () => {}); // git may exit without reading it all
      child.stdin!.end(opts.input);
    }
    let done = false;
    const finish = async (exitCode: number, spawnError?: string) => {
      if (done) return;
      done = true;
      signal?.removeEventListener('abort', onAbort);
      await Promise.all([ended(stdout, DRAIN_MS), ended(stderr, DRAIN_MS)]);
      stdout.destroy();
      stderr.destroy();
      resolve({ exitCode, stdout: Buffer.concat(out, size), stderr: spawnError ?? err, stopped, truncated });
    };
    child.once('error', (e) => void finish(128, e.message));
    child.once('exit', (code) => void finish(code ?? 128));
  });
}

// git with its output as text; failures are data, not throws.
export const git: Git = async (cwd, args, opts = {}) => {
  const r = await runGit(cwd, args, opts);
  const stdout = r.stdout.toString().replace(/\n$/, '');
  if (r.stopped) return { exitCode: r.exitCode, stdout, stderr: `git was stopped (${stopReason(opts.signal)})`, stopped: true };
  return { exitCode: r.exitCode, stdout, stderr: r.stderr.replace(/\n$/, '') };
};

export interface CappedResult {
  /** null when git was stopped: at the cap, or by the signal */
  exitCode: number | null;
  /** at most `maxBytes` of git's stdout, as git wrote it */
  stdout: Buffer;
  /** git wrote more than `maxBytes`: it was stopped there */
  truncated: boolean;
  /** the signal stopped it */
  aborted: boolean;
  stderr: string;
}

// git whose stdout is kept as bytes, at most `maxBytes` of it (a served diff).
export async function gitCapped(cwd: string, args: string[], opts: { maxBytes: number; env?: Record<string, string>; signal?: AbortSignal | undefined }): Promise<CappedResult> {
  const r = await runGit(cwd, args, opts);
  return { exitCode: r.stopped || r.truncated ? null : r.exitCode, stdout: r.stdout, truncated: r.truncated, aborted: r.stopped, stderr: r.stderr };
}

// What stopped a git: its time bound, or its caller.
function stopReason(signal: AbortSignal | undefined): string {
  return (signal?.reason as Error | undefined)?.name === 'TimeoutError' ? 'timed out' : 'cancelled';
}
