import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import path from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import WebSocket, { WebSocketServer } from 'ws';
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

// A WebSocket upgrade (a terminal, DESIGN §21) through the front: guarded, passed to the socket
// byte for byte both ways, and one of the streams the front serves at once, with event streams.
test('an upgrade passes the guards, reaches the socket byte for byte, and counts in the stream budget with event streams', async (t) => {
  const socketPath = path.join(makeTempDir(t), 'api.sock');
  const api = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': open\n\n');
  });
  const wss = new WebSocketServer({ noServer: true });
  api.on('upgrade', (req, socket, head) => {
    if (req.url === '/refused') {
      socket.end('HTTP/1.1 409 Conflict\r\ncontent-type: application/problem+json\r\ncontent-length: 25\r\n\r\n{"code":"NOT_A_TERMINAL"}');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => ws.on('message', (m) => ws.send(`echo ${m.toString()}`)));
  });
  api.listen(socketPath);
  await once(api, 'listening');
  t.after(() => {
    for (const c of wss.clients) c.terminate();
    api.closeAllConnections();
    return new Promise((resolve) => api.close(resolve));
  });
  const front = await startFront({ port: 0, socketPath, log: pino({ level: 'silent' }), maxStreams: 2 });
  t.after(() => front.close());
  const url = `ws://127.0.0.1:${front.port}`;
  const connect = (p: string, headers: Record<string, string> = {}) =>
    new Promise<{ ws?: WebSocket; status?: number; body?: string }>((resolve, reject) => {
      const ws = new WebSocket(url + p, { headers });
      t.after(() => ws.terminate());
      ws.once('open', () => resolve({ ws }));
      ws.once('unexpected-response', (_q, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      ws.once('error', reject);
    });

  // Refused before anything reaches the socket: a cross-site page, a foreign Host.
  const cross = await connect('/ws', { origin: 'http://evil.example' });
  assert.equal(cross.status, 403);
  assert.equal(JSON.parse(cross.body!).code, 'FORBIDDEN_ORIGIN');
  assert.equal((await connect('/ws', { host: 'evil.example' })).status, 403);
  // The socket's own refusal reaches the client whole.
  const refused = await connect('/refused');
  assert.equal(refused.status, 409);
  assert.equal(JSON.parse(refused.body!).code, 'NOT_A_TERMINAL');

  // Both ways, then the budget: one WebSocket and one event stream fill it.
  const { ws } = await connect('/ws');
  const echoed = once(ws!, 'message');
  ws!.send('hi');
  assert.equal(String((await echoed)[0]), 'echo hi');
  const dispatcher = new Agent({ connections: null });
  t.after(() => dispatcher.destroy());
  const stream = await request(`http://127.0.0.1:${front.port}/api/events`, { dispatcher, headers: { accept: 'text/event-stream' } });
  assert.equal(stream.statusCode, 200);
  const full = await connect('/ws');
  assert.equal(full.status, 503);
  assert.equal(JSON.parse(full.body!).code, 'UNAVAILABLE');
  // A WebSocket that closes makes room.
  ws!.close();
  await once(ws!, 'close');
  const deadline = Date.now() + 5000;
  for (;;) {
    const again = await connect('/ws');
    if (again.ws) break;
    assert.ok(Date.now() < deadline, 'a closed WebSocket made no room');
    await new Promise((r) => setTimeout(r, 20)); // the front sees the close a moment later
  }
  stream.body.destroy();
});
