import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import type { CreationIntent } from '../../schemas/journal.ts';
import { createJournal } from '../../daemon/journal/creation.ts';
import { writeIntent } from '../../daemon/journal/intents.ts';
import { makeTempDir } from '../helpers/git.ts';

function intent(id: string): CreationIntent {
  return { id, repo: '/r', branch: `grove/${id.slice(0, 8)}`, worktree_path: `.grove/worktrees/${id.slice(0, 8)}/`, base_commit: 'b'.repeat(40) };
}

test('an intent written for a task id is pending until done, in a private folder', (t) => {
  const dir = path.join(makeTempDir(t), 'journal');
  const journal = createJournal(dir);
  assert.deepEqual(journal.pending(), [], 'no folder yet: nothing pending');
  const id = randomUUID();
  writeIntent(journal.fileFor(id), intent(id));
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  assert.equal(statSync(journal.fileFor(id)).mode & 0o777, 0o600);
  assert.deepEqual(journal.pending(), [{ id, intent: intent(id) }]);
  journal.done(id);
  assert.deepEqual(journal.pending(), []);
  assert.equal(existsSync(journal.fileFor(id)), false);
  journal.done(id); // a second done is harmless
});

test('several intents are pending side by side; each done removes only its own', (t) => {
  const journal = createJournal(makeTempDir(t));
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  for (const id of ids) writeIntent(journal.fileFor(id), intent(id));
  journal.done(ids[1]!);
  const left = journal.pending().map((p) => p.id).sort();
  assert.deepEqual(left, [ids[0]!, ids[2]!].sort());
});

test('a torn intent (the worker died while writing) is pending with a null intent; other files are ignored', (t) => {
  const dir = makeTempDir(t);
  const journal = createJournal(dir);
  const torn = randomUUID();
  writeFileSync(journal.fileFor(torn), '{"id":"');
  writeFileSync(path.join(dir, 'notes.txt'), 'not an intent');
  writeFileSync(path.join(dir, 'abc.json'), '{}');
  mkdirSync(path.join(dir, 'sub'));
  assert.deepEqual(journal.pending(), [{ id: torn, intent: null }]);
  journal.done(torn);
  assert.deepEqual(readdirSync(dir).sort(), ['abc.json', 'notes.txt', 'sub']);
});

test('writing an intent over an older one for the same id replaces it', (t) => {
  const journal = createJournal(makeTempDir(t));
  const id = randomUUID();
  writeIntent(journal.fileFor(id), { ...intent(id), branch: 'grove/first' });
  writeIntent(journal.fileFor(id), { ...intent(id), branch: 'grove/second' });
  assert.equal(journal.pending()[0]?.intent?.branch, 'grove/second');
});
