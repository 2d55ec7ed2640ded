import type { Socket } from 'node:net';
import type { ClientFrame, ExitFrame } from '../../schemas/terminal.ts';
import { Backlog } from './backlog.ts';
import { line } from './lines.ts';
import { Peer } from './peer.ts';
import { Screen } from './screen.ts';

// Output the headless terminal has not parsed yet past which the program is paused (the pty holds
// its writes, as a slow terminal would): the parser's own buffer throws past its limit, and all of
// it is held in memory. It goes on once the parser is through a sixteenth of that: node-pty reads
// a program that has ended for a short while only, so a pause must not last.
export const PARSE_AHEAD_MAX = 16 * 1024 * 1024;

// How long clients get, once the program has ended, to take their last frames (or to attach).
const LINGER_MS = 2000;

export interface Program {
  write(data: string): void;
  resize(cols: number, rows: number): void;
  pause(): void;
  resume(): void;
}

// The holder's output side: each chunk of the program's output to the stored output (`out`), to the
// kept output and the screen, and to every client; and the clients' frames to the program.
export class Relay {
  readonly #backlog = new Backlog();
  readonly #screen: Screen;
  readonly #peers = new Set<Peer>();
  #program: Program | null = null;
  #paused = false;
  #exit: string | null = null;
  #allGone: (() => void) | null = null;

  constructor(
    cols: number,
    rows: number,
    private readonly out: (bytes: Buffer) => void,
    private readonly parseAheadMax = PARSE_AHEAD_MAX,
  ) {
    this.#screen = new Screen(cols, rows, (parsed) => this.#parsed(parsed));
  }

  // The program, once it runs: until then its clients' frames go nowhere.
  run(program: Program): void {
    this.#program = program;
  }

  output(data: string): void {
    const bytes = Buffer.from(data);
    this.out(bytes);
    const frame = this.#backlog.append(data, bytes.length);
    this.#screen.write(data, this.#backlog.total);
    const text = line(frame);
    for (const p of this.#peers) if (p.live) p.send(text);
    if (!this.#paused && this.#backlog.total - this.#screen.parsed > this.parseAheadMax) {
      this.#paused = true;
      this.#program?.pause();
    }
  }

  #parsed(offset: number): void {
    this.#backlog.trim(offset);
    if (this.#paused && this.#backlog.total - offset <= (this.parseAheadMax * 15) / 16) {
      this.#paused = false;
      this.#program?.resume();
    }
  }

  connect(socket: Socket): void {
    this.#peers.add(
      new Peer(socket, {
        attach: (peer, offset) => this.#attach(peer, offset),
        frame: (frame) => this.#input(frame),
        gone: (peer) => {
          this.#peers.delete(peer);
          if (this.#peers.size === 0) this.#allGone?.();
        },
      }),
    );
  }

  // What the client missed if it is still kept; else the screen, then the output after it.
  #attach(peer: Peer, offset: number | null): void {
    const missed = offset === null ? null : this.#backlog.since(offset);
    if (missed !== null) {
      for (const f of missed) peer.send(line(f));
      return this.#live(peer);
    }
    // In the parser's callback, so that nothing parsed after the screen is missing from the
    // backlog (it keeps everything past the parsed offset).
    this.#screen.snapshot((screen) => {
      if (peer.closed) return;
      peer.sendScreen(line(screen));
      for (const f of this.#backlog.since(screen.offset) ?? []) peer.send(line(f));
      this.#live(peer);
    });
  }

  #live(peer: Peer): void {
    peer.live = true;
    if (this.#exit === null) return;
    peer.send(this.#exit);
    peer.end();
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
    for (const p of this.#peers) if (p.live) this.#live(p);
    if (this.#peers.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          for (const p of this.#peers) p.drop();
        }, LINGER_MS);
        this.#allGone = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    this.#screen.dispose();
  }
}
