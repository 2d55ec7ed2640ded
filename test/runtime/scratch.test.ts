import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { emptyScratch } from '../../daemon/runtime/scratch.ts';
import { makeTempDir } from '../helpers/git.ts';

test('scratch: made private and empty at start, whatever a killed daemon left in it', (t) => {
  const dataDir = makeTempDir(t);
  const dir = emptyScratch(dataDir);
  assert.equal(dir, path.join(dataDir, 'scratch'));
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  mkdirSync(path.join(dir, 'r-left', 'objects'), { recursive: true });
  writeFileSync(path.join(dir, 'r-left', 'index'), 'x');
  assert.equal(emptyScratch(dataDir), dir);
  assert.deepEqual(readdirSync(dir), []);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
});
