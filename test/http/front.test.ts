import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import path from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { startFront } from '../../daemon/http/front.ts';
import { makeTempDir } from '../helpers/git.ts';

// The front alone, before an API socket of the test's own: event streams that stay open, and
// plain answers.
test('the TCP front serves at most maxStreams event streams at once, refuses the next with 503 UNAVAILABLE at once, and keeps plain requests served', async (t) => {
  const socketPath = path.join(makeTempDir(t), 'api.sock');
  const api = createServer((req, res) => {
    if (req.headers.accept === 'text/event-stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  api.listen(socketPath);
  await once(api, 'listening');
  // After hooks run in the order they were added: the API's connections are cut here, or its
  // close would wait for the front's streams, which go only later.
  t.after(() => {
    api.closeAllConnections();
    return new Promise((resolve) => api.close(resolve));
  });
  const front = await startFront({ port: 0, socketPath, log: pino({ level: 'silent' }), maxStreams: 3 });
  t.after(() => front.close());

  const dispatcher = new Agent({ connections: null });
  t.after(() => dispatcher.destroy());
  const url = `http://127.0.0.1:${front.port}`;
  const open = () => request(`${url}/api/events`, { dispatcher, headers: { accept: 'text/event-stream' }, signal: AbortSignal.timeout(5000) });
  const streams = await Promise.all([open(), open(), open()]);
  assert.deepEqual(streams.map((r) => r.statusCode), [200, 200, 200]);

  const refused = await open();
  assert.equal(refused.statusCode, 503);
  const problem: any = await refused.body.json();
  assert.equal(problem.code, 'UNAVAILABLE');
  const plain = await request(`${url}/api/health`, { dispatcher, signal: AbortSignal.timeout(5000) });
  assert.equal(plain.statusCode, 200);
  assert.deepEqual(await plain.body.json(), { ok: true });

  // A stream that ends makes room for the next.
  streams[0]!.body.destroy();
  const deadline = Date.now() + 5000;
  for (;;) {
    const again = await open();
    if (again.statusCode === 200) break;
    await again.body.text();
    assert.ok(Date.now() < deadline, 'a closed stream made no room');
    await new Promise((r) => setTimeout(r, 20)); // the front sees the close a moment later
  }
});
