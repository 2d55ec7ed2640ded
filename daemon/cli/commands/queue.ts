// `grove queue add|ls|rm`: the merge queue (DESIGN §17), which lands tasks one at a time per base.
import type { QueueEntry } from '../../../schemas/queue.ts';
import type { MergeStrategy } from '../../../schemas/review.ts';
import type { Command } from '../ctx.ts';
import { arg, oneOf, print } from '../ctx.ts';
import { shortId, table } from '../format.ts';
import { project, task, taskNames } from '../lookup.ts';

const STRATEGIES: MergeStrategy[] = ['merge', 'squash', 'ff'];
export const QUEUE_COLS = ['position', 'task', 'base', 'state', 'tries', 'strategy', 'reason'];

// An entry as a row: the task by name, and why its last landing failed (a conflict's reason names
// its files; a check's last line is added) where it did.
function queueRow(e: QueueEntry, names: Map<string, string>): Record<string, unknown> {
  const why = e.reason === null ? null : e.output?.length ? `${e.reason}; last line: ${e.output.at(-1)}` : e.reason;
  return { ...e, task: names.get(e.task_id) ?? shortId(e.task_id), strategy: e.fix ? `${e.strategy}, fix` : e.strategy, reason: why };
}

export const commands: Record<string, Command> = {
  async 'queue add'(c) {
    const strategy = oneOf(c, 'strategy', STRATEGIES);
    const t = await task(c, arg(c, 0, 'task'));
    const e = await c.api.enqueue(t.project_id, { task_id: t.id, ...(strategy ? { strategy } : {}), ...(c.values.fix ? { fix: true } : {}) });
    print(c, e, () => `task ${t.name} is queued to land on ${e.base} at position ${e.position} (${e.strategy}${e.fix ? ', fixed on failure' : ''})`);
  },
  // One project's queue, or every project's (with a PROJECT column) when none is named.
  async 'queue ls'(c) {
    const key = c.positionals[0];
    const names = await taskNames(c);
    if (key !== undefined) {
      const list = await c.api.queue((await project(c, key)).id);
      return print(c, list, () => table(list.map((e) => queueRow(e, names)), QUEUE_COLS));
    }
    const projects = await c.api.projects();
    const lists = await Promise.all(projects.map(async (p) => (await c.api.queue(p.id)).map((e) => ({ e, project: p.name }))));
    const all = lists.flat();
    print(c, all.map((x) => x.e), () => table(all.map((x) => ({ project: x.project, ...queueRow(x.e, names) })), ['project', ...QUEUE_COLS]));
  },
  async 'queue rm'(c) {
    const t = await task(c, arg(c, 0, 'task'));
    await c.api.dequeue(t.project_id, t.id);
    print(c, { removed: t.id }, () => `task ${t.name} is out of the merge queue`);
  },
};
