// The owner acts (DESIGN §14.2): a request on another host's resource is written as a command
// row, run by its owner through its own API, and answered with the owner's status and body.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { git, makeTempDir } from '../helpers/git.ts';
import { allLines, gate, waitSessionEnd } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';
import { query, startTeam, TEAM_AGENTS, TEAM_FILES } from '../helpers/team.ts';

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
  // The header that marks a command is the owner's own: the TCP front drops it from a client.
  const before = ranHere(b.daemon.logs).length;
  const forged = await a.daemon.tcp('GET', `/api/tasks/${task.id}/changes`, { headers: { 'grove-command': 'forged' } });
  assert.equal(forged.status, 200, forged.text);
  await until(() => ranHere(b.daemon.logs).length === before + 1, 'still forwarded to beta');

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
  const rows = await query(team, 'SELECT host_id, from_host_id, status, method, path FROM commands ORDER BY created_at');
  assert.ok(rows.length >= 12, JSON.stringify(rows));
  for (const r of rows) assert.deepEqual([r.host_id, r.from_host_id, r.status], [beta, alpha, 'done'], JSON.stringify(r));
  assert.equal(ranHere(b.daemon.logs).length, rows.length);
  assert.equal(ranHere(a.daemon.logs).length, 0);
  // Reads the store answers are never forwarded.
  assert.ok(!rows.some((r) => r.method === 'GET' && !/\/(changes|diff)$/.test(r.path)), JSON.stringify(rows));
  for (const d of [a.daemon, b.daemon]) assert.deepEqual(d.logs.filter((l: any) => l?.level >= 50), []);
});

test('accept_remote false: 403 REMOTE_REFUSED at once, no row, nothing run; a command written anyway is refused by the owner', async (t) => {
  const team = await startTeam(t, { hosts: ['alpha', 'beta'], files: TEAM_FILES, config: (name) => ({ agents: TEAM_AGENTS, ...(name === 'beta' ? { accept_remote: false } : {}) }) });
  const [a, b] = team.hosts as [any, any];
  const hosts = (await a.daemon.socket('GET', '/api/hosts')).json;
  assert.deepEqual(hosts.map((h: any) => [h.name, h.accept_remote]), [['alpha', true], ['beta', false]]);

  const refused = await a.daemon.socket('POST', '/api/tasks', { body: { project_id: b.project.id, name: 'not here' } });
  assert.equal(refused.status, 403, refused.text);
  assert.equal(refused.json.code, 'REMOTE_REFUSED');
  assert.equal(refused.headers['content-type'], 'application/problem+json');
  assert.deepEqual(await query(team, 'SELECT id FROM commands'), []);
  assert.deepEqual((await b.daemon.socket('GET', `/api/tasks?project_id=${b.project.id}`)).json, []);

  // As an older grove that does not check would: the row written and notified; beta refuses it.
  const id = '00000000-0000-4000-8000-00000000c0de';
  await query(team, `INSERT INTO commands (id, host_id, from_host_id, method, path, headers, body) VALUES ($1, $2, $3, 'POST', '/api/tasks', $4, $5)`, [
    id,
    b.project.host_id,
    a.project.host_id,
    JSON.stringify({ 'content-type': 'application/json' }),
    JSON.stringify({ project_id: b.project.id, name: 'sneaked' }),
  ]);
  await query(team, `SELECT pg_notify('grove_commands', $1)`, [b.project.host_id]);
  const row = await until(async () => (await query(team, `SELECT * FROM commands WHERE id = $1 AND status = 'done'`, [id]))[0], 'beta answered');
  assert.equal(row.answer_status, 403);
  assert.equal(JSON.parse(Buffer.from(row.answer_body, 'base64').toString()).code, 'REMOTE_REFUSED');
  assert.deepEqual((await b.daemon.socket('GET', `/api/tasks?project_id=${b.project.id}`)).json, []);
  // Its own user is not another host: beta still acts on its own request.
  assert.equal((await b.daemon.socket('POST', '/api/tasks', { body: { project_id: b.project.id, name: 'local' } })).status, 201);
});

test('beta paused (SIGSTOP): 503 HOST_OFFLINE after 10 s, withdrawn; resumed, beta never runs it, and is online again', async (t) => {
  const team = await startTeam(t, { hosts: ['alpha', 'beta'], files: TEAM_FILES, config: () => ({ agents: TEAM_AGENTS }) });
  const [a, b] = team.hosts as [any, any];
  b.daemon.proc.kill('SIGSTOP');
  let paused = true;
  t.after(() => paused && b.daemon.proc.kill('SIGCONT'));
  const sent = Date.now();
  const r = await a.daemon.socket('POST', '/api/tasks', { body: { project_id: b.project.id, name: 'while paused' } });
  const took = Date.now() - sent;
  assert.equal(r.status, 503, r.text);
  assert.equal(r.json.code, 'HOST_OFFLINE');
  assert.match(r.json.detail, /withdrawn and will not run/);
  assert.ok(took >= 9_000 && took < 20_000, `answered after ${took} ms`);
  const [row] = await query(team, 'SELECT status FROM commands');
  assert.equal(row.status, 'withdrawn');
  // Withdrawn untaken: beta is not online, whatever its last heartbeat said.
  const shown = (await a.daemon.socket('GET', '/api/hosts')).json.find((h: any) => h.name === 'beta');
  assert.equal(shown.online, false);
  const atOnce = Date.now();
  const again = await a.daemon.socket('POST', '/api/tasks', { body: { project_id: b.project.id, name: 'while offline' } });
  assert.equal(again.json.code, 'HOST_OFFLINE');
  assert.ok(Date.now() - atOnce < 5_000, 'at once for a host shown offline');
  assert.equal((await query(team, 'SELECT id FROM commands')).length, 1, 'no row for a host shown offline');

  b.daemon.proc.kill('SIGCONT');
  paused = false;
  await until(async () => (await a.daemon.socket('GET', '/api/hosts')).json.find((h: any) => h.name === 'beta').online, 'beta online again', 20_000);
  assert.deepEqual(ranHere(b.daemon.logs), [], 'beta ran nothing');
  assert.deepEqual((await b.daemon.socket('GET', `/api/tasks?project_id=${b.project.id}`)).json, []);
  assert.deepEqual((await query(team, 'SELECT status FROM commands')).map((x) => x.status), ['withdrawn']);
  const later = await a.daemon.socket('POST', '/api/tasks', { body: { project_id: b.project.id, name: 'after' } });
  assert.equal(later.status, 201, later.text);
});

