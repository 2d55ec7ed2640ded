// `grove attach SESSION` (DESIGN §21): a terminal session's WebSocket in this terminal. The keys
// typed go to the program, what it prints comes here, this window's size is its window's;
// Ctrl-\ detaches and the program runs on. A daemon that restarts meanwhile is waited for and
// the output taken up where it was left (?offset=), so a restart does not end the attach.
// Loaded by `grove attach` alone: ws is no other command's.
import type { IncomingMessage } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import type { ReadStream, WriteStream } from 'node:tty';
import WebSocket from 'ws';
import { MAX_TERMINAL_DIM, type ClientFrame, type ServerFrame } from '../../schemas/terminal.ts';
import { ApiProblem, parseProblem } from '../client/problem.ts';
import { DaemonUnreachable, unreachable } from '../client/transport.ts';
import { retrying, type RetryPolicy } from '../runtime/retry.ts';
import { CliError, EXIT } from './errors.ts';

/** Ctrl-\ (FS): the key that detaches, as raw mode reads it */
export const DETACH_KEY = 0x1c;
// WebSocket close codes the daemon sends (daemon/terminal/protocol.ts CLOSE), and the one ws
// reports for a connection cut without a close (the daemon killed).
const NORMAL = 1000;
const GOING_AWAY = 1001;
const ABNORMAL = 1006;
// While the daemon restarts: tried again soon, then every second, for a minute at most.
const RECONNECT: RetryPolicy = { delayMs: 100, factor: 2, maxDelayMs: 1000 };
export const RECONNECT_MS = 60_000;
// A notice once the daemon has been away this long (a quick restart goes unsaid).
const NOTICE_MS = 1000;
// A daemon that takes the connection and does not answer its upgrade is given up on after this.
const HANDSHAKE_MS = 20_000;
// Keys typed while the daemon is away are sent once it is back, up to this many bytes.
const MAX_PENDING_BYTES = 64 * 1024;

// This terminal's own state around the program's: the alternate screen (the shell's screen is
// given back as it was), and on leaving, whatever modes the program may have set reset (SGR,
// a hidden cursor, mouse reporting, bracketed paste, application keys).
const ENTER = '\x1b[?1049h\x1b[H\x1b[2J';
const REDRAW = '\x1b[0m\x1b[H\x1b[2J';
const LEAVE = '\x1b[0m\x1b[?25h\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l\x1b[?1l\x1b>\x1b[?1049l';

export type AttachEnd =
  /** Ctrl-\: the program runs on */
  | { how: 'detached' }
  /** the program exited (code null: not known) */
  | { how: 'exited'; code: number | null }
  /** the daemon closed the terminal for good without an exit (its holder is gone) */
  | { how: 'ended' }
  /** this process was told to stop (its terminal hung up, a kill) */
  | { how: 'signal'; signal: NodeJS.Signals };

export interface AttachOptions {
  /** the daemon's socket (or the local end of a host's forward) */
  socketPath: string;
  sessionId: string;
  stdin: ReadStream;
  stdout: NodeJS.WriteStream;
  /** where the window's size is read (a TTY), or null: no size is sent */
  window: WriteStream | null;
}

interface Handlers {
  /** a frame's text, as it came */
  frame(text: string): void;
  close(code: number, reason: string): void;
}

// Opens the session's WebSocket on the socket, from `offset` (null: the screen as it is). A
// refusal of the upgrade (404, 409 NOT_A_TERMINAL) throws its ApiProblem, no daemon on the socket
// DaemonUnreachable. `on` is wired before the open, so that no frame sent with the handshake's
// answer is missed; its close once the socket is open only.
function openTerminal(socketPath: string, id: string, offset: number | null, on: Handlers): Promise<WebSocket> {
  const url = `ws+unix://${socketPath}:/api/sessions/${encodeURIComponent(id)}/terminal${offset === null ? '' : `?offset=${offset}`}`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: HANDSHAKE_MS });
    let open = false;
    ws.on('message', (data) => on.frame(data.toString()));
    ws.once('open', () => {
      open = true;
      resolve(ws);
    });
    ws.on('close', (code, reason) => open && on.close(code, reason.toString()));
    ws.on('error', (err: NodeJS.ErrnoException) => {
      if (open) return;
      // ws's own words for a daemon that took the connection and never answered it.
      if (err.code === undefined && /handshake has timed out/.test(err.message)) reject(new CliError(`the daemon did not answer the attach within ${HANDSHAKE_MS / 1000} s`, EXIT.NO_DAEMON));
      else reject(unreachable(socketPath, err));
    });
    ws.once('unexpected-response', (req, res: IncomingMessage) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.once('end', () => {
        req.destroy();
        reject(parseProblem(res.statusCode ?? 500, body, [res.headers['retry-after']].flat()[0]));
      });
    });
  });
}

// What the daemon's absence looks like (not running, its socket closed under the handshake), or
// its asking to be asked again (503 as it starts or stops).
function away(err: unknown): boolean {
  if (err instanceof DaemonUnreachable) return true;
  if (err instanceof ApiProblem) return err.status === 503;
  return typeof (err as NodeJS.ErrnoException).code === 'string';
}

// The window's size as a resize frame, within what the daemon takes; null where it is not known
// (a pseudo-terminal never sized reads 0×0).
function windowSize(w: WriteStream | null): ClientFrame | null {
  if (w === null || !(w.columns > 0 && w.rows > 0)) return null;
  const dim = (n: number) => Math.min(n, MAX_TERMINAL_DIM);
  return { type: 'resize', cols: dim(w.columns), rows: dim(w.rows) };
}

