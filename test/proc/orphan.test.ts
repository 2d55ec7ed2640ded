import assert from 'node:assert/strict';
import test from 'node:test';
import { groupMembers } from '../../daemon/proc/group.ts';
import { stopOrphanGroup } from '../../daemon/proc/orphan.ts';
import { processStartTime } from '../../daemon/proc/stat.ts';
import { shellGroup as group } from '../helpers/group.ts';

test('orphan group: a leader with its recorded start time is ours, and its whole group is stopped', async (t) => {
  const g = await group(t, 'sleep 300 & echo up; wait');
  assert.equal(groupMembers(g.pgid).length, 2);
  await stopOrphanGroup(g.pgid, g.start!);
  assert.deepEqual(groupMembers(g.pgid), []);
});

test('orphan group: a pid whose start time is not the recorded one is another process, left alone', async (t) => {
  const g = await group(t, 'echo up; exec sleep 300');
  await stopOrphanGroup(g.pgid, `${g.start}1`);
  await stopOrphanGroup(g.pgid, null);
  await stopOrphanGroup(null, g.start!);
  assert.deepEqual(groupMembers(g.pgid), [g.pgid], 'still running');
});

test('orphan group: a leader gone whose group still has members is ours too (the kernel keeps the pid)', async (t) => {
  // The leader exits at once; the sleep it started stays in its group.
  const g = await group(t, 'sleep 300 & echo $!');
  await g.exited;
  const member = Number(g.firstLine);
  assert.deepEqual(groupMembers(g.pgid), [member]);
  await stopOrphanGroup(g.pgid, g.start!);
  assert.deepEqual(groupMembers(g.pgid), []);
  assert.equal(processStartTime(member), null);
});
