import { IdParams } from '../../schemas/common.ts';
import { QueueBody, QueueEntry, QueueList, QueueTaskParams } from '../../schemas/queue.ts';
import { route, type Route } from '../http/route.ts';
import type { MergeQueue } from '../landing/queue.ts';

// /api/projects/:id/queue: the merge queue (DESIGN §17). Its project's host lands it, so adds and
// removals run there (DESIGN §14.2): an add wakes the lander of the host that lands. The list is
// the store's, answered anywhere.
export function queueRoutes(deps: { queue: Pick<MergeQueue, 'add' | 'list' | 'remove'> }): Route[] {
  const { queue } = deps;
  return [
    route({
      method: 'POST',
      path: '/api/projects/:id/queue',
      owner: 'project',
      summary: "Queue a task to land on its base branch: rebased onto the base's tip, checked, merged, one at a time",
      params: IdParams,
      body: QueueBody,
      responses: { 201: QueueEntry },
      errors: ['ALREADY_QUEUED', 'TASK_NOT_QUEUEABLE'],
      handler: async ({ params, body }) => ({ status: 201, body: await queue.add(params.id, body) }),
    }),
    route({
      method: 'GET',
      path: '/api/projects/:id/queue',
      summary: "A project's merge queue: its entries in order, per base branch",
      params: IdParams,
      responses: { 200: QueueList },
      handler: async ({ params }) => ({ status: 200, body: await queue.list(params.id) }),
    }),
    route({
      method: 'DELETE',
      path: '/api/projects/:id/queue/:task_id',
      owner: 'project',
      summary: 'Take a task out of the merge queue (not while it is being landed)',
      params: QueueTaskParams,
      responses: { 204: null },
      errors: ['QUEUE_LANDING'],
      handler: async ({ params }) => {
        await queue.remove(params.id, params.task_id);
        return { status: 204 };
      },
    }),
  ];
}
