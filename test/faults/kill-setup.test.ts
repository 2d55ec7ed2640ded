import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import test from 'node:test';
import { addProject, startDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { readSse } from '../helpers/sessions.ts';
import { processesMatching, repoState } from '../helpers/state.ts';

test('a daemon killed with SIGKILL during setup: its orphaned setup processes are stopped on the next start, the task is setup_failed', async (t) => {
  const d1 = await startDaemon(t);
  const marker = `${Math.floor(Math.random() * 1e6) + 7_000_000}`;
  // A setup command with a background child: both outlive a SIGKILLed daemon.
  const setup = [`sleep ${marker}1 & echo started; sleep ${marker}2`];
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ setup }) } });
  // Whatever the outcome, nothing of this test keeps running.
  t.after(() => {
    try {
      execFileSync('pkill', ['-KILL', '-f', `sleep ${marker}`]);
    } catch {
      // pkill exits 1 when nothing matched: the expected case
    }
  });
  const project = await addProject(d1, repo);
  const r = await d1.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'cut', wait: false } });
  assert.equal(r.status, 202);
  // Once a line is stored, the command's process group is stored too (messages keep their order).
  await readSse(`http://127.0.0.1:${d1.port}/api/tasks/${r.json.id}/setup`, {
    until: (evs) => evs.some((e) => e.event === 'line' && e.data.text === 'started'),
  });
  assert.equal(await d1.stop('SIGKILL'), 'SIGKILL');
  assert.deepEqual(
    processesMatching(`sleep ${marker}`).filter((a) => a.startsWith('sleep ')).sort(),
    [`sleep ${marker}1`, `sleep ${marker}2`],
    'the kill orphaned the setup command and its background child',
  );

  const d2 = await startDaemon(t, { home: d1.home });
  assert.deepEqual(processesMatching(`sleep ${marker}`), [], 'stopped before the API opened');
  const task = (await d2.socket('GET', `/api/tasks/${r.json.id}`)).json;
  assert.equal(task.status, 'setup_failed');
  assert.equal(task.worktree_missing, false);
  const log = (await d2.socket('GET', `/api/tasks/${r.json.id}/setup`)).json;
  assert.equal(log.commands.length, 1);
  assert.equal(log.commands[0].exit_code, null);
  assert.notEqual(log.commands[0].ended_at, null);
  assert.deepEqual(
    log.lines.map((l: any) => [l.seq, l.stream, l.text]),
    [
      [1, 'stdout', 'started'],
      [2, 'stderr', 'grove: setup interrupted: the daemon stopped while it ran'],
    ],
  );
  // The task keeps its worktree and branch until the user archives it.
  assert.deepEqual(repoState(repo), { branches: ['grove/cut', 'main'], worktrees: ['.grove/worktrees/cut/'], folders: ['cut'] });
  const del = await d2.socket('DELETE', `/api/tasks/${r.json.id}`);
  assert.equal(del.status, 200);
  assert.deepEqual(repoState(repo), { branches: ['grove/cut', 'main'], worktrees: [], folders: [] });
});

test('SIGTERM during setup: the daemon kills it and records the task as setup_failed', async (t) => {
  const d1 = await startDaemon(t);
  const marker = `${Math.floor(Math.random() * 1e6) + 5_000_000}`;
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ setup: [`sleep ${marker}`] }) } });
  const project = await addProject(d1, repo);
  const r = await d1.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'interrupted', wait: false } });
  await d1.waitForLog((l) => l.msg === 'setup command started' && l.task === r.json.id);
  assert.equal(await d1.stop(), 0);
  assert.deepEqual(processesMatching(`sleep ${marker}`), [], 'a clean stop kills the setup group');
  const d2 = await startDaemon(t, { home: d1.home });
  assert.equal((await d2.socket('GET', `/api/tasks/${r.json.id}`)).json.status, 'setup_failed');
});
