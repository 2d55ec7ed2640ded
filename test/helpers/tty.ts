// `grove …` in a terminal window of its own, as a person runs it: util-linux script(1) gives it a
// pseudo-terminal of the size asked (its stdin, stdout and stderr), the test types into it, reads
// what it shows, and resizes it as a window is resized.
import { execFileSync, spawn } from 'node:child_process';
import type { Cleanup } from './daemon.ts';
import { GROVE } from './cli.ts';

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

export interface Window {
  /** all the terminal showed (stdout and stderr, as bytes come) */
  output(): string;
  /** how much it has shown so far: a mark for shows(…, from) */
  mark(): number;
  /** keys typed into it, as they are (no newline added) */
  type(keys: string): void;
  /** resolves once the terminal shows `text` past `from`; rejects if it exits first, or after `ms` (a minute: a failsafe, on a loaded machine) */
  shows(text: string | RegExp, from?: number, ms?: number): Promise<void>;
  /** the window resized: the pseudo-terminal's size set, its foreground told (SIGWINCH) */
  resize(cols: number, rows: number): Promise<void>;
  /** the command's exit status */
  exited: Promise<number>;
}

export function terminalWindow(t: Cleanup, home: string, args: string[], opts: { cols?: number; rows?: number; env?: Record<string, string> } = {}): Window {
  // `tty` first: the pseudo-terminal's name, for resize().
  const line = `stty cols ${opts.cols ?? 80} rows ${opts.rows ?? 24} && tty && exec ${[process.execPath, GROVE, ...args].map(quote).join(' ')}`;
  const p = spawn('script', ['-qfec', line, '/dev/null'], { env: { ...process.env, GROVE_HOME: home, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => p.kill('SIGKILL'));
  let out = '';
  const seen = new Set<() => void>();
  const more = (d: Buffer) => {
    out += d.toString();
    for (const f of seen) f();
  };
  p.stdout.on('data', more);
  p.stderr.on('data', more);
  const exited = new Promise<number>((resolve) => p.once('exit', (code) => resolve(code ?? -1)));
  const shows = (text: string | RegExp, from = 0, ms = 60_000) =>
    new Promise<void>((resolve, reject) => {
      const has = () => (typeof text === 'string' ? out.slice(from).includes(text) : text.test(out.slice(from)));
      const done = (err?: Error) => {
        seen.delete(check);
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      const check = () => has() && done();
      const timer = setTimeout(() => done(new Error(`the terminal did not show ${text} within ${ms} ms:\n${out.slice(from)}`)), ms);
      seen.add(check);
      check();
      void exited.then(() => (has() ? done() : done(new Error(`the terminal exited without showing ${text}:\n${out.slice(from)}`))));
    });
  const tty = shows(/\/dev\/pts\/\d+/).then(() => /\/dev\/pts\/\d+/.exec(out)![0]);
  return {
    output: () => out,
    mark: () => out.length,
    type: (keys) => void p.stdin.write(keys),
    shows,
    async resize(cols, rows) {
      execFileSync('stty', ['-F', await tty, 'cols', String(cols), 'rows', String(rows)]);
    },
    exited,
  };
}
