// The client room's transport and problem type (daemon/client/transport.ts, problem.ts) against
// real HTTP servers on unix sockets: what a refusal, a body that is no problem document, a stream
// and a missing daemon look like to every caller.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer, type RequestListener } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { ApiProblem, parseProblem } from '../../daemon/client/problem.ts';
import { sse } from '../../daemon/client/sse.ts';
import { createTransport, DaemonUnreachable } from '../../daemon/client/transport.ts';

async function socketDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'grove-transport-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

// A server on a unix socket of its own, closed after the test.
async function serve(t: TestContext, handler: RequestListener): Promise<string> {
  const socketPath = path.join(await socketDir(t), 'api.sock');
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  t.after(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  return socketPath;
}

test('parseProblem: a problem document gives its code and detail; any other body keeps its text and the status stands for the code', () => {
  const p = parseProblem(409, JSON.stringify({ type: 'about:blank', code: 'TASK_BUSY', detail: 'a session runs', status: 409 }));
  assert.ok(p instanceof ApiProblem);
  assert.deepEqual([p.status, p.code, p.detail, p.message], [409, 'TASK_BUSY', 'a session runs', 'TASK_BUSY: a session runs']);
  assert.deepEqual(p.json, { type: 'about:blank', code: 'TASK_BUSY', detail: 'a session runs', status: 409 });
  for (const text of ['<html>502 Bad Gateway</html>', '', '[1,2]', 'null', '"just a string"']) {
    const q = parseProblem(502, text);
    assert.deepEqual([q.status, q.code, q.detail, q.body, q.json], [502, '502', text, text, null], text);
  }
});

test('call: JSON both ways; a refusal is an ApiProblem, a non-JSON one too; stream: chunks, headers, SSE', async (t) => {
  const socketPath = await serve(t, (req, res) => {
    if (req.url === '/echo') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, type: req.headers['content-type'], body: JSON.parse(body) })));
    } else if (req.url === '/gone') {
      res.writeHead(404, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ code: 'NOT_FOUND', detail: 'no task x', status: 404 }));
    } else if (req.url === '/later') {
      res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '2' }).end(JSON.stringify({ code: 'STORE_UNAVAILABLE', detail: 'the store', status: 503 }));
    } else if (req.url === '/proxy') {
      res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>bad gateway</h1>');
    } else if (req.url === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-note': 'kept' });
      res.write(': keepalive\n\nid: 1\nevent: a\ndata: {"n"');
      res.end(':1}\n\n');
    } else res.writeHead(204).end();
  });
  const api = createTransport(socketPath);
  t.after(api.close);
  assert.deepEqual(await api.call('POST', '/echo', { x: 1 }), { method: 'POST', type: 'application/json', body: { x: 1 } });
  assert.equal(await api.call('DELETE', '/empty'), undefined);
  await assert.rejects(api.call('GET', '/gone'), (err) => err instanceof ApiProblem && err.code === 'NOT_FOUND' && err.status === 404 && err.detail === 'no task x');
  await assert.rejects(api.call('GET', '/proxy'), (err) => err instanceof ApiProblem && err.code === '502' && err.detail === '<h1>bad gateway</h1>' && err.json === null);
  await assert.rejects(api.stream('/proxy'), (err) => err instanceof ApiProblem && err.status === 502 && err.retryAfterMs === undefined);
  // Retry-After is kept with the refusal, for call and stream alike.
  await assert.rejects(api.call('GET', '/later'), (err) => err instanceof ApiProblem && err.code === 'STORE_UNAVAILABLE' && err.retryAfterMs === 2000);
  await assert.rejects(api.stream('/later'), (err) => err instanceof ApiProblem && err.retryAfterMs === 2000);
  const body = await api.stream('/events', { accept: 'text/event-stream' });
  assert.equal(body.headers['x-note'], 'kept');
  const got = [];
  for await (const e of sse(body)) got.push(e);
  assert.deepEqual(got, [{ id: '1', event: 'a', data: { n: 1 } }]);
});

test('a missing socket, and one nothing listens on, are DaemonUnreachable with the path, for call and stream alike', async (t) => {
  const dir = await socketDir(t);
  const missing = path.join(dir, 'nothing.sock');
  const api = createTransport(missing);
  t.after(api.close);
  for (const attempt of [() => api.call('GET', '/api/health'), () => api.stream('/api/events')]) {
    await assert.rejects(attempt(), (err) => err instanceof DaemonUnreachable && err.socketPath === missing && err.message.includes(`no answer on ${missing}`) && (err.cause as NodeJS.ErrnoException).code === 'ENOENT');
  }
  // A socket file left behind by a daemon that died: refused.
  const server = createServer();
  const leftover = path.join(dir, 'left.sock');
  await new Promise<void>((resolve) => server.listen(leftover, resolve));
  // A listener that closes leaves no file on Linux; a copy of the inode kept by a hard link does.
  execFileSync('ln', [leftover, path.join(dir, 'stale.sock')]);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const refused = createTransport(path.join(dir, 'stale.sock'));
  t.after(refused.close);
  await assert.rejects(refused.call('GET', '/api/health'), (err) => err instanceof DaemonUnreachable && (err.cause as NodeJS.ErrnoException).code === 'ECONNREFUSED');
});
