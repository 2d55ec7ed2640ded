// Work that yields the CPU (daemon/proc/priority.ts): a process in a session of its own, lowered,
// has the low nice and so has its session's autogroup; this process keeps its own.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { getPriority } from 'node:os';
import test from 'node:test';
import { LOW_PRIORITY, lowerPriority } from '../../daemon/proc/priority.ts';
import { autogroupNice } from '../helpers/priority.ts';

test('lowered: the process and, on Linux, its session’s autogroup; this process untouched; a process gone is no error', async (t) => {
  const mine = { nice: getPriority(), group: autogroupNice(process.pid) };
  const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  await new Promise((resolve) => child.once('spawn', resolve));
  const pid = child.pid!;
  assert.equal(getPriority(pid), mine.nice);
  lowerPriority(pid);
  assert.equal(getPriority(pid), LOW_PRIORITY);
  if (mine.group !== null) assert.equal(autogroupNice(pid), LOW_PRIORITY, 'its autogroup, made by its setsid');
  assert.equal(getPriority(), mine.nice);
  assert.equal(autogroupNice(process.pid), mine.group);
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  assert.doesNotThrow(() => lowerPriority(pid));
});
