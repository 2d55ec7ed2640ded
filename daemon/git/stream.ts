import { spawn } from 'node:child_process';
import { gitEnv } from './run.ts';

export interface CappedResult {
  /** null when git was killed: at the cap, or by the signal */
  exitCode: number | null;
  /** at most `maxBytes` of git's stdout, as git wrote it */
  stdout: Buffer;
  /** git wrote more than `maxBytes`: it was killed there */
  truncated: boolean;
  /** the signal aborted the run (git was killed) */
  aborted: boolean;
  stderr: string;
}

// git's stderr kept for a failure's message; the rest is dropped.
const STDERR_KEPT = 16 * 1024;

// Runs git (argument array, cleaned environment as git() does) and reads its stdout as it comes,
// keeping at most `maxBytes`: past that git is killed, so that its output is never held whole.
// git leads its own process group (detached), and the cap or the signal kills the group.
export function gitCapped(cwd: string, args: string[], opts: { maxBytes: number; env?: Record<string, string>; signal?: AbortSignal }): Promise<CappedResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    let aborted = false;
    let stderr = '';
    const child = spawn('git', ['-C', cwd, ...args], { env: { ...gitEnv(), ...(opts.env ?? {}) }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const onAbort = () => {
      aborted = true;
      kill();
    };
    child.stdout.on('data', (b: Buffer) => {
      if (truncated) return;
      const room = opts.maxBytes - size;
      if (b.length <= room) {
        chunks.push(b);
        size += b.length;
        return;
      }
      chunks.push(b.subarray(0, room));
      size = opts.maxBytes;
      truncated = true;
      kill();
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      if (stderr.length < STDERR_KEPT) stderr += s.slice(0, STDERR_KEPT - stderr.length);
    });
    child.once('error', (err) => {
      opts.signal?.removeEventListener('abort', onAbort);
      resolve({ exitCode: 127, stdout: Buffer.alloc(0), truncated: false, aborted, stderr: err.message });
    });
    child.once('close', (code) => {
      opts.signal?.removeEventListener('abort', onAbort);
      resolve({ exitCode: truncated || aborted ? null : code, stdout: Buffer.concat(chunks, size), truncated, aborted, stderr });
    });
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
