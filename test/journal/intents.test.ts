import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import type { CreationIntent, MergeIntent } from '../../schemas/journal.ts';
import { pendingIntents, readIntent, voidIntent } from '../../daemon/journal/intents.ts';
import { recordIntent } from '../../workers/intent.ts';
import { makeTempDir } from '../helpers/git.ts';

const creation = (id: string): CreationIntent => ({ id, repo: '/r', branch: 'grove/x', worktree_path: '.grove/worktrees/x/', base_commit: 'b'.repeat(40) });

test('recordIntent writes the intent durably in a private folder and reads back as written', (t) => {
  const dir = path.join(makeTempDir(t), 'journal');
  const id = randomUUID();
  const file = path.join(dir, `${id}.json`);
  assert.equal(recordIntent(file, creation(id)), null);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.deepEqual(readIntent<CreationIntent>(file), creation(id));
  voidIntent(file);
  assert.equal(existsSync(file), false);
  voidIntent(file); // a second void is harmless
  assert.equal(readIntent(file), null, 'gone');
});

test('recordIntent on a full disk answers INSUFFICIENT_STORAGE and leaves no file', (t) => {
  const dir = makeTempDir(t);
  // The intent's name leads to /dev/full, whose every write fails with ENOSPC.
  const file = path.join(dir, `${randomUUID()}.merge.json`);
  symlinkSync('/dev/full', file);
  const merge: MergeIntent = { kind: 'merge', task: randomUUID(), repo: '/r', checkout: '/r', ref: 'refs/heads/main', old: 'a'.repeat(40), next: 'c'.repeat(40) };
  const res = recordIntent(file, merge);
  assert.equal(res?.ok, false);
  assert.equal(res?.code, 'INSUFFICIENT_STORAGE');
  assert.throws(() => lstatSync(file), { code: 'ENOENT' }, 'the half-written intent is gone');
  assert.equal(lstatSync('/dev/full').isCharacterDevice(), true, 'only the link went');
});

test('recordIntent that cannot make its folder answers INTERNAL with the reason, before anything is written', (t) => {
  const dir = makeTempDir(t);
  writeFileSync(path.join(dir, 'journal'), 'a file where the folder should be');
  const id = randomUUID();
  const res = recordIntent(path.join(dir, 'journal', `${id}.json`), creation(id));
  assert.equal(res?.code, 'INTERNAL');
  assert.match(res?.message ?? '', /^recording what git is about to do failed: EEXIST: .*journal/);
  assert.deepEqual(readdirSync(dir), ['journal']);
});

test('pendingIntents reads the files whose names match, a torn one as null; no folder is none', (t) => {
  const dir = makeTempDir(t);
  assert.deepEqual(pendingIntents(path.join(dir, 'absent'), /\.json$/), []);
  const id = randomUUID();
  recordIntent(path.join(dir, `${id}.json`), creation(id));
  writeFileSync(path.join(dir, 'torn.json'), '{"id":');
  writeFileSync(path.join(dir, 'notes.txt'), 'not an intent');
  const found = pendingIntents<CreationIntent>(dir, /\.json$/).sort((a, b) => a.name.localeCompare(b.name));
  assert.deepEqual(
    found,
    [
      { name: `${id}.json`, file: path.join(dir, `${id}.json`), intent: creation(id) },
      { name: 'torn.json', file: path.join(dir, 'torn.json'), intent: null },
    ].sort((a, b) => a.name.localeCompare(b.name)),
  );
});

test('recordIntent of an intent JSON cannot hold answers INTERNAL and removes the opened, empty file', (t) => {
  const torn = path.join(makeTempDir(t), 'journal', 'x.json');
  const res = recordIntent(torn, { ...creation('x'), size: 1n } as unknown as CreationIntent);
  assert.deepEqual(res, { ok: false, code: 'INTERNAL', message: 'recording what git is about to do failed: Do not know how to serialize a BigInt' });
  assert.equal(existsSync(torn), false);
});
