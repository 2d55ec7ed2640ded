import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { stopLeftHooks } from '../../daemon/events/hooks.ts';
import { groupMembers } from '../../daemon/proc/group.ts';
import { makeTempDir } from '../helpers/git.ts';
import { shellGroup } from '../helpers/group.ts';
import { memoryLog } from '../helpers/store.ts';

test('left hooks: the groups a killed daemon left running are stopped at start, their records removed, the pids logged', async (t) => {
  const runDir = path.join(makeTempDir(t), 'hooks');
  mkdirSync(runDir);
  // A hook still running, with what it started; a record of one that ended; a stranger whose
  // pid a record names with another start time (the pid was reused).
  const left = await shellGroup(t, 'sleep 300 & echo up; wait');
  const stranger = await shellGroup(t, 'echo up; exec sleep 300');
  const ended = await shellGroup(t, 'echo up');
  await ended.exited;
  writeFileSync(path.join(runDir, String(left.pgid)), left.start!);
  writeFileSync(path.join(runDir, String(ended.pgid)), ended.start ?? '1');
  writeFileSync(path.join(runDir, String(stranger.pgid)), `${stranger.start}1`);
  writeFileSync(path.join(runDir, 'notes'), 'not a record');

  const { log, records } = memoryLog();
  await stopLeftHooks(runDir, log);
  assert.deepEqual(groupMembers(left.pgid), [], 'the hook and its child are gone');
  assert.deepEqual(groupMembers(stranger.pgid), [stranger.pgid], 'the stranger runs on');
  assert.deepEqual(readdirSync(runDir), ['notes']);
  const warned = records.filter((r) => r.level === 40);
  assert.equal(warned.length, 1);
  assert.equal(warned[0].msg, 'stopped hooks left running by a daemon that was killed');
  const byNumber = (a: number, b: number) => a - b;
  assert.deepEqual([...warned[0].pids].sort(byNumber), [left.pgid, ended.pgid, stranger.pgid].sort(byNumber));
});

test('left hooks: no folder or an empty one is nothing to do and nothing logged', async (t) => {
  const { log, records } = memoryLog();
  const dir = makeTempDir(t);
  await stopLeftHooks(path.join(dir, 'never-made'), log);
  await stopLeftHooks(dir, log);
  assert.deepEqual(records, []);
});
