// What the task page's pull request follows (DESIGN §20): each pr.* event (opened, a feedback
// round sent or ended, merged, closed or no longer followed) moves its task's mark, and the page
// reads the task's pull request again.
import type { GroveEvent } from '../../schemas/event.ts';

export interface PullState {
  /** the seq of each task's last pull request event: its pull request is read again when it moves */
  pullSeq: Map<string, number>;
}

export const emptyPulls = (): PullState => ({ pullSeq: new Map() });

export const isPullEvent = (e: GroveEvent) => e.type.startsWith('pr.');

export function applyPull(state: PullState, e: GroveEvent): void {
  if (e.task_id !== null) state.pullSeq.set(e.task_id, e.seq);
}
