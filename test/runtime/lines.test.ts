import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LineSplitter, MAX_LINE_BYTES } from '../../daemon/runtime/lines.ts';

function split(chunks: Buffer[]): string[] {
  const s = new LineSplitter();
  return [...chunks.flatMap((c) => s.push(c)), ...s.end()];
}

test('lines split on \\n, drop one trailing \\r, and keep a last partial line', () => {
  assert.deepEqual(split([Buffer.from('a\r\nb\n\nc\r\r\nlast')]), ['a', 'b', '', 'c\r', 'last']);
  assert.deepEqual(split([Buffer.from('x\n')]), ['x']);
  assert.deepEqual(split([]), []);
});

test('UTF-8 split across chunk boundaries survives; invalid bytes and NUL become U+FFFD', () => {
  const euro = Buffer.from('€ ok\n'); // € is 3 bytes
  assert.deepEqual(split([euro.subarray(0, 1), euro.subarray(1, 2), euro.subarray(2)]), ['€ ok']);
  assert.deepEqual(split([Buffer.from([0x61, 0xff, 0x62, 0x00, 0x63, 0x0a])]), ['a\uFFFDb\uFFFDc']);
});

test('a line over 64 KiB is cut into 64 KiB pieces, never inside a character', () => {
  const long = 'a'.repeat(MAX_LINE_BYTES * 2 + 10);
  const out = split([Buffer.from(long + '\n')]);
  assert.deepEqual(out.map((l) => l.length), [MAX_LINE_BYTES, MAX_LINE_BYTES, 10]);
  // 3-byte characters: 64 KiB is not a multiple of 3, so the cut must back off.
  const wide = '€'.repeat(30_000);
  const pieces = split([Buffer.from(wide)]);
  assert.equal(pieces.join(''), wide);
  for (const p of pieces) {
    assert.ok(Buffer.byteLength(p) <= MAX_LINE_BYTES);
    assert.ok(!p.includes('\uFFFD'));
  }
  // Delivered one byte at a time, the result is the same.
  const bytes = Buffer.from(wide + '\nend');
  const s = new LineSplitter();
  const drip: string[] = [];
  for (let i = 0; i < bytes.length; i++) drip.push(...s.push(bytes.subarray(i, i + 1)));
  drip.push(...s.end());
  assert.deepEqual(drip, [...pieces, 'end']);
});

test('a chunk buffer reused by the caller does not corrupt a held-back partial line', () => {
  const s = new LineSplitter();
  const buf = Buffer.alloc(8);
  const out: string[] = [];
  buf.write('abc\nde');
  out.push(...s.push(buf.subarray(0, 6)));
  buf.write('f\nxyzw\n');
  out.push(...s.push(buf.subarray(0, 7)));
  assert.deepEqual([...out, ...s.end()], ['abc', 'def', 'xyzw']);
});
