// The setup log (daemon/store/setup-log.ts) alone on a real store: commands in idx order with
// their ends, lines numbered from the seq given and read after a cursor, appends at once, setup
// and teardown kept apart, and start-up recovery ending the commands a stopped daemon left, on its
// own host only.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import test, { after } from 'node:test';
import type { TaskStatus } from '../../schemas/task.ts';
import { projectsTable } from '../../daemon/store/projects.ts';
import { setupLogTable, type LineInput } from '../../daemon/store/setup-log.ts';
import { tasksTable } from '../../daemon/store/tasks.ts';
import { withPresence } from '../../daemon/tasks/read.ts';
import { makeTempDir } from '../helpers/git.ts';
import { openTestStore, TEST_HOST_ID } from '../helpers/store.ts';

const OTHER_HOST = '00000000-0000-4000-8000-000000000002';
const s = await openTestStore(after);
const tasks = tasksTable(s.store.db, s.events, withPresence);
const projects = projectsTable(s.store.db, s.events);
const setupLog = setupLogTable(s.store.db);
const teardownLog = setupLogTable(s.store.db, 'teardown');

// A task in `status` (the rows the log's foreign keys need), in a project of its own on `hostId`.
async function task(t: test.TestContext, status: TaskStatus = 'setting_up', hostId = TEST_HOST_ID): Promise<string> {
  const project = await projects.insert({ id: randomUUID(), name: `p-${randomUUID().slice(0, 8)}`, path: makeTempDir(t), host_id: hostId, repository: null });
  const id = randomUUID();
  await tasks.insert({ id, project_id: project.id, name: 'job', branch: 'grove/job', worktree_path: '.grove/worktrees/job/', base: 'main', base_commit: 'abc', status }, {});
  return id;
}

// `n` lines a second apart from `from`, texts `${prefix}${i}`.
const at = (ms: number) => new Date(Date.UTC(2026, 10, 27, 10, 0, 0, ms)).toISOString();
const lines = (n: number, prefix: string, stream: LineInput['stream'] = 'stdout'): LineInput[] =>
  Array.from({ length: n }, (_, i) => ({ stream, text: `${prefix}${i}`, at: at(i * 1000 + 1) }));
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

test('commands: each as started, spawned and ended, in idx order whatever order they were stored in; one not ended has no exit yet', async (t) => {
  const id = await task(t);
  await setupLog.commandStarted(id, 2, 'sleep 100', at(3000));
  await setupLog.commandStarted(id, 0, 'npm ci', at(1000));
  await setupLog.commandSpawned(id, 0, 4242, '12345');
  await setupLog.commandEnded(id, 0, { exit_code: 0, signal: null, timed_out: false, ended_at: at(1500) });
  await setupLog.commandStarted(id, 1, 'npm run build', at(2000));
  await setupLog.commandEnded(id, 2, { exit_code: null, signal: 'SIGKILL', timed_out: true, ended_at: at(3500) });
  await setupLog.commandEnded(id, 1, { exit_code: 2, signal: null, timed_out: false, ended_at: at(2500) });
  await setupLog.commandStarted(id, 3, 'echo last', at(4000));

  const ended = { signal: null, timed_out: false, interrupted: false };
  assert.deepEqual(await setupLog.commands(id), [
    { command: 'npm ci', exit_code: 0, ...ended, started_at: at(1000), ended_at: at(1500) },
    { command: 'npm run build', exit_code: 2, ...ended, started_at: at(2000), ended_at: at(2500) },
    { command: 'sleep 100', exit_code: null, signal: 'SIGKILL', timed_out: true, interrupted: false, started_at: at(3000), ended_at: at(3500) },
    { command: 'echo last', exit_code: null, ...ended, started_at: at(4000), ended_at: null },
  ]);
  assert.deepEqual(await setupLog.commands(await task(t)), [], 'a task without commands');
  assert.deepEqual(await setupLog.commands(randomUUID()), [], 'no such task');
  await assert.rejects(setupLog.commandStarted(id, 1, 'again', at(5000)), (err: any) => err.code === '23505', 'one command per idx');
  await assert.rejects(setupLog.commandStarted(randomUUID(), 0, 'x', at(0)), (err: any) => err.code === '23503', 'a log belongs to a task');
});

