import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { OutputFile } from '../../daemon/terminal/output.ts';
import { Relay } from '../../daemon/terminal/relay.ts';
import { makeTempDir } from '../helpers/git.ts';

test('Relay: a program far ahead of the parser is paused, and goes on once the parser catches up', async (t) => {
  const calls: string[] = [];
  const out = path.join(makeTempDir(t), 'out');
  const file = new OutputFile(out, () => {});
  t.after(() => file.close());
  const relay = new Relay(80, 24, file, 256 * 1024);
  relay.run({ write: () => {}, resize: () => {}, pause: () => calls.push('pause'), resume: () => calls.push('resume') });
  const piece = 'line of output\r\n'.repeat(4096);
  for (let i = 0; i < 8; i++) relay.output(piece);
  assert.deepEqual(calls, ['pause'], 'paused once, while the parser is behind');
  await relay.exit(0);
  assert.deepEqual(calls, ['pause', 'resume']);
  assert.equal(file.total, 8 * piece.length);
  assert.equal(readFileSync(out, 'utf8'), piece.repeat(8), 'every byte went to the output file');
});
