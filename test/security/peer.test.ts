import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import test from 'node:test';
import { createPeerLookup } from '../../daemon/http/peer.ts';
import { startDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';

// A request made by a separate node process, as `uid` when given (the tests run as root).
function requestAs(uid: number | undefined, port: number, method: string, body?: object): { status: number; json: any } {
  const script = `
    const http = require('node:http');
    const data = ${JSON.stringify(body ? JSON.stringify(body) : '')};
    const req = http.request({ host: '127.0.0.1', port: ${port}, method: ${JSON.stringify(method)}, path: '/api/projects',
      headers: { host: '127.0.0.1:${port}', ...(data ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      let text = ''; res.setEncoding('utf8'); res.on('data', (c) => (text += c));
      res.on('end', () => process.stdout.write(JSON.stringify({ status: res.statusCode, text })));
    });
    req.end(data || undefined);`;
  const r = spawnSync(process.execPath, ['-e', script], { cwd: '/', encoding: 'utf8', ...(uid === undefined ? {} : { uid, gid: uid }) });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  return { status: out.status, json: out.text ? JSON.parse(out.text) : undefined };
}

test('the TCP front refuses connections of another local user with 403 FORBIDDEN_PEER, creating nothing', async (t) => {
  assert.equal(process.getuid?.(), 0, 'this test switches users, so it runs as root (as CI does)');
  const d = await startDaemon(t);
  const repo = makeRepo(t);
  const nobody = 65534;
  const get = requestAs(nobody, d.port!, 'GET');
  assert.equal(get.status, 403);
  assert.equal(get.json.code, 'FORBIDDEN_PEER');
  assert.match(get.json.detail, /uid 65534/);
  const post = requestAs(nobody, d.port!, 'POST', { path: repo });
  assert.equal(post.status, 403);
  assert.equal(post.json.code, 'FORBIDDEN_PEER');
  assert.deepEqual((await d.socket('GET', '/api/projects')).json, [], 'nothing was added');
  // The same request from the daemon's own user goes through.
  assert.equal(requestAs(undefined, d.port!, 'POST', { path: repo }).status, 201);
});

test('the peer look-up finds the owner of each of many loopback connections read in pages, and calls a missing one unknown', async (t) => {
  assert.equal(process.platform, 'linux', 'the kernel table it reads is Linux only');
  const server = net.createServer((s) => s.on('error', () => {}));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const clients: net.Socket[] = [];
  t.after(() => {
    for (const c of clients) c.destroy();
    server.close();
  });
  const port = (server.address() as net.AddressInfo).port;
  // 120 connections are 240 lines, several of the kernel's pages.
  for (let i = 0; i < 120; i++) {
    clients.push(await new Promise<net.Socket>((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => resolve(c));
    }));
  }
  const lookup = createPeerLookup();
  const uid = process.getuid!();
  // Asked together (one read of the table), then one more after that read began.
  const first = clients.map((c) => lookup(c.localPort!, port));
  await new Promise((resolve) => setImmediate(resolve));
  const late = lookup(clients[60]!.localPort!, port);
  assert.deepEqual(await Promise.all(first), clients.map(() => uid));
  assert.equal(await late, uid);
  // A connection that is not there (no client uses this server's port + 1 as its server).
  const other = port === 65535 ? port - 1 : port + 1;
  assert.equal(await lookup(clients[0]!.localPort!, other), 'unknown');
});
