import { closeSync, mkdirSync, openSync } from 'node:fs';
import { execa } from 'execa';
import { wrapperArgv, type SessionFiles } from './wrapper.ts';

type FdOption = 3;

export type SpawnResult =
  | {
      ok: true;
      pid: number;
      /** lets the held wrapper run the agent (once the session is stored) */
      go(): void;
      /** resolves once the wrapper has exited (it has written its exit status by then) */
      exited: Promise<void>;
    }
  | { ok: false; message: string };

// The wrapper in a process group (a session) of its own, held until `go()`, writing straight to
// files: the daemon is not in the data path, so output survives a daemon restart.
export function spawnWrapped(opts: { files: SessionFiles; command: string[]; cwd: string; env: Record<string, string> }) {
  mkdirSync(opts.files.dir, { recursive: true, mode: 0o700 });
  // File descriptors, not streams: the child writes to the files itself.
  const out = openSync(opts.files.stdout, 'a', 0o600);
  const err = openSync(opts.files.stderr, 'a', 0o600);
  try {
    const child = execa('sh', wrapperArgv(opts.files, opts.command), {
      cwd: opts.cwd,
      env: opts.env,
      extendEnv: false,
      detached: true,
      cleanup: false,
      stdin: 'pipe',
      // execa runs any fd as given; its types only list 3–9 for a single number.
      stdout: out as FdOption,
      stderr: err as FdOption,
      reject: false,
      buffer: false,
    });
    child.stdin?.on('error', () => {}); // a wrapper killed while held
    return Object.assign(child, { go: () => child.stdin?.end('go\n') });
  } finally {
    closeSync(out);
    closeSync(err);
  }
}

// Starts a session's wrapper, held; a start that fails (cwd gone, no sh) is data, not a throw.
export async function startWrapped(opts: { files: SessionFiles; command: string[]; cwd: string; env: Record<string, string> }): Promise<SpawnResult> {
  const child = spawnWrapped(opts);
  const exited = new Promise<void>((r) => child.nodeChildProcess.once('exit', () => r()));
  if (child.pid === undefined) {
    const err = await child.catch((e: unknown) => e);
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  return { ok: true, pid: child.pid, go: child.go, exited };
}
