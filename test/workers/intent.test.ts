import assert from 'node:assert/strict';
import { existsSync, lstatSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { recordIntent } from '../../workers/intent.ts';
import { makeTempDir } from '../helpers/git.ts';

test('intent: written before git runs, in a private folder made for it', (t) => {
  const file = path.join(makeTempDir(t), 'journal', 'create-1.json');
  assert.equal(recordIntent(file, { op: 'create', branch: 'grove/x' }), null);
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { op: 'create', branch: 'grove/x' });
  assert.equal(lstatSync(path.dirname(file)).mode & 0o777, 0o700);
  assert.equal(lstatSync(file).mode & 0o777, 0o600);
});

test('intent: a full disk is INSUFFICIENT_STORAGE, any other failure INTERNAL; nothing half-written is left', (t) => {
  const dir = makeTempDir(t);
  // /dev/full answers every write with ENOSPC, as a full disk does; the link to it is what is removed.
  const full = path.join(dir, 'full.json');
  symlinkSync('/dev/full', full);
  assert.deepEqual(recordIntent(full, { op: 'merge' }), { ok: false, code: 'INSUFFICIENT_STORAGE', message: 'the disk of the data folder is full; free space and try again' });
  assert.equal(lstatSync(full, { throwIfNoEntry: false }), undefined);

  // An intent that cannot be written (here one JSON cannot hold): the opened, empty file goes.
  const torn = path.join(dir, 'journal', 'x.json');
  const res = recordIntent(torn, { op: 'merge', size: 1n });
  assert.deepEqual(res, { ok: false, code: 'INTERNAL', message: 'recording what git is about to do failed: Do not know how to serialize a BigInt' });
  assert.equal(existsSync(torn), false);
});
