import serializeAddon from '@xterm/addon-serialize';
import xtermHeadless, { type ITerminalAddon } from '@xterm/headless';
import type { ScreenFrame } from '../../schemas/terminal.ts';

// The lines above the window the screen keeps, and so sends to whoever attaches: xterm.js's own
// default. The screen frame is serialized on the holder's one thread, and its cost grows with
// these lines (10,000 of them hold up the program and every client for a user-visible while);
// the whole output is the session's stored lines (docs/decisions/terminal.md).
export const SCROLLBACK_LINES = 1000;

// The program's screen, kept in a headless terminal that parses the output as it comes. Its parser
// runs behind the output (it works in slices); every callback here runs in the parser's order, so
// what it sees is the screen exactly at `parsed`.
export class Screen {
  #term: InstanceType<typeof xtermHeadless.Terminal>;
  #serializer = new serializeAddon.SerializeAddon();
  #parsed = 0;

  /** onParsed: told each time the parser is through a chunk, with the offset after it */
  constructor(cols: number, rows: number, private readonly onParsed: (offset: number) => void) {
    this.#term = new xtermHeadless.Terminal({ cols, rows, scrollback: SCROLLBACK_LINES, allowProposedApi: true });
    // The addon's types name @xterm/xterm's Terminal; the headless one has what it uses.
    this.#term.loadAddon(this.#serializer as unknown as ITerminalAddon);
  }

  /** the offset the parser is through */
  get parsed(): number {
    return this.#parsed;
  }

  // Parses `data`, the output up to offset `end`.
  write(data: string, end: number): void {
    this.#term.write(data, () => {
      this.#parsed = end;
      this.onParsed(end);
    });
  }

  // Once everything written so far is parsed, `fn` gets the screen as it is there.
  snapshot(fn: (frame: ScreenFrame) => void): void {
    this.#term.write('', () => fn({ type: 'screen', offset: this.#parsed, cols: this.#term.cols, rows: this.#term.rows, data: this.#serializer.serialize() }));
  }

  // Resizes after what was written before: the output the program draws at its new size comes
  // after this, so it is parsed at that size.
  resize(cols: number, rows: number): void {
    this.#term.write('', () => this.#term.resize(cols, rows));
  }

  // Resolves once everything written so far is parsed.
  settled(): Promise<void> {
    return new Promise((resolve) => this.#term.write('', resolve));
  }

  dispose(): void {
    this.#term.dispose();
  }
}
