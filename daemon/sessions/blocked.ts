import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import type { Blocked } from '../../schemas/session.ts';

// Read at most this much of the record at a time: an agent that hammers a refused host makes a
// long file, and one read need not hold it whole.
const CHUNK = 1 << 20;

// A confined session's record of what the sandbox refused (DESIGN §18): the session's network
// proxy appends one JSON line per refused connection (`{"kind", "target", "at"}`). Read on from
// where the last read stopped, counted per target. `known`: the targets already stored, which
// are not new again when a restarted daemon reads the file from its start.
export function createBlockedReader(file: string, known: readonly Pick<Blocked, 'kind' | 'target'>[]) {
  const seen = new Set(known.map((b) => `${b.kind} ${b.target}`));
  const counts = new Map<string, Blocked>();
  const decoder = new StringDecoder('utf8');
  let offset = 0;
  let partial = '';

  function count(line: string, fresh: Blocked[]): boolean {
    let r: unknown;
    try {
      r = JSON.parse(line);
    } catch {
      return false;
    }
    const { kind, target } = (r ?? {}) as Record<string, unknown>;
    if ((kind !== 'network' && kind !== 'write') || typeof target !== 'string' || target === '') return false;
    const key = `${kind} ${target}`;
    const b = counts.get(key);
    if (b) b.count++;
    else counts.set(key, { kind, target, count: 1 });
    if (!seen.has(key)) {
      seen.add(key);
      fresh.push({ kind, target, count: 1 });
    }
    return true;
  }

  return {
    // What was refused since the last read: every target with its count, and those refused for
    // the first time; null when nothing new was recorded.
    read(): { all: Blocked[]; fresh: Blocked[] } | null {
      let size: number;
      try {
        size = statSync(file).size;
      } catch {
        return null; // nothing refused yet
      }
      const fresh: Blocked[] = [];
      let changed = false;
      if (size <= offset) return null;
      const fd = openSync(file, 'r');
      try {
        const buf = Buffer.alloc(Math.min(CHUNK, size - offset));
        while (offset < size) {
          const n = readSync(fd, buf, 0, Math.min(buf.length, size - offset), offset);
          if (n === 0) break;
          offset += n;
          const lines = (partial + decoder.write(buf.subarray(0, n))).split('\n');
          partial = lines.pop()!;
          for (const line of lines) if (count(line, fresh)) changed = true;
        }
      } finally {
        closeSync(fd);
      }
      return changed ? { all: [...counts.values()].map((b) => ({ ...b })), fresh } : null;
    },
  };
}
