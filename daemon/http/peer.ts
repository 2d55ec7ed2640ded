import { closeSync, openSync, readSync } from 'node:fs';

// What the kernel's table says of a connection's client end: its owner's uid, 'unknown' when
// it is not listed, null when there is no table to read (not Linux, or unreadable).
export type PeerUid = number | 'unknown' | null;

interface Wanted {
  client: string;
  server: string;
  resolve(uid: PeerUid): void;
}

// The kernel hands /proc/net/tcp out one page of lines per read, and reading past the last line
// walks the rest of its connection hash however few connections there are. So the table is read
// a page at a time, yielding to the event loop between pages, and only until every connection
// asked for has been found.
const READ_BYTES = 64 * 1024;

// Who owns the client end of a loopback TCP connection, from the kernel's socket table.
// Loopback is open to every local user; the unix socket is not (0600), and the TCP front must
// not be the way around that. Connections accepted before a read of the table starts share it;
// one accepted after it started waits for the next, as the read may have passed its line.
export function createPeerLookup(): (clientPort: number, serverPort: number) => Promise<PeerUid> {
  if (process.platform !== 'linux') return () => Promise.resolve(null);
  let next: Wanted[] | null = null;
  return (clientPort, serverPort) =>
    new Promise<PeerUid>((resolve) => {
      const wanted = { client: hexPort(clientPort), server: hexPort(serverPort), resolve };
      if (next !== null) return void next.push(wanted);
      const batch = (next = [wanted]);
      setImmediate(() => {
        next = null;
        walk(batch);
      });
    });
}

function walk(batch: Wanted[]): void {
  let fd: number;
  try {
    fd = openSync('/proc/net/tcp', 'r');
  } catch {
    for (const w of batch) w.resolve(null);
    return;
  }
  const buf = Buffer.allocUnsafe(READ_BYTES);
  let pos = 0;
  let rest = '';
  let left = batch;
  const step = () => {
    let n: number;
    try {
      n = readSync(fd, buf, 0, READ_BYTES, pos);
    } catch {
      n = -1;
    }
    if (n > 0) {
      pos += n;
      const text = rest + buf.toString('latin1', 0, n);
      const end = text.lastIndexOf('\n') + 1;
      const lines = text.slice(0, end);
      rest = text.slice(end);
      left = left.filter((w) => {
        const uid = findUid(lines, w.client, w.server);
        if (uid === null) return true;
        w.resolve(uid);
        return false;
      });
      if (left.length > 0) return void setImmediate(step);
    }
    closeSync(fd);
    // The whole table was read (or could not be): who is still missing is not listed.
    for (const w of left) w.resolve(n < 0 ? null : 'unknown');
  };
  step();
}

// The uid on the line of the loopback connection from port `client` to port `server` (both
// 4-digit uppercase hex, as the table writes them), or null when these lines have none.
function findUid(lines: string, client: string, server: string): number | null {
  for (const line of lines.split('\n')) {
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid …
    const f = line.trim().split(/\s+/);
    if (f.length < 8) continue;
    const [, local, remote, , , , , uid] = f;
    if (local?.endsWith(`:${client}`) && remote?.endsWith(`:${server}`) && local.startsWith('0100007F')) return Number(uid);
  }
  return null;
}

function hexPort(port: number): string {
  return port.toString(16).toUpperCase().padStart(4, '0');
}
