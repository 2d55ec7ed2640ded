import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, sharedDaemon, type Cleanup, type TestDaemon } from '../helpers/daemon.ts';
import { git, makeRepo } from '../helpers/git.ts';
import { commitFile, enqueue, FIXER_AGENTS, newTask, queueEvents, settledCheckouts, waitQueueEvent } from '../helpers/queue.ts';
import { agentHome, gate, waitSessionEnd } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';

const daemon = sharedDaemon((c) => ({ home: agentHome(c, { agents: FIXER_AGENTS, default_agent: 'fixer' }) }));

const porcelain = (dir: string) => execFileSync('git', ['-C', dir, 'status', '--porcelain'], { encoding: 'utf8' });

// A project whose .grove.json has these checks, with main checked out in its main checkout.
async function project(t: Cleanup, d: TestDaemon, check: string[] = [], files: Record<string, string> = {}) {
  const repo = makeRepo(t, { files: { 'f.txt': 'one\ntwo\nthree\n', '.grove.json': JSON.stringify({ check }), ...files } });
  const p = await addProject(d, repo);
  return { repo, p };
}

test('three queued tasks land in order, each rebased onto the one before; the checks run in each worktree with its environment', async (t) => {
  const d = await daemon();
  const { repo, p } = await project(t, d, ['test -n "$GROVE_TASK_ID" && test "$(pwd)" = "$GROVE_WORKTREE" && test -f "$GROVE_TASK_NAME.txt"']);
  const tasks = [];
  for (const name of ['one', 'two', 'three']) {
    const task = await newTask(d, p.id, repo, name);
    commitFile(task.wt, `${name}.txt`, `${name}\n`);
    tasks.push(task);
  }
  const entries = [];
  for (const task of tasks) entries.push(await enqueue(d, p.id, { task_id: task.id }));
  assert.equal(entries[0].state, 'waiting');
  assert.deepEqual(
    entries.map((e) => [e.task_id, e.base, e.strategy, e.fix]),
    tasks.map((tk) => [tk.id, 'main', 'merge', false]),
  );
  const landed = [];
  for (const task of tasks) landed.push(await waitQueueEvent(d, task.id, 'queue.landed'));
  assert.ok(landed[0].seq < landed[1].seq && landed[1].seq < landed[2].seq, 'landed in the order queued');
  // Each was rebased onto the tip the one before left, so each merge fast-forwards: main is a line.
  const line = git(repo, 'rev-list', '--first-parent', 'main').split('\n');
  assert.equal(line.length, 4);
  assert.deepEqual(line.slice(0, 3), landed.map((e) => e.data.commit).reverse());
  for (const [i, e] of landed.entries()) {
    assert.equal(git(repo, 'rev-parse', `${e.data.commit}^`), i === 0 ? line[3] : landed[i - 1]!.data.commit, 'rebased onto the one before');
    assert.equal(e.data.task_id, tasks[i].id);
    assert.equal(e.data.tries, 1);
  }
  for (const name of ['one', 'two', 'three']) assert.equal(readFileSync(path.join(repo, `${name}.txt`), 'utf8'), `${name}\n`, 'the main checkout moved with main');
  assert.equal(porcelain(repo), '');
  settledCheckouts(repo, ...tasks.map((tk) => tk.wt));
  assert.deepEqual((await d.socket('GET', `/api/projects/${p.id}/queue`)).json, []);
  const merged = (await d.socket('GET', `/api/tasks/${tasks[2].id}`)).json;
  assert.equal(merged.merged_commit, landed[2].data.commit);
  assert.equal((await queueEvents(d, tasks[0].id)).map((e) => e.type).join(), 'queue.added,queue.landing,queue.landed');
});

