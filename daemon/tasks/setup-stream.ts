import type { ServerResponse } from 'node:http';
import { follow, sseEvent } from '../events/stream.ts';
import type { TaskService } from './service.ts';

// GET /api/tasks/:id/setup with Accept: text/event-stream (an addition to DESIGN §4): the
// setup as it happens — `event: command` when a command starts (exit_code and ended_at null)
// and again when it ends (data: its index and record), `event: line` per output line
// (`id: <seq>`), and `event: end` with the task once setup is over. The CLI shows task
// creation progress with it.
export async function streamSetup(opts: { id: string; res: ServerResponse; tasks: TaskService }): Promise<void> {
  const { id, res, tasks } = opts;
  await tasks.get(id);
  let after = 0;
  // Per command: whether its start and its end have been announced.
  const announced: Array<{ start: boolean; end: boolean }> = [];
  await follow(res, tasks.events, [`setup:${id}`], async (send) => {
    const task = await tasks.get(id);
    const commands = await tasks.setupCommands(id);
    const lines = await tasks.setupLinesAfter(id, after);
    // Starts, lines and ends in the order they happened, so a client can print them as a
    // transcript: commands run one after another, so the command index orders first, then
    // start, lines, end. Timestamps alone can tie.
    const items: Array<{ idx: number; rank: number; seq: number; text: string }> = [];
    for (const [idx, cmd] of commands.entries()) {
      const a = (announced[idx] ??= { start: false, end: false });
      if (!a.start) {
        a.start = true;
        const start = { ...cmd, exit_code: null, signal: null, timed_out: false, interrupted: false, ended_at: null };
        items.push({ idx, rank: 0, seq: 0, text: sseEvent('command', { idx, ...start }) });
      }
      if (!a.end && cmd.ended_at !== null) {
        a.end = true;
        items.push({ idx, rank: 2, seq: 0, text: sseEvent('command', { idx, ...cmd }) });
      }
    }
    for (const { line, idx } of lines) {
      after = line.seq;
      // Lines stored before commands were recorded with them: the last command started by then.
      const cmdIdx = idx ?? Math.max(0, commands.findLastIndex((c) => c.started_at <= line.at));
      items.push({ idx: cmdIdx, rank: 1, seq: line.seq, text: sseEvent('line', line, line.seq) });
    }
    items.sort((x, y) => x.idx - y.idx || x.rank - y.rank || x.seq - y.seq);
    for (const item of items) await send(item.text);
    if (task.status === 'setting_up') return 'wait';
    await send(sseEvent('end', task));
    return 'end';
  });
}
