import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { processStartTime } from '../../daemon/proc/stat.ts';
import { ROOT, startDaemon } from '../helpers/daemon.ts';
import { makeTempDir } from '../helpers/git.ts';
import { endLeaks, homeProcesses } from '../helpers/leaks.ts';
import { agentHome, liveGroupMembers, readyTaskOn } from '../helpers/sessions.ts';

// A zombie is not alive: a killed wrapper whose spawner has gone is reaped by init, a moment later.
const alive = (pid: number): boolean => processStartTime(pid) !== null;

// The guard as a test file meets it: test/fixtures/leaky.ts run by node --test, its session left
// running or ended.
function runLeaky(t: test.TestContext, leak: boolean): { status: number | null; out: string; pid: number } {
  const pidFile = path.join(makeTempDir(t), 'pid');
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', 'test/fixtures/leaky.ts'], {
    cwd: ROOT,
    // without the runner's NODE_TEST_CONTEXT, which would make it report to this process's runner
    env: { ...process.env, NODE_TEST_CONTEXT: undefined, LEAK: leak ? '1' : '0', PID_FILE: pidFile },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, out: r.stdout + r.stderr, pid: Number(readFileSync(pidFile, 'utf8')) };
}

test('a session left running fails its file, named, and is killed', (t) => {
  const r = runLeaky(t, true);
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /processes left running by the tests of test\/fixtures\/leaky\.ts/);
  assert.match(r.out, new RegExp(`pid ${r.pid} \\(group ${r.pid}, home [^)]* of "a session"\\): sh -c … grove-session \\S+/data/sessions/leaky/exit \\S+agent\\.sh sleep:300`));
  assert.equal(alive(r.pid), false);
  assert.deepEqual(liveGroupMembers(r.pid), []);
});

test('a session ended by its test passes', (t) => {
  const r = runLeaky(t, false);
  assert.equal(r.status, 0, r.out);
  assert.doesNotMatch(r.out, /left running/);
});

// Through a real daemon: a session it started outlives it (by design) and is found by its home;
// one killed through the API before the daemon stops leaves nothing.
test('a daemon\'s session outliving it is found and killed; one killed through the API is not', async (t) => {
  const home = agentHome(t);
  const d = await startDaemon(t, { home });
  const { task } = await readyTaskOn(d, t);
  const kept = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'sleep:300' } })).json;
  const ended = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'sleep:300' } })).json;
  for (const s of [kept, ended]) await d.waitForLog((l) => l.msg === 'session running' && l.session === s.id);
  assert.equal((await d.socket('DELETE', `/api/sessions/${ended.id}`)).status, 200);
  await d.stop();
  const found = homeProcesses([home]);
  assert.ok(found.some((p) => p.pid === kept.pid && p.cmdline.includes(`${home}/data/sessions/${kept.id}/exit`)), JSON.stringify(found));
  assert.ok(found.every((p) => p.pgid === kept.pid), JSON.stringify(found)); // nothing of the ended one, nor the store
  const leaked = await endLeaks([home]);
  assert.ok(leaked.some((p) => p.pid === kept.pid));
  assert.deepEqual(liveGroupMembers(kept.pid), []);
  assert.deepEqual(homeProcesses([home]), []);
});
