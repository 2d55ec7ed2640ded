import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'node:test';
import { request } from 'undici';
import { sseEvent, writeSse, type Stall } from '../../daemon/http/sse.ts';
import { wakeOn, type StreamEvent } from '../../daemon/runtime/follow.ts';
import { createSignal, type Signal } from '../../daemon/runtime/signal.ts';

interface State {
  done: boolean;
  rounds: number;
  writing?: Promise<void>;
  /** set when the source's iterator has finished (ended, or returned by the writer) */
  returned?: boolean;
  /** the most 'close' listeners the response had while it was written */
  maxCloseListeners?: number;
}

// A source over `items` in rounds, as the domain iterators are: each round sends what is new,
// then waits for `changes` ('change') until `done` and a final round.
function itemsSource(res: ServerResponse, changes: Signal<string>, items: string[], state: State) {
  return async function* (signal: AbortSignal): AsyncGenerator<StreamEvent> {
    let sent = 0;
    const wake = wakeOn(signal, (poke) => [changes.onChange('change', poke)]);
    try {
      while (!signal.aborted) {
        wake.reset();
        state.rounds++;
        while (sent < items.length) {
          yield { event: 'item', data: items[sent], id: ++sent };
          state.maxCloseListeners = Math.max(state.maxCloseListeners ?? 0, res.listenerCount('close'));
        }
        if (state.done) {
          yield { event: 'end', data: { sent } };
          return;
        }
        await wake.wait();
      }
    } finally {
      wake.stop();
      state.returned = true;
    }
  };
}

// A real HTTP server whose one endpoint writes `items` as SSE until `done` and a final round.
async function serve(t: test.TestContext, changes: Signal<string>, items: string[], state: State, opts: { stall?: Stall; keepaliveMs?: number } = {}) {
  const server = createServer((_req, res) => {
    state.writing = writeSse(res, itemsSource(res, changes, items, state), opts);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  t.after(() => server.closeAllConnections());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

test('writeSse: each change wakes one round that sends what is new, in order, until the source ends', async (t) => {
  const changes = createSignal<string>();
  const items = ['a'];
  const state: State = { done: false, rounds: 0 };
  const url = await serve(t, changes, items, state);
  const res = await request(url);
  assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8');
  assert.equal(res.headers['cache-control'], 'no-store');
  let text = '';
  const body = (async () => {
    for await (const chunk of res.body) {
      text += chunk.toString();
      if (text.includes('id: 1\n') && items.length === 1) {
        // A quiet while first: a loop that polled instead of waiting would run rounds meanwhile.
        await new Promise((r) => setTimeout(r, 200));
        items.push('b', 'c');
        changes.changed('change');
      }
      if (text.includes('id: 3\n') && !state.done) {
        state.done = true;
        changes.changed('change');
      }
    }
  })();
  await body;
  assert.equal(
    text,
    [sseEvent('item', 'a', 1), sseEvent('item', 'b', 2), sseEvent('item', 'c', 3), sseEvent('end', { sent: 3 })].join(''),
  );
  assert.equal(state.rounds, 3, 'one round at the start and one per change, none while nothing changed');
  assert.equal(changes.listenerCount(), 0, 'the source lets go of the signal when it ends');
});

test('writeSse: a client that hangs up aborts the waiting source, which ends and lets go of its signal', async (t) => {
  const changes = createSignal<string>();
  const state: State = { done: false, rounds: 0 };
  const url = await serve(t, changes, ['x'], state);
  const res = await request(url);
  for await (const chunk of res.body) {
    if (chunk.toString().includes('id: 1')) break; // leaving the loop destroys the connection
  }
  await state.writing; // the writer ends on its own, though no change ever comes
  assert.equal(state.returned, true);
  assert.equal(changes.listenerCount(), 0);
});

test('writeSse: a client slower than the stream makes it wait for drain many times, and no listener is left behind', async (t) => {
  const changes = createSignal<string>();
  const items = Array.from({ length: 20_000 }, (_, i) => `${i} ${'x'.repeat(200)}`);
  const state: State = { done: true, rounds: 0 };
  const url = await serve(t, changes, items, state);
  const res = await request(url, { highWaterMark: 1024 });
  let n = 0;
  for await (const chunk of res.body) {
    n += (chunk.toString().match(/\nevent: item\n/g) ?? []).length;
    await new Promise((r) => setImmediate(r)); // read slowly: the server's buffer fills again and again
  }
  await state.writing;
  assert.equal(n, items.length);
  assert.ok(state.maxCloseListeners! <= 3, `'close' listeners stay few: at most ${state.maxCloseListeners}`);
});

test('writeSse: while the source waits, keepalive comments go out; the source is not read again for them', async (t) => {
  const changes = createSignal<string>();
  const state: State = { done: false, rounds: 0 };
  const url = await serve(t, changes, ['a'], state, { keepaliveMs: 50 });
  const res = await request(url);
  let text = '';
  for await (const chunk of res.body) {
    text += chunk.toString();
    if ((text.match(/: keepalive\n\n/g) ?? []).length >= 3) break;
  }
  await state.writing;
  assert.ok(text.startsWith(sseEvent('item', 'a', 1)), text);
  assert.equal(state.rounds, 1, 'keepalives do not wake the source');
});

test('writeSse: a client that takes nothing for the stall time gets a last event naming the last id written, and the source is returned', async (t) => {
  const changes = createSignal<string>();
  const items = Array.from({ length: 5000 }, (_, i) => `${i} ${'x'.repeat(1000)}`);
  const state: State = { done: true, rounds: 0 };
  const stall: Stall = { ms: 200, last: (lastId) => ({ event: 'end', data: { reason: 'too_slow', after: lastId ?? 0 } }) };
  const url = await serve(t, changes, items, state, { stall });
  const res = await request(url, { highWaterMark: 1024 });
  const reader = res.body[Symbol.asyncIterator]();
  await reader.next(); // the first bytes arrive, then nothing is read while the writer fills the buffers
  await state.writing; // it gave up on its own
  assert.equal(state.returned, true, 'the source was returned');
  let text = '';
  for (let r = await reader.next(); !r.done; r = await reader.next()) text += r.value.toString();
  const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  assert.ok(ids.length < items.length, 'not every item was written');
  assert.ok(text.endsWith(sseEvent('end', { reason: 'too_slow', after: ids.at(-1) })), text.slice(-200));
});
