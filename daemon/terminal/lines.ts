// The holder's socket carries one JSON document per line, either way. A line can be far longer
// than one read (a screen frame of a long scrollback), so its pieces are kept apart and joined once.
export class LineBuffer {
  #parts: string[] = [];
  #length = 0;

  /** max: the longest line, in UTF-16 units, that the reader takes */
  constructor(readonly max = Infinity) {}

  // The lines that `chunk` completes, or null once the line being read is longer than `max`.
  push(chunk: string): string[] | null {
    const out: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf('\n'); nl !== -1; nl = chunk.indexOf('\n', start)) {
      if (this.#length + nl - start > this.max) return null;
      this.#parts.push(chunk.slice(start, nl));
      out.push(this.#parts.join(''));
      this.#parts = [];
      this.#length = 0;
      start = nl + 1;
    }
    if (start < chunk.length) {
      this.#length += chunk.length - start;
      if (this.#length > this.max) return null;
      this.#parts.push(chunk.slice(start));
    }
    return out;
  }
}

// A document as a line of the socket.
export const line = (frame: unknown): string => `${JSON.stringify(frame)}\n`;
