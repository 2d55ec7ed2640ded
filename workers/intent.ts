import type { Intent } from '../schemas/journal.ts';
import { voidIntent, writeIntent } from '../daemon/journal/intents.ts';
import { fail, type Fail } from './result.ts';

// writeIntent for a worker, as its result: a failure to write stops the operation before git
// changes anything, and leaves no file behind.
export function recordIntent(file: string, intent: Intent): Fail | null {
  try {
    writeIntent(file, intent);
    return null;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    // Returned as data even when the folder is unusable (a file in its place): removing fails there too.
    try {
      voidIntent(file);
    } catch {
      // nothing could be written where nothing can be removed
    }
    if (e.code === 'ENOSPC' || e.code === 'EDQUOT') return fail('INSUFFICIENT_STORAGE', 'the disk of the data folder is full; free space and try again');
    return fail('INTERNAL', `recording what git is about to do failed: ${e.message}`);
  }
}
