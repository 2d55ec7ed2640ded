import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';

// The most one catch-up frame carries: a client behind gets its missed output in frames of this.
export const READ_CHUNK_BYTES = 256 * 1024;

export type Read = { data: string; end: number };

// The output of a terminal session as its file holds it, from byte `from`, at most `max` bytes and
// up to `to`, cut at the end of the last whole UTF-8 character. null when `from` is past the file
// or inside a character, or when the file holds nothing from there (it was cut short).
export function readOutput(fd: number, from: number, to: number, max = READ_CHUNK_BYTES): Read | null {
  if (!Number.isSafeInteger(from) || from < 0 || from > to) return null;
  const buf = Buffer.alloc(Math.min(max, to - from));
  let got = 0;
  while (got < buf.length) {
    const n = readSync(fd, buf, got, buf.length - got, from + got);
    if (n === 0) break;
    got += n;
  }
  if (got === 0) return from === to ? { data: '', end: to } : null;
  // A continuation byte (10xxxxxx) first: `from` cuts a character.
  if ((buf[0]! & 0xc0) === 0x80) return null;
  const whole = got - cutCharacter(buf.subarray(0, got));
  if (whole === 0) return null;
  return { data: buf.toString('utf8', 0, whole), end: from + whole };
}

// How many bytes at the end of `buf` begin a character they do not finish.
function cutCharacter(buf: Buffer): number {
  for (let back = 1; back <= Math.min(3, buf.length); back++) {
    const b = buf[buf.length - back]!;
    if ((b & 0xc0) === 0x80) continue;
    const len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return len > back ? back : 0;
  }
  return 0;
}

// The holder's output file (the session's `stdout`): every chunk appended as it comes, written
// whole before it goes anywhere else, and read back for a client that is behind. Offsets are
// places in this file.
export class OutputFile {
  readonly #write: number;
  readonly #read: number;
  #total: number;
  #broken = false;

  constructor(
    file: string,
    private readonly say: (message: string) => void,
  ) {
    this.#write = openSync(file, 'a', 0o600);
    this.#read = openSync(file, 'r');
    this.#total = fstatSync(this.#write).size;
  }

  /** the offset after the last byte written */
  get total(): number {
    return this.#total;
  }

  // Appends `bytes`; a file that cannot be written (a full disk) is said once, and its offsets go
  // on counting what the program printed, so the clients that follow live still get it.
  append(bytes: Buffer): void {
    for (let off = 0; !this.#broken && off < bytes.length; ) {
      try {
        off += writeSync(this.#write, bytes, off);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') continue;
        this.#broken = true;
        this.say(`cannot write the output: ${(err as Error).message}`);
      }
    }
    this.#total += bytes.length;
  }

  // The output from `from` on (a frame's worth at most); null as readOutput says.
  read(from: number): Read | null {
    return readOutput(this.#read, from, this.#total);
  }

  close(): void {
    closeSync(this.#write);
    closeSync(this.#read);
  }
}
