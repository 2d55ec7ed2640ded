import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'node:test';
import { request } from 'undici';
import { follow, sseEvent, type Next } from '../daemon/events/stream.ts';

interface State {
  done: boolean;
  rounds: number;
  following?: Promise<void>;
  /** the most 'close' listeners the response had while it was followed */
  maxCloseListeners?: number;
}

// A real HTTP server whose one endpoint follows `items` as SSE until `done` and a final round.
async function serve(t: test.TestContext, emitter: EventEmitter, items: string[], state: State) {
  const server = createServer((_req, res) => {
    let sent = 0;
    state.following = follow(res, emitter, ['change'], async (send): Promise<Next> => {
      state.rounds++;
      while (sent < items.length) {
        await send(sseEvent('item', items[sent], ++sent));
        state.maxCloseListeners = Math.max(state.maxCloseListeners ?? 0, res.listenerCount('close'));
      }
      if (!state.done) return 'wait';
      await send(sseEvent('end', { sent }));
      return 'end';
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

test('follow: each change wakes one round that sends what is new, in order, until a round says end', async (t) => {
  const emitter = new EventEmitter();
  const items = ['a'];
  const state: State = { done: false, rounds: 0 };
  const url = await serve(t, emitter, items, state);
  const res = await request(url);
  assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8');
  let text = '';
  const body = (async () => {
    for await (const chunk of res.body) {
      text += chunk.toString();
      if (text.includes('id: 1\n') && items.length === 1) {
        // A quiet while first: a loop that polled instead of waiting would run rounds meanwhile.
        await new Promise((r) => setTimeout(r, 200));
        items.push('b', 'c');
        emitter.emit('change');
      }
      if (text.includes('id: 3\n') && !state.done) {
        state.done = true;
        emitter.emit('change');
      }
    }
  })();
  await body;
  assert.equal(
    text,
    [sseEvent('item', 'a', 1), sseEvent('item', 'b', 2), sseEvent('item', 'c', 3), sseEvent('end', { sent: 3 })].join(''),
  );
  assert.equal(state.rounds, 3, 'one round at the start and one per change, none while nothing changed');
  assert.equal(emitter.listenerCount('change'), 0, 'the stream lets go of the emitter when it ends');
});

test('follow: a client that hangs up ends the loop and removes its listener', async (t) => {
  const emitter = new EventEmitter();
  const state: State = { done: false, rounds: 0 };
  const url = await serve(t, emitter, ['x'], state);
  const res = await request(url);
  for await (const chunk of res.body) {
    if (chunk.toString().includes('id: 1')) break; // leaving the loop destroys the connection
  }
  await state.following; // the loop ends on its own, though no change ever comes
  assert.equal(emitter.listenerCount('change'), 0);
});

test('follow: a client slower than the stream makes it wait for drain many times, and no listener is left behind', async (t) => {
  const emitter = new EventEmitter();
  const items = Array.from({ length: 20_000 }, (_, i) => `${i} ${'x'.repeat(200)}`);
  const state: State = { done: true, rounds: 0 };
  const url = await serve(t, emitter, items, state);
  const res = await request(url, { highWaterMark: 1024 });
  let n = 0;
  for await (const chunk of res.body) {
    n += (chunk.toString().match(/\nevent: item\n/g) ?? []).length;
    await new Promise((r) => setImmediate(r)); // read slowly: the server's buffer fills again and again
  }
  await state.following;
  assert.equal(n, items.length);
  assert.ok(state.maxCloseListeners! <= 3, `'close' listeners stay few: at most ${state.maxCloseListeners}`);
});
