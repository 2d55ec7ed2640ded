import { closeSync, mkdirSync, openSync } from 'node:fs';
import { execa } from 'execa';
import type { Wrap } from './spawner.ts';
import { wrapperArgv } from './wrapper.ts';

type FdOption = 3;

// The wrapper in a process group (a session) of its own, held until `go()`, writing straight to
// files: the daemon is not in the data path, so output survives a daemon restart. The daemon's
// sessions are spawned so by the spawner's process (spawner.ts).
export function spawnWrapped(opts: Wrap) {
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
