// The merge queue's lander (daemon/landing/queue.ts) alone, in this process: the real queue
// table of a test store, review and landing as the daemon wires them (real tasks, git worktrees,
// the worker pool), the session service with the fixer agent (test/fixtures/queue-fixer.mjs),
// checks as real processes. What the routes answer is test/api/queue.test.ts's, through a daemon.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import test, { after, type TestContext } from 'node:test';
import { createMergeQueue, OUTPUT_TAIL } from '../../daemon/landing/queue.ts';
import { queueTable } from '../../daemon/store/queue.ts';
import { git, makeTempDir } from '../helpers/git.ts';
import { commitFile, FIXER_AGENTS } from '../helpers/queue.ts';
import { landingParts } from '../helpers/review.ts';
import { sessionService, until } from '../helpers/store.ts';
import { within } from '../helpers/within.ts';

// One set for the file: each test makes projects and tasks of its own.
const parts = await landingParts({ after });
const s = parts.testStore;
const sessions = sessionService({ after }, s, { agents: FIXER_AGENTS });
const queue = queueTable(s.store.db, s.events);

// A lander as the daemon makes it, closed after the test.
function lander(t: TestContext) {
  const q = createMergeQueue({
    queue,
    read: parts.read,
    getProject: parts.getProject,
    localProjects: parts.localProjects,
    configs: parts.configs,
    review: parts.review,
    pool: parts.pool,
    sessions,
    setupTimeoutS: 60,
    log: parts.log,
  });
  t.after(() => q.close());
  return q;
}

// The queue events of a task, oldest first, as [type, data].
async function queueEvents(taskId: string): Promise<Array<[string, any]>> {
  const events = await s.events.page({ task_id: taskId }, 0, 1000);
  return events.filter((e) => e.type.startsWith('queue.')).map((e) => [e.type, e.data]);
}

// Waits until the task is out of the queue (landed or failed), and answers its last queue event.
async function outOf(taskId: string): Promise<[string, any]> {
  await until(async () => (await queue.get(taskId)) === null, `task ${taskId} out of the queue`, 60_000);
  return (await queueEvents(taskId)).at(-1)!;
}

const subjects = (repo: string) => git(repo, 'log', '--format=%s', 'main').split('\n');

test('entries land one at a time in the order they were queued, each rebased onto the tip the one before left', async (t) => {
  const q = lander(t);
  const a = await parts.task('a');
  const b = await parts.task('b', a.project_id);
  commitFile(a.wt, 'a.txt', 'a\n', 'task a');
  commitFile(b.wt, 'b.txt', 'b\n', 'task b');
  const first = await q.add(a.project_id, { task_id: a.id });
  const second = await q.add(a.project_id, { task_id: b.id });
  assert.deepEqual([first.state, second.position], ['waiting', 2]);
  await assert.rejects(q.add(a.project_id, { task_id: b.id }), (e: any) => e.code === 'ALREADY_QUEUED');

  const [type] = await outOf(b.id);
  assert.equal(type, 'queue.landed');
  assert.equal((await outOf(a.id))[0], 'queue.landed');
  assert.deepEqual(subjects(a.repo), ['task b', 'task a', 'initial']);
  // b landed after a: it was claimed after a's landing ended.
  const seqs = async (id: string) => (await s.events.page({ task_id: id }, 0, 1000)).filter((e) => e.type.startsWith('queue.')).map((e) => [e.type, e.seq] as const);
  const aLanded = (await seqs(a.id)).find(([ty]) => ty === 'queue.landed')![1];
  const bLanding = (await seqs(b.id)).find(([ty]) => ty === 'queue.landing')![1];
  assert.ok(bLanding > aLanded, 'b began landing only once a had landed');
});

