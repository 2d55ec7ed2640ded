import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { UUID_PATTERN } from '../../schemas/common.ts';
import { MAX_INPUT_BYTES, type ClientFrame } from '../../schemas/terminal.ts';
import { GroveError } from '../errors.ts';
import { refuseUpgrade } from '../http/upgrade.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import { attachTerminal, terminalSession, type AttachDeps } from '../sessions/attach.ts';
import { CLOSE, parseClientFrame } from '../terminal/protocol.ts';

const PATH = new RegExp(`^/api/sessions/(${UUID_PATTERN.slice(1, -1)})/terminal$`);
// A client that reads slower than the program prints: past this much unsent, its link to the
// holder is paused until it has taken all but a quarter of it. The holder then follows it from
// the output file: nothing is held here, nothing is lost, and no one else waits.
const HIGH_BUFFERED_BYTES = 1024 * 1024;
// How long a client has to answer the close at shutdown.
const CLOSE_GRACE_MS = 1000;

// GET /api/sessions/:id/terminal (DESIGN §21): the WebSocket of a terminal session. Each client
// has a link of its own to the session's holder, which sends it every byte.
export function terminalSockets(deps: AttachDeps & { log: Logger }) {
  const { log } = deps;
  // A frame's JSON escapes may make an input of 1 MiB up to six times longer as text.
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_INPUT_BYTES * 6 + 1024 });
  const clients = new Set<WebSocket>();

  async function upgrade(req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
    socket.on('error', () => {});
    const url = new URL(req.url ?? '/', 'http://localhost');
    const match = PATH.exec(url.pathname);
    if (!match) return refuseUpgrade(req, socket, 'NOT_FOUND', `no WebSocket at ${url.pathname}; a terminal session's is /api/sessions/:id/terminal`);
    if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return refuseUpgrade(req, socket, 'VALIDATION_FAILED', 'only a WebSocket upgrade is served here');
    const extra = [...url.searchParams.keys()].find((k) => k !== 'offset');
    if (extra !== undefined) return refuseUpgrade(req, socket, 'VALIDATION_FAILED', `unknown query parameter ${extra}`, [{ path: `/${extra}`, message: 'is not an allowed field' }]);
    const raw = url.searchParams.get('offset');
    const offset = raw === null ? null : /^(0|[1-9][0-9]{0,15})$/.test(raw) && Number.isSafeInteger(Number(raw)) ? Number(raw) : -1;
    if (offset === -1) return refuseUpgrade(req, socket, 'VALIDATION_FAILED', 'offset must be a byte offset (an integer ≥ 0)', [{ path: '/offset', message: 'must be an integer ≥ 0' }]);
    let rec;
    try {
      rec = await terminalSession(deps, match[1]!);
    } catch (err) {
      if (err instanceof GroveError) return refuseUpgrade(req, socket, err.code, err.detail);
      log.error({ err }, 'terminal upgrade failed');
      return refuseUpgrade(req, socket, 'UNAVAILABLE', 'the session could not be read; try again');
    }
    if (socket.destroyed) return;
    wss.handleUpgrade(req, socket, head, (ws) => void serve(ws, rec.id, () => attachTerminal(deps, rec, offset)));
  }

  async function serve(ws: WebSocket, id: string, attach: () => ReturnType<typeof attachTerminal>): Promise<void> {
    clients.add(ws);
    ws.on('close', () => clients.delete(ws));
    ws.on('error', () => {});
    // Read from the open on: ws keeps no message for a listener added later, and a client sends
    // its window's size (and what is typed) at once, while the holder is being attached to. Those
    // wait here, up to an input's worth, and go once it is.
    let at: Awaited<ReturnType<typeof attachTerminal>> | null = null;
    const early: ClientFrame[] = [];
    let earlyBytes = 0;
    ws.on('message', (data, isBinary) => {
      const parsed = isBinary ? ({ ok: false, close: CLOSE.UNSUPPORTED, reason: 'frames are JSON text' } as const) : parseClientFrame(data.toString());
      if (!parsed.ok) {
        log.debug({ session: id, reason: parsed.reason }, 'terminal client refused');
        return ws.close(parsed.close, parsed.reason);
      }
      if (at !== null) return at.send(parsed.frame);
      earlyBytes += (data as Buffer).length;
      if (earlyBytes > MAX_INPUT_BYTES) return ws.close(CLOSE.TOO_BIG, 'over 1 MiB sent before the terminal was attached');
      early.push(parsed.frame);
    });
    try {
      at = await attach();
    } catch (err) {
      log.warn({ err, session: id }, 'attaching to a terminal failed');
      return ws.close(CLOSE.GOING_AWAY, 'the terminal could not be attached; try again');
    }
    if (ws.readyState !== ws.OPEN) return at.close();
    ws.on('close', () => at.close());
    // The end of the link is the session's only after its exit frame: before it, the holder cut
    // the link (it was too far behind) or went away, and the client comes back with ?offset=.
    let exited = false;
    at.onEnd(() => (exited ? ws.close(CLOSE.NORMAL, 'the session ended') : ws.close(CLOSE.GOING_AWAY, "the terminal's link was cut; reconnect with ?offset=")));
    let paused = false;
    const sent = () => {
      if (paused && ws.bufferedAmount <= HIGH_BUFFERED_BYTES / 4) {
        paused = false;
        at.resume();
      }
    };
    at.onFrame((frame) => {
      if (frame.type === 'exit') exited = true;
      if (ws.readyState !== ws.OPEN) return;
      ws.send(JSON.stringify(frame), sent);
      if (!paused && ws.bufferedAmount > HIGH_BUFFERED_BYTES) {
        paused = true;
        at.pause();
      }
    });
    for (const frame of early.splice(0)) at.send(frame);
  }

  return {
    upgrade: (req: IncomingMessage, socket: Socket, head: Buffer) => void upgrade(req, socket, head),
    // The daemon stops: each client is told to come back (its program runs on in its holder).
    close: once(async () => {
      const gone = [...clients].map((ws) => new Promise<void>((resolve) => {
        ws.once('close', () => resolve());
        ws.close(CLOSE.GOING_AWAY, 'the daemon is stopping; reconnect with ?offset=');
        // A client that does not answer the close is cut: the socket's close waits for it.
        setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
      }));
      await Promise.all(gone);
      wss.close();
    }),
  };
}
