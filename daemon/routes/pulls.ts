import { IdParams } from '../../schemas/common.ts';
import { OpenPull, PullRequest } from '../../schemas/pull.ts';
import { route, type Route } from '../http/route.ts';
import type { Pulls } from '../pulls/service.ts';

// /api/tasks/:id/pr (DESIGN §20): a task's pull request. Its branch and worktree are on the task's
// host, which pushes, opens and follows it: every call goes there.
export function pullRoutes(deps: { pulls: Pulls }): Route[] {
  const { pulls } = deps;
  return [
    route({
      method: 'POST',
      path: '/api/tasks/:id/pr',
      owner: 'task',
      summary: "Open the task's pull request: what is uncommitted is committed, the branch pushed to origin, the pull request opened against its base (with `Fixes #N` for an issue's task) and followed",
      params: IdParams,
      body: OpenPull,
      responses: { 201: PullRequest },
      errors: ['PR_EXISTS', 'PR_NO_REPOSITORY', 'PR_NO_CHANGES', 'GITHUB_REFUSED', 'GITHUB_UNAVAILABLE', 'TASK_NOT_READY', 'SESSION_RUNNING', 'NO_REMOTE', 'REMOTE_FAILED', 'COMMIT_FAILED'],
      handler: async ({ params, body }) => ({ status: 201, body: await pulls.open(params.id, body) }),
    }),
    route({
      method: 'GET',
      path: '/api/tasks/:id/pr',
      owner: 'task',
      summary: "The task's pull request: its state, and the feedback rounds grove answered",
      params: IdParams,
      responses: { 200: PullRequest },
      handler: async ({ params }) => ({ status: 200, body: await pulls.get(params.id) }),
    }),
  ];
}
