// The approvals table alone (a real store, no daemon): asked once per key, decided once however
// many answer at once, misses told apart, expiry, the session's `waiting`, remembered rules.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';
import { approvalsTable, type NewApproval } from '../../daemon/store/approvals.ts';
import { addTask, openTestStore, type TestStore } from '../helpers/store.ts';

// One store for the file, each test with a task and a session of its own.
const shared: TestStore = await openTestStore(after);

async function setup(t: test.TestContext) {
  const s = shared;
  const task = await addTask(t, s);
  const session = await s.sessions.insert({ id: randomUUID(), task_id: task.id, agent: 'a', command: ['a'], mode: 'edit', prompt: null, conversation_id: randomUUID(), parent_id: null, pid: 1 });
  const table = approvalsTable(s.store.db, s.events);
  const asked = (over: Partial<NewApproval> = {}): NewApproval => ({
    id: randomUUID(),
    session_id: session.id,
    task_id: task.id,
    project_id: task.project_id,
    key: randomUUID(),
    kind: 'tool',
    tool: 'Bash',
    input: { command: 'make' },
    nonce: randomUUID(),
    timeout_s: null,
    allowedBy: null,
    ...over,
  });
  return { s, task, session, table, asked };
}

const allow = { status: 'allowed', reason: null, answer: null, remember: null, rule: null } as const;

test('asked once per (session, key): the second ask finds the first; the session waits while one is pending', async (t) => {
  const { s, session, table, asked } = await setup(t);
  const first = await table.ask(asked({ key: 'toolu_1' }));
  assert.equal(first.created, true);
  assert.equal(first.approval.status, 'pending');
  const again = await table.ask(asked({ key: 'toolu_1', nonce: 'other' }));
  assert.equal(again.created, false);
  assert.equal(again.approval.id, first.approval.id);
  assert.equal(again.approval.nonce, first.approval.nonce);
  assert.equal((await s.sessions.get(session.id))!.waiting, 'approval');
  assert.equal((await table.decide(first.approval.id, first.approval.nonce, allow)).ok, true);
  assert.equal((await s.sessions.get(session.id))!.waiting, null);
});

test('ten answers at once: exactly one decides, the others are told decided; a wrong nonce is stale, an unknown id not found', async (t) => {
  const { table, asked } = await setup(t);
  const { approval: a } = await table.ask(asked());
  const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => table.decide(a.id, a.nonce, i % 2 ? allow : { ...allow, status: 'denied', reason: `no ${i}` })));
  assert.equal(outcomes.filter((o) => o.ok).length, 1);
  assert.deepEqual(outcomes.filter((o) => !o.ok).map((o) => !o.ok && o.why), Array(9).fill('decided'));
  const { approval: b } = await table.ask(asked());
  assert.deepEqual(await table.decide(b.id, 'wrong', allow), { ok: false, why: 'stale' });
  assert.equal((await table.get(b.id))!.status, 'pending');
  assert.deepEqual(await table.decide(randomUUID(), 'x', allow), { ok: false, why: 'not_found' });
});

test('a rule allows at once, with its reason and one approval.decided event; a timeout is a stored deadline', async (t) => {
  const { s, table, asked } = await setup(t);
  const from = await s.events.lastSeq();
  const { approval } = await table.ask(asked({ allowedBy: 'Bash(make)' }));
  assert.equal(approval.status, 'allowed');
  assert.equal(approval.reason, 'allowed by the rule Bash(make)');
  assert.ok(approval.decided_at);
  assert.deepEqual((await s.events.page({}, from, 10)).map((e) => e.type), ['approval.decided'], 'its session never waited: no session.waiting');
  const timed = (await table.ask(asked({ timeout_s: 30 }))).approval;
  const ms = Date.parse(timed.expires_at!) - Date.parse(timed.created_at);
  assert.ok(ms >= 29_900 && ms <= 30_100, `deadline ${ms} ms after creation`);
});

test("expired by session: its pending ones, with the reason; decided ones keep their decision; remembered rules by scope", async (t) => {
  const { s, task, session, table, asked } = await setup(t);
  const { approval: done } = await table.ask(asked());
  await table.decide(done.id, done.nonce, { ...allow, remember: 'session', rule: 'Bash(make)' });
  const { approval: open } = await table.ask(asked());
  const expired = await table.expire({ session_id: session.id }, () => 'the session ended');
  assert.deepEqual(expired.map((a) => [a.id, a.status, a.reason]), [[open.id, 'expired', 'the session ended']]);
  assert.deepEqual((await table.get(open.id))!.verdict, { behavior: 'expired', message: 'the session ended' });
  assert.equal((await table.get(done.id))!.status, 'allowed');
  assert.deepEqual(await table.expire({ id: open.id }, () => 'again'), [], 'expired once');
  assert.equal((await s.sessions.get(session.id))!.waiting, null);

  assert.deepEqual(await table.rules(task.project_id, session.id), ['Bash(make)']);
  assert.deepEqual(await table.rules(task.project_id, randomUUID()), [], 'a session rule is that session’s');
  // A follow-up continues the conversation, and with it what was remembered for its session.
  const newSession = (conversation_id: string) => s.sessions.insert({ id: randomUUID(), task_id: task.id, agent: 'a', command: ['a'], mode: 'edit', prompt: null, conversation_id, parent_id: null, pid: 1 });
  const followUp = await newSession(session.conversation_id);
  assert.deepEqual(await table.rules(task.project_id, followUp.id), ['Bash(make)']);
  const another = await newSession(randomUUID());
  assert.deepEqual(await table.rules(task.project_id, another.id), [], 'another conversation in the same task asks');
  const { approval: p } = await table.ask(asked());
  await table.decide(p.id, p.nonce, { ...allow, remember: 'project', rule: 'Edit' });
  assert.deepEqual(await table.rules(task.project_id, randomUUID()), ['Edit']);
  assert.deepEqual(await table.rules(randomUUID(), session.id), []);
});
