import { chmodSync, lstatSync, statSync, unlinkSync } from 'node:fs';
import type { Server } from 'node:net';

// sun_path holds 104 bytes on macOS and 108 on Linux, terminator included.
export const MAX_SOCKET_PATH = process.platform === 'darwin' ? 103 : 107;

// Whether a socket file is at `socketPath` (false: nothing is); any other file there is refused.
export function socketFileThere(socketPath: string): boolean {
  let st;
  try {
    st = lstatSync(socketPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  if (!st.isSocket()) throw new Error(`${socketPath} exists and is not a socket; refusing to replace it`);
  return true;
}

// Listens `server` on the unix socket `socketPath`, 0600 from its first moment: the umask makes
// it so, chmod makes sure of it. Answers the file's inode, for removeOwnSocket.
export async function listenPrivate(server: Server, socketPath: string): Promise<number> {
  const oldMask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(oldMask);
  }
  chmodSync(socketPath, 0o600);
  return statSync(socketPath).ino;
}

// Removes the socket file only if it is still the one listened on (`ino`), not a successor's.
export function removeOwnSocket(socketPath: string, ino: number): void {
  try {
    if (statSync(socketPath).ino === ino) unlinkSync(socketPath);
  } catch {
    // already gone
  }
}
