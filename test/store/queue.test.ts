// The merge queue's table (daemon/store/queue.ts) alone on a real store: positions per project
// and base, a task queued once, one claim per waiting entry, landed, failed (out, or fixing and
// then back at the end), each change with its event, and what a restart resets.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import test, { after, type TestContext } from 'node:test';
import { queueTable } from '../../daemon/store/queue.ts';
import { addTask, openTestStore } from '../helpers/store.ts';

const s = await openTestStore(after);
const queue = queueTable(s.store.db, s.events);

// A project with `n` ready tasks.
async function tasksOfOneProject(t: TestContext, n: number): Promise<{ project: string; ids: string[] }> {
  const first = await addTask(t, s);
  const ids = [first.id];
  for (let i = 1; i < n; i++) {
    const id = randomUUID();
    await s.store.db.query(
      `INSERT INTO tasks (id, project_id, name, branch, worktree_path, base, base_commit, status, host_id) VALUES ($1, $2, $3, $4, $5, 'main', 'HEAD', 'ready', $6)`,
      [id, first.project_id, `job${i}`, `grove/job${i}`, `.grove/worktrees/job${i}/`, first.host_id],
    );
    ids.push(id);
  }
  return { project: first.project_id, ids };
}
const add = (project: string, task: string, base = 'main', fix = false) => queue.add({ task_id: task, project_id: project, base, strategy: 'squash', fix });
const eventsOf = async (project: string, after: number) => (await s.events.page({ project_id: project }, after, 100)).map((e) => [e.type, e.task_id, (e.data as any).state]);

test('add: positions count per project and base; a task is queued once, whatever races; remove takes out all but a landing entry', async (t) => {
  const { project, ids } = await tasksOfOneProject(t, 4);
  const [a, b, c, d] = ids as [string, string, string, string];
  const seq = await s.events.lastSeq();
  const first = (await add(project, a))!;
  assert.deepEqual([first.position, first.state, first.tries, first.base, first.strategy], [1, 'waiting', 0, 'main', 'squash']);
  assert.equal((await add(project, b))!.position, 2);
  assert.equal((await add(project, c, 'release'))!.position, 1, 'another base is another queue');
  const twice = await Promise.all([add(project, d), add(project, d)]);
  assert.deepEqual(twice.map((x) => x === null).sort(), [false, true], 'queued once');
  assert.deepEqual((await queue.list(project)).map((e) => [e.task_id, e.base, e.position]), [[a, 'main', 1], [b, 'main', 2], [d, 'main', 3], [c, 'release', 1]]);
  assert.deepEqual((await queue.waitingBases(project)).sort(), ['main', 'release']);
  assert.deepEqual(await queue.projectsWaiting([project, randomUUID()]), [project]);

  assert.equal(await queue.remove(b), 'removed');
  assert.equal(await queue.remove(b), null, 'not queued any more');
  assert.equal((await queue.get(d))!.position, 2, 'the ones behind move up');
  const claimed = (await queue.claim(project, 'main'))!;
  assert.equal(claimed.task_id, a);
  assert.equal(await queue.remove(a), 'landing', 'a landing is not taken out');
  assert.ok(await queue.get(a));
  assert.deepEqual(await eventsOf(project, seq), [
    ['queue.added', a, 'waiting'],
    ['queue.added', b, 'waiting'],
    ['queue.added', c, 'waiting'],
    ['queue.added', d, 'waiting'],
    ['queue.removed', b, 'removed'],
    ['queue.landing', a, 'landing'],
  ]);
});

