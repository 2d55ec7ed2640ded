import type { Socket } from 'node:net';
import type { ClientFrame, ExitFrame, OutputFrame } from '../../schemas/terminal.ts';
import { line } from './lines.ts';
import type { OutputFile } from './output.ts';
import { Peer } from './peer.ts';
import { Screen } from './screen.ts';

// Output the headless terminal has not parsed yet past which the program is paused (the pty holds
// its writes, as a slow terminal would): the parser's own buffer throws past its limit, and all of
// it is held in memory. It goes on once the parser is through a sixteenth of that: node-pty reads
// a program that has ended for a short while only, so a pause must not last.
export const PARSE_AHEAD_MAX = 16 * 1024 * 1024;

// How long a client may go without reading, once the program has ended, before it is dropped:
// one still reading its way to the end gets there; one that stopped does not hold the holder.
const LINGER_MS = 2000;

export interface Program {
  write(data: string): void;
  resize(cols: number, rows: number): void;
  pause(): void;
  resume(): void;
}

// The holder's output side: each chunk of the program's output to the output file, to the screen
// and to every client; and the clients' frames to the program. A client that reads slower than the
// program prints is not written to while its socket is full, and follows from the file as it
// reads: it gets every byte, and neither the program nor the others wait for it.
export class Relay {
  readonly #screen: Screen;
  readonly #peers = new Set<Peer>();
  #program: Program | null = null;
  #paused = false;
  #exit: string | null = null;
  #allGone: (() => void) | null = null;

  constructor(
    cols: number,
    rows: number,
    private readonly file: OutputFile,
    private readonly parseAheadMax = PARSE_AHEAD_MAX,
  ) {
    this.#screen = new Screen(cols, rows, (parsed) => this.#parsed(parsed));
  }

  // The program, once it runs: until then its clients' frames go nowhere.
  run(program: Program): void {
    this.#program = program;
  }

  output(data: string): void {
    const start = this.file.total;
    this.file.append(Buffer.from(data));
    const end = this.file.total;
    this.#screen.write(data, end);
    let text: string | null = null;
    for (const p of this.#peers) {
      if (!p.live || p.next !== start) continue;
      text ??= line({ type: 'output', offset: start, data } satisfies OutputFrame);
      p.next = end;
      if (!p.send(text)) p.live = false;
    }
    if (!this.#paused && end - this.#screen.parsed > this.parseAheadMax) {
      this.#paused = true;
      this.#program?.pause();
    }
  }

  #parsed(offset: number): void {
    if (this.#paused && this.file.total - offset <= (this.parseAheadMax * 15) / 16) {
      this.#paused = false;
      this.#program?.resume();
    }
  }

  connect(socket: Socket): void {
    const peer = new Peer(socket, {
      attach: (peer, offset) => this.#attach(peer, offset),
      frame: (frame) => this.#input(frame),
      drain: (peer) => this.#follow(peer),
      gone: (peer) => {
        clearTimeout(peer.stall);
        this.#peers.delete(peer);
        if (this.#peers.size === 0) this.#allGone?.();
      },
    });
    this.#peers.add(peer);
    if (this.#exit !== null) this.#lingering(peer);
  }

  // From `offset` when the file holds it (a place between characters, not past the end); else
  // the screen, then the output after it.
  #attach(peer: Peer, offset: number | null): void {
    if (offset !== null && offset <= this.file.total && this.file.read(offset) !== null) {
      peer.next = offset;
      return this.#follow(peer);
    }
    // In the parser's callback: the screen is the output up to `screen.offset` exactly.
    this.#screen.snapshot((screen) => {
      if (peer.closed) return;
      peer.next = screen.offset;
      if (peer.send(line(screen))) this.#follow(peer);
    });
  }

  // Writes to the client what it has not had, from the file, while it reads; once it has it all it
  // is live (and, after the program's end, gets the exit frame and is ended).
  #follow(peer: Peer): void {
    if (peer.next < 0) return; // not attached yet
    if (this.#exit !== null) this.#lingering(peer);
    peer.live = false;
    while (!peer.closed && peer.next < this.file.total) {
      const read = this.file.read(peer.next);
      // Not in the file (it could not be written): this client cannot have it; back, it gets the screen.
      if (read === null) return peer.drop();
      const frame: OutputFrame = { type: 'output', offset: peer.next, data: read.data };
      peer.next = read.end;
      if (!peer.send(line(frame))) return;
    }
    if (peer.closed) return;
    peer.live = true;
    if (this.#exit === null) return;
    peer.send(this.#exit);
    peer.end();
  }

  // (Re)arms the timer that drops a client that has stopped reading after the program's end.
  #lingering(peer: Peer): void {
    clearTimeout(peer.stall);
    peer.stall = setTimeout(() => peer.drop(), LINGER_MS);
  }

  #input(frame: ClientFrame): void {
    if (this.#program === null || this.#exit !== null) return;
    if (frame.type === 'input') return this.#program.write(frame.data);
    try {
      this.#program.resize(frame.cols, frame.rows);
    } catch {
      // the pty closed meanwhile: the program is ending
    }
    this.#screen.resize(frame.cols, frame.rows);
  }

  // The program ended (all its output is in): every client gets the rest and the exit frame, then
  // is ended; resolves once they have all gone.
  async exit(code: ExitFrame['code']): Promise<void> {
    await this.#screen.settled();
    this.#exit = line({ type: 'exit', code } satisfies ExitFrame);
    if (this.#peers.size > 0) {
      const gone = new Promise<void>((resolve) => (this.#allGone = resolve));
      for (const p of this.#peers) {
        this.#lingering(p);
        if (p.live) this.#follow(p);
      }
      await gone;
    }
    this.#screen.dispose();
  }
}
