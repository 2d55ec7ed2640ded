import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';
import type { SessionRecord } from '../../daemon/store/sessions.ts';
import type { Task } from '../../schemas/task.ts';
import { addTask, type TestStore } from './store.ts';

// A running session (of a new task in a new project, unless `task` is given), as its row says;
// `grove` is written as the project's .grove.json.
export async function liveSession(t: TestContext, s: TestStore, opts: { grove?: object; approvalTimeoutS?: number; task?: Task } = {}): Promise<SessionRecord> {
  const task = opts.task ?? (await addTask(t, s));
  if (opts.grove) writeFileSync(path.join((await s.getProject(task.project_id)).path, '.grove.json'), JSON.stringify(opts.grove));
  return s.sessions.insert({
    id: randomUUID(),
    task_id: task.id,
    agent: 'a',
    command: ['a'],
    mode: 'edit',
    prompt: null,
    conversation_id: randomUUID(),
    parent_id: null,
    pid: 1,
    approval_timeout_s: opts.approvalTimeoutS ?? null,
  });
}