test('claim: the first waiting entry of the queue, once even when asked at once, its tries counted; landed takes it out with the commit', async (t) => {
  const { project, ids } = await tasksOfOneProject(t, 2);
  const [a, b] = ids as [string, string];
  await add(project, a);
  await add(project, b);
  const claims = await Promise.all([queue.claim(project, 'main'), queue.claim(project, 'main'), queue.claim(project, 'main')]);
  assert.deepEqual(claims.map((c) => c?.task_id ?? null).sort(), [a, b, null].sort());
  const ca = claims.find((c) => c?.task_id === a)!;
  assert.deepEqual([ca.state, ca.tries, ca.position], ['landing', 1, 1]);
  assert.equal(await queue.claim(project, 'main'), null, 'none waits');
  assert.deepEqual(await queue.waitingBases(project), []);

  const seq = await s.events.lastSeq();
  await queue.landed(ca, { commit: 'c0ffee', strategy: 'squash' });
  assert.equal(await queue.get(a), null);
  const [ev] = await s.events.page({ task_id: a }, seq, 10);
  assert.deepEqual([ev!.type, (ev!.data as any).state, (ev!.data as any).commit], ['queue.landed', 'landed', 'c0ffee']);
});

test('failed: out of the queue with the reason, or fixing with its session and then back at the end of its queue, once', async (t) => {
  const { project, ids } = await tasksOfOneProject(t, 3);
  const [a, b, c] = ids as [string, string, string];
  for (const id of ids) await add(project, id);
  const seq = await s.events.lastSeq();

  const ea = (await queue.claim(project, 'main'))!;
  await queue.failed(ea, { reason: 'conflict', files: ['x.ts'] }, null);
  assert.equal(await queue.get(a), null, 'out');
  const out = (await s.events.page({ task_id: a }, seq, 10)).find((e) => e.type === 'queue.failed');
  assert.deepEqual([(out!.data as any).state, (out!.data as any).reason, (out!.data as any).files, (out!.data as any).output], ['out', 'conflict', ['x.ts'], null]);

  const eb = (await queue.claim(project, 'main'))!;
  const fix = randomUUID();
  await queue.failed(eb, { reason: 'check failed', output: ['FAIL one', 'FAIL two'] }, fix, 'told the agent');
  const fixing = (await queue.get(b))!;
  assert.deepEqual([fixing.state, fixing.reason, fixing.output, fixing.files, fixing.fix_session], ['fixing', 'check failed', ['FAIL one', 'FAIL two'], null, fix]);
  assert.deepEqual(await queue.fixing([project]), [{ task_id: b, fix_session: fix }]);
  assert.equal(await queue.requeue(b, randomUUID()), null, 'another session’s end does not requeue it');
  const back = (await queue.requeue(b, fix))!;
  assert.deepEqual([back.state, back.fix_session, back.position, back.tries], ['waiting', null, 2, 1], 'behind c, its tries kept');
  assert.equal(await queue.requeue(b, fix), null, 'once');
  assert.equal((await queue.claim(project, 'main'))!.task_id, c);
  assert.deepEqual((await eventsOf(project, seq)).map(([type, task, state]) => [type, task === a ? 'a' : task === b ? 'b' : 'c', state]), [
    ['queue.landing', 'a', 'landing'],
    ['queue.failed', 'a', 'out'],
    ['queue.landing', 'b', 'landing'],
    ['queue.failed', 'b', 'fixing'],
    ['queue.added', 'b', 'waiting'],
    ['queue.landing', 'c', 'landing'],
  ]);
});

test('at start: landings cut short wait again first in their queue, and the checks they ran are handed back; other projects’ stay', async (t) => {
  const mine = await tasksOfOneProject(t, 2);
  const theirs = await tasksOfOneProject(t, 1);
  for (const id of mine.ids) await add(mine.project, id);
  await add(theirs.project, theirs.ids[0]!);
  const landing = (await queue.claim(mine.project, 'main'))!;
  await queue.setCheckPid(landing.task_id, 4242, '12345');
  await queue.claim(theirs.project, 'main');

  assert.deepEqual(await queue.resetLanding([mine.project]), [{ pid: 4242, pid_start: '12345' }]);
  const again = (await queue.get(landing.task_id))!;
  assert.deepEqual([again.state, again.position, again.tries], ['waiting', 1, 1]);
  assert.equal((await queue.get(theirs.ids[0]!))!.state, 'landing', 'another host’s landing is its own');
  assert.deepEqual(await queue.resetLanding([mine.project]), [], 'nothing left to reset');
});
