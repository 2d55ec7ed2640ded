import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import type { ProjectConfig } from '../../schemas/project-config.ts';
import { createSetupRunner } from '../../daemon/tasks/setup-run.ts';
import { makeTempDir } from '../helpers/git.ts';
import { waitPidGone } from '../helpers/state.ts';
import { taskParts, type TaskParts } from '../helpers/tasks.ts';

// A task `setting_up` in a real worktree, as creation leaves it before setup starts.
async function settingUp(parts: TaskParts, config: ProjectConfig) {
  const project = await parts.project(config);
  const made = await parts.pool.run('createWorktree', { repo: project.path, slug: 'setup', taken: [], timeout: { ms: 60_000, detail: 'took too long' } });
  assert.ok(made.ok);
  const id = randomUUID();
  const { branch, worktree_path, base, base_commit } = made;
  await parts.tasks.insert({ id, project_id: project.id, name: 'setup', branch, worktree_path, base, base_commit, status: 'setting_up' }, {});
  return { project, task: await parts.read.get(id), config };
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    assert.ok(Date.now() < deadline, what);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('tasks/setup-run: setup in the pool, its progress stored as it comes and signalled', async (t) => {
  const parts = await taskParts(t);
  const runner = createSetupRunner({ ...parts, setupTimeoutS: 60 });

  await t.test('progress is stored and announced while setup runs; the task ends ready', async () => {
    const dir = makeTempDir(t);
    const go = path.join(dir, 'go');
    const { project, task, config } = await settingUp(parts, {
      setup: ['echo first; echo oops >&2', `echo "$GROVE_TASK_ID"; while [ ! -e '${go}' ]; do sleep 0.05; done; echo last`],
    });
    // What a follower of the setup saw at each signal, read from the store.
    const seen: Array<{ lines: string[]; status: string }> = [];
    let reads = Promise.resolve();
    runner.progress.onChange(task.id, () => {
      reads = reads.then(async () => {
        const lines = (await parts.setupLog.lines(task.id)).map((l) => `${l.stream}:${l.text}`);
        seen.push({ lines, status: (await parts.read.get(task.id)).status });
      });
    });
    const done = runner.start(project, task, config);
    await waitFor(() => seen.some((s) => s.lines.includes(`stdout:${task.id}`)), 'the second command printed');
    assert.equal(seen.at(-1)?.status, 'setting_up', 'stored before setup ended');
    writeFileSync(go, '');
    await done;
    await reads;
    assert.equal((await parts.read.get(task.id)).status, 'ready');
    assert.equal(seen.at(-1)?.status, 'ready', 'the end is announced too');
    const lines = await parts.setupLog.lines(task.id);
    assert.deepEqual(lines.map((l) => l.seq), [1, 2, 3, 4], 'seq counts from 1 with no gaps');
    assert.deepEqual(lines.slice(2).map((l) => l.text), [task.id, 'last']);
    const commands = await parts.setupLog.commands(task.id);
    assert.deepEqual(commands.map((c) => [c.command, c.exit_code]), config.setup!.map((c) => [c, 0]));
  });

  await t.test('a failing command: the task ends setup_failed with the exit code stored, later commands never run', async () => {
    const { project, task, config } = await settingUp(parts, { setup: ['exit 4', 'echo never'] });
    await runner.start(project, task, config);
    assert.equal((await parts.read.get(task.id)).status, 'setup_failed');
    assert.deepEqual((await parts.setupLog.commands(task.id)).map((c) => c.exit_code), [4]);
    assert.deepEqual(await parts.setupLog.lines(task.id), []);
  });

  await t.test('stop() and close() cancel running setups, kill their processes and record them setup_failed', async () => {
    const dir = makeTempDir(t);
    const runs = await Promise.all(
      ['a', 'b', 'c'].map(async (n) => {
        const pidFile = path.join(dir, n);
        const s = await settingUp(parts, { setup: [`echo $$ > '${pidFile}'; sleep 60`] });
        return { ...s, pidFile, done: runner.start(s.project, s.task, s.config) };
      }),
    );
    for (const r of runs) await waitFor(() => existsSync(r.pidFile) && readFileSync(r.pidFile, 'utf8') !== '', 'setup started');
    const [first, ...rest] = runs;
    await runner.stop(first!.task.id);
    assert.equal((await parts.read.get(first!.task.id)).status, 'setup_failed');
    await runner.stop(first!.task.id); // nothing runs any more: a no-op
    await runner.close();
    await Promise.all(rest.map((r) => r.done));
    for (const r of runs) {
      assert.equal((await parts.read.get(r.task.id)).status, 'setup_failed');
      await waitPidGone(Number(readFileSync(r.pidFile, 'utf8')), 5000);
    }
    await runner.close(); // a second close is harmless
  });
});
