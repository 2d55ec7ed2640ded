import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { parseNetworkEntry, type NetEntry } from '../../daemon/sandbox/allow.ts';
import { createNetProxy, netSockets, type NetProxyOptions, type NetRecord, type NetTarget } from '../../daemon/sandbox/proxy.ts';
import { makeTempDir } from '../helpers/git.ts';
import { naming as server } from '../helpers/http.ts';

const entries = (...s: string[]): NetEntry[] => s.map((e) => parseNetworkEntry(e)!);

async function proxy(t: TestContext, opts: Omit<NetProxyOptions, 'dir' | 'record'>): Promise<{ sock: string; dir: string; records: NetRecord[] }> {
  const dir = makeTempDir(t, 'grove-net-');
  const records: NetRecord[] = [];
  const p = createNetProxy({ dir, record: (r) => records.push(r), ...opts });
  t.after(() => p.close());
  await p.ready;
  return { sock: netSockets(dir, opts.allow).proxy, dir, records };
}

// A CONNECT through the proxy's socket, then a GET on the tunnel: the status of the CONNECT and
// what came back through it.
function viaConnect(sock: string, target: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath: sock, method: 'CONNECT', path: target, agent: false });
    req.on('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        return resolve({ status: res.statusCode!, body: '' });
      }
      socket.write(`GET /tunnel HTTP/1.1\r\nHost: ${target}\r\nConnection: close\r\n\r\n`);
      let body = '';
      socket.setEncoding('utf8');
      socket.on('data', (c) => (body += c));
      socket.on('end', () => resolve({ status: 200, body: body.slice(body.indexOf('\r\n\r\n') + 4) }));
      socket.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

