import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { call, mcp } from '../helpers/mcp.ts';
import { gate, readyTaskOn, sharedAgentDaemon, waitSessionEnd } from '../helpers/sessions.ts';

// list_turns, restore_turn and from/to on get_changes and get_diff (DESIGN §17), through `grove mcp`.
const daemon = sharedAgentDaemon();

test('grove mcp: list_turns, get_changes and get_diff between turns, restore_turn and its undo; SESSION_RUNNING and TURN_NOT_FOUND with their codes; --read-only has no restore_turn', async (t) => {
  const d = await daemon();
  const { repo, task } = await readyTaskOn(d, t, {});
  const wt = path.join(repo, task.worktree_path);
  const client = await mcp(t, d.home);
  const run = async (prompt: string) => {
    const s = await call(client, 'start_session', { task_id: task.id, prompt });
    const waited = await call(client, 'wait_for_session', { session_id: s.id, timeout_s: 120 });
    assert.equal(waited.status, 'exited', JSON.stringify(waited));
    return s.id as string;
  };
  const one = await run('write:a.txt=one');
  const two = await run('write:a.txt=two');

  const turns = await call(client, 'list_turns', { task_id: task.id });
  assert.deepEqual(turns.map((x: any) => [x.n, x.session_id, x.restored, x.files]), [[1, one, null, 1], [2, two, null, 1]]);
  const changes = await call(client, 'get_changes', { task_id: task.id, from: 'turn:1', to: 'turn:2' });
  assert.deepEqual(changes.files.map((f: any) => [f.path, f.status, f.additions, f.deletions]), [['a.txt', 'modified', 1, 1]]);
  const diff = await call(client, 'get_diff', { task_id: task.id, from: 'turn:1', path: 'a.txt' });
  assert.match(diff, /^-one\n\+two$/m);
  const fromBase = await call(client, 'get_changes', { task_id: task.id });
  assert.deepEqual(fromBase.files.map((f: any) => [f.path, f.status]), [['a.txt', 'untracked']]);

  const missing = await call(client, 'get_diff', { task_id: task.id, to: 'turn:7' });
  assert.equal(missing.error.code, 'TURN_NOT_FOUND');
  const malformed = await call(client, 'get_changes', { task_id: task.id, from: 'HEAD' });
  assert.equal(malformed.error?.code, 'VALIDATION_FAILED', 'a side that is not base, work or turn:N');

  const restored = await call(client, 'restore_turn', { task_id: task.id, turn: 1 });
  assert.deepEqual([restored.restored.n, restored.saved.n, restored.saved.restored], [1, 3, 1]);
  assert.equal(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'one\n');
  const undone = await call(client, 'restore_turn', { task_id: task.id, turn: restored.saved.n });
  assert.equal(undone.restored.n, 3);
  assert.equal(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'two\n');

  const held = gate(t);
  const s = await call(client, 'start_session', { task_id: task.id, prompt: `wait:${held.path}` });
  const refused = await call(client, 'restore_turn', { task_id: task.id, turn: 1 });
  assert.equal(refused.error.code, 'SESSION_RUNNING');
  held.release();
  await waitSessionEnd(d, s.id);
  assert.equal(readFileSync(path.join(wt, 'a.txt'), 'utf8'), 'two\n', 'the refused restore changed nothing');

  const reader = await mcp(t, d.home, ['--read-only']);
  const names = (await reader.listTools()).tools.map((x) => x.name);
  assert.ok(names.includes('list_turns'));
  assert.ok(!names.includes('restore_turn'));
  assert.equal((await call(reader, 'restore_turn', { task_id: task.id, turn: 1 })).error.code, 'UNKNOWN_TOOL');
});
