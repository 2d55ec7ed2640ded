import { unlinkSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { createConnection } from 'node:net';
import path from 'node:path';
import { MAX_SOCKET_PATH, socketFileThere } from '../runtime/socket-file.ts';

// Another daemon answers on the socket already; the new one must not take it.
export class SocketInUseError extends Error {
  constructor(readonly socketPath: string) {
    super(`another grove daemon is already listening on ${socketPath}`);
    this.name = 'SocketInUseError';
  }
}

// Makes the socket's folder (0700 when grove creates it, or always with `ownFolder`: a folder
// that holds only this socket) and clears a stale socket file, but only after a connect to it
// has failed: a live socket means another daemon.
export async function prepareSocketPath(socketPath: string, opts: { ownFolder?: boolean } = {}): Promise<void> {
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    throw new Error(`socket path ${socketPath} is longer than ${MAX_SOCKET_PATH} bytes; set GROVE_SOCKET to a shorter path`);
  }
  const dir = path.dirname(socketPath);
  // Off the thread: each agent session's own socket is made here as it starts, beside many others.
  const made = await mkdir(dir, { recursive: true, mode: 0o700 });
  // the umask may have taken bits off mkdir's mode
  if (made !== undefined || opts.ownFolder) await chmod(dir, 0o700);
  if (!socketFileThere(socketPath)) return;
  if (await answers(socketPath)) throw new SocketInUseError(socketPath);
  unlinkSync(socketPath);
}

function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const sock = createConnection(socketPath);
    const timer = setTimeout(() => {
      sock.destroy();
      resolve(true); // connected-but-silent still means someone holds it
    }, 2000);
    sock.once('connect', () => {
      clearTimeout(timer);
      sock.destroy();
      resolve(true);
    });
    sock.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (err.code === 'ECONNREFUSED' || err.code === 'ENOENT') resolve(false);
      else reject(new Error(`cannot check socket ${socketPath}: ${err.message}`));
    });
  });
}