// A plain http:// request in absolute form through the proxy's socket.
function viaGet(sock: string, url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath: sock, method: 'GET', path: url, agent: false, headers: { host: new URL(url).host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('an allowed loopback host:port goes through CONNECT and absolute-form GET; another port and another host get 403, each connection recorded once', { timeout: 30_000 }, async (t) => {
  const ok = await server(t, 'allowed');
  const other = await server(t, 'other');
  const { sock, records } = await proxy(t, { allow: entries(`127.0.0.1:${ok}`) });
  assert.deepEqual(await viaConnect(sock, `127.0.0.1:${ok}`), { status: 200, body: 'allowed GET /tunnel' });
  assert.deepEqual(await viaGet(sock, `http://127.0.0.1:${ok}/plain?x=1`), { status: 200, body: 'allowed GET /plain?x=1' });
  assert.equal(records.length, 0);
  assert.equal((await viaConnect(sock, `127.0.0.1:${other}`)).status, 403);
  assert.equal((await viaGet(sock, `http://127.0.0.1:${other}/`)).status, 403);
  assert.equal((await viaConnect(sock, 'example.com:443')).status, 403);
  assert.deepEqual(records, [
    { kind: 'network', target: `127.0.0.1:${other}` },
    { kind: 'network', target: `127.0.0.1:${other}` },
    { kind: 'network', target: 'example.com:443' },
  ]);
});

test('a name allowed by the list is refused when it resolves to a loopback port no loopback entry names', { timeout: 30_000 }, async (t) => {
  const port = await server(t, 'local');
  // The resolver the agent's would be, here answering for a name of the test's own.
  const lookup = async (host: string) => (host.endsWith('.example.test') ? '127.0.0.1' : assert.fail(`unexpected lookup ${host}`));
  const { sock, records } = await proxy(t, { allow: entries('*.example.test'), lookup });
  assert.equal((await viaConnect(sock, `api.example.test:${port}`)).status, 403);
  assert.deepEqual(records, [{ kind: 'network', target: `api.example.test:${port}` }]);
});

test('*.host through the proxy: a subdomain goes through, the host itself and other names are refused', { timeout: 30_000 }, async (t) => {
  const port = await server(t, 'wild');
  const lookup = async (host: string) => (host.endsWith('localhost') ? '127.0.0.1' : assert.fail(`unexpected lookup ${host}`));
  const { sock, records } = await proxy(t, { allow: entries(`*.localhost:${port}`), lookup });
  assert.deepEqual(await viaConnect(sock, `api.localhost:${port}`), { status: 200, body: 'wild GET /tunnel' });
  assert.deepEqual(await viaGet(sock, `http://a.b.localhost:${port}/x`), { status: 200, body: 'wild GET /x' });
  assert.equal((await viaConnect(sock, `localhost:${port}`)).status, 403);
  assert.equal((await viaConnect(sock, `api.localhost:${port + 1}`)).status, 403);
  assert.deepEqual(records.map((r) => r.target), [`localhost:${port}`, `api.localhost:${port + 1}`]);
});

test('a loopback entry with a port gets a socket of its own piped raw to that port', { timeout: 30_000 }, async (t) => {
  const port = await server(t, 'raw');
  const { dir } = await proxy(t, { allow: entries(`127.0.0.1:${port}`, 'registry.npmjs.org') });
  const layout = netSockets(dir, entries(`127.0.0.1:${port}`, 'registry.npmjs.org'));
  assert.deepEqual(layout.forwards, [{ bind: '127.0.0.1', port, host: '127.0.0.1', socket: path.join(dir, '0.sock') }]);
  const body = await new Promise<string>((resolve, reject) => {
    http.get({ socketPath: layout.forwards[0]!.socket, path: '/raw', agent: false }, (res) => {
      let b = '';
      res.on('data', (c) => (b += c));
      res.on('end', () => resolve(b));
    }).on('error', reject);
  });
  assert.equal(body, 'raw GET /raw');
});

test('ask: a target not allowed is held until the answer; true lets it through, false refuses it and records it', { timeout: 30_000 }, async (t) => {
  const port = await server(t, 'asked');
  const questions: Array<{ target: NetTarget; answer: (v: boolean) => void }> = [];
  let asked: () => void = () => {};
  const ask = (target: NetTarget) =>
    new Promise<boolean>((answer) => {
      questions.push({ target, answer });
      asked();
    });
  const nextQuestion = () => new Promise<void>((r) => (asked = r));
  const { sock, records } = await proxy(t, { allow: [], ask });

  let q = nextQuestion();
  let settled = false;
  const first = viaConnect(sock, `127.0.0.1:${port}`).finally(() => (settled = true));
  await q;
  assert.deepEqual(questions[0]!.target, { host: '127.0.0.1', port });
  // another connection asked and refused meanwhile: the first is still held
  q = nextQuestion();
  const other = viaGet(sock, 'http://example.com/');
  await q;
  questions[1]!.answer(false);
  assert.equal((await other).status, 403);
  assert.equal(settled, false, 'the connection is held while its question is open');
  questions[0]!.answer(true);
  assert.deepEqual(await first, { status: 200, body: 'asked GET /tunnel' });
  assert.deepEqual(records, [{ kind: 'network', target: 'example.com:80' }]);

  q = nextQuestion();
  const second = viaGet(sock, `http://127.0.0.1:${port}/again`);
  await q;
  assert.equal(questions.length, 3, 'an answer is for the connection that asked: the next one asks again');
  questions[2]!.answer(false);
  assert.equal((await second).status, 403);
  assert.deepEqual(records.at(-1), { kind: 'network', target: `127.0.0.1:${port}` });

test('refuse: a target an agent names as its own telemetry is refused without a question, and recorded; the others are still asked about', { timeout: 30_000 }, async (t) => {
  const port = await server(t, 'asked');
  const asked: NetTarget[] = [];
  const ask = async (target: NetTarget) => (asked.push(target), true);
  const { sock, records } = await proxy(t, { allow: [], refuse: entries('*.rum.example.com'), ask });
  assert.equal((await viaConnect(sock, 'abc-default.rum.example.com:443')).status, 403);
  assert.deepEqual(await viaConnect(sock, `127.0.0.1:${port}`), { status: 200, body: 'asked GET /tunnel' });
  assert.deepEqual(asked, [{ host: '127.0.0.1', port }]);
  assert.deepEqual(records, [{ kind: 'network', target: 'abc-default.rum.example.com:443' }]);
});
});

test('close() ends live tunnels and removes the sockets, once however often called', { timeout: 30_000 }, async (t) => {
  const port = await server(t, 'x');
  const dir = makeTempDir(t, 'grove-net-');
  const allow = entries(`127.0.0.1:${port}`);
  const p = createNetProxy({ dir, allow, record: () => {} });
  await p.ready;
  const layout = netSockets(dir, allow);
  const tunnel = await new Promise<net.Socket>((resolve, reject) => {
    http.request({ socketPath: layout.proxy, method: 'CONNECT', path: `127.0.0.1:${port}`, agent: false }).on('connect', (_res, s) => resolve(s)).on('error', reject).end();
  });
  const ended = once(tunnel, 'close');
  await Promise.all([p.close(), p.close()]);
  await ended;
  const { existsSync } = await import('node:fs');
  assert.ok(!existsSync(layout.proxy) && !existsSync(layout.forwards[0]!.socket));
});
