import { wakeOn, type Source, type StreamEvent } from '../runtime/follow.ts';
import type { TeamWakes } from '../store/wakes.ts';
import type { TaskService } from './service.ts';

// GET /api/tasks/:id/setup with Accept: text/event-stream (an addition to DESIGN §4): the
// setup as it happens — `command` when a command starts (exit_code and ended_at null) and
// again when it ends (data: its index and record), `line` per output line (id its seq), and
// `end` with the task once setup is over. The CLI shows task creation progress with it.
// Resolves once the task is known to exist: a 404 goes before any header is sent. Another
// host's task (on a shared store) wakes its followers here through `team`.
export async function taskSetup(opts: { id: string; tasks: TaskService; team?: Pick<TeamWakes, 'watch'> }): Promise<Source> {
  const { id, tasks, team } = opts;
  await tasks.get(id);
  return async function* (signal): AsyncGenerator<StreamEvent> {
    let after = 0;
    // Per command: whether its start and its end have been announced.
    const announced: Array<{ start: boolean; end: boolean }> = [];
    const wake = wakeOn(signal, (poke) => [tasks.setupProgress.onChange(id, poke), team?.watch(id, poke) ?? (() => {})]);
    try {
      while (!signal.aborted) {
        wake.reset();
        const task = await tasks.get(id);
        const commands = await tasks.setupCommands(id);
        const lines = await tasks.setupLinesAfter(id, after);
        // Starts, lines and ends in the order they happened, so a client can print them as a
        // transcript: commands run one after another, so the command index orders first, then
        // start, lines, end. Timestamps alone can tie.
        const items: Array<{ idx: number; rank: number; seq: number; event: StreamEvent }> = [];
        for (const [idx, cmd] of commands.entries()) {
          const a = (announced[idx] ??= { start: false, end: false });
          if (!a.start) {
            a.start = true;
            const start = { ...cmd, exit_code: null, signal: null, timed_out: false, interrupted: false, ended_at: null };
            items.push({ idx, rank: 0, seq: 0, event: { event: 'command', data: { idx, ...start } } });
          }
          if (!a.end && cmd.ended_at !== null) {
            a.end = true;
            items.push({ idx, rank: 2, seq: 0, event: { event: 'command', data: { idx, ...cmd } } });
          }
        }
        for (const { line, idx } of lines) {
          after = line.seq;
          // Lines stored before commands were recorded with them: the last command started by then.
          const cmdIdx = idx ?? Math.max(0, commands.findLastIndex((c) => c.started_at <= line.at));
          items.push({ idx: cmdIdx, rank: 1, seq: line.seq, event: { event: 'line', data: line, id: line.seq } });
        }
        items.sort((x, y) => x.idx - y.idx || x.rank - y.rank || x.seq - y.seq);
        for (const item of items) yield item.event;
        if (task.status !== 'setting_up') {
          yield { event: 'end', data: task };
          return;
        }
        await wake.wait();
      }
    } finally {
      wake.stop();
    }
  };
}
