// Dependencies between tasks (daemon/landing/dependencies.ts, DESIGN §17) alone: the real tasks
// table, session service and event bus of a test store; tasks are made as rows (no git) and a
// restack is the function the test gives, recording what it was asked. What a merge and a
// restack do to git is test/api/dependencies.test.ts's, through a daemon.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import test, { after, type TestContext } from 'node:test';
import type { CreateTask } from '../../schemas/task.ts';
import { createDependencies } from '../../daemon/landing/dependencies.ts';
import { tasksTable } from '../../daemon/store/tasks.ts';
import { withPresence } from '../../daemon/tasks/read.ts';
import type { Result } from '../../workers/result.ts';
import { AGENT } from '../helpers/sessions.ts';
import { addTask, memoryLog, openTestStore, sessionService, TEST_HOST_ID, until } from '../helpers/store.ts';

const s = await openTestStore(after);
const tasks = tasksTable(s.store.db, s.events, withPresence);
const agents = { fixture: { command: [AGENT, '{prompt}'] } };

// A ready task of the project, with its worktree folder (sessions run there); its id.
async function taskRow(projectId: string, name: string, base: string): Promise<string> {
  const id = randomUUID();
  const worktree = `.grove/worktrees/${name}/`;
  mkdirSync(path.join((await s.getProject(projectId)).path, worktree), { recursive: true });
  await tasks.insert({ id, project_id: projectId, name, branch: `grove/${name}`, worktree_path: worktree, base, base_commit: 'abc', status: 'ready' }, {});
  return id;
}

function deps(t: TestContext, restack: (id: string, parent: { id: string; branch: string; base: string }) => Promise<'running' | 'settled' | Result<object>> = async () => 'settled') {
  const { log, records } = memoryLog();
  const sessions = sessionService(t, s, { agents });
  const made: CreateTask[] = [];
  const dependencies = createDependencies({
    tasks,
    getProject: s.getProject,
    // A task as a row of the project, ready: what the dependencies do with it is the test.
    create: async (input) => {
      made.push(input);
      const id = await taskRow(input.project_id, input.name!, input.base ?? 'main');
      return { status: 201, task: await s.getTask(id) };
    },
    restack,
    sessions,
    committed: s.bus.committed,
    hostId: TEST_HOST_ID,
    log,
  });
  t.after(() => dependencies.close());
  return { dependencies, sessions, made, records };
}

const code = (c: string) => (err: any) => {
  assert.equal(err.code, c, err.message);
  return true;
};

test('create: without a session it is the task service’s; `after` needs a session; what `after` names and the session are checked before any task is made', async (t) => {
  const { dependencies, made } = deps(t);
  const other = await addTask(t, s);
  const p = other.project_id;
  const plain = await dependencies.create({ project_id: p, name: 'plain' });
  assert.deepEqual([plain.status, plain.task.name, (plain.task as any).session], [201, 'plain', undefined]);
  const refused = await dependencies.create({ project_id: p, name: 'x', after: [other.id] }).catch((e) => e);
  assert.deepEqual([refused.code, refused.errors], ['VALIDATION_FAILED', [{ path: '/session', message: 'required with after' }]]);
  await assert.rejects(dependencies.create({ project_id: p, name: 'x', session: { agent: 'nobody', prompt: 'echo:go' } }), code('UNKNOWN_AGENT'));
  await assert.rejects(dependencies.create({ project_id: p, name: 'x', session: { agent: 'fixture', prompt: 'echo:go' }, after: [randomUUID()] }), code('AFTER_INVALID'));
  const archived = await addTask(t, s);
  await tasks.archive(archived.id);
  await assert.rejects(dependencies.create({ project_id: p, name: 'x', session: { agent: 'fixture', prompt: 'echo:go' }, after: [archived.id] }), code('AFTER_INVALID'));
  assert.deepEqual(made.map((m) => m.name), ['plain'], 'no task made by a refused request');
});

test('a first session with nothing to wait for starts at once; one waiting for a task starts when that task merges', async (t) => {
  const { dependencies, sessions } = deps(t);
  const parent = await addTask(t, s);
  const now = await dependencies.create({ project_id: parent.project_id, name: 'now', session: { agent: 'fixture', prompt: 'echo:now' } });
  assert.notEqual(now.task.session!.status, 'queued', 'the answer has it started');

  const later = await dependencies.create({ project_id: parent.project_id, name: 'later', session: { agent: 'fixture', prompt: 'echo:merged' }, after: [parent.id] });
  const id = later.task.session!.id;
  assert.deepEqual([later.task.session!.status, later.task.session!.after], ['queued', [parent.id]]);
  assert.equal((await sessions.get(id)).status, 'queued');
  await tasks.markMerged(parent.id, 'c0ffee');
  await until(async () => (await sessions.get(id)).status === 'exited', 'the waiting session’s run');
  assert.deepEqual((await sessions.lines(id, 0, 10)).lines.map((l) => l.text), ['merged']);
});

test('a task waited for that is archived without merging fails the waiting session, naming it', async (t) => {
  const { dependencies, sessions } = deps(t);
  const parent = await addTask(t, s);
  const waiting = await dependencies.create({ project_id: parent.project_id, name: 'w', session: { agent: 'fixture', prompt: 'echo:go' }, after: [parent.id], wait: false });
  await tasks.archive(parent.id);
  const id = waiting.task.session!.id;
  await until(async () => (await sessions.get(id)).status === 'failed', 'failed');
  assert.deepEqual((await sessions.lines(id, 0, 10)).lines.map((l) => [l.stream, l.text]), [
    ['stderr', `grove: task job (${parent.id}) was archived without being merged; this session waited for it to merge`],
  ]);
  assert.deepEqual((await sessions.waitingForTasks(TEST_HOST_ID)).filter((r) => r.id === id), []);
});

test('a task stacked on one that merges is restacked once; a failed restack is tried again after the task’s next session, not on every event', async (t) => {
  const asked: Array<[string, string]> = [];
  let answer: Result<object> = { ok: false, code: 'CONFLICT', message: 'conflict in a.txt' };
  const { sessions, records } = deps(t, async (id, parent) => {
    asked.push([id, parent.branch]);
    return answer;
  });
  const parent = await addTask(t, s);
  const child = await taskRow(parent.project_id, 'child', parent.branch);
  await tasks.markMerged(parent.id, 'c0ffee');
  await until(() => asked.length === 1, 'the restack');
  assert.deepEqual(asked, [[child, parent.branch]]);

  // Another wake (a task's status) does not try it again.
  const other = await addTask(t, s);
  assert.equal(await tasks.setStatus(other.id, 'ready'), true, 'a task.status event');
  const done = await sessions.create(other.id, { agent: 'fixture', args: ['exit:0'] });
  await until(async () => (await sessions.get(done.id)).status === 'exited', 'another task’s session');
  assert.equal(asked.length, 1);

  // The child's own session ends: its work may be fixed now.
  answer = { ok: true, value: {} } as Result<object>;
  const own = await sessions.create(child, { agent: 'fixture', args: ['exit:0'] });
  await until(() => asked.length === 2, 'tried again after its session');
  await until(async () => (await sessions.get(own.id)).status === 'exited', 'its end');
  assert.ok(!records.some((r) => r.msg === 'a dependency step failed'), 'a refused restack is an answer, not a failure');
});
