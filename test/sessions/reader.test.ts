import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import test, { type TestContext } from 'node:test';
import { MAX_LINE_BYTES } from '../../daemon/runtime/lines.ts';
import { CHUNK, readNew, type Offsets } from '../../daemon/sessions/reader.ts';
import { sessionFiles, type SessionFiles } from '../../daemon/sessions/wrapper.ts';
import { makeTempDir } from '../helpers/git.ts';

function files(t: TestContext): SessionFiles {
  const f = sessionFiles(makeTempDir(t), 'session');
  mkdirSync(f.dir, { recursive: true });
  return f;
}

const zero: Offsets = { stdout: 0, stderr: 0 };

// Every line from `from` to the end, round after round, as the pump reads them.
function readAll(f: SessionFiles, from: Offsets, final: boolean): { lines: Array<[string, string]>; offsets: Offsets; rounds: number } {
  const lines: Array<[string, string]> = [];
  let offsets = from;
  for (let rounds = 0; ; rounds++) {
    const r = readNew(f, offsets, { final });
    r.batch.texts.forEach((text, i) => lines.push([r.batch.streams[i]!, text]));
    if (r.offsets.stdout === offsets.stdout && r.offsets.stderr === offsets.stderr) return { lines, offsets, rounds };
    offsets = r.offsets;
  }
}

test('no files yet: nothing read, the offsets stay', (t) => {
  const r = readNew(files(t), zero);
  assert.deepEqual(r.batch.texts, []);
  assert.deepEqual(r.offsets, zero);
});

test('stdout lines, then stderr lines, tagged by stream; the offsets reach the end of each file', (t) => {
  const f = files(t);
  writeFileSync(f.stdout, 'one\ntwo\r\n');
  writeFileSync(f.stderr, 'oops\n');
  const r = readNew(f, zero);
  assert.deepEqual(r.batch.streams, ['stdout', 'stdout', 'stderr']);
  assert.deepEqual(r.batch.texts, ['one', 'two', 'oops']);
  assert.deepEqual(r.offsets, { stdout: 9, stderr: 5 });
  assert.ok(!Number.isNaN(Date.parse(r.batch.at)));
  // Read again from there: nothing new.
  assert.deepEqual(readNew(f, r.offsets).batch.texts, []);
  // What is appended afterwards is all the next read returns.
  appendFileSync(f.stdout, 'three\n');
  const next = readNew(f, r.offsets);
  assert.deepEqual(next.batch.texts, ['three']);
  assert.deepEqual(next.offsets, { stdout: 15, stderr: 5 });
});

test('an unfinished line is not read: the offsets stop at its start until its newline comes, or the files are final', (t) => {
  const f = files(t);
  writeFileSync(f.stdout, 'done\nhalf');
  const r = readNew(f, zero);
  assert.deepEqual(r.batch.texts, ['done']);
  assert.equal(r.offsets.stdout, 5);
  assert.deepEqual(readNew(f, r.offsets).offsets, r.offsets, 'still unfinished: no progress');
  appendFileSync(f.stdout, ' and whole\nnext');
  const whole = readNew(f, r.offsets);
  assert.deepEqual(whole.batch.texts, ['half and whole']);
  assert.equal(whole.offsets.stdout, 20);
  const last = readNew(f, whole.offsets, { final: true });
  assert.deepEqual(last.batch.texts, ['next'], 'a last line without a newline is kept at the end');
  assert.equal(last.offsets.stdout, 24);
  assert.deepEqual(readNew(f, last.offsets, { final: true }).batch.texts, []);
});

test('a line over 64 KiB is stored in 64 KiB pieces; the offsets stop after the last whole piece', (t) => {
  const f = files(t);
  const long = 'x'.repeat(MAX_LINE_BYTES * 2 + 100);
  writeFileSync(f.stderr, long);
  // However many whole pieces one chunk holds, the offsets stop after the last of them.
  const r = readNew(f, zero);
  const pieces = r.batch.texts.map((s) => s.length);
  assert.ok(pieces.length >= 1 && pieces.every((n) => n === MAX_LINE_BYTES), `${pieces}`);
  assert.equal(r.offsets.stderr, MAX_LINE_BYTES * pieces.length);
  // The unfinished rest is read again from the last cut, not lost.
  appendFileSync(f.stderr, '\n');
  const rest: string[] = [];
  let at = r.offsets;
  for (let next = readNew(f, at); next.offsets.stderr !== at.stderr; next = readNew(f, at)) {
    rest.push(...next.batch.texts);
    at = next.offsets;
  }
  assert.equal(at.stderr, long.length + 1);
  assert.deepEqual([...pieces, ...rest.map((s) => s.length)], [MAX_LINE_BYTES, MAX_LINE_BYTES, 100]);
  assert.equal(r.batch.texts.join('') + rest.join(''), long);
});

test('a round reads at most one chunk per file; rounds from the returned offsets read every line once, in order', (t) => {
  const f = files(t);
  const out = Array.from({ length: 10_000 }, (_, i) => `out ${i + 1} ${'.'.repeat(i % 97)}`);
  const err = Array.from({ length: 3_000 }, (_, i) => `err ${i + 1}`);
  writeFileSync(f.stdout, out.join('\n') + '\n');
  writeFileSync(f.stderr, err.join('\n')); // no newline at its end
  const first = readNew(f, zero);
  assert.ok(first.offsets.stdout <= CHUNK && first.offsets.stdout > CHUNK - 200, `${first.offsets.stdout}`);
  const notFinal = readAll(f, zero, false);
  assert.ok(notFinal.rounds > 2, 'more than one round');
  assert.deepEqual(notFinal.lines.filter(([s]) => s === 'stdout').map(([, l]) => l), out);
  assert.deepEqual(notFinal.lines.filter(([s]) => s === 'stderr').map(([, l]) => l), err.slice(0, -1));
  // The last stderr line comes once the files are final, from where the reading stopped.
  const tail = readAll(f, notFinal.offsets, true);
  assert.deepEqual(tail.lines, [['stderr', 'err 3000']]);
});
