import { unlinkSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { listenPrivate, MAX_SOCKET_PATH, removeOwnSocket, socketFileThere } from '../runtime/socket-file.ts';

export interface HolderSocket {
  // Stops taking clients (those connected stay) and removes the socket file, if it is still ours.
  close(): void;
}

// The holder's socket, 0600 from its first moment. A socket file already there is a holder's
// that is gone (a session's socket is its own): it is replaced; any other file is refused.
export async function listenHolder(socketPath: string, onClient: (socket: Socket) => void): Promise<HolderSocket> {
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) throw new Error(`socket path ${socketPath} is longer than ${MAX_SOCKET_PATH} bytes`);
  if (socketFileThere(socketPath)) unlinkSync(socketPath);
  const server = createServer(onClient);
  const ino = await listenPrivate(server, socketPath);
  let closed = false;
  return {
    close() {
      if (closed) return;
      closed = true;
      server.close();
      removeOwnSocket(socketPath, ino);
    },
  };
}
