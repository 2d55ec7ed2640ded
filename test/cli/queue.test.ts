import assert from 'node:assert/strict';
import { test } from 'node:test';
import { grove, running } from '../helpers/cli.ts';
import { sharedDaemon, type Cleanup, type TestDaemon } from '../helpers/daemon.ts';
import { git, makeRepo } from '../helpers/git.ts';
import { commitFile, FIXER_AGENTS, newTask, waitQueueEvent } from '../helpers/queue.ts';
import { agentHome, gate, waitSessionEnd } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';

// `grove queue add|ls|rm` and the queue's events through the real CLI (DESIGN §17).
const daemon = sharedDaemon((c) => ({ home: agentHome(c, { agents: FIXER_AGENTS, default_agent: 'fixer' }) }));

// A project named `name` whose .grove.json has these checks; the CLI adds it.
async function project(t: Cleanup, d: TestDaemon, name: string, check: string[]) {
  const repo = makeRepo(t, { files: { 'f.txt': 'f\n', '.grove.json': JSON.stringify({ check }) } });
  const added = await grove(d.home, ['project', 'add', repo, '--name', name, '--json']);
  assert.equal(added.code, 0, added.stderr);
  return { repo, p: added.json };
}

// What `grove events --task T` prints once `re` shows (it follows live: stopped then).
async function eventLines(d: TestDaemon, taskId: string, re: RegExp): Promise<string> {
  const ev = running(d.home, ['events', '--task', taskId]);
  try {
    await ev.waitFor(re, 60_000);
    return ev.output();
  } finally {
    await ev.stop();
  }
}

test('grove queue: add prints the place, ls shows the queue in order, rm takes one out; two tasks land in order', async (t) => {
  const d = await daemon();
  const g = gate(t);
  // The first task's check waits for the gate, so the queue can be read while it lands.
  const { repo, p } = await project(t, d, 'qcli', [`[ "$GROVE_TASK_NAME" != one ] || read x < '${g.path}'`]);
  const tasks: any[] = [];
  for (const name of ['one', 'two', 'three']) {
    const task = await newTask(d, p.id, repo, name);
    commitFile(task.wt, `${name}.txt`, `${name}\n`);
    tasks.push(task);
  }
  const first = await grove(d.home, ['queue', 'add', 'one', '--strategy', 'squash']);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /^task one is queued to land on main at position 1 \(squash\)\n$/);
  await until(async () => (await grove(d.home, ['queue', 'ls', 'qcli', '--json'])).json?.[0]?.state === 'landing', 'the first task landing');
  const second = await grove(d.home, ['queue', 'add', tasks[1].id.slice(0, 8), '--json']);
  assert.equal(second.code, 0, second.stderr);
  assert.deepEqual([second.json.task_id, second.json.position, second.json.strategy, second.json.fix], [tasks[1].id, 2, 'merge', false]);
  assert.match((await grove(d.home, ['queue', 'add', 'three', '--fix'])).stdout, /at position 3 \(merge, fixed on failure\)/);

  // Refusals: the API's exit 1 (its problem on stdout with --json), usage errors exit 2.
  const twice = await grove(d.home, ['queue', 'add', 'two', '--json']);
  assert.equal(twice.code, 1);
  assert.equal(twice.json.code, 'ALREADY_QUEUED');
  assert.match(twice.stderr, /already queued/);
  const landing = await grove(d.home, ['queue', 'rm', 'one', '--json']);
  assert.equal(landing.code, 1);
  assert.equal(landing.json.code, 'QUEUE_LANDING');
  const badStrategy = await grove(d.home, ['queue', 'add', 'two', '--strategy', 'rebase']);
  assert.equal(badStrategy.code, 2);
  assert.match(badStrategy.stderr, /--strategy is one of merge, squash, ff/);
  assert.equal((await grove(d.home, ['queue', 'add'])).code, 2);
  assert.equal((await grove(d.home, ['queue', 'ls', 'no-such-project'])).code, 1);

  const removed = await grove(d.home, ['queue', 'rm', 'three']);
  assert.equal(removed.code, 0, removed.stderr);
  assert.equal(removed.stdout, 'task three is out of the merge queue\n');
  assert.equal((await grove(d.home, ['queue', 'rm', 'three', '--json'])).json.code, 'NOT_FOUND');

  const ls = await grove(d.home, ['queue', 'ls', 'qcli']);
  assert.equal(ls.code, 0, ls.stderr);
  const lines = ls.stdout.trimEnd().split('\n');
  assert.match(lines[0]!, /^POSITION\s+TASK\s+BASE\s+STATE\s+TRIES\s+STRATEGY\s+REASON$/);
  assert.match(lines[1]!, /^1\s+one\s+main\s+landing\s+1\s+squash\s+-$/);
  assert.match(lines[2]!, /^2\s+two\s+main\s+waiting\s+0\s+merge\s+-$/);
  assert.equal(lines.length, 3);
  // Without a project: every project's queue, with its name.
  const all = await grove(d.home, ['queue', 'ls']);
  assert.match(all.stdout, /^PROJECT\s+POSITION\s+TASK/);
  assert.match(all.stdout, /\nqcli\s+1\s+one\s+main\s+landing/);
  assert.match(all.stdout, /\nqcli\s+2\s+two\s+main\s+waiting/);

  g.release();
  const landed = [await waitQueueEvent(d, tasks[0].id, 'queue.landed'), await waitQueueEvent(d, tasks[1].id, 'queue.landed')];
  assert.ok(landed[0].seq < landed[1].seq, 'landed in the order queued');
  assert.equal(git(repo, 'rev-parse', 'main'), landed[1].data.commit);
  assert.equal((await grove(d.home, ['queue', 'ls', 'qcli'])).stdout, '(none)\n');
  const shown = await eventLines(d, tasks[1].id, /queue\.landed/);
  assert.match(shown, new RegExp(`queue\\.added task ${tasks[1].id.slice(0, 8)} queued on main at position 2 \\(merge\\)`));
  assert.match(shown, new RegExp(`queue\\.landed task ${tasks[1].id.slice(0, 8)} landed on main as ${landed[1].data.commit.slice(0, 12)} \\(merge, try 1\\)`));
  const out = await eventLines(d, tasks[2].id, /queue\.removed/);
  assert.match(out, new RegExp(`queue\\.removed task ${tasks[2].id.slice(0, 8)} taken out of the queue of main`));
});

