import type { Socket } from 'node:net';
import { MAX_INPUT_BYTES, type ClientFrame } from '../../schemas/terminal.ts';
import { LineBuffer } from './lines.ts';
import { parseAttachLine, parseClientFrame } from './protocol.ts';

// How much a client may leave unread in its socket's buffer, beyond its screen, before the holder
// drops it: a slow reader must hold up neither the others nor the program.
export const MAX_CLIENT_BEHIND = 4 * 1024 * 1024;

// The longest line a client may send: an input frame at its largest, every byte escaped.
const MAX_CLIENT_LINE = MAX_INPUT_BYTES * 6 + 1024;

export interface PeerEvents {
  attach(peer: Peer, offset: number | null): void;
  frame(frame: ClientFrame): void;
  gone(peer: Peer): void;
}

// The holder's side of one client: its lines read and checked, frames sent to it. Anything wrong
// from it (a line that is not a frame, an unknown type, a bad size) closes it alone.
export class Peer {
  #lines = new LineBuffer(MAX_CLIENT_LINE);
  #attached = false;
  #limit = MAX_CLIENT_BEHIND;
  /** true once it has had the output up to now: it then gets each chunk as it comes */
  live = false;

  constructor(
    private readonly socket: Socket,
    private readonly events: PeerEvents,
  ) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.#read(chunk));
    socket.on('error', () => {}); // a client gone mid-write; its close follows
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

  // Sends a line (a frame); a client that has let too much pile up is dropped.
  send(text: string): void {
    if (this.closed) return;
    this.socket.write(text);
    if (this.socket.writableLength > this.#limit) this.drop();
  }

  // The screen can be large by itself: it does not count against what may pile up after it.
  sendScreen(text: string): void {
    this.#limit = MAX_CLIENT_BEHIND + Buffer.byteLength(text);
    this.send(text);
  }

  end(): void {
    this.socket.end();
  }

  drop(): void {
    this.socket.destroy();
  }
}
