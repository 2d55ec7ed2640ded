import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { WebSocketServer, type WebSocket as ServerSocket } from 'ws';
import type { ClientFrame, ServerFrame } from '../../schemas/terminal.ts';
import { MAX_HELD_BYTES, openLink, utf8Length, type LinkState } from '../../ui/src/terminal-link.ts';
import { within } from '../helpers/within.ts';

// The dashboard's terminal link (DESIGN §21) against a stand-in server: frames in order, the
// output's offset in UTF-8 bytes, a reconnect with ?offset= after 1001 or a dropped connection,
// and the end at `exit` or close 1000.

interface Conn {
  ws: ServerSocket;
  url: URL;
  got: ClientFrame[];
}

async function server(t: test.TestContext) {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(wss, 'listening');
  t.after(() => {
    for (const ws of wss.clients) ws.terminate();
    wss.close();
  });
  const conns: Conn[] = [];
  const waiters: Array<() => void> = [];
  wss.on('connection', (ws, req) => {
    const c: Conn = { ws, url: new URL(req.url!, 'http://x'), got: [] };
    ws.on('message', (d) => c.got.push(JSON.parse(d.toString())));
    conns.push(c);
    for (const w of waiters.splice(0)) w();
  });
  const port = (wss.address() as AddressInfo).port;
  return {
    url: (offset: number | null) => `ws://127.0.0.1:${port}/api/sessions/s/terminal${offset === null ? '' : `?offset=${offset}`}`,
    conns,
    // The n-th connection (from 1), once it is there.
    async conn(n: number): Promise<Conn> {
      while (conns.length < n) await within(5000, `connection ${n}`, new Promise<void>((r) => waiters.push(r)));
      return conns[n - 1]!;
    },
  };
}

function recorder() {
  const shown: string[] = [];
  const states: LinkState[] = [];
  return {
    shown,
    states,
    screen: {
      redraw: (f: { cols: number; rows: number; data: string }) => void shown.push(`[screen ${f.cols}x${f.rows}]${f.data}`),
      write: (data: string) => void shown.push(data),
    },
    onState: (s: LinkState) => void states.push(s),
    // What the link or the server does comes on their sockets: looked at every few milliseconds.
    until: (what: string, check: () => boolean): Promise<void> =>
      within(5000, what, (async () => {
        while (!check()) await new Promise((r) => setTimeout(r, 5));
      })()),
  };
}

const send = (c: Conn, f: ServerFrame) => c.ws.send(JSON.stringify(f));

