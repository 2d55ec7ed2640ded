// The merge queue on a shared store (DESIGN §17, §14.2): the project's host lands its queue, on
// its own disk; a queue request made on another host runs there, and wakes its lander.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { git } from '../helpers/git.ts';
import { commitFile, waitQueueEvent } from '../helpers/queue.ts';
import { startTeam } from '../helpers/team.ts';

test("a task queued through another host is landed by its project's host, in that host's clone", async (t) => {
  const team = await startTeam(t, { hosts: ['alpha', 'beta'], files: { 'README.md': '# team\n', '.grove.json': JSON.stringify({ check: ['test -f queued.txt'] }) } });
  const [a, b] = team.hosts;
  const task = await b!.daemon.socket('POST', '/api/tasks', { body: { project_id: a!.project.id, name: 'from beta' } });
  assert.equal(task.status, 201, task.text);
  const wt = path.join(a!.clone, task.json.worktree_path);
  commitFile(wt, 'queued.txt', 'queued\n');
  const before = git(a!.clone, 'rev-parse', 'main');

  const queued = await b!.daemon.socket('POST', `/api/projects/${a!.project.id}/queue`, { body: { task_id: task.json.id } });
  assert.equal(queued.status, 201, queued.text);
  const landed = await waitQueueEvent(b!.daemon, task.json.id, 'queue.landed');
  const health = (await a!.daemon.socket('GET', '/api/health')).json;
  assert.equal(landed.host_id, health.host_id, "landed by the project's host");
  assert.equal(git(a!.clone, 'rev-parse', 'main'), landed.data.commit);
  assert.equal(git(a!.clone, 'rev-parse', 'main^'), before);
  assert.equal(git(b!.clone, 'rev-parse', 'main'), before, "beta's clone is not touched");
  assert.deepEqual((await b!.daemon.socket('GET', `/api/projects/${a!.project.id}/queue`)).json, [], 'the list is the store’s, on any host');
});
