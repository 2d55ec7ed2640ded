import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../runtime/log.ts';
import { prepareSocketPath } from './unix-socket.ts';
import { once } from '../runtime/once.ts';
import { listenPrivate, removeOwnSocket } from '../runtime/socket-file.ts';

export interface Listener {
  readonly server: Server;
  close(): Promise<void>;
}

// How long open connections (followers of a stream) get to finish before being cut at shutdown.
const CLOSE_GRACE_MS = 2000;

// The API's node:http server on the unix socket, 0600 (its folder 0700 with `ownFolder`, see prepareSocketPath).
export async function listenOnSocket(opts: {
  socketPath: string;
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  log: Logger;
  ownFolder?: boolean;
  /** an upgrade request (a WebSocket); without it, refused by closing the connection */
  upgrade?: (req: IncomingMessage, socket: Socket, head: Buffer) => void;
}): Promise<Listener> {
  const { socketPath, log } = opts;
  await prepareSocketPath(socketPath, { ownFolder: opts.ownFolder ?? false });
  // Not `import … from 'node:http'`: its ESM namespace loads Node's bundled undici (client/transport.ts).
  const { createServer } = process.getBuiltinModule('node:http');
  const server = createServer({ keepAliveTimeout: 5000 }, opts.handler);
  server.on('upgrade', opts.upgrade ?? ((_req: IncomingMessage, socket: Socket) => socket.destroy()));
  const ino = await listenPrivate(server, socketPath);
  log.info({ socket: socketPath }, 'API listening on unix socket');
  return {
    server,
    close: once(async () => {
      await closeServer(server);
      removeOwnSocket(socketPath, ino);
      log.info('unix socket closed');
    }),
  };
}

// Stops accepting, lets in-flight requests end, then cuts what is left.
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    const timer = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
