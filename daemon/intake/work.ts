// An issue's work after it was taken (DESIGN §20), said on the issue as it goes:
// - taken: a comment naming the task, and the label `grove:working`;
// - its session ended with changes: landed as the watch says (`pr`: a pull request, whose link is
//   commented; `queue`: the merge queue, the merge commented once it lands; `none`: the task named
//   for review), `grove:working` removed;
// - its session failed, or ended with no change, or the queue could not land it: `grove:failed`
//   and a comment with the reason.
// Each step is recorded (`reported`) once GitHub took it, so a step GitHub refused is tried again
// at the next poll, and a restart goes on where it was.
import type { Session } from '../../schemas/session.ts';
import type { Task } from '../../schemas/task.ts';
import type { Changes } from '../../schemas/review.ts';
import type { QueueBody } from '../../schemas/queue.ts';
import { GroveError } from '../errors.ts';
import { LABEL_FAILED, LABEL_WORKING, type IssueWriter } from '../github/issues.ts';
import { createCoalescer } from '../runtime/coalesce.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import type { Listen } from '../runtime/signal.ts';
import type { IntakeItemsTable, StoredItem } from '../store/intake-items.ts';
import type { IntakesTable } from '../store/intakes.ts';

export interface WorkDeps {
  items: IntakeItemsTable;
  intakes: Pick<IntakesTable, 'get'>;
  writer: () => IssueWriter;
  tasks: { get: (id: string) => Promise<Task> };
  sessions: { get: (id: string) => Promise<Session>; ended: Listen<string> };
  changes: (taskId: string) => Promise<Changes>;
  commit: (taskId: string, message: string) => Promise<unknown>;
  queue: { add: (projectId: string, body: QueueBody) => Promise<unknown>; has: (taskId: string) => Promise<boolean> };
  /** opens the task's pull request (DESIGN §20); null where pull requests are not available */
  openPr: ((taskId: string) => Promise<{ number: number; url: string }>) | null;
  hostId: string;
  log: Logger;
}

const busy = (s: Session) => s.status === 'queued' || s.status === 'starting' || s.status === 'running';