test('beta killed -9 while it runs a command: answered 503 HOST_OFFLINE (it may have run), abandoned at its restart, never run again', async (t) => {
  // Registered first, so it runs before the folder is removed: no setup left waiting.
  t.after(() => writeFileSync(go, ''));
  const dir = makeTempDir(t);
  const ran = path.join(dir, 'ran');
  const go = path.join(dir, 'go');
  // The task's setup: counts its runs, then holds until the test says go.
  const setup = `echo run >> ${ran}; while [ ! -e ${go} ]; do sleep 0.1; done`;
  const files = { ...TEAM_FILES, '.grove.json': JSON.stringify({ agent: 'fixture', setup: [setup] }) };
  const team = await startTeam(t, { hosts: ['alpha', 'beta'], files, config: () => ({ agents: TEAM_AGENTS }) });
  const [a, b] = team.hosts as [any, any];

  const answer = a.daemon.socket('POST', '/api/tasks', { body: { project_id: b.project.id, name: 'killed mid-way' } });
  await until(() => existsSync(ran), 'the setup running on beta', 30_000);
  b.daemon.proc.kill('SIGKILL');
  await b.daemon.exited;
  const r = await answer;
  assert.equal(r.status, 503, r.text);
  assert.equal(r.json.code, 'HOST_OFFLINE');
  assert.match(r.json.detail, /may have run/);
  assert.deepEqual((await query(team, 'SELECT status FROM commands')).map((x) => x.status), ['taken']);

  const back = await team.start('beta', { config: { agents: TEAM_AGENTS } });
  await back.daemon.waitForLog((l) => l.msg === 'commands taken by the last run and never answered are abandoned, not run again');
  assert.deepEqual((await query(team, 'SELECT status FROM commands')).map((x) => x.status), ['abandoned']);
  writeFileSync(go, '');
  // A later command runs: the loop is up; the abandoned one never ran again.
  const later = await a.daemon.socket('GET', `/api/projects/${b.project.id}/conflicts`);
  assert.equal(later.status, 200, later.text);
  assert.equal(readFileSync(ran, 'utf8'), 'run\n', 'the setup ran once');
  assert.deepEqual(ranHere(back.daemon.logs).map((l: any) => l.path), [`/api/projects/${b.project.id}/conflicts`]);
});

test('a host that heartbeats but takes no commands (an older grove, played by the test on the store) is offline once a command to it is withdrawn', async (t) => {
  const team = await startTeam(t, { hosts: ['alpha'], files: TEAM_FILES });
  const [a] = team.hosts as [any];
  const old = '00000000-0000-4000-8000-0000000001d0';
  const project = '00000000-0000-4000-8000-0000000001d1';
  await query(team, `INSERT INTO hosts (id, name, version) VALUES ($1, 'old', '0.1.0')`, [old]);
  await query(team, `INSERT INTO projects (id, name, path, host_id, repository) VALUES ($1, 'old-clone', '/srv/code/old', $2, $3)`, [project, old, team.repository]);
  // Its heartbeat, every second, for as long as the test runs.
  const beat = setInterval(() => void query(team, 'UPDATE hosts SET seen_at = now() WHERE id = $1', [old]).catch(() => {}), 1000);
  t.after(() => clearInterval(beat));
  const online = async () => (await a.daemon.socket('GET', '/api/hosts')).json.find((h: any) => h.id === old).online;
  assert.equal(await online(), true, 'a fresh heartbeat and nothing withdrawn');

  const r = await a.daemon.socket('POST', '/api/tasks', { body: { project_id: project, name: 'never taken' } });
  assert.equal(r.status, 503, r.text);
  assert.equal(r.json.code, 'HOST_OFFLINE');
  const [host] = await query(team, `SELECT seen_at > now() - interval '3 seconds' AS fresh FROM hosts WHERE id = $1`, [old]);
  assert.equal(host.fresh, true, 'its heartbeat is fresh');
  assert.equal(await online(), false);
  const changes = (await a.daemon.socket('GET', '/api/events?limit=1000')).json.events.filter((e: any) => e.type.startsWith('host.') && e.data.id === old);
  assert.deepEqual(changes.map((e: any) => [e.type, e.data.online]), [['host.offline', false]], 'said once, on the team stream');
  const atOnce = await a.daemon.socket('DELETE', `/api/projects/${project}`);
  assert.equal(atOnce.json.code, 'HOST_OFFLINE');
  assert.match(atOnce.json.detail, /offline; nothing was sent/);
});
