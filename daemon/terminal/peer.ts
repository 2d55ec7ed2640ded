import type { Socket } from 'node:net';
import { MAX_INPUT_BYTES, type ClientFrame } from '../../schemas/terminal.ts';
import { LineBuffer } from './lines.ts';
import { parseAttachLine, parseClientFrame } from './protocol.ts';

// How much may wait unread in a client's socket before the holder stops writing to it: it then
// follows from the output file as it reads, so a slow reader holds up neither the others nor the
// program, and misses nothing.
export const MAX_CLIENT_BUFFERED = 256 * 1024;

// The longest line a client may send: an input frame at its largest, every byte escaped.
const MAX_CLIENT_LINE = MAX_INPUT_BYTES * 6 + 1024;

export interface PeerEvents {
  attach(peer: Peer, offset: number | null): void;
  frame(frame: ClientFrame): void;
  /** it has read what waited for it: it may be written to again */
  drain(peer: Peer): void;
  gone(peer: Peer): void;
}

// The holder's side of one client: its lines read and checked, frames sent to it. Anything wrong
// from it (a line that is not a frame, an unknown type, a bad size) closes it alone.
export class Peer {
  #lines = new LineBuffer(MAX_CLIENT_LINE);
  #attached = false;
  /** the offset of the next output byte it is to be sent; -1 until it has attached */
  next = -1;
  /** true while it has had the output up to `next` and may be written to: it then gets each chunk
   * as it comes; false while it has no screen yet, or is behind (it follows from the file) */
  live = false;
  /** once the program has ended: the timer that drops it if it stops reading */
  stall: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: Socket,
    private readonly events: PeerEvents,
  ) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.#read(chunk));
    socket.on('error', () => {}); // a client gone mid-write; its close follows
    socket.on('drain', () => events.drain(this));
    socket.once('close', () => events.gone(this));
  }

  get closed(): boolean {
    return this.socket.destroyed || this.socket.writableEnded;
  }

  #read(chunk: string): void {
    const lines = this.#lines.push(chunk);
    if (lines === null) return this.drop();
    for (const text of lines) {
      if (this.closed) return;
      if (!this.#attached) {
        const attach = parseAttachLine(text);
        if (attach === null) return this.drop();
        this.#attached = true;
        this.events.attach(this, attach.offset);
        continue;
      }
      const parsed = parseClientFrame(text);
      if (!parsed.ok) return this.drop();
      this.events.frame(parsed.frame);
    }
  }

  // Writes a line (a frame); false once enough waits unread that nothing more should be written
  // until it drains.
  send(text: string): boolean {
    if (this.closed) return false;
    this.socket.write(text);
    return this.socket.writableLength <= MAX_CLIENT_BUFFERED;
  }

  end(): void {
    this.socket.end();
  }

  drop(): void {
    this.socket.destroy();
  }
}