export function createIntakeWork(deps: WorkDeps) {
  const { items, log } = deps;
  let closed = false;

  const loop = createCoalescer<string>(async (itemId) => {
    if (closed) return;
    try {
      await step(itemId);
    } catch (err) {
      // GitHub down or refusing: the next poll tries again.
      log.warn({ item: itemId, err: (err as Error).message }, "an intake issue's write-back did not go through; it is tried again at the next poll");
    }
  });

  async function step(itemId: string): Promise<void> {
    const item = (await items.open(deps.hostId)).find((i) => i.id === itemId);
    if (!item) return;
    const w = deps.writer();
    if (item.outcome === 'claimed') {
      // Claimed by a daemon that stopped before the task was made: not made twice, said.
      const reason = 'grove stopped while it was making the task; nothing was started twice. Remove the label and add it again to try again.';
      await items.fail(item.id, reason);
      await w.labels(item.repository, item.number, { add: [LABEL_FAILED] });
      await w.comment(item.repository, item.number, `grove could not take this issue: ${reason}`);
      return;
    }
    const task = await deps.tasks.get(item.task_id!);
    if (item.reported === null) {
      await w.labels(item.repository, item.number, { add: [LABEL_WORKING], remove: [LABEL_FAILED] });
      await w.comment(item.repository, item.number, `grove took this issue: task **${task.name}** (\`${task.id}\`) on branch \`${task.branch}\`; an agent is working on it.`);
      await items.report(item.id, 'working', [null]);
      log.info({ item: item.id, repository: item.repository, issue: item.number, task: task.id }, 'intake: the issue says that work began');
    }
    await afterSession(item, task, w);
  }

  async function afterSession(item: StoredItem, task: Task, w: IssueWriter): Promise<void> {
    const intake = await deps.intakes.get(item.project_id);
    if (item.reported === 'landing') {
      // The queue first: a landing marks the task merged before it leaves the queue.
      if (await deps.queue.has(task.id)) return;
      const now = await deps.tasks.get(task.id);
      if (now.merged_at !== null) return done(item, w, `The work was merged into \`${now.base}\` (${now.merged_commit?.slice(0, 12) ?? 'merged'}).`);
      return failed(item, w, 'the merge queue could not land the work (its checks or rebase failed); the task is left for review in grove.');
    }
    if (item.session_id === null) return;
    const s = await deps.sessions.get(item.session_id).catch(() => null);
    if (s !== null && busy(s)) return;
    const ok = s !== null && s.status === 'exited' && s.exit_code === 0;
    const said = s?.result?.text?.trim() ?? '';
    if (!ok) {
      const how = s === null ? 'its session is gone' : `the agent's session ${s.status}${s.exit_code !== null ? ` with exit code ${s.exit_code}` : ''}`;
      return failed(item, w, `${how}.${said ? `\n\n> ${said.slice(0, 2000).replace(/\n/g, '\n> ')}` : ''}`);
    }
    let changes: Changes;
    try {
      changes = await deps.changes(task.id);
    } catch (err) {
      if (!(err instanceof GroveError)) throw err;
      return failed(item, w, `its changes could not be read: ${err.detail}`);
    }
    if (changes.files.length === 0 && changes.ahead === 0) return failed(item, w, `the agent ended without changing anything.${said ? `\n\n> ${said.slice(0, 2000).replace(/\n/g, '\n> ')}` : ''}`);
    const land = intake?.land ?? 'pr';
    if (land === 'pr' && deps.openPr !== null) {
      let pr: { number: number; url: string };
      try {
        pr = await deps.openPr(task.id);
      } catch (err) {
        // GitHub unavailable: tried again at the next poll; refused (no remote, no access): said.
        if (!(err instanceof GroveError) || err.code === 'GITHUB_UNAVAILABLE') throw err;
        return failed(item, w, `its pull request could not be opened: ${err.detail}`);
      }
      return done(item, w, `grove opened pull request #${pr.number} for this issue: ${pr.url}`);
    }
    if (land === 'queue') {
      if (changes.uncommitted > 0) await deps.commit(task.id, `Resolve #${item.number}: ${item.title}${said ? `\n\n${said}` : ''}`);
      await deps.queue.add(task.project_id, { task_id: task.id, fix: true });
      await items.report(item.id, 'landing', ['working']);
      log.info({ item: item.id, task: task.id }, "intake: an issue's task queued to land");
      return;
    }
    return done(item, w, `The agent finished: the work is on branch \`${task.branch}\` (task \`${task.id}\`), waiting for review in grove.${said ? `\n\n> ${said.slice(0, 2000).replace(/\n/g, '\n> ')}` : ''}`);
  }

  async function done(item: StoredItem, w: IssueWriter, text: string): Promise<void> {
    await w.comment(item.repository, item.number, text);
    await w.labels(item.repository, item.number, { remove: [LABEL_WORKING] });
    await items.report(item.id, 'done', ['working', 'landing']);
    log.info({ item: item.id, repository: item.repository, issue: item.number }, 'intake: the issue says the work is done');
  }

  async function failed(item: StoredItem, w: IssueWriter, reason: string): Promise<void> {
    await w.labels(item.repository, item.number, { add: [LABEL_FAILED], remove: [LABEL_WORKING] });
    await w.comment(item.repository, item.number, `grove could not resolve this issue: ${reason}`);
    await items.report(item.id, 'failed', ['working', 'landing']);
    log.info({ item: item.id, repository: item.repository, issue: item.number, reason }, 'intake: the issue says the work failed');
  }

  // A session's end moves its item on.
  const stopEnded = deps.sessions.ended.onAnyChange((sessionId) => {
    void items.open(deps.hostId).then((open) => {
      for (const i of open) if (i.session_id === sessionId) void loop.run(i.id);
    });
  });

  return {
    wake: (itemId: string) => loop.run(itemId),
    // Every open item of this host (of a project, when given) goes one step on: at start and at
    // each poll.
    async sweep(projectId?: string): Promise<void> {
      const open = await items.open(deps.hostId);
      await Promise.all(open.filter((i) => projectId === undefined || i.project_id === projectId).map((i) => loop.run(i.id)));
    },
    close: once(async () => {
      closed = true;
      stopEnded();
      await loop.close();
    }),
  };
}

export type IntakeWork = ReturnType<typeof createIntakeWork>;
