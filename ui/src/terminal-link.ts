// A terminal session's WebSocket (DESIGN §21), kept open: GET /api/sessions/:id/terminal, its
// frames handed to a screen in order, the output's offset tracked, and a connection that drops
// (the daemon restarting: close 1001, or no close at all) opened again with ?offset= after a
// back-off, so that only what was missed comes. Close 1000 is the session's end.
import type { ClientFrame, ScreenFrame, ServerFrame } from '../../schemas/terminal.ts';

// What the frames are written to (an xterm, or a test's record).
export interface Screen {
  /** the screen as it is at the frame's offset: what was shown goes, this is drawn at cols × rows */
  redraw(frame: ScreenFrame): void;
  write(data: string): void;
}

export type LinkState =
  | { kind: 'connecting' }
  | { kind: 'live' }
  /** the connection dropped: opened again after `ms` */
  | { kind: 'reconnecting'; ms: number }
  /** the program ended with this status (null: not known) */
  | { kind: 'exited'; code: number | null }
  /** closed for good with no exit told (the session's holder is gone) */
  | { kind: 'ended' };

export interface LinkOptions {
  /** the socket's address; `offset` null asks for the screen as it is */
  url(offset: number | null): string;
  screen: Screen;
  onState(state: LinkState): void;
  /** each time a connection opens (the view sends its size), before the keys held meanwhile */
  onOpen?(): void;
  /** the first wait after a drop, doubled at each failure up to `maxMs` */
  firstMs?: number;
  maxMs?: number;
  /** a WebSocket implementation (tests); the browser's by default */
  WebSocket?: new (url: string) => WebSocket;
}

export interface Link {
  /** false when it was dropped: a resize with no connection open, anything once the link is done;
   * keys typed while the link reconnects are held and sent first when it is back */
  send(frame: ClientFrame): boolean;
  /** the offset the next output byte will have; null before the first frame */
  readonly offset: number | null;
  close(): void;
}

// Close codes (RFC 6455) the daemon uses: 1000 the session ended; any other means come back.
const NORMAL = 1000;
// Keys typed while the daemon is away, held up to this many (UTF-8) bytes, as grove attach does.
export const MAX_HELD_BYTES = 64 * 1024;

export function openLink(opts: LinkOptions): Link {
  const firstMs = opts.firstMs ?? 500;
  const maxMs = opts.maxMs ?? 10_000;
  const Socket = opts.WebSocket ?? WebSocket;
  let offset: number | null = null;
  let delay = firstMs;
  let ws: WebSocket | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let done = false;
  let held = '';

  const finish = (state: LinkState) => {
    done = true;
    ws = null;
    opts.onState(state);
  };

  const frame = (f: ServerFrame) => {
    switch (f.type) {
      case 'screen':
        opts.screen.redraw(f);
        offset = f.offset;
        break;
      case 'output': {
        const bytes = utf8Length(f.data);
        const end = f.offset + bytes;
        if (offset !== null && end <= offset) break; // shown already
        // A frame from before the expected offset (an ended session's output read again): only
        // its part past it. A frame past it (nothing else can follow) is written as it comes.
        opts.screen.write(offset !== null && f.offset < offset ? utf8Slice(f.data, offset - f.offset) : f.data);
        offset = end;
        break;
      }
      case 'exit': {
        // Nothing comes after it: the daemon's close 1000 follows, not waited for.
        const sock = ws;
        finish({ kind: 'exited', code: f.code });
        sock?.close();
        break;
      }
    }
  };

  const connect = () => {
    timer = undefined;
    const sock = (ws = new Socket(opts.url(offset)));
    sock.onopen = () => {
      if (ws !== sock) return;
      opts.onState({ kind: 'live' });
      opts.onOpen?.();
      if (held !== '') sock.send(JSON.stringify({ type: 'input', data: held } satisfies ClientFrame));
      held = '';
    };
    sock.onmessage = (m: { data: unknown }) => {
      if (ws !== sock || typeof m.data !== 'string') return;
      // A connection that brought a frame worked: the next drop starts the back-off again.
      delay = firstMs;
      let f: ServerFrame;
      try {
        f = JSON.parse(m.data) as ServerFrame;
      } catch {
        return;
      }
      frame(f);
    };
    sock.onclose = (e: { code: number }) => {
      if (ws !== sock || done) return;
      ws = null;
      if (e.code === NORMAL) return finish({ kind: 'ended' });
      opts.onState({ kind: 'reconnecting', ms: delay });
      timer = setTimeout(connect, delay);
      delay = Math.min(delay * 2, maxMs);
    };
  };

  opts.onState({ kind: 'connecting' });
  connect();
  return {
    send(f) {
      if (done) return false;
      if (ws !== null && ws.readyState === ws.OPEN) {
        ws.send(JSON.stringify(f));
        return true;
      }
      if (f.type !== 'input' || utf8Length(held) + utf8Length(f.data) > MAX_HELD_BYTES) return false;
      held += f.data;
      return true;
    },
    get offset() {
      return offset;
    },
    close() {
      done = true;
      clearTimeout(timer);
      const sock = ws;
      ws = null;
      sock?.close();
    },
  };
}

// The UTF-8 length of a string, as the daemon counts offsets (a lone surrogate is U+FFFD: 3 bytes).
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

// The part of `s` after its first `bytes` UTF-8 bytes.
function utf8Slice(s: string, bytes: number): string {
  return new TextDecoder().decode(new TextEncoder().encode(s).subarray(bytes));
}
