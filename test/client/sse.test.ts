// The one SSE reader (daemon/client/sse.ts) on bodies cut anywhere, as a socket may deliver them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sse, sseEnd, sseMessages } from '../../daemon/client/sse.ts';

// A body of these chunks, as bytes (a network read hands out Buffers).
async function* chunks(...parts: Array<string | Uint8Array>): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield typeof p === 'string' ? Buffer.from(p) : p;
}

async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

test('events split anywhere: in a field name, in a value, between the two newlines, in a UTF-8 character', async () => {
  const text = 'id: 7\nevent: line\ndata: {"text":"héllo"}\n\nid: 8\nevent: end\ndata: {"status":"exited"}\n\n';
  const whole = await all(sse(chunks(text)));
  assert.deepEqual(whole, [
    { id: '7', event: 'line', data: { text: 'héllo' } },
    { id: '8', event: 'end', data: { status: 'exited' } },
  ]);
  const bytes = Buffer.from(text);
  // Every cut of the body in two, the é's two bytes included.
  for (let i = 1; i < bytes.length; i++) {
    assert.deepEqual(await all(sse(chunks(bytes.subarray(0, i), bytes.subarray(i)))), whole, `cut at byte ${i}`);
  }
  // And one byte at a time.
  assert.deepEqual(await all(sse(chunks(...[...bytes].map((b) => Uint8Array.of(b))))), whole);
});

test('CRLF and lone CR end lines as LF does, a CR at a chunk end waiting for its LF', async () => {
  const crlf = await all(sseMessages(chunks('event: a\r\ndata: 1\r', '\n\r\n', 'event: b\rdata: 2\r\r')));
  assert.deepEqual(crlf, [
    { event: 'a', data: '1' },
    { event: 'b', data: '2' },
  ]);
});

test('multi-line data joins with newlines; comments and keepalives are skipped; no data, no event', async () => {
  const got = await all(sseMessages(chunks(': keepalive\n\n', 'event: x\ndata: first\ndata:second\ndata\n: a comment in the middle\n\n', 'event: empty\n\n', 'data: plain\n\n')));
  assert.deepEqual(got, [
    { event: 'x', data: 'first\nsecond\n' },
    { event: 'message', data: 'plain' },
  ]);
  // One JSON document over several data lines is parsed whole.
  assert.deepEqual(await all(sse(chunks('event: j\ndata: {"a":\ndata: [1, 2]}\n\n'))), [{ event: 'j', data: { a: [1, 2] } }]);
});

test('the id carries over to later events (the SSE last event id); an event cut off by the end is not dispatched', async () => {
  const got = await all(sseMessages(chunks('id: 3\nevent: a\ndata: 1\n\nevent: b\ndata: 2\n\nevent: c\ndata: 3')));
  assert.deepEqual(got, [
    { id: '3', event: 'a', data: '1' },
    { id: '3', event: 'b', data: '2' },
  ]);
});

test('sseEnd: the data of the end event, or null where the stream closed without one', async () => {
  assert.deepEqual(await sseEnd(chunks('event: line\ndata: {}\n\nevent: end\ndata: {"status":"exited"}\n\n')), { status: 'exited' });
  assert.equal(await sseEnd(chunks('event: line\ndata: {}\n\n')), null);
});
