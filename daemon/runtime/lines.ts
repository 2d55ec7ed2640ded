// Turns a byte stream into output lines by DESIGN §3's rules, so every reader of a session's
// files stores the same lines: \r\n and \n ends, U+FFFD, 64 KiB pieces, a last line by end().
export const MAX_LINE_BYTES = 64 * 1024;

const decoder = new TextDecoder('utf-8', { fatal: false });

function decodeLine(bytes: Buffer): string {
  let text = decoder.decode(bytes);
  if (text.endsWith('\r')) text = text.slice(0, -1);
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

// Where to cut a too-long line so that a multi-byte character is not split.
function cutPoint(buf: Buffer, max: number): number {
  let cut = max;
  // Back off over continuation bytes (10xxxxxx) to the start of the character at `cut`.
  while (cut > max - 4 && cut > 0 && (buf[cut]! & 0xc0) === 0x80) cut--;
  return cut > 0 ? cut : max;
}

export class LineSplitter {
  #pending: Buffer[] = [];
  #pendingBytes = 0;

  // Splits a chunk; returns the lines it completes. The chunk may be reused by the caller
  // afterwards: whatever is held back is copied.
  push(chunk: Buffer): string[] {
    const out: string[] = [];
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) {
        this.#append(chunk.subarray(start), out);
        break;
      }
      const segment = chunk.subarray(start, nl);
      if (this.#pendingBytes === 0 && segment.length <= MAX_LINE_BYTES) out.push(decodeLine(segment));
      else {
        this.#append(segment, out);
        out.push(decodeLine(this.#take()));
      }
      start = nl + 1;
    }
    return out;
  }

  // Bytes of an unfinished line held back: not yet part of any returned line.
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  // The last line, if the stream did not end with a newline.
  end(): string[] {
    return this.#pendingBytes > 0 ? [decodeLine(this.#take())] : [];
  }

  #append(part: Buffer, out: string[]): void {
    if (part.length === 0) return;
    this.#pending.push(Buffer.from(part));
    this.#pendingBytes += part.length;
    while (this.#pendingBytes > MAX_LINE_BYTES) {
      const all = this.#take();
      const cut = cutPoint(all, MAX_LINE_BYTES);
      out.push(decodeLine(all.subarray(0, cut)));
      const rest = all.subarray(cut);
      this.#pending = [rest];
      this.#pendingBytes = rest.length;
    }
  }

  #take(): Buffer {
    const buf = this.#pending.length === 1 ? this.#pending[0]! : Buffer.concat(this.#pending);
    this.#pending = [];
    this.#pendingBytes = 0;
    return buf;
  }
}
