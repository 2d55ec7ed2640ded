import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { createJournal } from '../../daemon/journal/creation.ts';
import { writeIntent } from '../../daemon/journal/intents.ts';
import type { LandingIntent } from '../../schemas/journal.ts';
import { createLandingJournal } from '../../daemon/journal/landing.ts';
import { makeTempDir } from '../helpers/git.ts';

test('landing intents: one file per task and kind beside the creation intents, each journal reading only its own', (t) => {
  const dir = path.join(makeTempDir(t), 'journal');
  const landings = createLandingJournal(dir);
  const creations = createJournal(dir);
  const task = randomUUID();
  const rebase: LandingIntent = { kind: 'rebase', task, repo: '/r', worktree: '/r/w', branch: 'refs/heads/t', head: 'a'.repeat(40), onto: 'b'.repeat(40) };
  const merge: LandingIntent = { kind: 'merge', task, repo: '/r', checkout: '/r', ref: 'refs/heads/main', old: 'a'.repeat(40), next: 'c'.repeat(40) };
  writeIntent(landings.fileFor(task, 'rebase'), rebase);
  writeIntent(landings.fileFor(task, 'merge'), merge);
  assert.equal(statSync(landings.fileFor(task, 'merge')).mode & 0o777, 0o600);
  const created = randomUUID();
  writeIntent(creations.fileFor(created), { id: created });
  assert.deepEqual(creations.pending().map((p) => p.id), [created]);
  const pending = landings.pending().sort((a, b) => a.file.localeCompare(b.file));
  assert.deepEqual(pending, [
    { file: landings.fileFor(task, 'merge'), intent: merge },
    { file: landings.fileFor(task, 'rebase'), intent: rebase },
  ]);
  landings.done(landings.fileFor(task, 'rebase'));
  writeFileSync(landings.fileFor(randomUUID(), 'rebase'), '{"kind":'); // torn
  const left = landings.pending();
  assert.equal(left.length, 2);
  assert.deepEqual(left.map((p) => p.intent).filter((i) => i === null).length, 1);
  assert.equal(landings.read(landings.fileFor(task, 'rebase')), null, 'gone');
});
