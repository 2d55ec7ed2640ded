import assert from 'node:assert/strict';
import { existsSync, readFileSync, watch, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { addProject, makeHome, startDaemon } from './helpers/daemon.ts';
import { makeRepo, makeTempDir } from './helpers/git.ts';
import { waitPidGone } from './helpers/state.ts';

// Resolves once `file` has at least `n` lines.
async function linesOf(file: string, n: number): Promise<string[]> {
  const read = () => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
  const dir = path.dirname(file);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      w.close();
      reject(new Error(`${file} has ${read().length} of ${n} lines`));
    }, 20_000);
    const check = () => {
      const l = read();
      if (l.length < n) return;
      clearTimeout(timer);
      w.close();
      resolve(l);
    };
    const w = watch(dir, check);
    check();
  });
}

test('hooks: the event on stdin, one at a time per hook and in order; a failing one logged; a hanging one killed without delaying the API', async (t) => {
  const dir = makeTempDir(t);
  const out = path.join(dir, 'events.jsonl');
  const order = path.join(dir, 'order');
  const hooks = [
    { on: ['project.added', 'task.created'], command: ['sh', '-c', `cat >> ${out}`] },
    // Slow on purpose: events would overtake each other if hooks ran at once.
    { on: ['project.added'], command: ['sh', '-c', `read -r line; n=$(printf '%s' "$line" | sed 's/^{"seq":\\([0-9]*\\).*/\\1/'); echo "start $n" >> ${order}; sleep 0.1; echo "end $n" >> ${order}`] },
    { on: ['*'], command: ['sh', '-c', 'echo "no luck" >&2; exit 7'] },
    { on: ['task.created'], command: ['sh', '-c', `echo $$ > ${dir}/hanging; sleep 300`], timeout_s: 1 },
  ];
  const home = makeHome(t);
  writeFileSync(path.join(home, 'config.json'), JSON.stringify({ hooks }));
  const d = await startDaemon(t, { home });

  const project = await addProject(d, makeRepo(t));
  const started = Date.now();
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'hooked' } })).json;
  assert.ok(Date.now() - started < 5000, 'the answer does not wait for the hanging hook');
  const events = (await d.socket('GET', '/api/events')).json.events;
  const [added, created] = (await linesOf(out, 2)).map((l) => JSON.parse(l));
  assert.deepEqual(added, events.find((e: any) => e.type === 'project.added'));
  assert.deepEqual(created, events.find((e: any) => e.type === 'task.created' && e.task_id === task.id));

  // Many events at once: the slow hook sees them one at a time (each ends before the next
  // starts), in order.
  const more = await Promise.all([1, 2, 3, 4, 5].map(() => addProject(d, makeRepo(t))));
  const runs = await linesOf(order, 12);
  const seqs = events.filter((e: any) => e.type === 'project.added').map((e: any) => e.seq);
  const all = [...seqs, ...(await d.socket('GET', `/api/events?after=${seqs.at(-1)}`)).json.events.filter((e: any) => e.type === 'project.added').map((e: any) => e.seq)];
  assert.equal(all.length, 1 + more.length);
  assert.deepEqual(runs, all.flatMap((n: number) => [`start ${n}`, `end ${n}`]));

  const failed = await d.waitForLog((l) => l.msg === 'hook failed' && l.exit_code === 7);
  assert.equal(failed.hook, 2);
  assert.match(failed.stderr, /no luck/);
  const hung = await d.waitForLog((l) => l.msg === 'hook failed' && l.timed_out === true, 10_000);
  assert.equal(hung.hook, 3);
  await waitPidGone(Number(readFileSync(path.join(dir, 'hanging'), 'utf8')), 10_000);
});

test('hooks: an invalid hook in the user config stops the daemon at start, naming it', async (t) => {
  const { spawnDaemon, stopProcess } = await import('./helpers/daemon.ts');
  for (const hooks of [[{ on: ['task.exploded'], command: ['true'] }], [{ on: ['*'], command: [] }], [{ on: [], command: ['true'] }]]) {
    const home = makeHome(t);
    writeFileSync(path.join(home, 'config.json'), JSON.stringify({ hooks }));
    const d = spawnDaemon(home);
    t.after(() => stopProcess(d.proc, d.exited));
    assert.equal(await d.exited, 78);
    assert.match(d.stderr(), /\/hooks\/0/);
  }
});
