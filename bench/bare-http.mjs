// Baseline for the API: a bare node:http server in a process of its own, as the daemon is,
// answering fixed JSON bodies on a unix socket. argv: socket path, then a JSON object mapping
// request paths to the bodies to answer. Reports readiness on stdout; stops when stdin ends.
import { createServer } from 'node:http';

const [socketPath, table] = process.argv.slice(2);
const bodies = new Map(Object.entries(JSON.parse(table)));
const server = createServer((req, res) => {
  const body = bodies.get(req.url) ?? '{}';
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(socketPath, () => process.stdout.write('ready\n'));
process.stdin.resume();
process.stdin.on('end', () => server.close(() => process.exit(0)));