// Attaches this terminal to the session's until the program exits, Ctrl-\ is typed, or the
// daemon ends it. A refusal before the attach throws and leaves the terminal untouched.
export async function runAttach(o: AttachOptions): Promise<AttachEnd> {
  let settled = false;
  let finish!: (end: AttachEnd | Error) => void;
  const finished = new Promise<AttachEnd | Error>((resolve) => {
    finish = (end) => {
      if (settled) return;
      settled = true;
      resolve(end);
    };
  });
  const screen = o.stdout.isTTY === true;
  // What came before the terminal was taken (frames sent with the handshake's answer) is
  // written once it is, after the alternate screen is entered.
  let early: string[] | null = [];
  const write = (s: string) => {
    if (settled) return;
    if (early !== null) early.push(s);
    else o.stdout.write(s);
  };
  // The output byte to take up from after a reconnect: where the last frame ended.
  let offset: number | null = null;
  let ws: WebSocket | null = null;
  const send = (f: ClientFrame) => {
    if (ws?.readyState === WebSocket.OPEN) ws.send(JSON.stringify(f));
  };
  const reconnecting = new AbortController();

  const on: Handlers = {
    frame(text) {
      if (settled) return;
      let f: ServerFrame;
      try {
        f = JSON.parse(text) as ServerFrame;
      } catch {
        return finish(new CliError(`the daemon sent a frame that is not JSON: ${text.slice(0, 60)}`, EXIT.API));
      }
      if (f.type === 'exit') return finish({ how: 'exited', code: f.code });
      write(f.type === 'screen' && screen ? REDRAW + f.data : f.data);
      // A screen is the state at its offset; output frames carry the bytes from theirs.
      offset = f.type === 'screen' ? f.offset : f.offset + Buffer.byteLength(f.data, 'utf8');
    },
    close(code, reason) {
      if (settled) return;
      ws = null;
      if (code === GOING_AWAY || code === ABNORMAL) return void reconnect();
      if (code === NORMAL) return finish({ how: 'ended' });
      // A frame of ours refused (1003, 1007, 1009): this client's fault, said as such.
      finish(new CliError(`the daemon closed the terminal: ${code} ${reason}`, EXIT.API));
    },
  };

  // The daemon went away (it restarts): opened again from the offset, for RECONNECT_MS at most.
  async function reconnect(): Promise<void> {
    const bound = AbortSignal.timeout(RECONNECT_MS);
    const notice = setTimeout(() => {
      if (!settled && screen) write('\r\n[grove: the daemon is away; waiting for it to come back (Ctrl-\\ detaches)]\r\n');
    }, NOTICE_MS);
    try {
      const next = await retrying(() => openTerminal(o.socketPath, o.sessionId, offset, on), {
        policy: RECONNECT,
        retryable: away,
        signal: AbortSignal.any([bound, reconnecting.signal]),
      });
      if (settled) return void next.close(NORMAL);
      ws = next;
      opened();
    } catch (err) {
      if (settled) return;
      finish(
        bound.aborted
          ? new CliError(`the daemon did not come back within ${RECONNECT_MS / 1000} s; the program runs on: grove attach ${o.sessionId} once the daemon is up`, EXIT.NO_DAEMON)
          : (err as Error),
      );
    } finally {
      clearTimeout(notice);
    }
  }

  // A connection opened: this window's size, then what was typed while there was none.
  let pending = '';
  function opened(): void {
    const size = windowSize(o.window);
    if (size) send(size);
    if (pending !== '') send({ type: 'input', data: pending });
    pending = '';
  }

  // Refusals come here, before the terminal is touched.
  ws = await openTerminal(o.socketPath, o.sessionId, null, on);

  const decoder = new StringDecoder('utf8');
  const onKeys = (chunk: Buffer) => {
    const at = chunk.indexOf(DETACH_KEY);
    const keys = decoder.write(at === -1 ? chunk : chunk.subarray(0, at));
    if (keys !== '') {
      if (ws?.readyState === WebSocket.OPEN) send({ type: 'input', data: keys });
      else if (Buffer.byteLength(pending) + Buffer.byteLength(keys) <= MAX_PENDING_BYTES) pending += keys;
    }
    if (at !== -1) finish({ how: 'detached' });
  };
  const onResize = () => {
    const size = windowSize(o.window);
    if (size) send(size);
  };
  const onSignal = (signal: NodeJS.Signals) => finish({ how: 'signal', signal });
  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP'];

  // Whatever ends this process meanwhile (an uncaught error) gives the terminal back first.
  const giveBack = () => {
    o.stdin.setRawMode(false);
    if (screen) o.stdout.write(LEAVE);
  };
  process.once('exit', giveBack);
  o.stdin.setRawMode(true);
  o.stdin.on('data', onKeys);
  o.stdin.resume();
  o.window?.on('resize', onResize);
  for (const s of signals) process.on(s, onSignal);
  if (screen) o.stdout.write(ENTER);
  for (const s of early) o.stdout.write(s);
  early = null;
  opened();

  const end = await finished;
  reconnecting.abort();
  o.window?.off('resize', onResize);
  for (const s of signals) process.off(s, onSignal);
  process.off('exit', giveBack);
  o.stdin.off('data', onKeys);
  o.stdin.pause();
  // A terminal that hung up takes no more writes.
  const hungUp = !(end instanceof Error) && end.how === 'signal' && end.signal === 'SIGHUP';
  if (!hungUp) giveBack();
  const last = ws as WebSocket | null;
  if (last !== null) last.close(NORMAL);
  if (end instanceof Error) throw end;
  return end;
}
