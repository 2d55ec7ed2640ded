import path from 'node:path';
import type { CreationIntent } from '../../schemas/journal.ts';
import { pendingIntents, voidIntent } from './intents.ts';

// The folder of pending creation intents, one file per task id: a daemon killed between
// `git worktree add` and the row insert leaves one behind, and the next start undoes it.
export function createJournal(dir: string) {
  const fileFor = (id: string) => path.join(dir, `${id}.json`);
  return {
    fileFor,
    // The creation ended (row stored, or everything undone): its intent is void.
    done(id: string): void {
      voidIntent(fileFor(id));
    },
    // Intents left by a daemon that stopped mid-creation; unreadable ones are reported as null.
    pending(): Array<{ id: string; intent: CreationIntent | null }> {
      return pendingIntents<CreationIntent>(dir, /^[0-9a-f-]{36}\.json$/).map(({ name, intent }) => ({ id: name.slice(0, -'.json'.length), intent }));
    },
  };
}

export type Journal = ReturnType<typeof createJournal>;
