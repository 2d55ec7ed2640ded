import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, openSync, readFileSync, watch } from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { exitCodeOf } from '../../daemon/proc/exit.ts';
import { attachHolder, type HolderLink } from '../../daemon/terminal/client.ts';
import type { ServerFrame } from '../../schemas/terminal.ts';
import { GROVE } from './cli.ts';
import { makeTempDir } from './git.ts';
import { within } from './within.ts';

export const TUI = path.join(import.meta.dirname, '..', 'fixtures', 'tui.mjs');

export interface Held {
  dir: string;
  socket: string;
  /** the holder's stdout, a file as the session's wrapper gives it */
  stdout: string;
  pidFile: string;
  proc: ChildProcess;
  /** the holder's exit status (128+n after signal n) */
  exited: Promise<number>;
  stderr(): string;
  /** the pid of the program under the pty, once the holder runs it */
  programPid(): number;
}

// `grove pty-hold` from the build, as a session's wrapper runs it: leading its own process group,
// stdin /dev/null, stdout a file. Resolves once it listens and runs the program (its pid file is
// written then), on the socket `at` or one in a new folder. What is left of both groups is killed
// after the test.
export async function startHolder(t: TestContext, command: string[], size = { cols: 80, rows: 24 }, at?: string): Promise<Held> {
  const socket = at ?? path.join(makeTempDir(t, 'grove-pty-'), 'holder.sock');
  const dir = path.dirname(socket);
  const stdout = path.join(dir, 'stdout');
  const pidFile = path.join(dir, 'pty.pid');
  const fd = openSync(stdout, 'a', 0o600);
  const args = [GROVE, 'pty-hold', '--socket', socket, '--output', stdout, '--cols', String(size.cols), '--rows', String(size.rows), '--', ...command];
  const proc = spawn(process.execPath, args, { detached: true, stdio: ['ignore', fd, 'pipe'] });
  closeSync(fd);
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  const exited = once(proc, 'exit').then(([code, signal]) => exitCodeOf(code as number | null, signal as NodeJS.Signals | null));
  const programPid = () => Number(readFileSync(pidFile, 'utf8').trim());
  t.after(() => {
    for (const pgid of [proc.pid!, existsSync(pidFile) ? programPid() : 0]) {
      try {
        if (pgid > 0) process.kill(-pgid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
  const watcher = watch(dir);
  try {
    await within(
      10_000,
      'the holder writing its pid file',
      new Promise<void>((resolve, reject) => {
        if (existsSync(pidFile)) return resolve();
        watcher.on('change', () => existsSync(pidFile) && resolve());
        void exited.then((code) => reject(new Error(`the holder exited ${code}: ${stderr}`)));
      }),
    );
  } finally {
    watcher.close();
  }
  return { dir, socket, stdout, pidFile, proc, exited, stderr: () => stderr, programPid };
}

// A client's view of the holder: every frame it got, and waits on what they say.
export interface Seen {
  link: HolderLink;
  frames: ServerFrame[];
  closed: boolean;
  /** the output frames' data, joined */
  output(): string;
  /** the screen frame's data (if any) then the output */
  text(): string;
  until(what: string, pred: () => boolean, ms?: number): Promise<void>;
  /** resolves once the text holds `s` */
  sees(s: string): Promise<void>;
}

export async function attach(t: TestContext, socket: string, offset: number | null): Promise<Seen> {
  const link = await attachHolder(socket, offset);
  t.after(() => link.close());
  const checks = new Set<() => void>();
  // Kept in pieces, and a wait looks at the new pieces only: joining (or searching) all of it at
  // each frame would make this client the slow one that the holder drops in a flood.
  const output: string[] = [];
  const text: string[] = [];
  const seen: Seen = {
    link,
    frames: [],
    closed: false,
    output: () => output.join(''),
    text: () => text.join(''),
    until(what, pred, ms = 10_000) {
      return within(
        ms,
        what,
        new Promise<void>((resolve, reject) => {
          const check = () => {
            if (pred()) {
              checks.delete(check);
              resolve();
            } else if (seen.closed) {
              checks.delete(check);
              reject(new Error(`closed before ${what}; got ${JSON.stringify(seen.text().slice(-400))}`));
            }
          };
          checks.add(check);
          check();
        }),
      );
    },
    sees(s) {
      let next = 0;
      let carry = '';
      return seen.until(`seeing ${JSON.stringify(s)}`, () => {
        for (; next < text.length; next++) {
          const window = carry + text[next]!;
          if (window.includes(s)) return true;
          carry = s.length > 1 ? window.slice(-(s.length - 1)) : '';
        }
        return false;
      });
    },
  };
  link.onFrame((f) => {
    seen.frames.push(f);
    if (f.type === 'output') output.push(f.data);
    if (f.type === 'output' || f.type === 'screen') text.push(f.data);
    for (const c of [...checks]) c();
  });
  link.onClose(() => {
    seen.closed = true;
    for (const c of [...checks]) c();
  });
  return seen;
}

// The output frames' data from `seen` checked to follow one another with no gap, from `from`.
export function contiguous(seen: Seen, from: number): boolean {
  let at = from;
  for (const f of seen.frames) {
    if (f.type !== 'output') continue;
    if (f.offset !== at) return false;
    at += Buffer.byteLength(f.data);
  }
  return true;
}
