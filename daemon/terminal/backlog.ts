import { KEPT_OUTPUT_BYTES, type OutputFrame } from '../../schemas/terminal.ts';

interface Chunk {
  start: number;
  end: number;
  data: string;
}

// The output as it came, chunk by chunk, each with its offset (UTF-8 bytes from 0).
export class Backlog {
  #chunks: Chunk[] = [];
  #total = 0;

  /** the offset after the last byte */
  get total(): number {
    return this.#total;
  }

  /** the first offset still kept */
  get keptStart(): number {
    return this.#chunks[0]?.start ?? this.#total;
  }

  // Adds a chunk of `bytes` bytes; answers its frame.
  append(data: string, bytes: number): OutputFrame {
    const chunk = { start: this.#total, end: this.#total + bytes, data };
    this.#chunks.push(chunk);
    this.#total = chunk.end;
    return { type: 'output', offset: chunk.start, data };
  }

  // Forgets the oldest chunks while the rest holds KEPT_OUTPUT_BYTES. Never past `parsed`: the
  // screen is taken at the point the headless terminal has parsed, and the output from there on
  // must still be here to follow it.
  trim(parsed: number): void {
    let drop = 0;
    for (const c of this.#chunks) {
      if (c.end > parsed || this.#total - c.end < KEPT_OUTPUT_BYTES) break;
      drop++;
    }
    if (drop > 0) this.#chunks.splice(0, drop);
  }

  // The output from `offset` to now as frames; null when that is no longer kept, is beyond what
  // was written, or falls inside a character.
  since(offset: number): OutputFrame[] | null {
    if (!Number.isSafeInteger(offset) || offset < this.keptStart || offset > this.#total) return null;
    const out: OutputFrame[] = [];
    for (const c of this.#chunks) {
      if (c.end <= offset) continue;
      if (c.start >= offset) {
        out.push({ type: 'output', offset: c.start, data: c.data });
        continue;
      }
      const bytes = Buffer.from(c.data).subarray(offset - c.start);
      // A continuation byte (10xxxxxx) first: the offset cuts a character.
      if ((bytes[0]! & 0xc0) === 0x80) return null;
      out.push({ type: 'output', offset, data: bytes.toString() });
    }
    return out;
  }
}
