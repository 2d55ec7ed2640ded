import { rmSync } from 'node:fs';
import { writeIntent } from '../daemon/tasks/journal.ts';
import { fail, type Fail } from './result.ts';

// Writes an intent durably before the git it describes runs (see daemon/tasks/journal.ts and
// land-journal.ts); a failure to write it stops the operation before git changes anything.
export function recordIntent(file: string, intent: object): Fail | null {
  try {
    writeIntent(file, intent);
    return null;
  } catch (err) {
    rmSync(file, { force: true });
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOSPC' || e.code === 'EDQUOT') return fail('INSUFFICIENT_STORAGE', 'the disk of the data folder is full; free space and try again');
    return fail('INTERNAL', `recording what git is about to do failed: ${e.message}`);
  }
}