test('appendLines numbers lines from firstSeq on and keeps each text as printed; lines and linesWithCommand read after a seq in order; lastSeq is 0 before any line', async (t) => {
  const id = await task(t);
  assert.equal(await setupLog.lastSeq(id), 0);
  assert.deepEqual(await setupLog.lines(id), []);
  await setupLog.appendLines(id, 1, [], 0);
  assert.equal(await setupLog.lastSeq(id), 0, 'no lines, nothing stored');

  // What a setup may print, arrays' own syntax and SQL's words included.
  const texts = ['', 'NULL', 'null', 'a, b', '{braces}', '"quoted"', 'back\\slash', '\ttab and trailing space ', 'ünïcødé ✓', "it's"];
  await setupLog.appendLines(id, 1, [{ stream: 'stdout', text: 'copied 2 files', at: at(0) }], -1);
  await setupLog.appendLines(id, 2, texts.map((text, i) => ({ stream: i % 2 ? 'stderr' : 'stdout', text, at: at(i + 1) })), 0);
  await setupLog.appendLines(id, 12, lines(2, 'build '), 1);

  const all = await setupLog.lines(id);
  assert.deepEqual(all.map((l) => l.seq), range(1, 13));
  assert.deepEqual(all.map((l) => l.text), ['copied 2 files', ...texts, 'build 0', 'build 1']);
  assert.deepEqual(all.slice(1, 11).map((l) => [l.stream, l.at]), texts.map((_, i) => [i % 2 ? 'stderr' : 'stdout', at(i + 1)]));
  assert.deepEqual((await setupLog.linesWithCommand(id, 0)).map((l) => l.idx), [-1, ...texts.map(() => 0), 1, 1]);
  assert.deepEqual((await setupLog.linesWithCommand(id, 0)).map((l) => l.line), all);
  assert.deepEqual(await setupLog.lines(id, 10), all.slice(10));
  assert.deepEqual((await setupLog.linesWithCommand(id, 11)).map((l) => [l.line.seq, l.idx]), [[12, 1], [13, 1]]);
  assert.equal(await setupLog.lastSeq(id), 13);
  assert.deepEqual(await setupLog.lines(id, 13), []);
  assert.deepEqual(await setupLog.lines(await task(t)), [], "another task's log is its own");
});

test('appends at once: disjoint ranges of several tasks store every line once with no gap or duplicate; a range over stored lines is refused whole', async (t) => {
  const ids = [await task(t), await task(t), await task(t)];
  // Ten appends of three lines per task, all at once, the later ranges asked first.
  await Promise.all(ids.flatMap((id) => range(0, 10).reverse().map((i) => setupLog.appendLines(id, 1 + 3 * i, lines(3, `${i}.`), i))));
  for (const id of ids) {
    const got = await setupLog.linesWithCommand(id, 0);
    assert.deepEqual(got.map((l) => l.line.seq), range(1, 30));
    assert.deepEqual(got.map((l) => l.line.text), range(0, 10).flatMap((i) => [`${i}.0`, `${i}.1`, `${i}.2`]));
    assert.deepEqual(got.map((l) => l.idx), range(0, 10).flatMap((i) => [i, i, i]));
    assert.equal(await setupLog.lastSeq(id), 30);
  }
  await assert.rejects(setupLog.appendLines(ids[0]!, 30, lines(2, 'late '), 10), (err: any) => err.code === '23505');
  assert.equal(await setupLog.lastSeq(ids[0]!), 30, 'not even the line after the stored ones');
  await assert.rejects(setupLog.appendLines(randomUUID(), 1, lines(1, 'x'), 0), (err: any) => err.code === '23503', 'a log belongs to a task');
});

