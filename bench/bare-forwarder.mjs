// Baseline for the TCP front: the smallest forwarder of DESIGN's shape, a node:http server on
// loopback TCP that streams every request to a unix socket with an undici Pool and the answer
// back (dispatch() straight into the response, as grove's front does), with no guards and no
// logging. argv: the upstream socket path. Prints its port on stdout; stops when stdin ends.
import { createServer } from 'node:http';
import { Pool } from 'undici';

const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host']);
const upstream = new Pool('http://localhost', { socketPath: process.argv[2], connections: 64, pipelining: 1 });
const server = createServer((req, res) => {
  const headers = {};
  for (const k in req.headers) if (!HOP.has(k)) headers[k] = req.headers[k];
  upstream.dispatch({ method: req.method, path: req.url, headers, body: null }, {
    // undici 7 takes a handler for its controller API only when it has onRequestStart.
    onRequestStart() {},
    onResponseStart(_c, statusCode, h) {
      const out = {};
      for (const k in h) if (!HOP.has(k)) out[k] = h[k];
      res.writeHead(statusCode, out);
    },
    onResponseData(c, chunk) {
      if (!res.write(chunk)) {
        c.pause();
        res.once('drain', () => c.resume());
      }
    },
    onResponseEnd() {
      res.end();
    },
    onResponseError(_c, err) {
      res.destroy(err);
    },
  });
});
server.listen({ host: '127.0.0.1', port: 0 }, () => process.stdout.write(`${server.address().port}\n`));
process.stdin.resume();
process.stdin.on('end', () => server.close(() => upstream.close().then(() => process.exit(0))));