test("a failed check takes the entry out with the check's last lines, and the base stays where it was", async (t) => {
  const q = lander(t);
  const check = 'for i in $(seq 1 70); do echo line $i; done; exit 3';
  const project = await parts.project({ check: [check] });
  const a = await parts.task('a', project.id);
  commitFile(a.wt, 'a.txt', 'a\n', 'task a');
  const tip = git(a.repo, 'rev-parse', 'main');
  await q.add(project.id, { task_id: a.id });
  const [type, data] = await outOf(a.id);
  assert.equal(type, 'queue.failed');
  assert.equal(data.state, 'out');
  assert.equal(data.reason, `the check ${JSON.stringify(check)} exited with 3`);
  assert.deepEqual(data.output, Array.from({ length: OUTPUT_TAIL }, (_, i) => `line ${70 - OUTPUT_TAIL + 1 + i}`));
  assert.equal(git(a.repo, 'rev-parse', 'main'), tip);
});

test("with fix, a failed check is sent to the task's conversation; its session's end queues it again, and it lands on its second try", async (t) => {
  const q = lander(t);
  const project = await parts.project({ check: ["test -f fixed.txt || { echo 'FIX: touch fixed.txt'; exit 1; }"] });
  const a = await parts.task('a', project.id);
  commitFile(a.wt, 'a.txt', 'a\n', 'task a');
  const first = await sessions.create(a.id, { agent: 'fixer', prompt: 'hello' });
  await until(async () => !sessions.isBusy(await sessions.get(first.id)), 'the first conversation to end');

  await q.add(project.id, { task_id: a.id, fix: true });
  const [type, data] = await outOf(a.id);
  assert.equal(type, 'queue.landed');
  assert.equal(data.tries, 2);
  const events = await queueEvents(a.id);
  const failed = events.find(([ty]) => ty === 'queue.failed')![1];
  assert.deepEqual([failed.state, failed.output], ['fixing', ['FIX: touch fixed.txt']]);
  assert.ok(failed.fix_session, 'the follow-up session is named');
  assert.deepEqual(subjects(a.repo).slice(0, 2), ['make the check pass', 'task a']);
});

test('fix with no conversation to send to takes the entry out, saying so', async (t) => {
  const q = lander(t);
  const project = await parts.project({ check: ['echo no; exit 1'] });
  const a = await parts.task('a', project.id);
  await q.add(project.id, { task_id: a.id, fix: true });
  const [type, data] = await outOf(a.id);
  assert.deepEqual([type, data.state, data.note], ['queue.failed', 'out', 'the task has no conversation to send a follow-up to']);
});

test('a start puts back what a stop left landing, and lands it; close is one, whenever asked', async (t) => {
  const project = await parts.project();
  const a = await parts.task('a', project.id);
  commitFile(a.wt, 'a.txt', 'a\n', 'task a');
  // As a daemon stopped mid-landing leaves it: claimed, and no lander.
  await queue.add({ task_id: a.id, project_id: project.id, base: a.base, strategy: 'merge', fix: false });
  assert.equal((await queue.claim(project.id, a.base))!.state, 'landing');

  const q = lander(t);
  await q.start();
  const [type, data] = await outOf(a.id);
  assert.deepEqual([type, data.tries], ['queue.landed', 2]);
  assert.deepEqual(subjects(a.repo).slice(0, 1), ['task a']);
  const closing = q.close();
  assert.equal(q.close(), closing, 'every caller waits on the first close');
  await closing;
});

test('close stops a running check and leaves its entry landing, for the next start', async (t) => {
  const started = path.join(makeTempDir(t), 'started');
  const project = await parts.project({ check: [`touch '${started}'; exec sleep 600`] });
  const a = await parts.task('a', project.id);
  const q = lander(t);
  await q.add(project.id, { task_id: a.id });
  await until(() => existsSync(started), 'the check to run', 60_000);
  // A check not stopped would hold the close for its 600 s.
  await within(20_000, 'the close', q.close());
  const entry = await queue.get(a.id);
  assert.deepEqual([entry?.state, (await queueEvents(a.id)).map(([ty]) => ty)], ['landing', ['queue.added', 'queue.landing']]);
  await queue.resetLanding([project.id]);
  assert.equal(await queue.remove(a.id), 'removed');
});
