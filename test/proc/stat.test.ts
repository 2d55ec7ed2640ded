import assert from 'node:assert/strict';
import test from 'node:test';
import { isSameProcessAlive, processStartTime, processTable } from '../../daemon/proc/stat.ts';

test('the process table names each process with its parent, group and a start time that stays the same', () => {
  const me = processTable().find((p) => p.pid === process.pid);
  assert.ok(me, 'this process is listed');
  assert.equal(me.ppid, process.ppid);
  assert.equal(me.start, processStartTime(process.pid));
  assert.equal(isSameProcessAlive(process.pid, me.start), true);
  assert.equal(isSameProcessAlive(process.pid, `${me.start}0`), false, 'another start time is another process');
  assert.equal(processStartTime(0), null);
  assert.equal(processStartTime(2 ** 22 + 1), null, 'no such pid');
});