test('a failed check without fix takes the task out with its last lines; main does not move', async (t) => {
  const d = await daemon();
  const { repo, p } = await project(t, d, ['echo fine', 'echo "broken: 2 tests failed"; exit 3']);
  const task = await newTask(d, p.id, repo, 'broken');
  commitFile(task.wt, 'b.txt', 'b\n');
  const before = git(repo, 'rev-parse', 'main');
  await enqueue(d, p.id, { task_id: task.id });
  const failed = await waitQueueEvent(d, task.id, 'queue.failed');
  assert.match(failed.data.reason, /exited with 3/);
  assert.deepEqual(failed.data.output, ['fine', 'broken: 2 tests failed']);
  assert.equal(failed.data.state, 'out');
  assert.equal(git(repo, 'rev-parse', 'main'), before);
  assert.deepEqual((await d.socket('GET', `/api/projects/${p.id}/queue`)).json, []);
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}`)).json.merged_at, null);
});

test('a failed check with fix: the conversation is told its last lines, the fix lands on the second try', async (t) => {
  const d = await daemon();
  const { repo, p } = await project(t, d, ['test -f ok.txt || { echo "ok.txt is missing"; echo "FIX: echo ok > ok.txt"; exit 1; }']);
  const task = await newTask(d, p.id, repo, 'needs ok');
  const first = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'begin' } })).json;
  await waitSessionEnd(d, first.id);
  commitFile(task.wt, 'work.txt', 'work\n');
  await enqueue(d, p.id, { task_id: task.id, fix: true });
  const failed = await waitQueueEvent(d, task.id, 'queue.failed');
  assert.equal(failed.data.state, 'fixing');
  assert.deepEqual(failed.data.output, ['ok.txt is missing', 'FIX: echo ok > ok.txt']);
  const fix = (await d.socket('GET', `/api/sessions/${failed.data.fix_session}`)).json;
  assert.equal(fix.conversation_id, first.id, "the task's latest conversation");
  assert.match(fix.prompt, /ok\.txt is missing/);
  const landed = await waitQueueEvent(d, task.id, 'queue.landed');
  assert.equal(landed.data.tries, 2);
  assert.equal(readFileSync(path.join(repo, 'ok.txt'), 'utf8'), 'ok\n');
  assert.deepEqual(
    (await queueEvents(d, task.id)).map((e) => e.type),
    ['queue.added', 'queue.landing', 'queue.failed', 'queue.added', 'queue.landing', 'queue.landed'],
  );
});

test('a conflict with fix: the files are named to the conversation, the rebased fix lands on the second try', async (t) => {
  const d = await daemon();
  const { repo, p } = await project(t, d);
  const task = await newTask(d, p.id, repo, 'conflicting');
  const first = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'begin' } })).json;
  await waitSessionEnd(d, first.id);
  commitFile(task.wt, 'f.txt', 'one\nTASK\nthree\n');
  commitFile(repo, 'f.txt', 'one\nMAIN\nthree\n');
  await enqueue(d, p.id, { task_id: task.id, fix: true });
  const failed = await waitQueueEvent(d, task.id, 'queue.failed');
  assert.deepEqual(failed.data.files, ['f.txt']);
  assert.match(failed.data.reason, /conflicts in f\.txt/);
  const fix = (await d.socket('GET', `/api/sessions/${failed.data.fix_session}`)).json;
  assert.match(fix.prompt, /- f\.txt/);
  const landed = await waitQueueEvent(d, task.id, 'queue.landed');
  assert.equal(landed.data.tries, 2);
  assert.equal(readFileSync(path.join(repo, 'f.txt'), 'utf8'), 'one\nTASK\nthree\n');
  assert.equal(porcelain(repo), '');
  settledCheckouts(repo, task.wt);
});

test('bad input: unknown ids, another project, archived, queued twice, removing while landing; problem+json, nothing changed', async (t) => {
  const d = await daemon();
  const g = gate(t as never);
  const { repo, p } = await project(t, d, [`read x < '${g.path}'`]);
  const other = await project(t, d);
  const a = await newTask(d, p.id, repo, 'a');
  const b = await newTask(d, p.id, repo, 'b');
  const archived = await newTask(d, p.id, repo, 'gone');
  assert.equal((await d.socket('DELETE', `/api/tasks/${archived.id}`)).status, 200);
  const foreign = await newTask(d, other.p.id, other.repo, 'foreign');
  commitFile(a.wt, 'a.txt', 'a\n');
  await enqueue(d, p.id, { task_id: a.id });
  await until(async () => (await d.socket('GET', `/api/projects/${p.id}/queue`)).json[0]?.state === 'landing', 'the first task landing');
  await enqueue(d, p.id, { task_id: b.id, strategy: 'squash' });
  const before = (await d.socket('GET', `/api/projects/${p.id}/queue`)).json;
  const unknown = '00000000-0000-4000-8000-000000000000';
  const cases: Array<[string, string, object | undefined, number, string]> = [
    ['POST', `/api/projects/${unknown}/queue`, { task_id: a.id }, 404, 'NOT_FOUND'],
    ['POST', `/api/projects/${p.id}/queue`, { task_id: unknown }, 404, 'NOT_FOUND'],
    ['POST', `/api/projects/${p.id}/queue`, { task_id: foreign.id }, 422, 'TASK_NOT_QUEUEABLE'],
    ['POST', `/api/projects/${p.id}/queue`, { task_id: archived.id }, 422, 'TASK_NOT_QUEUEABLE'],
    ['POST', `/api/projects/${p.id}/queue`, { task_id: a.id }, 409, 'ALREADY_QUEUED'],
    ['POST', `/api/projects/${p.id}/queue`, { task_id: b.id, fix: true }, 409, 'ALREADY_QUEUED'],
    ['POST', `/api/projects/${p.id}/queue`, { task_id: b.id, strategy: 'rebase' }, 400, 'VALIDATION_FAILED'],
    ['POST', `/api/projects/${p.id}/queue`, { task_id: 'nope' }, 400, 'VALIDATION_FAILED'],
    ['POST', `/api/projects/${p.id}/queue`, { task_id: b.id, extra: 1 }, 400, 'VALIDATION_FAILED'],
    ['GET', `/api/projects/${unknown}/queue`, undefined, 404, 'NOT_FOUND'],
    ['GET', '/api/projects/NOPE/queue', undefined, 400, 'INVALID_ID'],
    ['DELETE', `/api/projects/${p.id}/queue/${a.id}`, undefined, 409, 'QUEUE_LANDING'],
    ['DELETE', `/api/projects/${p.id}/queue/${foreign.id}`, undefined, 404, 'NOT_FOUND'],
    ['DELETE', `/api/projects/${other.p.id}/queue/${b.id}`, undefined, 404, 'NOT_FOUND'],
  ];
  for (const [method, url, body, status, code] of cases) {
    const r = await d.socket(method, url, body ? { body } : {});
    assert.equal(r.status, status, `${method} ${url} ${JSON.stringify(body)}: ${r.text}`);
    assert.match(String(r.headers['content-type']), /application\/problem\+json/);
    assert.equal(r.json.code, code, r.text);
  }
  assert.deepEqual((await d.socket('GET', `/api/projects/${p.id}/queue`)).json, before, 'nothing changed');
  assert.deepEqual(
    before.map((e: any) => [e.task_id, e.position, e.state, e.strategy]),
    [
      [a.id, 1, 'landing', 'merge'],
      [b.id, 2, 'waiting', 'squash'],
    ],
  );
  // A waiting entry can be taken out: it never lands.
  assert.equal((await d.socket('DELETE', `/api/projects/${p.id}/queue/${b.id}`)).status, 204);
  assert.equal((await d.socket('DELETE', `/api/projects/${p.id}/queue/${b.id}`)).json.code, 'NOT_FOUND');
  g.release();
  await waitQueueEvent(d, a.id, 'queue.landed');
  assert.deepEqual((await d.socket('GET', `/api/projects/${p.id}/queue`)).json, []);
  const bEvents = await queueEvents(d, b.id);
  assert.deepEqual(bEvents.map((e) => e.type), ['queue.added', 'queue.removed'], 'taken out, with its event');
  assert.deepEqual([bEvents[1].data.task_id, bEvents[1].data.state, bEvents[1].data.base], [b.id, 'removed', 'main']);
});

test('fix: after 3 follow-ups that fix nothing the task stays out, tries spent; a task with no conversation is out at once', async (t) => {
  const d = await daemon();
  const { repo, p } = await project(t, d, ['echo "still broken"; exit 1']);
  const task = await newTask(d, p.id, repo, 'hopeless');
  const first = (await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'begin' } })).json;
  await waitSessionEnd(d, first.id);
  commitFile(task.wt, 'h.txt', 'h\n');
  await enqueue(d, p.id, { task_id: task.id, fix: true });
  const last = await waitQueueEvent(d, task.id, 'queue.failed', 4);
  assert.equal(last.data.state, 'out');
  assert.equal(last.data.tries, 4);
  assert.match(last.data.note, /tries are spent: 3 follow-ups/);
  const failures = (await queueEvents(d, task.id)).filter((e) => e.type === 'queue.failed');
  assert.deepEqual(
    failures.map((e) => [e.data.state, e.data.tries]),
    [
      ['fixing', 1],
      ['fixing', 2],
      ['fixing', 3],
      ['out', 4],
    ],
  );
  const sessions = (await d.socket('GET', `/api/tasks/${task.id}/sessions`)).json;
  assert.equal(sessions.length, 4, 'the first session and three follow-ups');
  assert.ok(sessions.every((s: any) => s.conversation_id === first.id));
  assert.deepEqual((await d.socket('GET', `/api/projects/${p.id}/queue`)).json, []);

  const lone = await newTask(d, p.id, repo, 'no conversation');
  await enqueue(d, p.id, { task_id: lone.id, fix: true });
  const out = await waitQueueEvent(d, lone.id, 'queue.failed');
  assert.equal(out.data.state, 'out');
  assert.match(out.data.note, /no conversation/);
});
