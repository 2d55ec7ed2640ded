// The owner acts (DESIGN §14.2): a request on another host's resource is written as a command
// row, run by its owner through its own API, and answered with the owner's status and body.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import pg from 'pg';
import { git } from '../helpers/git.ts';
import { AGENT, allLines, gate, waitSessionEnd } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';
import { startTeam, type Team } from '../helpers/team.ts';

// The fixture agent with a pinned session id, so that a follow-up resumes it.
const RESUMABLE = [AGENT, 'echo:{session}', '{prompt}'];
export const TEAM_AGENTS = { fixture: { command: RESUMABLE, resume: RESUMABLE } };
export const TEAM_FILES = { 'README.md': '# team\n', '.grove.json': JSON.stringify({ agent: 'fixture' }) };

// Rows of the team's database, read as the test's own client.
export async function query(t: TestContext, team: Team, sql: string, params: unknown[] = []): Promise<any[]> {
  const c = new pg.Client({ connectionString: team.url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end();
  }
}

const ranHere = (logs: any[]) => logs.filter((l) => l?.msg === 'running a command of another host');

test("from alpha on beta's resources: task, session, follow-up, kill, changes, diff, commit, merge, approval, archive all run on beta, answered with beta's status and body", async (t) => {
  const team = await startTeam(t, { hosts: ['alpha', 'beta'], files: TEAM_FILES, config: () => ({ agents: TEAM_AGENTS }) });
  const [a, b] = team.hosts as [any, any];
  const beta = b.project.host_id;
  const alpha = a.project.host_id;
  const A = (m: string, p: string, body?: unknown) => a.daemon.socket(m, p, body === undefined ? {} : { body });
  const B = (m: string, p: string, body?: unknown) => b.daemon.socket(m, p, body === undefined ? {} : { body });

  // A task on beta's project: its worktree on beta's disk, not alpha's.
  const made = await A('POST', '/api/tasks', { project_id: b.project.id, name: 'remote work' });
  assert.equal(made.status, 201, made.text);
  const task = made.json;
  assert.equal(task.host_id, beta);
  assert.equal(task.status, 'ready');
  assert.ok(existsSync(path.join(b.clone, task.worktree_path)), "the worktree is in beta's clone");
  assert.ok(!existsSync(path.join(a.clone, task.worktree_path)), "and not in alpha's");

  // A session started from alpha runs in beta's worktree, by beta's daemon.
  const started = await A('POST', `/api/tasks/${task.id}/sessions`, { prompt: 'env' });
  assert.equal(started.status, 201, started.text);
  const first = started.json;
  await waitSessionEnd(b.daemon, first.id);
  const lines = (await allLines(a.daemon, first.id)).map((l) => l.text);
  assert.ok(lines.includes(`cwd=${path.join(b.clone, task.worktree_path).replace(/\/$/, '')}`), lines.join('\n'));
  assert.ok(!a.daemon.logs.some((l: any) => l?.msg === 'session ended' && l.session === first.id), 'alpha ran nothing');

  // A follow-up from alpha, held open on a gate; killed from alpha.
  const g = gate(t);
  const follow = await A('POST', `/api/sessions/${first.id}/messages`, { prompt: `wait:${g.path}` });
  assert.equal(follow.status, 201, follow.text);
  assert.equal(follow.json.parent_id, first.id);
  assert.equal(follow.json.host_id, beta);
  await until(async () => (await A('GET', `/api/sessions/${follow.json.id}`)).json.status === 'running', 'the follow-up running');

  // An approval asked on beta (as the agent's bridge does) and answered from alpha.
  const asked = await B('POST', `/api/sessions/${follow.json.id}/approvals`, { key: 'toolu_1', tool: 'Bash', input: { command: 'make', description: 'build' } });
  assert.equal(asked.status, 201, asked.text);
  const decided = await A('POST', `/api/approvals/${asked.json.id}`, { nonce: asked.json.nonce, decision: 'allow' });
  assert.equal(decided.status, 200, decided.text);
  assert.equal(decided.json.status, 'allowed');
  const again = await A('POST', `/api/approvals/${asked.json.id}`, { nonce: asked.json.nonce, decision: 'deny' });
  const againOnB = await B('POST', `/api/approvals/${asked.json.id}`, { nonce: asked.json.nonce, decision: 'deny' });
  assert.equal(again.status, 409);
  assert.equal(again.json.code, 'APPROVAL_DECIDED');
  assert.equal(again.headers['content-type'], 'application/problem+json');
  assert.equal(again.text, againOnB.text, "beta's problem, as beta wrote it");

  // Take-over needs the person's terminal on beta: refused from alpha.
  const takeover = await A('POST', `/api/sessions/${first.id}/takeover`, { pid: process.pid });
  assert.equal(takeover.status, 403, takeover.text);
  assert.equal(takeover.json.code, 'REMOTE_REFUSED');
  assert.match(takeover.json.detail, /beta/);

  const killed = await A('DELETE', `/api/sessions/${follow.json.id}`);
  assert.equal(killed.status, 200, killed.text);
  assert.deepEqual(killed.json, { status: 'killed' });
  assert.equal((await B('GET', `/api/sessions/${follow.json.id}`)).json.status, 'killed');

  // Review from alpha reads beta's worktree: the same answers, byte for byte.
  writeFileSync(path.join(b.clone, task.worktree_path, 'made-on-beta.txt'), 'beta\n');
  for (const p of [`/api/tasks/${task.id}/changes`, `/api/tasks/${task.id}/diff`]) {
    const [fromA, fromB] = [await A('GET', p), await B('GET', p)];
    assert.equal(fromA.status, 200, fromA.text);
    assert.equal(fromA.headers['content-type'], fromB.headers['content-type']);
    assert.equal(fromA.text, fromB.text, p);
  }
  assert.match((await A('GET', `/api/tasks/${task.id}/diff`)).text, /\+beta/);

  const committed = await A('POST', `/api/tasks/${task.id}/commit`, { message: 'from alpha' });
  assert.equal(committed.status, 201, committed.text);
  const nothing = await A('POST', `/api/tasks/${task.id}/commit`, { message: 'again' });
  assert.equal(nothing.status, 409);
  assert.equal(nothing.json.code, 'NOTHING_TO_COMMIT');

  const merged = await A('POST', `/api/tasks/${task.id}/merge`, {});
  assert.equal(merged.status, 200, merged.text);
  assert.equal(git(b.clone, 'rev-parse', 'main'), merged.json.commit, "beta's main moved");
  assert.notEqual(git(a.clone, 'rev-parse', 'main'), merged.json.commit, "alpha's did not");

  const archived = await A('DELETE', `/api/tasks/${task.id}`);
  assert.equal(archived.status, 200, archived.text);
  assert.equal(archived.json.status, 'archived');
  assert.ok(!existsSync(path.join(b.clone, task.worktree_path)), "beta's worktree is gone");

  // Every forwarded request is one command row, run once by beta, answered; alpha ran none.
  const rows = await query(t, team, 'SELECT host_id, from_host_id, status, method, path FROM commands ORDER BY created_at');
  assert.ok(rows.length >= 12, JSON.stringify(rows));
  for (const r of rows) assert.deepEqual([r.host_id, r.from_host_id, r.status], [beta, alpha, 'done'], JSON.stringify(r));
  assert.equal(ranHere(b.daemon.logs).length, rows.length);
  assert.equal(ranHere(a.daemon.logs).length, 0);
  // Reads the store answers are never forwarded.
  assert.ok(!rows.some((r) => r.method === 'GET' && !/\/(changes|diff)$/.test(r.path)), JSON.stringify(rows));
  for (const d of [a.daemon, b.daemon]) assert.deepEqual(d.logs.filter((l: any) => l?.level >= 50), []);
});
