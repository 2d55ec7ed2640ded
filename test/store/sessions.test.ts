import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import test from 'node:test';
import { addTask, openTestStore } from '../helpers/store.ts';

test('a result stored before results had denials reads with denials [], in every query; one with them keeps them', async (t) => {
  const s = await openTestStore((fn) => t.after(fn));
  const task = await addTask(t, s);
  const id = randomUUID();
  await s.sessions.insert({ id, task_id: task.id, agent: 'fixture', command: ['true'], mode: 'edit', prompt: null, conversation_id: id, parent_id: null });
  // As an older grove wrote it: jsonb keeps the object as it was, without the field.
  const old = { text: 'done', is_error: false, cost_usd: 0.5, input_tokens: 3, output_tokens: 4 };
  await s.store.db.query('UPDATE sessions SET result = $2 WHERE id = $1', [id, JSON.stringify(old)]);
  assert.deepEqual((await s.sessions.get(id))!.result, { ...old, denials: [], blocked: [] });
  assert.deepEqual((await s.sessions.listOfTask(task.id))![0]!.result, { ...old, denials: [], blocked: [] });
  assert.deepEqual((await s.sessions.listAll()).find((x) => x.id === id)!.result, { ...old, denials: [], blocked: [] });

  const denials = [{ tool: 'Bash', input: { command: 'npm test' } }];
  await s.store.db.query('UPDATE sessions SET result = $2 WHERE id = $1', [id, JSON.stringify({ ...old, denials })]);
  assert.deepEqual((await s.sessions.get(id))!.result!.denials, denials);
  await s.store.db.query('UPDATE sessions SET result = NULL WHERE id = $1', [id]);
  assert.equal((await s.sessions.get(id))!.result, null);
});