test('frames are written in order, the offset counts UTF-8 bytes, keys and sizes go out; a close 1001 reconnects with ?offset=, gets only what it missed, and sends the keys typed meanwhile; exit ends it', async (t) => {
  const srv = await server(t);
  const rec = recorder();
  const opened: number[] = [];
  const link = openLink({ url: srv.url, screen: rec.screen, onState: rec.onState, onOpen: () => opened.push(1), firstMs: 20 });
  t.after(() => link.close());
  const one = await srv.conn(1);
  assert.equal(one.url.search, '', 'the first attach asks for the screen');
  await rec.until('live', () => rec.states.at(-1)?.kind === 'live');
  assert.equal(link.send({ type: 'resize', cols: 100, rows: 30 }), true);
  assert.equal(link.send({ type: 'input', data: 'ls\r' }), true);
  send(one, { type: 'screen', offset: 7, cols: 80, rows: 24, data: '\x1b[Hprompt$ ' });
  send(one, { type: 'output', offset: 7, data: 'héllo ✓ 🌳\r\n' });
  await rec.until('the output', () => rec.shown.length === 2);
  assert.deepEqual(rec.shown, ['[screen 80x24]\x1b[Hprompt$ ', 'héllo ✓ 🌳\r\n']);
  assert.equal(link.offset, 7 + Buffer.byteLength('héllo ✓ 🌳\r\n'));
  assert.equal(opened.length, 1);
  await rec.until('the keys', () => one.got.length === 2);
  assert.deepEqual(one.got, [{ type: 'resize', cols: 100, rows: 30 }, { type: 'input', data: 'ls\r' }]);

  // The daemon stops: the link comes back from where it was, without a screen.
  one.ws.close(1001, 'the daemon is stopping');
  await rec.until('reconnecting', () => rec.states.at(-1)?.kind === 'reconnecting');
  // Keys typed meanwhile are held for the next connection; a size is not (the next one is sent).
  assert.equal(link.send({ type: 'input', data: 'a' }), true);
  assert.equal(link.send({ type: 'input', data: 'é' }), true);
  assert.equal(link.send({ type: 'resize', cols: 90, rows: 20 }), false);
  assert.equal(link.send({ type: 'input', data: 'x'.repeat(MAX_HELD_BYTES) }), false, 'more than is held is dropped');
  const two = await srv.conn(2);
  assert.equal(two.url.searchParams.get('offset'), String(link.offset));
  await rec.until('live again', () => rec.states.at(-1)?.kind === 'live');
  assert.equal(opened.length, 2, 'each connection is told its size');
  await rec.until('the held keys', () => two.got.length === 1);
  assert.deepEqual(two.got, [{ type: 'input', data: 'aé' }]);
  send(two, { type: 'output', offset: link.offset!, data: 'more' });
  send(two, { type: 'exit', code: 3 });
  await rec.until('the exit', () => rec.states.at(-1)?.kind === 'exited');
  assert.deepEqual(rec.states.at(-1), { kind: 'exited', code: 3 });
  assert.equal(rec.shown.at(-1), 'more');
  assert.equal(link.send({ type: 'input', data: 'late' }), false, 'nothing after the end');
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(srv.conns.length, 2, 'no reconnect after the exit');
  assert.deepEqual(
    rec.states.map((s) => s.kind),
    ['connecting', 'live', 'reconnecting', 'live', 'exited'],
  );
});

test('a dropped connection reconnects with a back-off that doubles while nothing comes; output read again is written once; close 1000 ends it', async (t) => {
  const srv = await server(t);
  const rec = recorder();
  const link = openLink({ url: srv.url, screen: rec.screen, onState: rec.onState, firstMs: 20, maxMs: 60 });
  t.after(() => link.close());
  const one = await srv.conn(1);
  send(one, { type: 'output', offset: 0, data: 'abc' });
  await rec.until('the output', () => rec.shown.length === 1);
  // Cut with no close frame, three times with nothing received in between.
  one.ws.terminate();
  (await srv.conn(2)).ws.terminate();
  (await srv.conn(3)).ws.terminate();
  const four = await srv.conn(4);
  assert.deepEqual(
    rec.states.filter((s) => s.kind === 'reconnecting').map((s) => (s as { ms: number }).ms),
    [20, 40, 60],
  );
  assert.equal(four.url.searchParams.get('offset'), '3');
  // An ended session's output read again from before the offset: only the part past it is new.
  send(four, { type: 'output', offset: 0, data: 'abcdéf' });
  send(four, { type: 'output', offset: 0, data: 'ab' });
  await rec.until('the new part', () => rec.shown.length === 2);
  assert.deepEqual(rec.shown, ['abc', 'déf']);
  assert.equal(link.offset, utf8Length('abcdéf'));
  four.ws.close(1000, 'the session ended');
  await rec.until('the end', () => rec.states.at(-1)?.kind === 'ended');
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(srv.conns.length, 4, 'no reconnect after the end');
});

test('utf8Length counts as the daemon does', () => {
  for (const s of ['', 'a', 'é', '✓', '🌳', 'a\ud800b', '\udc00', 'x'.repeat(1000) + '🌳é']) assert.equal(utf8Length(s), Buffer.byteLength(s), JSON.stringify(s));
});
