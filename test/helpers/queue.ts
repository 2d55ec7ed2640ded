import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, type TestDaemon } from './daemon.ts';
import { git } from './git.ts';
import { allEvents } from './sessions.ts';
import { until } from './store.ts';

// The agent that fixes what the merge queue says failed (see the fixture), in stream-json.
export const FIXER = path.join(ROOT, 'test', 'fixtures', 'queue-fixer.mjs');
export const FIXER_AGENTS = {
  fixer: { command: [FIXER, '--session-id', '{session}', '--', '{prompt}'], resume: [FIXER, '--resume', '{session}', '--', '{prompt}'], format: 'claude' as const },
};

// Writes a file in a checkout and commits it there; the new commit.
export function commitFile(dir: string, file: string, text: string, message = `edit ${file}`): string {
  writeFileSync(path.join(dir, file), text);
  git(dir, 'add', file);
  git(dir, 'commit', '-qm', message);
  return git(dir, 'rev-parse', 'HEAD');
}

// A ready task of the project, with its worktree's absolute path.
export async function newTask(d: TestDaemon, projectId: string, repo: string, name: string): Promise<any> {
  const r = await d.socket('POST', '/api/tasks', { body: { project_id: projectId, name } });
  assert.equal(r.json.status, 'ready', r.text);
  return { ...r.json, wt: path.join(repo, r.json.worktree_path) };
}

export async function enqueue(d: TestDaemon, projectId: string, body: object): Promise<any> {
  const r = await d.socket('POST', `/api/projects/${projectId}/queue`, { body });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

// The queue events of a task, oldest first.
export async function queueEvents(d: TestDaemon, taskId: string): Promise<any[]> {
  return (await allEvents(d, `&task_id=${taskId}`)).filter((e) => e.type.startsWith('queue.'));
}

// Waits for the task's queue event of `type` (the `n`th), generously: landings run checks and git.
export async function waitQueueEvent(d: TestDaemon, taskId: string, type: string, n = 1, ms = 60_000): Promise<any> {
  return until(async () => (await queueEvents(d, taskId)).filter((e) => e.type === type)[n - 1], `${type} #${n} of task ${taskId}`, ms);
}

// Nothing half-done in a checkout: no merge or rebase in progress, no lock file left.
export function settledCheckouts(...dirs: string[]): void {
  for (const dir of dirs) {
    for (const what of ['MERGE_HEAD', 'rebase-merge', 'rebase-apply', 'index.lock', 'HEAD.lock', 'CHERRY_PICK_HEAD']) {
      assert.ok(!existsSync(git(dir, 'rev-parse', '--path-format=absolute', '--git-path', what)), `${what} left in ${dir}`);
    }
  }
}
