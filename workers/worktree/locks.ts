import { existsSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { fail, type Fail } from '../result.ts';

// How long a git call may wait, in total, for a foreign lock to go away before giving up.
export const LOCK_WAIT_MS = 3000;
const LOCK_TRIES = 4;

// The lock file another git process holds, from git's "Unable to create '…lock': File exists".
export function foreignLock(stderr: string): string | null {
  return /Unable to create '([^']+\.lock)': File exists/.exec(stderr)?.[1] ?? null;
}

// grove never removes someone else's lock: it may belong to a live git (an editor, an IDE).
export function lockedFail(lock: string): Fail {
  return fail(
    'REPO_LOCKED',
    `${lock} exists: another git process holds a lock in this repository; grove waited and left it alone. ` +
      'If no git process is running, remove the file and try again',
  );
}

// Runs a git call again when it failed only on a lock file that another process holds, each
// time after that file is gone (or a bounded wait): a short-lived lock from an editor's
// `git status` should not fail a task, a stuck one must not hang it.
export async function withLockRetry<T extends { exitCode: number; stderr: string }>(run: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let attempt = 1; ; attempt++) {
    const res = await run();
    const lock = res.exitCode === 0 ? null : foreignLock(res.stderr);
    const left = deadline - Date.now();
    if (!lock || attempt >= LOCK_TRIES || left <= 0) return res;
    await lockGone(lock, Math.min(left, LOCK_WAIT_MS / (LOCK_TRIES - 1)));
  }
}

// Resolves when `lock` no longer exists or after `ms`, watching its folder rather than polling.
function lockGone(lock: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    let watcher: FSWatcher | null = null;
    const finish = () => {
      clearTimeout(timer);
      watcher?.close();
      resolve();
    };
    const timer = setTimeout(finish, ms);
    try {
      watcher = watch(path.dirname(lock), () => {
        if (!existsSync(lock)) finish();
      });
      watcher.on('error', finish);
    } catch {
      // the folder itself is gone: so is the lock
      return finish();
    }
    if (!existsSync(lock)) finish();
  });
}
