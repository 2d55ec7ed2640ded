import assert from 'node:assert/strict';
import test from 'node:test';
import { Backlog } from '../../daemon/terminal/backlog.ts';
import { KEPT_OUTPUT_BYTES } from '../../schemas/terminal.ts';
import { LineBuffer } from '../../daemon/terminal/lines.ts';

const add = (b: Backlog, data: string) => b.append(data, Buffer.byteLength(data));

test('Backlog: offsets count UTF-8 bytes; since() answers exactly the bytes from an offset, null inside a character or out of range', () => {
  const b = new Backlog();
  assert.deepEqual(add(b, 'ab'), { type: 'output', offset: 0, data: 'ab' });
  assert.deepEqual(add(b, 'é€x'), { type: 'output', offset: 2, data: 'é€x' });
  assert.equal(b.total, 2 + 2 + 3 + 1);
  assert.deepEqual(b.since(0), [
    { type: 'output', offset: 0, data: 'ab' },
    { type: 'output', offset: 2, data: 'é€x' },
  ]);
  assert.deepEqual(b.since(1), [
    { type: 'output', offset: 1, data: 'b' },
    { type: 'output', offset: 2, data: 'é€x' },
  ]);
  assert.deepEqual(b.since(4), [{ type: 'output', offset: 4, data: '€x' }]);
  assert.equal(b.since(3), null, 'inside é');
  assert.equal(b.since(5), null, 'inside €');
  assert.deepEqual(b.since(8), []);
  assert.equal(b.since(9), null, 'beyond the output');
  assert.equal(b.since(-1), null);
});

test('Backlog: trim keeps at least KEPT_OUTPUT_BYTES, and never drops what the screen has not parsed', () => {
  const b = new Backlog();
  const piece = 'x'.repeat(64 * 1024);
  for (let i = 0; i < 40; i++) add(b, piece);
  b.trim(0);
  assert.equal(b.keptStart, 0, 'nothing parsed: everything kept');
  b.trim(b.total);
  assert.ok(b.total - b.keptStart >= KEPT_OUTPUT_BYTES);
  assert.ok(b.total - b.keptStart < KEPT_OUTPUT_BYTES + piece.length);
  assert.equal(b.since(b.keptStart - 1), null);
  assert.equal(b.since(b.keptStart)!.map((f) => f.data).join('').length, b.total - b.keptStart);
});

test('LineBuffer: lines split across reads and several in one read; a line over its limit is refused', () => {
  const l = new LineBuffer();
  assert.deepEqual(l.push('{"a":'), []);
  assert.deepEqual(l.push('1}\n{"b"'), ['{"a":1}']);
  assert.deepEqual(l.push(':2}\n\n{"c":3}\n'), ['{"b":2}', '', '{"c":3}']);
  const big = 'y'.repeat(3 * 1024 * 1024);
  const parts = big.match(/.{1,65536}/gs)!;
  const got = parts.flatMap((p) => l.push(p)!);
  assert.deepEqual(got, []);
  assert.deepEqual(l.push('\n'), [big]);

  const small = new LineBuffer(10);
  assert.deepEqual(small.push('0123456789\n'), ['0123456789']);
  assert.deepEqual(small.push('01234'), []);
  assert.equal(small.push('567890'), null);
  assert.equal(new LineBuffer(10).push('0123456789012\n'), null);
});
