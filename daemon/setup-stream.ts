import { openEventStream } from './http/event-stream.ts';
import type { ServerResponse } from 'node:http';
import type { TaskService } from './tasks.ts';

// GET /api/tasks/:id/setup with Accept: text/event-stream (an addition to DESIGN §4): the
// setup as it happens — `event: command` when a command starts (exit_code and ended_at null)
// and again when it ends (data: its index and record), `event: line` per output line
// (`id: <seq>`), and `event: end` with the task once setup is over. The CLI shows task creation progress with it.
export async function streamSetup(opts: { id: string; res: ServerResponse; tasks: TaskService }): Promise<void> {
  const { id, res, tasks } = opts;
  await tasks.get(id);
  let after = 0;
  // Per command: whether its start and its end have been announced.
  const announced: Array<{ start: boolean; end: boolean }> = [];
  const stream = openEventStream(res, tasks.events, [`setup:${id}`]);
  try {
    while (!stream.closed) {
      stream.beginRound();
      const task = await tasks.get(id);
      const commands = await tasks.setupCommands(id);
      const lines = await tasks.setupLinesAfter(id, after);
      // Starts, lines and ends in the order they happened (a start before a line of the same
      // moment, an end after it), so a client can print them as a transcript.
      const items: Array<{ at: string; rank: number; text: string }> = [];
      for (const [idx, cmd] of commands.entries()) {
        const a = (announced[idx] ??= { start: false, end: false });
        if (!a.start) {
          a.start = true;
          const start = { ...cmd, exit_code: null, signal: null, timed_out: false, ended_at: null };
          items.push({ at: cmd.started_at, rank: 0, text: `event: command\ndata: ${JSON.stringify({ idx, ...start })}\n\n` });
        }
        if (!a.end && cmd.ended_at !== null) {
          a.end = true;
          items.push({ at: cmd.ended_at, rank: 2, text: `event: command\ndata: ${JSON.stringify({ idx, ...cmd })}\n\n` });
        }
      }
      for (const line of lines) {
        after = line.seq;
        items.push({ at: line.at, rank: 1, text: `id: ${line.seq}\nevent: line\ndata: ${JSON.stringify(line)}\n\n` });
      }
      items.sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : x.rank - y.rank));
      for (const item of items) await stream.write(item.text);
      if (task.status !== 'setting_up') {
        await stream.write(`event: end\ndata: ${JSON.stringify(task)}\n\n`);
        return;
      }
      await stream.waitForChange();
    }
  } finally {
    stream.end();
  }
}
