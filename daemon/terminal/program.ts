import { existsSync } from 'node:fs';
import path from 'node:path';
import type * as NodePty from '@lydell/node-pty';
import { which } from '../runtime/which.ts';

// The terminal the program is told it runs in: the one the headless terminal and the dashboard's
// xterm.js emulate.
export const TERM_NAME = 'xterm-256color';

// A shell's statuses for a command it could not run.
export const EXIT_CANNOT_RUN = 126;
export const EXIT_NOT_FOUND = 127;

export type Resolved = { ok: true; file: string } | { ok: false; status: number; message: string };

// The file `name` runs, as a shell finds it: a name through the PATH of `env`, a path as it is
// (from `cwd`). node-pty's child would report a failed exec only as its output and status 1.
export function resolveProgram(name: string, env: NodeJS.ProcessEnv, cwd: string): Resolved {
  if (name === '') return { ok: false, status: EXIT_NOT_FOUND, message: 'no command to run' };
  const candidate = name.includes('/') ? path.resolve(cwd, name) : name;
  const file = which(candidate, env.PATH ?? '');
  if (file !== null) return { ok: true, file };
  if (name.includes('/') && existsSync(candidate)) return { ok: false, status: EXIT_CANNOT_RUN, message: `${name}: not an executable file` };
  return { ok: false, status: EXIT_NOT_FOUND, message: `${name}: command not found` };
}

export type PtyModule = typeof NodePty;

// node-pty, loaded when it is needed: its native part may be missing or built for another
// platform, and that is an answer to give, not a crash at the CLI's start.
export async function loadPty(): Promise<PtyModule> {
  try {
    return await import('@lydell/node-pty');
  } catch (err) {
    throw new Error(`cannot load @lydell/node-pty: ${(err as Error).message.split('\n')[0]}`, { cause: err });
  }
}

// `file` with `args` under a new pseudo-terminal; the child leads a session of its own.
export function spawnPty(pty: PtyModule, file: string, args: string[], opts: { cols: number; rows: number; cwd: string; env: NodeJS.ProcessEnv }): NodePty.IPty {
  return pty.spawn(file, args, { name: TERM_NAME, cols: opts.cols, rows: opts.rows, cwd: opts.cwd, env: { ...opts.env, TERM: TERM_NAME } });
}
