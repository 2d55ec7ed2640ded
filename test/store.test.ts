import assert from 'node:assert/strict';
import path from 'node:path';
import test from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { readyTask, waitSessionEnd } from './helpers/sessions.ts';

test('removing a project removes its archived tasks, their sessions and every stored line (no foreign key on lines)', async (t) => {
  const { d, project, task } = await readyTask(t);
  const s = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { args: ['print:500'] } });
  await waitSessionEnd(d, s.json.id);
  assert.equal((await d.socket('GET', `/api/sessions/${s.json.id}/output?limit=5000`)).json.lines.length, 500);
  assert.equal((await d.socket('DELETE', `/api/tasks/${task.id}`)).status, 200);
  assert.equal((await d.socket('DELETE', `/api/projects/${project.id}`)).status, 204);
  assert.equal((await d.socket('GET', `/api/sessions/${s.json.id}`)).status, 404);
  assert.equal(await d.stop(), 0);

  const pg = new PGlite({ dataDir: path.join(d.home, 'data', 'pgdata') });
  t.after(() => pg.close());
  const count = async (table: string) => (await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
  assert.equal(await count('sessions'), 0);
  assert.equal(await count('session_lines'), 0, 'the lines went with their session');
  assert.equal(await count('tasks'), 0);
});
