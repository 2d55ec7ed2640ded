import path from 'node:path';
import type { LandingIntent } from '../../schemas/journal.ts';
import { pendingIntents, readIntent, voidIntent } from './intents.ts';

// What a landing is about to do in git, written (with recordIntent) right before git runs, so
// that a daemon or git killed half-way is finished or undone later (landing/landings.ts).

const NAME = /^[0-9a-f-]{36}\.(rebase|merge)\.json$/;

// The landing intents sit beside the creation intents, one file per task and kind; the
// creation journal's pending() only matches `<uuid>.json`, so each reads its own.
export function createLandingJournal(dir: string) {
  return {
    fileFor: (task: string, kind: LandingIntent['kind']) => path.join(dir, `${task}.${kind}.json`),
    // The landing ended (done or undone): its intent is void.
    done: voidIntent,
    /** the intent in one file, if it is still there (null when torn or gone) */
    read: (file: string) => readIntent<LandingIntent>(file),
    // Every intent file left; a torn one (the worker died before git ran) has a null intent.
    pending(): Array<{ file: string; intent: LandingIntent | null }> {
      return pendingIntents<LandingIntent>(dir, NAME).map(({ file, intent }) => ({ file, intent }));
    },
  };
}

export type LandingJournal = ReturnType<typeof createLandingJournal>;
