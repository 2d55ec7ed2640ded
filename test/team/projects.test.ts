// Projects are per host (DESIGN §14.2): teammates' clones may share a folder name, even a path.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { startTeam } from '../helpers/team.ts';

test('two hosts whose clones are both called app: each has its project app, listed by both, each with its tasks', async (t) => {
  const team = await startTeam(t, { hosts: ['alpha', 'beta'], clone: (name) => path.join(name, 'app') });
  const [a, b] = team.hosts;
  assert.equal(a!.project.name, 'app');
  assert.equal(b!.project.name, 'app', "alpha's app does not rename beta's");
  assert.notEqual(a!.project.host_id, b!.project.host_id);
  for (const h of team.hosts) {
    const apps = (await h.daemon.socket('GET', '/api/projects')).json.filter((p: any) => p.name === 'app');
    assert.deepEqual(apps.map((p: any) => p.id).sort(), [a!.project.id, b!.project.id].sort(), `listed on ${h.name}`);
  }

  // The same task name in each host's app: task names are per project.
  for (const h of team.hosts) {
    const r = await h.daemon.socket('POST', '/api/tasks', { body: { project_id: h.project.id, name: 'fix login' } });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.branch, 'grove/fix-login');
  }

  // Still one of each per host: the same folder again, or another folder under a taken name.
  const again = await a!.daemon.socket('POST', '/api/projects', { body: { path: a!.clone } });
  assert.equal(again.status, 409, again.text);
  assert.equal(again.json.code, 'PROJECT_EXISTS');
  const named = await b!.daemon.socket('POST', '/api/projects', { body: { path: a!.clone, name: 'app' } });
  assert.equal(named.status, 409, named.text);
  assert.equal(named.json.code, 'PROJECT_EXISTS');
  // A folder at the path another host's project has is this host's own folder (on its own disk).
  const samePath = await b!.daemon.socket('POST', '/api/projects', { body: { path: a!.clone, name: 'other' } });
  assert.equal(samePath.status, 201, samePath.text);
  assert.equal(samePath.json.path, a!.project.path);
});