test("a task's setup and teardown logs are apart: each its own commands and seqs from 1; an end or a spawn in one leaves the other alone", async (t) => {
  const id = await task(t);
  assert.deepEqual([setupLog.phase, teardownLog.phase], ['setup', 'teardown']);
  await setupLog.commandStarted(id, 0, 'make', at(0));
  await setupLog.appendLines(id, 1, lines(2, 'setup '), 0);
  await teardownLog.commandStarted(id, 0, 'make clean', at(5000));
  await teardownLog.commandSpawned(id, 0, 99, null);
  await teardownLog.commandEnded(id, 0, { exit_code: 3, signal: null, timed_out: false, ended_at: at(6000) });
  await teardownLog.appendLines(id, 1, lines(3, 'teardown '), 0);

  assert.deepEqual((await setupLog.commands(id)).map((c) => [c.command, c.exit_code, c.ended_at]), [['make', null, null]], "the teardown's end is not the setup's");
  assert.deepEqual((await teardownLog.commands(id)).map((c) => [c.command, c.exit_code, c.ended_at]), [['make clean', 3, at(6000)]]);
  assert.deepEqual((await setupLog.lines(id)).map((l) => [l.seq, l.text]), [[1, 'setup 0'], [2, 'setup 1']]);
  assert.deepEqual((await teardownLog.lines(id)).map((l) => [l.seq, l.text]), [[1, 'teardown 0'], [2, 'teardown 1'], [3, 'teardown 2']]);
  assert.deepEqual([await setupLog.lastSeq(id), await teardownLog.lastSeq(id)], [2, 3]);
  assert.deepEqual((await teardownLog.linesWithCommand(id, 2)).map((l) => l.line.text), ['teardown 2']);
  // The pid spawned for the teardown's command 0 is not the setup's command 0's.
  assert.deepEqual((await setupLog.endInterrupted(TEST_HOST_ID)).filter((r) => r.task_id === id), [{ task_id: id, pid: null, pid_start: null }]);
});

