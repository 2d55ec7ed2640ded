import { rmSync } from 'node:fs';
import path from 'node:path';
import { pendingIntents, readIntent } from './journal.ts';

// What a landing is about to do in git, written (with journal.ts's writeIntent) right before git
// runs, so that a daemon or git killed half-way is finished or undone later (tasks/landings.ts).

/** A rebase of a task's branch in its worktree; the worktree was clean when it began. */
export interface RebaseIntent {
  kind: 'rebase';
  task: string;
  repo: string;
  worktree: string;
  /** the branch checked out in the worktree (refs/heads/…), null on a detached HEAD */
  branch: string | null;
  /** the commit before the rebase, and the one it rebases onto */
  head: string;
  onto: string;
}

/** A merge landing in a checkout of its base branch: read-tree -m -u old next, then update-ref. */
export interface MergeIntent {
  kind: 'merge';
  task: string;
  repo: string;
  checkout: string;
  /** the base branch (refs/heads/…), moved from `old` to `next` */
  ref: string;
  old: string;
  next: string;
}

export type LandingIntent = RebaseIntent | MergeIntent;

const NAME = /^[0-9a-f-]{36}\.(rebase|merge)\.json$/;

// The landing intents sit beside the creation intents, one file per task and kind; the
// creation journal's pending() only matches `<uuid>.json`, so each reads its own.
export function createLandingJournal(dir: string) {
  return {
    fileFor: (task: string, kind: LandingIntent['kind']) => path.join(dir, `${task}.${kind}.json`),
    // The landing ended (done or undone): its intent is void.
    done(file: string): void {
      rmSync(file, { force: true });
    },
    /** the intent in one file, if it is still there (null when torn or gone) */
    read: (file: string) => readIntent<LandingIntent>(file),
    // Every intent file left; a torn one (the worker died before git ran) has a null intent.
    pending(): Array<{ file: string; intent: LandingIntent | null }> {
      return pendingIntents<LandingIntent>(dir, NAME).map(({ file, intent }) => ({ file, intent }));
    },
  };
}

export type LandingJournal = ReturnType<typeof createLandingJournal>;
