import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { grove } from '../helpers/cli.ts';
import { git } from '../helpers/git.ts';
import { gate, readyTaskOn, sharedAgentDaemon, waitSessionEnd } from '../helpers/sessions.ts';

// `grove turns`, `changes`/`diff --from --to` and `restore`, through the real CLI, against turns the
// fixture agent made by writing files.
const daemon = sharedAgentDaemon();

test('turns lists what each session left; changes and diff between turns (N as turn:N); restore saves, restores and says how to undo; refused while an agent runs', async (t) => {
  const d = await daemon();
  const { repo, task } = await readyTaskOn(d, t, {});
  const wt = path.join(repo, task.worktree_path);
  const id = task.id.slice(0, 8);
  const session = async (prompt: string, args: string[] = []) => {
    const s = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt, args } });
    assert.equal(s.status, 201, s.text);
    await waitSessionEnd(d, s.json.id);
    return s.json.id as string;
  };
  const one = await session('write:b.txt=two', ['write:a.txt=one']);
  const two = await session('write:c.txt=three', ['write:a.txt=uno']);

  const turns = await grove(d.home, ['turns', id]);
  assert.equal(turns.code, 0, turns.stderr);
  const rows = turns.stdout.trim().split('\n').map((l) => l.split(/\s{2,}/));
  assert.deepEqual(rows[0], ['N', 'SESSION', 'FILES', 'AT']);
  assert.deepEqual(rows.slice(1).map((r) => r.slice(0, 3)), [['1', one.slice(0, 8), '2'], ['2', two.slice(0, 8), '2']]);
  const json = await grove(d.home, ['turns', id, '--json']);
  assert.deepEqual(json.json.map((x: any) => [x.n, x.session_id, x.files]), [[1, one, 2], [2, two, 2]]);

  const between = await grove(d.home, ['changes', id, '--from', '1', '--to', 'turn:2', '--json']);
  assert.equal(between.code, 0, between.stderr);
  assert.deepEqual(between.json.files.map((f: any) => [f.path, f.status]), [['a.txt', 'modified'], ['c.txt', 'added']]);
  const human = await grove(d.home, ['changes', id, '--from', 'turn:1', '--to', '2']);
  assert.match(human.stdout, /2 file\(s\) changed from turn:1 to turn:2/);
  assert.match(human.stdout, /modified\s+\+1 -1\s+a\.txt/);
  const diff = await grove(d.home, ['diff', id, '--from', '1', '--to', '2', 'a.txt']);
  assert.equal(diff.code, 0, diff.stderr);
  assert.match(diff.stdout, /^-one\n\+uno$/m);
  assert.doesNotMatch(diff.stdout, /c\.txt/);
  // Without a range: the merge-base to the work, as before.
  const all = await grove(d.home, ['changes', id, '--json']);
  assert.deepEqual(all.json.files.map((f: any) => f.path), ['a.txt', 'b.txt', 'c.txt']);
  const bad = await grove(d.home, ['changes', id, '--from', 'HEAD']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /VALIDATION_FAILED/);
  const missing = await grove(d.home, ['diff', id, '--to', '9']);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /TURN_NOT_FOUND/);

  const restored = await grove(d.home, ['restore', id, '1']);
  assert.equal(restored.code, 0, restored.stderr);
  assert.match(restored.stdout, /restored turn 1/);
  assert.match(restored.stdout, new RegExp(`saved as turn 3; to undo: grove restore ${id} 3`));
  assert.equal(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'one\n');
  assert.equal(git(wt, 'status', '--porcelain', '--untracked-files=all').includes('c.txt'), false, 'c.txt came after turn 1');
  const undone = await grove(d.home, ['restore', id, 'turn:3', '--json']);
  assert.equal(undone.code, 0, undone.stderr);
  assert.deepEqual([undone.json.restored.n, undone.json.saved.n], [3, 4]);
  assert.equal(readFileSync(path.join(wt, 'c.txt'), 'utf8'), 'three\n');
  const after = await grove(d.home, ['turns', id]);
  assert.match(after.stdout, /^3\s+\(saved before restoring 1\)\s+/m);
  assert.match(after.stdout, /^4\s+\(saved before restoring 3\)\s+/m);

  const held = gate(t);
  const s = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: `wait:${held.path}` } });
  assert.equal(s.status, 201, s.text);
  const refused = await grove(d.home, ['restore', id, '1']);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /^grove: SESSION_RUNNING: /);
  held.release();
  await waitSessionEnd(d, s.json.id);
  assert.equal(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'uno\n', 'the refused restore changed nothing');

  const usage = await grove(d.home, ['restore', id, 'x']);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /turn's number/);
});
