import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { TestContext } from 'node:test';

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
  server.listen({ host: '127.0.0.1', port: 0 });
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return (server.address() as { port: number }).port;
}
