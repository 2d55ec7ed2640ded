// The pull requests' table alone on a real store (daemon/store/pull-requests.ts): one open per task,
// a round at a time, each change with its pr.* event in the same transaction.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import test, { after, type TestContext } from 'node:test';
import { NOTHING_ACTED, pullRequestsTable } from '../../daemon/store/pull-requests.ts';
import type { FeedbackRound } from '../../schemas/pull.ts';
import { addTask, openTestStore } from '../helpers/store.ts';

const s = await openTestStore(after);
const pulls = pullRequestsTable(s.store.db, s.events);
const HOST = randomUUID();

async function opened(t: TestContext, number: number) {
  const task = await addTask(t, s);
  const p = await pulls.open({ task_id: task.id, project_id: task.project_id, host_id: HOST, repository: 'acme/widgets', number, url: `https://github.com/acme/widgets/pull/${number}`, head: task.branch, base: 'main', issue_number: 7, fix_tries: 2 });
  return { task, p: p! };
}

const round = (sessionId: string): FeedbackRound => ({ kind: 'review', source_ids: [1], author: 'bob', at: new Date().toISOString(), session_id: sessionId, pushed_commit: null, outcome: 'pending', error: null });

test('one open pull request per task, with its pr.opened event; one that closed is replaced', async (t) => {
  const seq = await s.events.lastSeq();
  const { task, p } = await opened(t, 1);
  assert.equal(p.state, 'open');
  assert.equal(p.following, true);
  assert.deepEqual(p.acted, NOTHING_ACTED);
  assert.equal(await pulls.open({ ...p, number: 2 }), null, 'a second while one is open');
  const events = await s.events.page({ task_id: task.id }, seq, 100);
  assert.deepEqual(events.map((e) => e.type), ['pr.opened']);
  assert.equal((events[0]!.data as any).number, 1);
  assert.equal((events[0]!.data as any).acted, undefined, 'the API shape');
  assert.equal((await pulls.closed(task.id, 'closed'))?.state, 'closed');
  assert.equal(await pulls.closed(task.id, 'merged'), null, 'closed once');
  const again = await pulls.open({ ...p, number: 3 });
  assert.equal(again?.number, 3);
  assert.equal(again?.state, 'open');
});

test('a round at a time: its session in flight, what it answered acted on, then its end; followed until stopped or closed', async (t) => {
  const { task } = await opened(t, 10);
  const seq = await s.events.lastSeq();
  const sessionId = randomUUID();
  const acted = { ...NOTHING_ACTED, reviews: [1] };
  const one = await pulls.round(task.id, round(sessionId), acted);
  assert.equal(one?.fix_session, sessionId);
  assert.deepEqual(one?.acted.reviews, [1]);
  assert.equal(await pulls.round(task.id, round(randomUUID()), acted), null, 'not while one is in flight');
  assert.equal(await pulls.ended(task.id, randomUUID(), { pushed_commit: 'abc', error: null }), null, "another session's end");
  const ended = await pulls.ended(task.id, sessionId, { pushed_commit: 'abc', error: null });
  assert.equal(ended?.fix_session, null);
  assert.deepEqual([ended?.rounds[0]?.outcome, ended?.rounds[0]?.pushed_commit, ended?.fix_tries_used], ['pushed', 'abc', 1]);
  assert.ok((await pulls.followed(HOST)).some((p) => p.task_id === task.id));
  const stopped = await pulls.stopped(task.id, 'its fix tries are spent');
  assert.equal(stopped?.following, false);
  assert.ok(!(await pulls.followed(HOST)).some((p) => p.task_id === task.id));
  assert.equal(await pulls.round(task.id, round(randomUUID()), acted), null, 'no round once stopped');
  const types = (await s.events.page({ task_id: task.id }, seq, 100)).map((e) => e.type);
  assert.deepEqual(types, ['pr.feedback', 'pr.feedback', 'pr.updated']);
});