test('grove queue: a failed check shows its reason and last line in queue ls and events; the fixed task lands', async (t) => {
  const d = await daemon();
  const g = gate(t);
  // The check names its fix, which the fixer agent runs; the fix waits for the gate, so the entry
  // can be read while it is being fixed.
  const { repo, p } = await project(t, d, 'qfail', [`test -f ok.txt || { echo "ok.txt is missing"; echo "FIX: read x < '${g.path}'; echo ok > ok.txt"; exit 4; }`]);
  const task = await newTask(d, p.id, repo, 'needs ok');
  const began = await grove(d.home, ['session', 'start', task.id, '--prompt', 'begin', '--json']);
  assert.equal(began.code, 0, began.stderr);
  await waitSessionEnd(d, began.json.id);
  commitFile(task.wt, 'w.txt', 'w\n');
  assert.equal((await grove(d.home, ['queue', 'add', task.id, '--fix'])).code, 0);
  const failed = await waitQueueEvent(d, task.id, 'queue.failed');
  assert.equal(failed.data.state, 'fixing');

  const ls = await grove(d.home, ['queue', 'ls', 'qfail']);
  assert.match(ls.stdout, /\n1\s+needs ok\s+main\s+fixing\s+1\s+merge, fix\s+the check .* exited with 4; last line: FIX: read x/);
  const shown = await eventLines(d, task.id, /queue\.failed/);
  assert.match(shown, /queue\.failed task \S+ failed to land on main: the check .* exited with 4 \(last line: FIX: read x < .*\); fixing in session \S+/);

  g.release();
  const landed = await waitQueueEvent(d, task.id, 'queue.landed');
  assert.equal(landed.data.tries, 2);
  assert.equal((await grove(d.home, ['queue', 'ls', 'qfail', '--json'])).json.length, 0);
});
