import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { pino } from 'pino';
import { createApprovalService, type ApprovalService } from '../../daemon/approvals/service.ts';
import type { ProjectConfigs } from '../../daemon/projects/config.ts';
import { approvalsTable } from '../../daemon/store/approvals.ts';
import type { SessionRecord } from '../../daemon/store/sessions.ts';
import type { Task } from '../../schemas/task.ts';
import { addTask, TEST_HOST_ID, type TestStore } from './store.ts';

// The approval service as the daemon wires it, on a test store, with `Bash(ls)` as the user's
// rule; closed when the test ends.
export function approvalService(t: TestContext, s: TestStore, configs: ProjectConfigs, hostId = TEST_HOST_ID): ApprovalService {
  const svc = createApprovalService({
    approvals: approvalsTable(s.store.db, s.events),
    getSession: (id) => s.sessions.get(id),
    getTask: s.getTask,
    getProject: s.getProject,
    configs,
    userAllow: ['Bash(ls)'],
    userTimeoutS: undefined,
    committed: s.bus.committed,
    hostId,
    log: pino({ level: 'silent' }),
  });
  t.after(() => svc.close());
  return svc;
}

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
