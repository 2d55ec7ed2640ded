// The CLI as a user runs it: `grove <args>` in its own process, against the daemon of `home`.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './daemon.ts';

export const GROVE = path.join(ROOT, 'bin', 'grove.js');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed, where it is one JSON document */
  json: any;
}

export function grove(home: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [GROVE, ...args], { cwd: opts.cwd ?? ROOT, env: { ...process.env, GROVE_HOME: home, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.once('exit', (code) => {
      let json: any;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code: code ?? -1, stdout, stderr, json });
    });
  });
}

// A grove command left running: its output so far (stdout, or stderr), waiting for text, its
// exit, and a stop. `viaScript`: run under script(1), its stdin and stdout a pseudo-terminal.
export function running(home: string, args: string[], viaScript = false, env: Record<string, string> = {}) {
  const argv = viaScript ? ['script', ['-qec', `${process.execPath} ${GROVE} ${args.join(' ')}`, '/dev/null']] as const : [process.execPath, [GROVE, ...args]] as const;
  const p = spawn(argv[0], [...argv[1]], { env: { ...process.env, GROVE_HOME: home, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const text = { stdout: '', stderr: '' };
  const waiters: Array<() => void> = [];
  for (const name of ['stdout', 'stderr'] as const) {
    p[name].on('data', (d) => {
      text[name] += d;
      waiters.splice(0).forEach((w) => w());
    });
  }
  const exited = new Promise<number>((r) => p.once('exit', (code) => r(code ?? -1)));
  return {
    output: () => text.stdout,
    errors: () => text.stderr,
    exited,
    async waitFor(re: RegExp, ms = 15_000, from: 'stdout' | 'stderr' = 'stdout'): Promise<void> {
      const deadline = Date.now() + ms;
      while (!re.test(text[from])) {
        if (Date.now() > deadline) throw new Error(`no ${re} in ${from} ${JSON.stringify(text[from].slice(-2000))}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 500);
        });
      }
    },
    stop: () => new Promise<void>((r) => (p.exitCode !== null ? r() : (p.once('exit', () => r()), p.kill('SIGINT')))),
  };
}
