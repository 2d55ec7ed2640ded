// One board for a team (DESIGN §14.2): every daemon on the shared store answers for every host.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTeam } from '../helpers/team.ts';

test("two hosts with clones of one origin: each daemon lists both projects, grouped by repository, each on its host", async (t) => {
  const team = await startTeam(t, { hosts: ['alpha', 'beta'] });
  const [a, b] = team.hosts;
  const hosts = (await a!.daemon.socket('GET', '/api/hosts')).json;
  const idOf = (name: string) => hosts.find((h: any) => h.name === name)?.id;
  assert.ok(idOf('alpha') && idOf('beta') && idOf('alpha') !== idOf('beta'));
  for (const h of team.hosts) {
    const list = (await h.daemon.socket('GET', '/api/projects')).json;
    const ours = list.filter((p: any) => p.repository === team.repository);
    assert.deepEqual(ours.map((p: any) => p.host_id).sort(), [idOf('alpha'), idOf('beta')].sort(), `on ${h.name}`);
  }
  assert.equal(a!.project.host_id, idOf('alpha'));
  assert.equal(b!.project.host_id, idOf('beta'));
});
