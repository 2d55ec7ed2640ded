import assert from 'node:assert/strict';
import { openSync, closeSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { LineBuffer } from '../../daemon/terminal/lines.ts';
import { OutputFile, readOutput } from '../../daemon/terminal/output.ts';
import { makeTempDir } from '../helpers/git.ts';

test('readOutput: offsets count UTF-8 bytes; exactly the bytes from an offset, cut at a whole character; null inside a character or past the end', (t) => {
  const file = path.join(makeTempDir(t), 'out');
  // é is 2 bytes, € 3, 😀 4.
  writeFileSync(file, 'café €😀 end');
  const bytes = readFileSync(file);
  const fd = openSync(file, 'r');
  t.after(() => closeSync(fd));
  const to = bytes.length;
  assert.deepEqual(readOutput(fd, 0, to), { data: 'café €😀 end', end: to });
  assert.deepEqual(readOutput(fd, 3, to), { data: 'é €😀 end', end: to });
  assert.equal(readOutput(fd, 4, to), null, 'inside é');
  assert.equal(readOutput(fd, 8, to), null, 'inside €');
  assert.equal(readOutput(fd, to + 1, to), null, 'past the end');
  assert.deepEqual(readOutput(fd, to, to), { data: '', end: to });
  // A read of at most 7 bytes from 3: é (2), space, then € (3) whole = 6; 😀 would cut.
  assert.deepEqual(readOutput(fd, 3, to, 7), { data: 'é €', end: 9 });
  assert.deepEqual(readOutput(fd, 9, to, 2), null, 'not one whole character fits: nothing to give');
  assert.deepEqual(readOutput(fd, 9, to, 4), { data: '😀', end: 13 });
  assert.deepEqual(readOutput(fd, 3, 9), { data: 'é €', end: 9 }, 'up to `to`, not the file\'s end');
  assert.deepEqual(readOutput(fd, 0, to + 10), { data: 'café €😀 end', end: to }, 'a `to` past the file: what is there');
});

test('OutputFile: appends each chunk whole; its offsets start at what the file held, and read back what was appended', (t) => {
  const out = path.join(makeTempDir(t), 'out');
  writeFileSync(out, 'before\n');
  const said: string[] = [];
  const f = new OutputFile(out, (m) => said.push(m));
  t.after(() => f.close());
  assert.equal(f.total, 7);
  f.append(Buffer.from('naïve\r\n'));
  assert.equal(f.total, 7 + 8, 'ï is 2 bytes');
  assert.deepEqual(f.read(7), { data: 'naïve\r\n', end: 15 });
  assert.deepEqual(f.read(0), { data: 'before\nnaïve\r\n', end: 15 });
  assert.equal(f.read(10), null, 'inside ï');
  assert.equal(readFileSync(out, 'utf8'), 'before\nnaïve\r\n');
  assert.deepEqual(said, []);
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
