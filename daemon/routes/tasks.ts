import { IdParams } from '../../schemas/common.ts';
import { CreateTask, DeleteTaskQuery, Task, TaskList, TaskListQuery, TaskSetup } from '../../schemas/task.ts';
import { route, type Route } from '../http/route.ts';
import type { TaskService } from '../tasks/service.ts';
import { streamSetup } from '../tasks/setup-stream.ts';
import { wantsEventStream } from '../events/stream.ts';

// /api/tasks: thin adapters from HTTP to the task service.
export function taskRoutes(deps: { tasks: TaskService }): Route[] {
  const { tasks } = deps;
  return [
    route({
      method: 'GET',
      path: '/api/tasks',
      summary: "List tasks (all, or one project's)",
      query: TaskListQuery,
      responses: { 200: TaskList },
      handler: async ({ query }) => ({ status: 200, body: await tasks.list(query.project_id) }),
    }),
    route({
      method: 'POST',
      path: '/api/tasks',
      summary: 'Create a task: branch, worktree, ports, setup',
      body: CreateTask,
      responses: { 201: Task, 202: Task },
      errors: ['BRANCH_EXISTS', 'CONFIG_INVALID', 'BASE_NOT_FOUND', 'REPO_LOCKED'],
      handler: async ({ body }) => {
        const { status, task } = await tasks.create(body);
        return { status, body: task };
      },
    }),
    route({
      method: 'GET',
      path: '/api/tasks/:id',
      summary: 'Get a task',
      params: IdParams,
      responses: { 200: Task },
      handler: async ({ params }) => ({ status: 200, body: await tasks.get(params.id) }),
    }),
    route({
      method: 'GET',
      path: '/api/tasks/:id/setup',
      summary: "A task's setup commands, exit codes and output; with Accept: text/event-stream, followed live until setup ends",
      params: IdParams,
      responses: { 200: TaskSetup },
      handler: async ({ params, req, res }) => {
        if (wantsEventStream(req)) {
          await streamSetup({ id: params.id, res, tasks });
          return null;
        }
        return { status: 200, body: await tasks.setup(params.id) };
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/tasks/:id',
      summary: 'Archive a task: worktree removed, branch kept, ports released',
      params: IdParams,
      query: DeleteTaskQuery,
      responses: { 200: Task },
      errors: ['WORKTREE_DIRTY', 'REPO_LOCKED'],
      handler: async ({ params, query }) => ({ status: 200, body: await tasks.archive(params.id, query.force === true) }),
    }),
  ];
}
