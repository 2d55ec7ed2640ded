import { GroveError } from '../errors.ts';
import { createKeyedMutex } from '../runtime/keyed-mutex.ts';

// Session starts and the beginning of an archive take turns per task, so no start slips past an
// archive: a start admitted before the archive began has stored its row when the archive kills
// (and is killed with the others); one after is refused. Shared by the sessions and the archive.
export function createTaskGate() {
  const turns = createKeyedMutex();
  // Archives under way, by task (two DELETEs of one task may overlap).
  const closing = new Map<string, number>();
  return {
    // Runs `start` (its checks and the storing of its row) unless an archive of the task has begun.
    admit<T>(taskId: string, start: () => Promise<T>): Promise<T> {
      return turns.run(taskId, async () => {
        if (closing.has(taskId)) throw new GroveError('TASK_NOT_READY', `task ${taskId} is being archived; nothing starts on it`);
        return start();
      });
    },
    // An archive begins: once the starts under way are done, every other is refused until end().
    async close(taskId: string): Promise<void> {
      await turns.run(taskId, async () => void closing.set(taskId, (closing.get(taskId) ?? 0) + 1));
    },
    // The archive ended: archived (its status refuses starts from then on) or refused (the task goes on).
    end(taskId: string): void {
      const n = (closing.get(taskId) ?? 1) - 1;
      if (n > 0) closing.set(taskId, n);
      else closing.delete(taskId);
    },
    isClosing: (taskId: string) => closing.has(taskId),
  };
}

export type TaskGate = ReturnType<typeof createTaskGate>;
