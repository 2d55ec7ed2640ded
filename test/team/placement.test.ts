// Placement (DESIGN §14.2): POST /api/tasks by repository goes to the online host with a project
// of it and the fewest running sessions (ties by name), or to the host named.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gate, waitSessionEnd } from '../helpers/sessions.ts';
import { query, startTeam, TEAM_AGENTS, TEAM_FILES } from '../helpers/team.ts';

test('by repository: the fewest running sessions (ties by host name), from either host; the host named; refusals with their codes', async (t) => {
  const team = await startTeam(t, { hosts: ['alpha', 'beta'], files: TEAM_FILES, config: () => ({ agents: TEAM_AGENTS }) });
  const [a, b] = team.hosts as [any, any];
  const place = (from: any, body: Record<string, unknown>) => from.daemon.socket('POST', '/api/tasks', { body: { repository: team.repository, ...body } });

  const tie = await place(b, { name: 'tie' });
  assert.equal(tie.status, 201, tie.text);
  assert.equal(tie.json.project_id, a.project.id, 'no sessions anywhere: alpha, by name');
  const g = gate(t);
  const held = await b.daemon.socket('POST', `/api/tasks/${tie.json.id}/sessions`, { body: { prompt: `wait:${g.path}` } });
  assert.equal(held.status, 201, held.text);

  const fewer = await place(a, { name: 'fewer' });
  assert.equal(fewer.status, 201, fewer.text);
  assert.equal(fewer.json.project_id, b.project.id, 'alpha runs one session, beta none');
  assert.equal(fewer.json.host_id, b.project.host_id);
  assert.equal(fewer.json.status, 'ready');

  const named = await place(b, { name: 'named', host: 'alpha' });
  assert.equal(named.status, 201, named.text);
  assert.equal(named.json.project_id, a.project.id);
  // An origin URL as git has it names the same repository as its normalised form.
  const byUrl = await place(a, { name: 'by url', host: 'beta', repository: team.origin });
  assert.equal(byUrl.status, 201, byUrl.text);
  assert.equal(byUrl.json.project_id, b.project.id);

  // A host with no project of it, and one that does not exist.
  await query(team, `INSERT INTO hosts (id, name, version) VALUES ('00000000-0000-4000-8000-00000000aaaa', 'gamma', '1')`);
  for (const [body, code, status] of [
    [{ host: 'gamma' }, 'NOT_FOUND', 404],
    [{ host: 'delta' }, 'NOT_FOUND', 404],
    [{ repository: 'example.com/nobody/has-it' }, 'NOT_FOUND', 404],
    [{ project_id: a.project.id }, 'VALIDATION_FAILED', 400],
    [{ repository: undefined }, 'VALIDATION_FAILED', 400],
  ] as const) {
    const r = await place(a, { name: 'refused', ...body });
    assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
    assert.equal(r.json.code, code);
    assert.equal(r.headers['content-type'], 'application/problem+json');
  }

  // Every host of a repository offline: 503 at once. Beta stopped: everything goes to alpha.
  await query(team, `INSERT INTO hosts (id, name, version, seen_at) VALUES ('00000000-0000-4000-8000-00000000bbbb', 'gone', '1', now() - interval '1 minute')`);
  await query(team, `INSERT INTO projects (id, name, path, host_id, repository) VALUES ('00000000-0000-4000-8000-00000000cccc', 'gone', '/srv/code/gone', '00000000-0000-4000-8000-00000000bbbb', 'example.com/only/gone')`);
  const offline = await place(a, { name: 'nowhere', repository: 'example.com/only/gone' });
  assert.equal(offline.status, 503, offline.text);
  assert.equal(offline.json.code, 'HOST_OFFLINE');
  await b.daemon.stop();
  const left = await place(a, { name: 'left' });
  assert.equal(left.status, 201, left.text);
  assert.equal(left.json.project_id, a.project.id, 'beta is offline, though alpha runs more');
  const toBeta = await place(a, { name: 'to beta', host: 'beta' });
  assert.equal(toBeta.status, 503, toBeta.text);
  assert.equal(toBeta.json.code, 'HOST_OFFLINE');
  // The held session ends here, not in a t.after: those run in the order they were added, so the
  // team's daemons would stop first and the session outlive the test.
  const ended = waitSessionEnd(a.daemon, held.json.id);
  await a.daemon.socket('DELETE', `/api/sessions/${held.json.id}`);
  await ended;
  assert.deepEqual(a.daemon.logs.filter((l: any) => l?.level >= 50), []);
});
