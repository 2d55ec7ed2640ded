// A follow-up typed into a running terminal session (DESIGN §21), into a real holder and a
// stand-in interface that says what each of its reads got: the Enter comes in a read of its own,
// after the text, even from a program too busy to read the text when it is sent (an interface
// that takes quick keys for a paste, as Codex's does, would make a newline of an Enter among them).
import assert from 'node:assert/strict';
import test from 'node:test';
import { ENTER_PAUSE_MS, typeInto } from '../../daemon/sessions/type.ts';
import { attach, startHolder } from '../helpers/holder.ts';

// Reads in raw mode, but not for `busy` ms after it says it is ready (its thread held); prints
// each read as JSON with the time it came.
const READER = `
process.stdin.setRawMode(true);
process.stdin.on('data', (d) => console.log('read ' + JSON.stringify({ at: Date.now(), data: d.toString() })));
console.log('ready');
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(process.argv[1]));
`;
const reads = (output: string) => [...output.matchAll(/read (\{.*\})/g)].map((m) => JSON.parse(m[1]!) as { at: number; data: string });

for (const busy of [0, 600]) {
  test(`the text, then Enter in a read of its own once the program has taken the text in (the program ${busy ? 'busy at first' : 'reading'})`, async (t) => {
    const h = await startHolder(t, [process.execPath, '-e', READER, String(busy)]);
    const seen = await attach(t, h.socket, null);
    await seen.sees('ready');
    await typeInto(h.socket, 'session-1', 'say the second thing');
    await seen.until('two reads', () => reads(seen.output()).length >= 2);
    const [text, enter] = reads(seen.output());
    assert.deepEqual([text!.data, enter!.data], ['say the second thing', '\r']);
    assert.ok(enter!.at - text!.at >= ENTER_PAUSE_MS - 5, `${enter!.at - text!.at} ms between them`);
  });
}

test('several lines are pasted in brackets, then Enter on its own', async (t) => {
  const h = await startHolder(t, [process.execPath, '-e', READER, '0']);
  const seen = await attach(t, h.socket, null);
  await seen.sees('ready');
  await typeInto(h.socket, 'session-1', 'one\ntwo');
  await seen.until('two reads', () => reads(seen.output()).length >= 2);
  assert.deepEqual(reads(seen.output()).map((r) => r.data), ['\x1b[200~one\ntwo\x1b[201~', '\r']);
});

test('a program that has ended: SESSION_NOT_RUNNING', async (t) => {
  const h = await startHolder(t, [process.execPath, '-e', 'setTimeout(() => {}, 100)']);
  await h.exited;
  await assert.rejects(typeInto(h.socket, 'session-1', 'hi'), (e: any) => e.code === 'SESSION_NOT_RUNNING');
});
