// `grove events` and `watch`: every change as it happens.
import type { GroveEvent } from '../../../schemas/event.ts';
import type { EventFilter } from '../../client/calls.ts';
import type { Command } from '../ctx.ts';
import { str } from '../ctx.ts';
import { CliError, EXIT } from '../errors.ts';
import { table } from '../format.ts';
import { project, task, withHost } from '../lookup.ts';
import { describeEvent, sessionRow, who } from '../render.ts';

export const commands: Record<string, Command> = {
  async events(c) {
    const [p, t] = [str(c.values.project), str(c.values.task)];
    const filter: EventFilter = {
      ...(p !== undefined ? { project_id: (await project(c, p)).id } : {}),
      ...(t !== undefined ? { task_id: (await task(c, t)).id } : {}),
    };
    // The last ten, then live.
    const { recent, last } = await c.api.lastEvents(10, filter);
    const show = (e: GroveEvent) => c.out(c.json ? JSON.stringify(e) : describeEvent(e));
    recent.forEach(show);
    for await (const { event, data } of (await c.api.events(last, filter)).events) {
      if (event === 'end') throw new CliError(`the daemon dropped this stream: ${data.detail}`, EXIT.API);
      show(data);
    }
  },
  async watch(c) {
    const draw = async () => {
      const tasks = (await c.api.tasks()).filter((x) => x.status !== 'archived');
      const rows: Array<Record<string, unknown>> = [];
      // On a team, a task's row names its host (a last column, as in the lists).
      const [hosted, columns] = await withHost(c, tasks, ['task', 'status', 'branch', 'session', 'agent', 'state', 'result']);
      for (const x of hosted) {
        rows.push({ task: x.name, status: x.status, branch: x.branch, session: '', agent: '', state: '', result: '', host: x.host ?? '' });
        for (const s of await c.api.sessions(x.id)) {
          // Sessions that run or wait, and those that ended in the last hour.
          if (s.ended_at && Date.now() - Date.parse(s.ended_at) > 3600_000) continue;
          const r = sessionRow(s);
          rows.push({ task: '', status: '', branch: '', session: r.id, agent: who(s), state: s.status, result: r.result, host: '' });
        }
      }
      const text = `grove watch — ${new Date().toLocaleTimeString()} — Ctrl-C leaves\n\n${table(rows, columns)}\n`;
      process.stdout.write(process.stdout.isTTY ? `\x1b[H\x1b[2J${text}` : text);
    };
    await draw();
    // Redrawn when something changes; a burst of events makes one redraw.
    let pending: NodeJS.Timeout | null = null;
    for await (const { event } of (await c.api.events((await c.api.lastEvents(0)).last)).events) {
      if (event === 'end') return;
      pending ??= setTimeout(() => {
        pending = null;
        void draw();
      }, 200);
    }
  },
};
