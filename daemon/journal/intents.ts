import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

// The intent files of `<data>/journal/`: what git is about to do, written durably by the worker
// that runs it, read back by the daemon after a stop (creation.ts, landing.ts).

// Durably records an intent (a worker calls this right before the git it describes runs).
export function writeIntent(file: string, intent: object): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const fd = openSync(file, 'w', 0o600);
  try {
    writeSync(fd, JSON.stringify(intent));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

// The operation ended (done, or everything undone): its intent is void. Safe when it is gone.
export function voidIntent(file: string): void {
  rmSync(file, { force: true });
}

// One intent file, read; null when it is gone or torn (the worker died before git ran).
export function readIntent<T>(file: string): T | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return null;
  }
}

// The intent files of `dir` whose names match `name`, each read.
export function pendingIntents<T>(dir: string, name: RegExp): Array<{ name: string; file: string; intent: T | null }> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => name.test(n)).map((n) => ({ name: n, file: path.join(dir, n), intent: readIntent<T>(path.join(dir, n)) }));
}
