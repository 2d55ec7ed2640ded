import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { createTaskGate } from '../../daemon/tasks/gate.ts';
import { createTaskService } from '../../daemon/tasks/service.ts';
import { makeTempDir } from '../helpers/git.ts';
import { until } from '../helpers/store.ts';
import { taskParts } from '../helpers/tasks.ts';

test("the task service's close stops a running setup and records it; a second close is the same one, not another", async (t) => {
  const parts = await taskParts(t);
  const tasks = createTaskService({
    ...parts,
    gate: createTaskGate(),
    killSessions: async () => {},
    setupTimeoutS: 600,
    gitTimeoutS: 60,
  });
  t.after(() => tasks.close());
  const started = path.join(makeTempDir(t), 'started');
  const project = await parts.project({ setup: [`touch '${started}'; sleep 600`] });
  const created = await tasks.create({ project_id: project.id, name: 'long', wait: false });
  assert.equal(created.status, 202);
  await until(() => existsSync(started), 'the setup command to run');

  const closing = tasks.close();
  assert.equal(tasks.close(), closing, 'every caller waits on the first close');
  await closing;
  assert.equal((await parts.read.get(created.task.id)).status, 'setup_failed');
  await tasks.close();
});
