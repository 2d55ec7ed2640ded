import { closeSync, mkdirSync, openSync } from 'node:fs';
import { execa } from 'execa';
import { wrapperArgv, type SessionFiles } from './wrapper.ts';

type FdOption = 3;

// Starts `command` under the wrapper in its own process group (a new session, in fact), held
// until `go()` (see the wrapper), with stdout/stderr going straight to files: the daemon is
// not in the data path. The agent's stdin is /dev/null.
export function spawnWrapped(opts: { files: SessionFiles; command: string[]; cwd: string; env: Record<string, string> }) {
  mkdirSync(opts.files.dir, { recursive: true, mode: 0o700 });
  // File descriptors, not streams: the child writes to the files itself, so its output does
  // not pass through (or die with) the daemon.
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
