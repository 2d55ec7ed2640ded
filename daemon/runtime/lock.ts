import { mkdirSync, openSync, readFileSync, rmSync, unlinkSync, writeSync, closeSync, statSync } from 'node:fs';
import path from 'node:path';
import { isSameProcessAlive, processStartTime } from '../proc/stat.ts';
import { once } from './once.ts';

// Another live daemon owns the data folder; carries its pid for the message.
export class LockHeldError extends Error {
  constructor(
    readonly file: string,
    readonly pid: number,
  ) {
    super(`another grove daemon (pid ${pid || 'unknown'}) is using this data folder (lock file ${file})`);
    this.name = 'LockHeldError';
  }
}

export interface DataLock {
  readonly file: string;
  close(): Promise<void>;
}

interface LockRecord {
  pid: number;
  start_time: string;
}

// Stops a second daemon from opening the same PGlite data; a lock left by a dead process is taken
// over. `name`: the lock's file in `dataDir` (the store's process holds one of its own).
export function acquireDataLock(dataDir: string, name = 'grove.lock'): DataLock {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, name);
  const me: LockRecord = { pid: process.pid, start_time: processStartTime(process.pid) ?? 'unknown' };

  if (!tryCreate(file, me)) {
    const holder = readRecord(file);
    // An empty lock younger than a moment is one being written right now, not a stale one.
    if (!holder && Date.now() - safeMtime(file) < 2000) throw new LockHeldError(file, 0);
    if (holder && holder.pid !== process.pid && isSameProcessAlive(holder.pid, holder.start_time)) {
      throw new LockHeldError(file, holder.pid);
    }
    takeOver(file, me, holder);
  }

  return {
    file,
    close: once(async () => {
      const cur = readRecord(file);
      if (cur && cur.pid === me.pid && cur.start_time === me.start_time) rmSync(file, { force: true });
    }),
  };
}

// Two daemons may find the same stale lock; a takeover guard file makes only one of them replace it.
function takeOver(file: string, me: LockRecord, stale: LockRecord | null): void {
  const guard = `${file}.takeover`;
  let fd: number;
  try {
    fd = openSync(guard, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // A guard older than a few seconds was left by a crash mid-takeover.
    const age = Date.now() - safeMtime(guard);
    if (age < 5000) throw new LockHeldError(file, readRecord(file)?.pid ?? 0);
    rmSync(guard, { force: true });
    return takeOver(file, me, stale);
  }
  try {
    const again = readRecord(file);
    if (again && (again.pid !== stale?.pid || again.start_time !== stale?.start_time) && isSameProcessAlive(again.pid, again.start_time)) {
      throw new LockHeldError(file, again.pid);
    }
    try {
      unlinkSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (!tryCreate(file, me)) throw new LockHeldError(file, readRecord(file)?.pid ?? 0);
  } finally {
    closeSync(fd);
    rmSync(guard, { force: true });
  }
}

function tryCreate(file: string, rec: LockRecord): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, JSON.stringify(rec) + '\n');
  } finally {
    closeSync(fd);
  }
  return true;
}

function readRecord(file: string): LockRecord | null {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockRecord>;
    if (typeof v.pid === 'number' && typeof v.start_time === 'string') return { pid: v.pid, start_time: v.start_time };
  } catch {
    // unreadable or half-written: treated as stale
  }
  return null;
}

function safeMtime(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}
