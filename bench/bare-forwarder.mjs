// Baseline for the TCP front: the smallest forwarder of DESIGN's shape, a node:http server on
// loopback TCP that streams every request to a unix socket with an undici Pool and the answer
// back, with no guards and no logging. argv: the upstream socket path. Prints its port on
// stdout; stops when stdin ends.
import { createServer } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';

const upstream = new Pool('http://localhost', { socketPath: process.argv[2], connections: 64, pipelining: 1 });
const server = createServer(async (req, res) => {
  const headers = { ...req.headers };
  delete headers.host;
  delete headers.connection;
  const up = await upstream.request({ method: req.method, path: req.url, headers, body: null });
  const out = { ...up.headers };
  delete out.connection;
  delete out['keep-alive'];
  res.writeHead(up.statusCode, out);
  await pipeline(up.body, res);
});
server.listen({ host: '127.0.0.1', port: 0 }, () => process.stdout.write(`${server.address().port}\n`));
process.stdin.resume();
process.stdin.on('end', () => server.close(() => upstream.close().then(() => process.exit(0))));
