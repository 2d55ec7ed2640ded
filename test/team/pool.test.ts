// The warm pool on a shared store (DESIGN §16, §14.2): each host keeps the slots of its own
// projects, on its own disk; another host's daemon never makes, drops or hands them out.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { TestDaemon } from '../helpers/daemon.ts';
import { until } from '../helpers/store.ts';
import { startTeam } from '../helpers/team.ts';

const slotsOf = async (d: TestDaemon, projectId: string): Promise<any[]> => (await d.socket('GET', `/api/projects/${projectId}/pool`)).json.slots;

test('two hosts with a pool each: one slot per project, made by its own host in its own clone, kept across the other host’s restart', async (t) => {
  const grove = { setup: ['echo "$GROVE_TASK_ID" > setup-ran.txt'], pool: { size: 1 } };
  const team = await startTeam(t, { hosts: ['alpha', 'beta'], files: { 'README.md': '# team\n', '.grove.json': JSON.stringify(grove) } });
  const [a, b] = team.hosts;
  const ready = async (h: typeof a) =>
    until(async () => {
      const slots = await slotsOf(h!.daemon, h!.project.id);
      return slots.length === 1 && slots[0].status === 'ready' && slots[0];
    }, `${h!.name}'s slot ready`, 60_000);
  const slotA = await ready(a);
  const slotB = await ready(b);
  assert.ok(existsSync(path.join(a!.clone, '.grove', 'worktrees', `pool-${slotA.id.slice(0, 8)}`)));
  assert.ok(existsSync(path.join(b!.clone, '.grove', 'worktrees', `pool-${slotB.id.slice(0, 8)}`)));

  // beta restarts: its start looks over its own projects' slots only.
  await b!.daemon.stop();
  const b2 = await team.start('beta');
  assert.equal((await ready(b2)).id, slotB.id);
  assert.deepEqual((await slotsOf(b2.daemon, a!.project.id)).map((s) => s.id), [slotA.id]);

  // A claim on alpha takes alpha's slot; alpha refills; beta's is untouched.
  const r = await a!.daemon.socket('POST', '/api/tasks', { body: { project_id: a!.project.id, name: 'on alpha' } });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.id, slotA.id);
  assert.equal(r.json.pooled, true);
  const refill = await ready(a);
  assert.notEqual(refill.id, slotA.id);
  assert.deepEqual((await slotsOf(a!.daemon, b2.project.id)).map((s) => s.id), [slotB.id]);
});
