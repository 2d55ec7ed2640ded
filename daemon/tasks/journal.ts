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
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return [];
      }
      return names
        .filter((n) => /^[0-9a-f-]{36}\.json$/.test(n))
        .map((n) => {
          const id = n.slice(0, -'.json'.length);
          try {
            return { id, intent: JSON.parse(readFileSync(path.join(dir, n), 'utf8')) as CreationIntent };
          } catch {
            return { id, intent: null }; // torn write: the worker died before git ran
          }
        });
    },
  };
}

export type Journal = ReturnType<typeof createJournal>;
