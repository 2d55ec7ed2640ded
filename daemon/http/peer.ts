import { readFileSync } from 'node:fs';

// Who owns the client end of a loopback TCP connection, from the kernel's socket table.
// Loopback is open to every local user; the unix socket is not (0600), and the TCP front must
// not be the way around that. Linux only: elsewhere there is no table to read, and null says so.
export function loopbackPeerUid(clientPort: number, serverPort: number): number | null | 'unknown' {
  if (process.platform !== 'linux') return null;
  let table: string;
  try {
    table = readFileSync('/proc/net/tcp', 'utf8');
  } catch {
    return null;
  }
  const want = hexPort(clientPort);
  const peer = hexPort(serverPort);
  for (const line of table.split('\n')) {
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid …
    const f = line.trim().split(/\s+/);
    if (f.length < 8) continue;
    const [, local, remote, , , , , uid] = f;
    if (local?.endsWith(`:${want}`) && remote?.endsWith(`:${peer}`) && local.startsWith('0100007F')) return Number(uid);
  }
  return 'unknown';
}

function hexPort(port: number): string {
  return port.toString(16).toUpperCase().padStart(4, '0');
}
