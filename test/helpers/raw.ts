import { connect } from 'node:net';

// Sends bytes exactly as given (no client fixes them up) and returns the parsed answer.
export function rawRequest(target: { port: number } | { path: string }, bytes: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const sock = 'port' in target ? connect(target.port, '127.0.0.1') : connect(target.path);
    let data = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      data += d;
      const end = data.indexOf('\r\n\r\n');
      if (end === -1) return;
      const len = /content-length:\s*(\d+)/i.exec(data.slice(0, end));
      if (len && data.length - end - 4 >= Number(len[1])) sock.end();
    });
    sock.on('error', reject);
    sock.on('close', () => {
      const end = data.indexOf('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
      resolve({ status, headers: data.slice(0, end), body: data.slice(end + 4) });
    });
    sock.write(bytes);
  });
}
