// Turns on a team (DESIGN §14.2, §17): the host that owns the task's worktree records its turns,
// lists them and restores them, whichever host was asked.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { git } from '../helpers/git.ts';
import { waitSessionEnd } from '../helpers/sessions.ts';
import { startTeam, TEAM_AGENTS, TEAM_FILES } from '../helpers/team.ts';

test("a task on beta: its turns are recorded in beta's clone, listed and restored from alpha by beta", async (t) => {
  const team = await startTeam(t, { hosts: ['alpha', 'beta'], files: TEAM_FILES, config: () => ({ agents: TEAM_AGENTS }) });
  const [a, b] = team.hosts as [any, any];
  const A = (m: string, p: string, body?: unknown) => a.daemon.socket(m, p, body === undefined ? {} : { body });
  const made = await A('POST', '/api/tasks', { project_id: b.project.id, name: 'turns' });
  assert.equal(made.status, 201, made.text);
  const task = made.json;
  const wt = path.join(b.clone, task.worktree_path);

  const started = await A('POST', `/api/tasks/${task.id}/sessions`, { prompt: 'write:README.md=changed' });
  assert.equal(started.status, 201, started.text);
  await waitSessionEnd(b.daemon, started.json.id);
  const ended = (await A('GET', `/api/sessions/${started.json.id}`)).json;
  assert.deepEqual(ended.turn, { n: 1, commit: git(b.clone, 'rev-parse', `refs/grove/turns/${task.id}/1`) });
  assert.equal(git(a.clone, 'for-each-ref', 'refs/grove/turns/'), '', "nothing in alpha's clone");

  const turns = await A('GET', `/api/tasks/${task.id}/turns`);
  assert.equal(turns.status, 200, turns.text);
  assert.deepEqual(turns.json.map((x: any) => [x.n, x.session_id]), [[1, started.json.id]]);

  git(wt, 'checkout', '--', 'README.md');
  const restored = await A('POST', `/api/tasks/${task.id}/restore`, { turn: 1 });
  assert.equal(restored.status, 200, restored.text);
  assert.equal(restored.json.saved.n, 2);
  assert.equal(readFileSync(path.join(wt, 'README.md'), 'utf8'), 'changed\n');
});
