import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { processStartTime } from '../../daemon/proc/stat.ts';
import { acquireDataLock, LockHeldError } from '../../daemon/runtime/lock.ts';
import { makeTempDir } from '../helpers/git.ts';

// Another daemon, as far as the lock can tell: a live process with its start time.
async function otherProcess(t: test.TestContext): Promise<{ pid: number; start: string }> {
  const child = spawn('sleep', ['300'], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  await once(child, 'spawn');
  return { pid: child.pid!, start: processStartTime(child.pid!)! };
}

// A pid that no longer runs: a process that was started and has ended.
async function deadPid(): Promise<number> {
  const child = spawn('true', { stdio: 'ignore' });
  await once(child, 'exit');
  return child.pid!;
}

const record = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as { pid: number; start_time: string };
const anHourAgo = () => new Date(Date.now() - 3600_000);

test('data lock: taken in a new folder, refused while another live daemon holds it, released by close() once', async (t) => {
  const dir = path.join(makeTempDir(t), 'data');
  const lock = acquireDataLock(dir);
  assert.equal(lock.file, path.join(dir, 'grove.lock'));
  assert.deepEqual(record(lock.file), { pid: process.pid, start_time: processStartTime(process.pid) });
  await lock.close();
  await lock.close();
  assert.equal(existsSync(lock.file), false);

  const other = await otherProcess(t);
  writeFileSync(lock.file, JSON.stringify({ pid: other.pid, start_time: other.start }));
  assert.throws(() => acquireDataLock(dir), (err: unknown) => {
    assert.ok(err instanceof LockHeldError);
    assert.equal(err.pid, other.pid);
    assert.equal(err.message, `another grove daemon (pid ${other.pid}) is using this data folder (lock file ${lock.file})`);
    return true;
  });
  assert.equal(record(lock.file).pid, other.pid, 'the holder keeps its lock');
});

test('data lock: one left by a dead daemon, by a pid now another process, or half-written long ago is taken over', async (t) => {
  const dir = makeTempDir(t);
  const file = path.join(dir, 'grove.lock');
  const other = await otherProcess(t);
  for (const [left, why] of [
    [JSON.stringify({ pid: await deadPid(), start_time: '1' }), 'a dead pid'],
    [JSON.stringify({ pid: other.pid, start_time: `${other.start}0` }), 'a live pid with another start time'],
    ['{"pid": 12', 'a half-written lock'],
  ] as const) {
    writeFileSync(file, left);
    utimesSync(file, anHourAgo(), anHourAgo());
    const lock = acquireDataLock(dir);
    assert.equal(record(file).pid, process.pid, why);
    await lock.close();
  }
});

test('data lock: an empty lock being written right now, or another takeover under way, is refused', async (t) => {
  const dir = makeTempDir(t);
  const file = path.join(dir, 'grove.lock');
  writeFileSync(file, '');
  assert.throws(() => acquireDataLock(dir), { name: 'LockHeldError', message: /another grove daemon \(pid unknown\)/ });

  writeFileSync(file, JSON.stringify({ pid: await deadPid(), start_time: '1' }));
  writeFileSync(`${file}.takeover`, '');
  assert.throws(() => acquireDataLock(dir), { name: 'LockHeldError' }, 'a fresh takeover guard: another daemon is replacing the lock');
  // A guard left by a crash mid-takeover is old: it is cleared and the lock taken over.
  utimesSync(`${file}.takeover`, anHourAgo(), anHourAgo());
  const lock = acquireDataLock(dir);
  assert.equal(record(file).pid, process.pid);
  assert.equal(existsSync(`${file}.takeover`), false);

  // close() removes only its own lock: one another daemon took over stays.
  writeFileSync(file, JSON.stringify({ pid: 1, start_time: 'x' }));
  await lock.close();
  assert.deepEqual(record(file), { pid: 1, start_time: 'x' });
});