test("setup's endInterrupted: this host's tasks still setting up have their commands not ended marked interrupted and returned with their pids, and a line after the last says why; nothing else changes", async (t) => {
  const mine = await task(t);
  await setupLog.commandStarted(mine, 0, 'npm ci', at(0));
  await setupLog.commandEnded(mine, 0, { exit_code: 0, signal: null, timed_out: false, ended_at: at(1000) });
  await setupLog.commandStarted(mine, 1, 'npm run build', at(2000));
  await setupLog.commandSpawned(mine, 1, 4242, '98765');
  await setupLog.appendLines(mine, 1, lines(2, 'out '), 1);
  await teardownLog.commandStarted(mine, 0, 'make clean', at(0));
  // Setting up, but no command had started (it had copied files).
  const quiet = await task(t);
  // Started, not yet spawned: no pid.
  const unspawned = await task(t);
  await setupLog.commandStarted(unspawned, 0, 'make', at(0));
  // Not setting up, or on another host: not this recovery's.
  const ready = await task(t, 'ready');
  await setupLog.commandStarted(ready, 0, 'make', at(0));
  const theirs = await task(t, 'setting_up', OTHER_HOST);
  await setupLog.commandStarted(theirs, 0, 'make', at(0));
  await setupLog.commandSpawned(theirs, 0, 7, 'x');

  const before = Date.now();
  const ended = await setupLog.endInterrupted(TEST_HOST_ID);
  const ours = new Set([mine, quiet, unspawned, ready, theirs]);
  assert.deepEqual(
    ended.filter((r) => ours.has(r.task_id)).sort((a, b) => (a.task_id < b.task_id ? -1 : 1)),
    [
      { task_id: mine, pid: 4242, pid_start: '98765' },
      { task_id: unspawned, pid: null, pid_start: null },
    ].sort((a, b) => (a.task_id < b.task_id ? -1 : 1)),
  );

  const [done, cut] = await setupLog.commands(mine);
  assert.deepEqual([done!.exit_code, done!.interrupted, done!.ended_at], [0, false, at(1000)], 'an ended command keeps its end');
  assert.deepEqual([cut!.exit_code, cut!.interrupted], [null, true]);
  assert.ok(Date.parse(cut!.ended_at!) >= before - 1000, 'ended now');
  const why = 'grove: setup interrupted: the daemon stopped while it ran';
  const last = (await setupLog.linesWithCommand(mine, 0)).at(-1)!;
  assert.deepEqual([last.line.seq, last.line.stream, last.line.text, last.idx], [3, 'stderr', why, 1], 'after the last line, as the last command’s');
  assert.deepEqual((await setupLog.linesWithCommand(quiet, 0)).map((l) => [l.line.seq, l.line.text, l.idx]), [[1, why, null]]);
  assert.deepEqual((await setupLog.linesWithCommand(unspawned, 0)).map((l) => [l.line.seq, l.idx]), [[1, 0]]);

  for (const other of [ready, theirs]) {
    assert.deepEqual((await setupLog.commands(other)).map((c) => [c.ended_at, c.interrupted]), [[null, false]]);
    assert.deepEqual(await setupLog.lines(other), []);
  }
  assert.deepEqual((await teardownLog.commands(mine)).map((c) => [c.ended_at, c.interrupted]), [[null, false]], "the teardown's command is not the setup's");
  assert.deepEqual(await teardownLog.lines(mine), []);
  // Another host's recovery takes its own.
  assert.deepEqual((await setupLog.endInterrupted(OTHER_HOST)).filter((r) => ours.has(r.task_id)), [{ task_id: theirs, pid: 7, pid_start: 'x' }]);
});

test("teardown's endInterrupted: this host's archives under way, not those archived since, have their teardown commands ended as interrupted, with the line", async (t) => {
  const archiving = await task(t, 'ready');
  await tasks.setArchiving(archiving, true);
  await teardownLog.commandStarted(archiving, 0, 'docker compose down', at(0));
  await teardownLog.commandSpawned(archiving, 0, 555, '1');
  await teardownLog.appendLines(archiving, 1, lines(1, 'stopping '), 0);
  const archived = await task(t, 'ready');
  await tasks.setArchiving(archived, true);
  await teardownLog.commandStarted(archived, 0, 'docker compose down', at(0));
  await tasks.archive(archived);
  const notArchiving = await task(t, 'ready');
  await teardownLog.commandStarted(notArchiving, 0, 'make clean', at(0));
  const settingUp = await task(t);
  await setupLog.commandStarted(settingUp, 0, 'make', at(0));

  const ours = new Set([archiving, archived, notArchiving, settingUp]);
  assert.deepEqual((await teardownLog.endInterrupted(TEST_HOST_ID)).filter((r) => ours.has(r.task_id)), [{ task_id: archiving, pid: 555, pid_start: '1' }]);
  assert.deepEqual((await teardownLog.commands(archiving)).map((c) => [c.interrupted, c.ended_at !== null]), [[true, true]]);
  assert.deepEqual((await teardownLog.lines(archiving)).map((l) => [l.seq, l.stream, l.text]), [
    [1, 'stdout', 'stopping 0'],
    [2, 'stderr', 'grove: teardown interrupted: the daemon stopped while it ran'],
  ]);
  for (const other of [archived, notArchiving]) {
    assert.deepEqual((await teardownLog.commands(other)).map((c) => c.interrupted), [false]);
    assert.deepEqual(await teardownLog.lines(other), []);
  }
  assert.deepEqual((await setupLog.commands(settingUp)).map((c) => c.ended_at), [null], "a setup's command is not the teardown's");
});
