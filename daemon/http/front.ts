import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Pool } from 'undici';
import type { Logger } from '../runtime/log.ts';
import { writeProblem } from './api.ts';
import { checkBrowserGuards } from './guards.ts';
import { createPeerLookup } from './peer.ts';
import { closeServer, type Listener } from './server.ts';
import { once } from '../runtime/once.ts';
import { wantsEventStream } from './sse.ts';
import { proxy } from './proxy.ts';
import { forwardUpgrade, refuseUpgrade } from './upgrade.ts';

// Plain requests share a pool of this many connections to the socket; they are short, and a
// burst queues for a free one.
const PLAIN_CONNECTIONS = 64;
// Event streams each hold a connection of their own for as long as they last, so they go
// through a pool apart, or open streams would leave no connection for plain requests. Beyond
// this many at once a new stream is refused at once: each costs descriptors (the client's, the
// upstream's and the socket server's), and a flood must not use them all up.
export const MAX_STREAMS = 1000;

export interface Front extends Listener {
  readonly port: number;
}

// The loopback TCP front: browser guards, then every request streamed to the socket with undici.
export async function startFront(opts: { port: number; socketPath: string; log: Logger; maxStreams?: number }): Promise<Front> {
  const { log } = opts;
  const maxStreams = opts.maxStreams ?? MAX_STREAMS;
  const plain = new Pool('http://localhost', { socketPath: opts.socketPath, connections: PLAIN_CONNECTIONS, pipelining: 1 });
  const streams = new Pool('http://localhost', { socketPath: opts.socketPath, connections: maxStreams, pipelining: 1 });
  let openStreams = 0;
  let port = opts.port;

  // Who each connection comes from, looked up when it is accepted: null for the user running
  // grove, else who it is; a promise until the kernel's table has been read.
  const peers = new WeakMap<Socket, string | null | Promise<string | null>>();
  const lookupPeer = createPeerLookup();
  const myUid = process.getuid?.() ?? null;

  function forward(req: IncomingMessage, res: ServerResponse, peer: string | null): void {
    if (peer !== null) {
      log.warn({ peer, method: req.method, url: req.url }, 'refused a connection of another user');
      return writeProblem(req, res, 'FORBIDDEN_PEER', `the connection comes from ${peer}; only the user running grove may use it`);
    }
    const refusal = checkBrowserGuards(req, port);
    if (refusal) {
      log.warn({ code: refusal.code, method: req.method, url: req.url, host: req.headers.host, origin: req.headers.origin }, 'refused');
      return writeProblem(req, res, refusal.code, refusal.detail);
    }
    const isStream = wantsEventStream(req);
    if (isStream && openStreams >= maxStreams) {
      log.warn({ url: req.url, open: openStreams }, 'too many event streams; refused');
      return writeProblem(req, res, 'UNAVAILABLE', `${maxStreams} event streams are open, the most the TCP front serves at once; try again later`);
    }
    const upstream = isStream ? streams : plain;
    if (isStream) {
      openStreams++;
      res.once('close', () => openStreams--);
    }
    proxy(upstream, req, res, {
      path: req.url!,
      unreachable: (err) => {
        log.error({ err }, 'API socket unreachable');
        writeProblem(req, res, 'UNAVAILABLE', 'the grove API is not reachable');
      },
    });
  }

  // A WebSocket (a session's terminal, DESIGN §21): the same guards as any request, and one of
  // the streams the front serves at once, as an event stream is.
  const upgraded = new Set<Socket>();
  function upgrade(req: IncomingMessage, socket: Socket, head: Buffer, peer: string | null): void {
    if (socket.destroyed) return;
    if (peer !== null) {
      log.warn({ peer, url: req.url }, 'refused a connection of another user');
      return refuseUpgrade(req, socket, 'FORBIDDEN_PEER', `the connection comes from ${peer}; only the user running grove may use it`);
    }
    const refusal = checkBrowserGuards(req, port);
    if (refusal) {
      log.warn({ code: refusal.code, url: req.url, host: req.headers.host, origin: req.headers.origin }, 'refused an upgrade');
      return refuseUpgrade(req, socket, refusal.code, refusal.detail);
    }
    if (openStreams >= maxStreams) {
      log.warn({ url: req.url, open: openStreams }, 'too many streams; upgrade refused');
      return refuseUpgrade(req, socket, 'UNAVAILABLE', `${maxStreams} streams are open, the most the TCP front serves at once; try again later`);
    }
    openStreams++;
    upgraded.add(socket);
    forwardUpgrade(req, socket, head, {
      socketPath: opts.socketPath,
      done: () => {
        openStreams--;
        upgraded.delete(socket);
      },
      unreachable: (err) => {
        log.error({ err }, 'API socket unreachable');
        refuseUpgrade(req, socket, 'UNAVAILABLE', 'the grove API is not reachable');
      },
    });
  }

  function handle(req: IncomingMessage, res: ServerResponse, peer: string | null): void {
    // A client gone while its connection's owner was looked up: its 'close' has passed, and a
    // stream forwarded now would never be aborted.
    if (req.socket.destroyed) return;
    try {
      forward(req, res, peer);
    } catch (err) {
      // dispatch() throws at once when the pool is closed (shutdown) or refuses the request.
      log.error({ err }, 'front failed');
      if (!res.headersSent) writeProblem(req, res, 'UNAVAILABLE', 'the grove API is not reachable');
      else res.destroy();
    }
  }

  // Not `import … from 'node:http'`: its ESM namespace loads Node's bundled undici (client/transport.ts).
  const { createServer } = process.getBuiltinModule('node:http');
  const server = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
    const peer = peers.get(req.socket) ?? null;
    // The first request of a new connection waits for the look-up; nothing is read or sent on
    // before it (the request body stays unread in the socket meanwhile).
    if (peer instanceof Promise) void peer.then((p) => handle(req, res, p));
    else handle(req, res, peer);
  });
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on('error', () => {});
    const peer = peers.get(socket) ?? null;
    if (peer instanceof Promise) void peer.then((p) => upgrade(req, socket, head, p));
    else upgrade(req, socket, head, peer);
  });
  server.on('connection', (socket: Socket) => {
    if (myUid === null || socket.remotePort === undefined) return;
    const verdict = lookupPeer(socket.remotePort, port).then((uid) => {
      const who = uid === null || uid === myUid ? null : uid === 'unknown' ? 'a process grove cannot identify' : `uid ${uid}`;
      peers.set(socket, who);
      return who;
    });
    peers.set(socket, verdict);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: opts.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  log.info({ port, url: `http://127.0.0.1:${port}` }, 'TCP front listening');
  return {
    server,
    port,
    close: once(async () => {
      // An upgraded connection is no longer the server's to end: cut first, its client reconnects.
      for (const socket of upgraded) socket.destroy();
      await closeServer(server);
      await Promise.all([plain.close(), streams.close()]);
      log.info('TCP front closed');
    }),
  };
}
