// A team's day in one go (issue 29's "Must show"): three hosts on one PostgreSQL; a task placed
// on a named host from another; a session started from alpha on beta's task, followed from alpha
// line by line while it prints, then another killed from alpha; review and merge through alpha;
// gamma sees it all on its event stream. Nothing answers 5xx and no daemon logs an error.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { allLines, readSse, waitSessionEnd } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';
import { startTeam, TEAM_AGENTS, TEAM_FILES } from '../helpers/team.ts';

test("a team's day: placed on beta from alpha, followed live from alpha, killed from alpha, merged through alpha; gamma sees every event; 0 × 5xx", async (t) => {
  const team = await startTeam(t, { hosts: ['alpha', 'beta', 'gamma'], files: TEAM_FILES, config: () => ({ agents: TEAM_AGENTS }) });
  const [a, b, g] = team.hosts as [any, any, any];
  const statuses: number[] = [];
  const A = async (m: string, p: string, body?: unknown) => {
    const r = await a.daemon.socket(m, p, body === undefined ? {} : { body });
    statuses.push(r.status);
    return r;
  };
  const from = (await g.daemon.socket('GET', '/api/health')).json.last_event_seq;

  // Placed by repository on the named host, from alpha.
  const placed = await A('POST', '/api/tasks', { repository: team.repository, name: 'day work', host: 'beta' });
  assert.equal(placed.status, 201, placed.text);
  const task = placed.json;
  assert.equal(task.host_id, b.project.host_id);

  // Started from alpha, printing 10 lines a second on beta; alpha follows it as it prints.
  const started = await A('POST', `/api/tasks/${task.id}/sessions`, { prompt: 'steady:3' });
  assert.equal(started.status, 201, started.text);
  const session = started.json;
  let firstLineWhileRunning = false;
  const followed = await readSse(`http://localhost/api/sessions/${session.id}/output`, {
    socketPath: a.daemon.socketPath,
    until: (events) => {
      if (events.length === 1 && events[0]!.event === 'line') {
        // The first line reached alpha before beta's session ended: followed live, not after.
        void b.daemon.socket('GET', `/api/sessions/${session.id}`).then((r: any) => (firstLineWhileRunning = r.json.status === 'running'));
      }
      return events.at(-1)?.event === 'end';
    },
  });
  const lines = followed.filter((e) => e.event === 'line').map((e) => e.data);
  // The fixture's first line is its session id (echo:{session}), then 30 numbered lines.
  assert.deepEqual(lines.map((l) => l.seq), Array.from({ length: 31 }, (_, i) => i + 1));
  assert.deepEqual(lines.slice(1).map((l) => l.text.trim()), Array.from({ length: 30 }, (_, i) => `line ${i + 1}`));
  assert.equal(followed.at(-1)!.data.status, 'exited');
  await until(async () => firstLineWhileRunning, 'the first line followed while the session ran');
  assert.deepEqual((await allLines(b.daemon, session.id)).map((l) => l.seq), lines.map((l) => l.seq), "beta's pages hold the same lines");

  // Another turn, killed from alpha while it runs on beta.
  const turn = await A('POST', `/api/sessions/${session.id}/messages`, { prompt: 'sleep:60' });
  assert.equal(turn.status, 201, turn.text);
  await until(async () => (await A('GET', `/api/sessions/${turn.json.id}`)).json.status === 'running', 'the turn running');
  const killed = await A('DELETE', `/api/sessions/${turn.json.id}`);
  assert.equal(killed.status, 200, killed.text);
  assert.equal((await waitSessionEnd(b.daemon, turn.json.id)).status, 'killed');

  // Reviewed and merged through alpha: beta's worktree, beta's checkout.
  writeFileSync(path.join(b.clone, task.worktree_path, 'day.txt'), 'done\n');
  const committed = await A('POST', `/api/tasks/${task.id}/commit`, { message: 'The day' });
  assert.equal(committed.status, 201, committed.text);
  const changes = await A('GET', `/api/tasks/${task.id}/changes`);
  assert.equal(changes.status, 200, changes.text);
  const merged = await A('POST', `/api/tasks/${task.id}/merge`, {});
  assert.equal(merged.status, 200, merged.text);
  assert.equal(readFileSync(path.join(b.clone, 'day.txt'), 'utf8'), 'done\n', "beta's checkout moved with the merge");

  // Gamma, which took no part, saw every step on its own event stream, in seq order.
  const seen = await readSse(`http://localhost/api/events?after=${from}&task_id=${task.id}`, {
    socketPath: g.daemon.socketPath,
    until: (events) => events.some((e) => e.event === 'task.merged'),
  });
  const types = seen.map((e) => e.event);
  for (const type of ['task.created', 'session.status', 'task.merged']) assert.ok(types.includes(type), `gamma saw ${type}: ${types.join(', ')}`);
  const seqs = seen.map((e) => Number(e.id));
  assert.deepEqual(seqs, [...seqs].sort((x, y) => x - y));
  assert.ok(seen.every((e) => e.data.host_id === b.project.host_id), 'each event says it happened on beta');

  assert.deepEqual(statuses.filter((s) => s >= 500), [], 'no 5xx');
  for (const h of team.hosts) {
    const errors = h.daemon.logs.filter((l: any) => typeof l === 'object' && l?.level >= 50);
    assert.deepEqual(errors, [], `no error-level line on ${h.name}`);
  }
});
