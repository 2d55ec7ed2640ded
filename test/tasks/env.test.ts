import assert from 'node:assert/strict';
import test from 'node:test';
import type { Project } from '../../schemas/project.ts';
import type { Task } from '../../schemas/task.ts';
import { taskEnv } from '../../daemon/tasks/env.ts';

const project: Project = { id: 'p-1', name: 'demo', path: '/projects/demo', created_at: '2026-01-01T00:00:00.000Z', host_id: 'h-1', repository: null };

function task(ports: Record<string, number>): Task {
  return {
    id: 't-1',
    project_id: project.id,
    host_id: project.host_id,
    name: 'Fix login',
    branch: 'grove/fix-login',
    worktree_path: '.grove/worktrees/fix-login/',
    base: 'main',
    base_commit: 'a'.repeat(40),
    status: 'ready',
    ports,
    created_at: '2026-01-01T00:00:00.000Z',
    merged_at: null,
    merged_commit: null,
    pooled: false,
    issue: null,
    archived_at: null,
    worktree_missing: false,
  };
}

test('the daemon environment, then the project env, then the GROVE_* values', () => {
  const env = taskEnv(project, task({}), { env: { FOO: 'from-config', HOME: '/elsewhere' } }, { FOO: 'from-daemon', HOME: '/users/u', KEEP: '1' });
  assert.equal(env.FOO, 'from-config');
  assert.equal(env.HOME, '/elsewhere');
  assert.equal(env.KEEP, '1');
  assert.equal(env.GROVE_PROJECT_ID, 'p-1');
  assert.equal(env.GROVE_PROJECT_PATH, '/projects/demo');
  assert.equal(env.GROVE_TASK_ID, 't-1');
  assert.equal(env.GROVE_TASK_NAME, 'Fix login');
  assert.equal(env.GROVE_BRANCH, 'grove/fix-login');
  assert.equal(env.GROVE_WORKTREE, '/projects/demo/.grove/worktrees/fix-login', 'absolute, without the trailing slash');
});

test('the project env cannot override a GROVE_* value', () => {
  const env = taskEnv(project, task({ 3000: 20417 }), { env: { GROVE_TASK_ID: 'forged', GROVE_PORT: '1', PORT: '2' } }, {});
  assert.equal(env.GROVE_TASK_ID, 't-1');
  assert.equal(env.GROVE_PORT, '20417');
  assert.equal(env.PORT, '20417');
});

test('ports: one GROVE_PORT_<declared> each, GROVE_PORT and PORT the first declared (the lowest host port)', () => {
  const env = taskEnv(project, task({ 8080: 20001, 3000: 20000, 5432: 20002 }), {}, {});
  assert.equal(env.GROVE_PORT_3000, '20000');
  assert.equal(env.GROVE_PORT_8080, '20001');
  assert.equal(env.GROVE_PORT_5432, '20002');
  assert.equal(env.GROVE_PORT, '20000');
  assert.equal(env.PORT, '20000');
});

test("the daemon's own GROVE_PORT, PORT and GROVE_HOST never reach a task without ports", () => {
  const env = taskEnv(project, task({}), {}, { GROVE_PORT: '7433', PORT: '8000', GROVE_HOST: 'box', PATH: '/usr/bin' });
  assert.equal(env.GROVE_HOST, undefined);
  assert.equal(env.GROVE_PORT, undefined);
  assert.equal(env.PORT, undefined);
  assert.equal(env.PATH, '/usr/bin');
  assert.ok(!Object.keys(env).some((k) => k.startsWith('GROVE_PORT_')));
});

test('variables the daemon has unset are left out, not passed as "undefined"', () => {
  const env = taskEnv(project, task({}), {}, { SET: 'x', UNSET: undefined });
  assert.equal(env.SET, 'x');
  assert.ok(!('UNSET' in env));
});
