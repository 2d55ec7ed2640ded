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
