import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { OutputLine } from '../../schemas/output.ts';
import { LineSplitter } from '../runtime/lines.ts';
import type { SessionFiles } from './wrapper.ts';

// How much of one output file is read per round: a session's memory stays bounded by this,
// however much the agent prints, because the next round waits for the store to take this one.
// A round is one transaction that other queries wait behind: the size trades ingestion rate
// against how long a request can wait (bench/README.md, issue 19).
export const CHUNK = 128 * 1024;

// Where reading stopped in each file, as the store keeps it: a restart reads on from there.
export type Stream = OutputLine['stream'];
export type Offsets = Record<Stream, number>;

// One round's lines (stdout's, then stderr's) in the shape sessions.appendLines stores at once.
export interface Batch {
  streams: Stream[];
  texts: string[];
  at: string;
}

// The lines written since `from`, and the offsets reached: at the start of an unfinished line, so
// the next read (or daemon) begins it again, unless `final` says the files will not grow.
export function readNew(files: SessionFiles, from: Offsets, opts: { final?: boolean } = {}): { batch: Batch; offsets: Offsets } {
  const batch: Batch = { streams: [], texts: [], at: new Date().toISOString() };
  const offsets = { ...from };
  for (const stream of ['stdout', 'stderr'] as const) {
    const bytes = readChunk(files[stream], from[stream]);
    if (bytes.length === 0) continue;
    const splitter = new LineSplitter();
    const texts = splitter.push(bytes);
    // Less than a chunk means the end of the file was reached: only there is a partial line last.
    const last = opts.final === true && bytes.length < CHUNK;
    if (last) texts.push(...splitter.end());
    offsets[stream] = from[stream] + bytes.length - splitter.pendingBytes;
    for (const text of texts) {
      batch.streams.push(stream);
      batch.texts.push(text);
    }
  }
  return { batch, offsets };
}

// Up to CHUNK bytes of `file` from `pos`; none while the file does not exist yet.
function readChunk(file: string, pos: number): Buffer {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
    throw err;
  }
  try {
    const buf = Buffer.allocUnsafe(Math.max(0, Math.min(CHUNK, fstatSync(fd).size - pos)));
    return buf.subarray(0, buf.length > 0 ? readSync(fd, buf, 0, buf.length, pos) : 0);
  } finally {
    closeSync(fd);
  }
}
