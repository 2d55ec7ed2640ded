import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { TestContext } from 'node:test';

// What a helper needs of a test: its cleanups (the bench passes its own).
type Cleanup = { after(fn: () => unknown): void };

// A plain HTTP server on a free port of 127.0.0.1 whose every answer is 200 with the JSON of
// what `handle` returns for the request, or of the code and message it throws; closed after the test.
export async function answering(t: TestContext, handle: (req: IncomingMessage) => unknown): Promise<number> {
  const server = createServer(async (req, res) => {
    let body: unknown;
    try {
      body = { value: await handle(req) };
    } catch (err) {
      body = { code: (err as { code?: string }).code, message: (err as Error).message };
    }
    const text = JSON.stringify(body);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  });
  return listening(t, server);
}

// 50 MB: what `/big` of a naming() server sends.
export const BIG_BYTES = 50 * 1024 * 1024;

// A node:http server on a free port of `host` (127.0.0.1) answering `<name> <method> <path>`, and
// BIG_BYTES at `/big` (written as the client reads); closed after the test.
export async function naming(t: Cleanup, name: string, host = '127.0.0.1'): Promise<number> {
  const chunk = Buffer.alloc(1024 * 1024, 'x');
  const server = createServer((req, res) => {
    if (req.url !== '/big') return void res.end(`${name} ${req.method} ${req.url}`);
    res.writeHead(200, { 'content-length': BIG_BYTES });
    let left = BIG_BYTES / chunk.length;
    const more = () => {
      while (left > 0) {
        left--;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      res.end();
    };
    more();
  });
  return listening(t, server, host);
}

// `server` listening on a free port of 127.0.0.1, closed after the test; its port.
async function listening(t: Cleanup, server: Server, host = '127.0.0.1'): Promise<number> {
  server.listen({ host, port: 0 });
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return (server.address() as { port: number }).port;
}
