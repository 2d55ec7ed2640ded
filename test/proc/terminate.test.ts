import assert from 'node:assert/strict';
import test from 'node:test';
import { groupMembers, strayDescendants } from '../../daemon/proc/group.ts';
import { processStartTime } from '../../daemon/proc/stat.ts';
import { terminate } from '../../daemon/proc/terminate.ts';
import { shellGroup as group } from '../helpers/group.ts';

test('terminate: TERM reaches the group and a child that left it with setsid; everything is gone when it resolves', async (t) => {
  const { pgid, firstLine } = await group(t, `setsid sh -c 'echo $$; exec sleep 300' & sleep 300 & wait`);
  const stray = Number(firstLine);
  assert.ok(groupMembers(pgid).length >= 2);
  assert.deepEqual(
    strayDescendants(pgid).map((p) => p.pid),
    [stray],
  );
  assert.equal(await terminate(pgid, { graceMs: 2000 }), true);
  assert.deepEqual(groupMembers(pgid), []);
  assert.equal(processStartTime(stray), null, 'the setsid child is gone too');
});

test('terminate: a group that ignores TERM is killed once the grace time is over; graceMs 0 kills at once', async (t) => {
  const stubborn = await group(t, `trap '' TERM; echo up; while :; do sleep 1; done`);
  const t0 = Date.now();
  assert.equal(await terminate(stubborn.pgid, { graceMs: 300 }), true);
  assert.ok(Date.now() - t0 >= 300, 'KILL came only after the grace time');
  assert.deepEqual(groupMembers(stubborn.pgid), []);

  const other = await group(t, `trap '' TERM; echo up; while :; do sleep 1; done`);
  assert.equal(await terminate(other.pgid, { graceMs: 0 }), true);
  assert.deepEqual(groupMembers(other.pgid), []);
});
