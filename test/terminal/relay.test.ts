import assert from 'node:assert/strict';
import test from 'node:test';
import { Relay } from '../../daemon/terminal/relay.ts';

test('Relay: a program far ahead of the parser is paused, and goes on once the parser catches up', async () => {
  const calls: string[] = [];
  let stored = 0;
  const relay = new Relay(80, 24, (bytes) => (stored += bytes.length), 256 * 1024);
  relay.run({ write: () => {}, resize: () => {}, pause: () => calls.push('pause'), resume: () => calls.push('resume') });
  const piece = 'line of output\r\n'.repeat(4096);
  for (let i = 0; i < 8; i++) relay.output(piece);
  assert.deepEqual(calls, ['pause'], 'paused once, while the parser is behind');
  await relay.exit(0);
  assert.deepEqual(calls, ['pause', 'resume']);
  assert.equal(stored, 8 * piece.length, 'every byte went to the stored output');
});
