import path from 'node:path';
import { ROOT } from '../runtime/root.ts';

// The command of a terminal session (DESIGN §21), given to the session's wrapper: `grove
// pty-hold`, which runs `command` under a pseudo-terminal and holds it.
export function holderCommand(opts: { socket: string; output: string; cols: number; rows: number; command: string[] }): string[] {
  return [process.execPath, path.join(ROOT, 'bin', 'grove.js'), 'pty-hold', '--socket', opts.socket, '--output', opts.output, '--cols', String(opts.cols), '--rows', String(opts.rows), '--', ...opts.command];
}

// Where the holder writes the pid of the program it runs, beside its socket. The program leads a
// process group of its own (the pty's session), which a signal to the session's group misses.
export function ptyPidFile(socket: string): string {
  return path.join(path.dirname(socket), 'pty.pid');
}
