import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Pool from 'undici/lib/dispatcher/pool.js';
import request from 'undici/lib/api/api-request.js';
import type { Logger } from '../log.ts';
import { writeProblem } from './api.ts';
import { drainUnread } from './body.ts';
import { checkBrowserGuards } from './guards.ts';
import { loopbackPeerUid } from './peer.ts';
import { closeServer, once, type Listener } from './server.ts';

// Per RFC 9110 these describe one connection and must not be forwarded.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'host',
]);

export interface Front extends Listener {
  readonly port: number;
}

// The loopback TCP front: browser guards, then every request streamed to the socket with undici.
export async function startFront(opts: { port: number; socketPath: string; log: Logger }): Promise<Front> {
  const { log } = opts;
  const upstream = new Pool('http://localhost', { socketPath: opts.socketPath, connections: 64, pipelining: 1 });
  let port = opts.port;

  // Connections from another local user's process, found when they are accepted.
  const foreign = new WeakMap<Socket, string>();
  const myUid = process.getuid?.() ?? null;

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const peer = foreign.get(req.socket);
    if (peer !== undefined) {
      log.warn({ peer, method: req.method, url: req.url }, 'refused a connection of another user');
      return writeProblem(req, res, 'FORBIDDEN_PEER', `the connection comes from ${peer}; only the user running grove may use it`);
    }
    const refusal = checkBrowserGuards(req, port);
    if (refusal) {
      log.warn({ code: refusal.code, method: req.method, url: req.url, host: req.headers.host, origin: req.headers.origin }, 'refused');
      return writeProblem(req, res, refusal.code, refusal.detail);
    }
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
    }
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    const withBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
    let up;
    try {
      up = await request.call(upstream, {
        method: req.method as 'GET',
        path: req.url!,
        headers,
        // Through a PassThrough: undici destroys a body it stops reading (on an early answer
        // such as 413), and destroying `req` itself would reset the client's connection.
        body: withBody ? req.pipe(new PassThrough()) : null,
        signal: abort.signal,
      });
    } catch (err) {
      if (abort.signal.aborted) return;
      log.error({ err }, 'API socket unreachable');
      return writeProblem(req, res, 'UNAVAILABLE', 'the grove API is not reachable');
    }
    const outHeaders: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(up.headers)) {
      if (v !== undefined && !HOP_BY_HOP.has(k)) outHeaders[k] = v;
    }
    res.once('finish', () => {
      if (req.complete) return;
      req.unpipe();
      drainUnread(req);
    });
    res.writeHead(up.statusCode, outHeaders);
    res.flushHeaders(); // event streams must reach the client before their first event
    try {
      await pipeline(up.body, res);
    } catch {
      // client went away or upstream was cut: both ends are destroyed by pipeline
    }
  }

  const server = createServer({ keepAliveTimeout: 5000 }, (req, res) => {
    forward(req, res).catch((err: unknown) => {
      log.error({ err }, 'front failed');
      if (!res.headersSent) writeProblem(req, res, 'UNAVAILABLE', 'the grove API is not reachable');
      else res.destroy();
    });
  });
  server.on('connection', (socket: Socket) => {
    if (myUid === null || socket.remotePort === undefined) return;
    const uid = loopbackPeerUid(socket.remotePort, port);
    if (uid === null || uid === myUid) return;
    foreign.set(socket, uid === 'unknown' ? 'a process grove cannot identify' : `uid ${uid}`);
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
      await closeServer(server);
      await upstream.close();
      log.info('TCP front closed');
    }),
  };
}
