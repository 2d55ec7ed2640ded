// A task's pull request (DESIGN §20): opened by hand (POST /api/tasks/:id/pr), by an automation or
// an intake whose `land` is "pr", then followed by this host until it merges or closes.
import type { OpenPull, PullRequest } from '../../schemas/pull.ts';
import { GroveError } from '../errors.ts';
import { once } from '../runtime/once.ts';
import { publicPull, type PullRequestsTable } from '../store/pull-requests.ts';
import { createFollower, type FollowDeps } from './follow.ts';
import { createOpener, type OpenDeps } from './open.ts';

export interface PullsDeps extends Omit<OpenDeps, 'pulls' | 'sessions'>, Omit<FollowDeps, 'pulls' | 'github' | 'review'> {
  pulls: PullRequestsTable;
}

export function createPulls(deps: PullsDeps) {
  const opener = createOpener(deps);
  const follower = createFollower(deps);

  return {
    async open(taskId: string, body: OpenPull = {}): Promise<PullRequest> {
      return publicPull(await opener.open(taskId, body));
    },
    // The task's open pull request, opened if it has none: what automations and intake land by,
    // so that a step tried again after a failure further on does not open a second one.
    async ensure(taskId: string): Promise<PullRequest> {
      const open = await deps.pulls.get(taskId);
      return publicPull(open?.state === 'open' ? open : await opener.open(taskId));
    },
    async get(taskId: string): Promise<PullRequest> {
      const task = await deps.tasks.get(taskId);
      const p = await deps.pulls.get(task.id);
      if (!p) throw new GroveError('NOT_FOUND', `task ${task.name} has no pull request`);
      return publicPull(p);
    },
    /** reads the task's pull request now, rather than at the next poll */
    wake: (taskId: string) => follower.wake(taskId),
    start: () => follower.start(),
    close: once(() => follower.close()),
  };
}

export type Pulls = ReturnType<typeof createPulls>;
