import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

// What a task creation is about to make in git, written before it is made: a daemon killed
// between `git worktree add` and the row insert leaves this behind, and the next start undoes it.
export interface CreationIntent {
  id: string;
  repo: string;
  branch: string;
  worktree_path: string;
  base_commit: string;
}

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

// The folder of pending creation intents, one file per task id.
export function createJournal(dir: string) {
  const fileFor = (id: string) => path.join(dir, `${id}.json`);
  return {
    fileFor,
    // The creation ended (row stored, or everything undone): its intent is void.
    done(id: string): void {
      rmSync(fileFor(id), { force: true });
    },
    // Intents left by a daemon that stopped mid-creation; unreadable ones are reported as null.
    pending(): Array<{ id: string; intent: CreationIntent | null }> {
      return pendingIntents<CreationIntent>(dir, /^[0-9a-f-]{36}\.json$/).map(({ name, intent }) => ({ id: name.slice(0, -'.json'.length), intent }));
    },
  };
}

export type Journal = ReturnType<typeof createJournal>;
