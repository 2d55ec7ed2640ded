// The merge queues the dashboard shows (DESIGN §17), kept current by the queue.* events: an event
// reloads its project's queue (positions move when another entry lands or leaves), and a failure
// that takes a task out is kept, with its reason and output, until the task is queued again.
import type { GroveEvent } from '../../schemas/event.ts';
import type { QueueEntry } from '../../schemas/queue.ts';
import { api } from './api.ts';
import { newestReads } from './reload.ts';

// A queue.failed event's entry: out of the queue, or being fixed, and why.
export type QueueFailure = Omit<QueueEntry, 'state'> & { state: 'out' | 'fixing'; note?: string; at: string };

export interface QueueState {
  /** each project's queue, in order per base, as GET /api/projects/:id/queue answers it */
  queues: Map<string, QueueEntry[]>;
  /** the last failure of each task the queue took out or is fixing, by task id */
  queueFailures: Map<string, QueueFailure>;
}

export const emptyQueues = (): QueueState => ({ queues: new Map(), queueFailures: new Map() });

export const isQueueEvent = (e: GroveEvent) => e.type.startsWith('queue.');

const readQueue = (projectId: string) => api<QueueEntry[]>('GET', `/api/projects/${projectId}/queue`);

// The queues of these projects, read at the page's first load.
export async function loadQueues(projectIds: string[]): Promise<Map<string, QueueEntry[]>> {
  return new Map(await Promise.all(projectIds.map(async (id) => [id, await readQueue(id)] as const)));
}

// What applies the queue's events to `state`; `changed` is told when a reload has answered.
export function queueFeed(state: () => QueueState, changed: () => void) {
  const reload = newestReads(readQueue, (projectId, list) => state().queues.set(projectId, list), changed);
  return {
    apply(e: GroveEvent): void {
      const failures = state().queueFailures;
      if (e.type === 'queue.failed') failures.set(e.task_id!, { ...(e.data as QueueFailure), at: e.at });
      else if (e.type === 'queue.landed' || e.type === 'queue.removed') failures.delete(e.task_id!);
      // Queued again after a fix: its failure stays shown until it lands or fails again.
      else if (e.type === 'queue.added' && failures.get(e.task_id!)?.state === 'out') failures.delete(e.task_id!);
      reload(e.project_id!);
    },
  };
}
