import { IdParams } from '../../schemas/common.ts';
import { Type } from '@sinclair/typebox';
import { Changes, ChangesQuery, CommitBody, CommitResult, ConflictList, DiffQuery, MergeBody, MergeResult, parseSide, PushBody, PushResult, RestoreBody, RestoreResult, TurnList } from '../../schemas/review.ts';
import type { IssueRef } from '../../schemas/intake.ts';
import { CreatedTask, type CreateTaskInput, CreateTaskBody, DeleteTaskQuery, Task, TaskList, TaskListQuery, TaskSetup } from '../../schemas/task.ts';
import { GroveError } from '../errors.ts';
import { route, type Route } from '../http/route.ts';
import { wantsEventStream, writeSse } from '../http/sse.ts';
import type { TaskService } from '../tasks/service.ts';
import type { Landing } from '../landing/service.ts';
import { taskSetup } from '../tasks/setup-stream.ts';
import type { TeamWakes } from '../store/wakes.ts';

// ?from=&to= as the review's range (DESIGN §17): absent ends stay absent (the merge-base, the work).
function rangeOf(q: { from?: string | undefined; to?: string | undefined }) {
  return { ...(q.from !== undefined ? { from: parseSide(q.from, 'base') } : {}), ...(q.to !== undefined ? { to: parseSide(q.to, 'work') } : {}) };
}

// /api/tasks: thin adapters from HTTP to the task service.
export function taskRoutes(deps: {
  tasks: TaskService;
  review: Landing['review'];
  /** creation with a first session that may wait for other tasks (DESIGN §17) */
  create: (input: CreateTaskInput) => Promise<{ status: 201 | 202; task: CreatedTask }>;
  setupWakes: Pick<TeamWakes, 'watch'>;
  place: (body: CreateTaskBody) => Promise<CreateTaskBody>;
  /** an issue's URL read for a task made from it (DESIGN §20) */
  issues: { fromUrl: (url: string, instructions: string | undefined) => Promise<{ name: string; issue: IssueRef; prompt: string }> };
}): Route[] {
  const { tasks, review, setupWakes } = deps;
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
      owner: 'project',
      ownerIn: 'body',
      summary: 'Create a task: branch, worktree, ports, setup; by project_id, or by repository on the host placement picks (DESIGN §14.2); with `session` its first session, queued until every task of `after` has merged (DESIGN §17)',
      body: CreateTaskBody,
      responses: { 201: CreatedTask, 202: CreatedTask },
      errors: ['BRANCH_EXISTS', 'CONFIG_INVALID', 'BASE_NOT_FOUND', 'REPO_LOCKED', 'GIT_TIMEOUT', 'AFTER_INVALID', 'AGENT_REQUIRED', 'UNKNOWN_AGENT', 'AGENT_NOT_INSTALLED', 'MODE_UNSUPPORTED', 'ISSUE_NOT_FOUND'],
      place: deps.place,
      handler: async ({ body }) => {
        // place() gave a project_id to a body that had a repository instead.
        const { repository: _r, host: _h, project_id, issue_url, name, session, ...rest } = body;
        const invalid = (path: string) => new GroveError('VALIDATION_FAILED', `${path.slice(1)} is required unless issue_url is given`, { errors: [{ path, message: 'is required unless issue_url is given' }] });
        if (issue_url === undefined) {
          if (name === undefined) throw invalid('/name');
          if (session !== undefined && session.prompt === undefined) throw invalid('/session/prompt');
          const { status, task } = await deps.create({ ...rest, name, ...(session ? { session: { ...session, prompt: session.prompt! } } : {}), project_id: project_id! });
          return { status, body: task };
        }
        const from = await deps.issues.fromUrl(issue_url, session?.prompt);
        const { status, task } = await deps.create({ ...rest, name: name ?? from.name, issue: from.issue, ...(session ? { session: { ...session, prompt: from.prompt } } : {}), project_id: project_id! });
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
          await writeSse(res, await taskSetup({ id: params.id, tasks, team: setupWakes }));
          return null;
        }
        return { status: 200, body: await tasks.setup(params.id) };
      },
    }),
    route({
      method: 'GET',
      path: '/api/tasks/:id/changes',
      owner: 'task',
      summary: 'What the task changed since the merge-base with its base (committed, uncommitted and untracked files), or between two turns or a turn and the work (?from=&to=)',
      params: IdParams,
      query: ChangesQuery,
      responses: { 200: Changes },
      errors: ['TASK_NOT_READY', 'BASE_NOT_FOUND', 'UNSUPPORTED_FILE', 'TURN_NOT_FOUND', 'GIT_TIMEOUT'],
      handler: async ({ params, query, signal, arrived }) => ({ status: 200, body: await review.changes(params.id, rangeOf(query), { signal, arrived }) }),
    }),
    route({
      method: 'GET',
      path: '/api/tasks/:id/diff',
      owner: 'task',
      summary: 'The unified diff of the same (binary files included, as git apply takes them); over 10 MiB it is cut, with Grove-Diff-Truncated: true',
      params: IdParams,
      query: DiffQuery,
      responses: { 200: Type.String() },
      produces: 'text/x-diff',
      errors: ['TASK_NOT_READY', 'BASE_NOT_FOUND', 'UNSUPPORTED_FILE', 'TURN_NOT_FOUND', 'GIT_TIMEOUT'],
      handler: async ({ params, query, req, res, signal, arrived }) => {
        const { diff, truncated } = await review.diff(params.id, query.path, rangeOf(query), { signal, arrived });
        // git's bytes as they are: a file's text need not be UTF-8.
        const body = Buffer.from(diff.buffer, diff.byteOffset, diff.byteLength);
        res.writeHead(200, {
          'content-type': 'text/x-diff; charset=utf-8',
          'content-length': body.length,
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
          ...(truncated ? { 'grove-diff-truncated': 'true' } : {}),
        });
        res.end(req.method === 'HEAD' ? undefined : body);
        return null;
      },
    }),
    route({
      method: 'GET',
      path: '/api/tasks/:id/turns',
      owner: 'task',
      summary: "The task's turns, oldest first: the worktree's whole state recorded when each agent session ended, and the states restores saved (DESIGN §17)",
      params: IdParams,
      responses: { 200: TurnList },
      errors: ['GIT_TIMEOUT'],
      handler: async ({ params, signal, arrived }) => ({ status: 200, body: await review.turns(params.id, { signal, arrived }) }),
    }),
    route({
      method: 'POST',
      path: '/api/tasks/:id/restore',
      owner: 'task',
      summary: "Make the worktree's files and index those of a turn, after saving the present state as a turn of its own (restore that one to undo); the branch never moves",
      params: IdParams,
      body: RestoreBody,
      responses: { 200: RestoreResult },
      errors: ['TASK_NOT_READY', 'TURN_NOT_FOUND', 'SESSION_RUNNING', 'UNSUPPORTED_FILE', 'LANDING_INTERRUPTED', 'REPO_LOCKED', 'GIT_TIMEOUT'],
      handler: async ({ params, body, signal, arrived }) => ({ status: 200, body: await review.restore(params.id, body.turn, { signal, arrived }) }),
    }),
    route({
      method: 'POST',
      path: '/api/tasks/:id/commit',
      owner: 'task',
      summary: "Commit everything uncommitted in the task's worktree (untracked included, ignored excluded) on its branch",
      params: IdParams,
      body: CommitBody,
      responses: { 201: CommitResult },
      errors: ['TASK_NOT_READY', 'NOTHING_TO_COMMIT', 'COMMIT_FAILED', 'LANDING_INTERRUPTED', 'GIT_TIMEOUT'],
      handler: async ({ params, body, signal, arrived }) => ({ status: 201, body: await review.commit(params.id, body.message, { signal, arrived }) }),
    }),
    route({
      method: 'POST',
      path: '/api/tasks/:id/rebase',
      owner: 'task',
      summary: "Rebase the task's branch onto its base's tip; on a conflict the rebase is aborted and the branch left as it was",
      params: IdParams,
      responses: { 200: Task },
      errors: ['TASK_NOT_READY', 'WORKTREE_DIRTY', 'CONFLICT', 'BASE_NOT_FOUND', 'LANDING_INTERRUPTED', 'GIT_TIMEOUT'],
      handler: async ({ params, signal, arrived }) => ({ status: 200, body: await review.rebase(params.id, { signal, arrived }) }),
    }),
    route({
      method: 'POST',
      path: '/api/tasks/:id/merge',
      owner: 'task',
      summary: "Merge the task's branch into its base branch without a checkout; a checkout of the base must be clean and moves with it",
      params: IdParams,
      body: MergeBody,
      responses: { 200: MergeResult },
      errors: ['TASK_NOT_READY', 'WORKTREE_DIRTY', 'BASE_CHECKOUT_DIRTY', 'CONFLICT', 'BASE_NOT_FOUND', 'COMMIT_FAILED', 'LANDING_INTERRUPTED', 'GIT_TIMEOUT'],
      handler: async ({ params, body, signal, arrived }) => ({ status: 200, body: await review.merge(params.id, body, { signal, arrived }) }),
    }),
    route({
      method: 'POST',
      path: '/api/tasks/:id/push',
      owner: 'task',
      summary: "Push the task's branch with its upstream set; never waits for a credential prompt",
      params: IdParams,
      body: PushBody,
      responses: { 200: PushResult },
      errors: ['TASK_NOT_READY', 'NO_REMOTE', 'REMOTE_FAILED', 'GIT_TIMEOUT'],
      handler: async ({ params, body, signal, arrived }) => ({ status: 200, body: await review.push(params.id, body.remote, { signal, arrived }) }),
    }),
    route({
      method: 'GET',
      path: '/api/projects/:id/conflicts',
      owner: 'project',
      summary: "Which live tasks would conflict with each other or with their base, uncommitted work included; nothing is checked out",
      params: IdParams,
      responses: { 200: ConflictList },
      errors: ['UNSUPPORTED_FILE', 'GIT_TIMEOUT'],
      handler: async ({ params, signal, arrived }) => ({ status: 200, body: await review.conflicts(params.id, { signal, arrived }) }),
    }),
    route({
      method: 'GET',
      path: '/api/tasks/:id/teardown',
      summary: "The teardown run by the task's archive: its commands, exit codes and output, in the shape of /setup",
      params: IdParams,
      responses: { 200: TaskSetup },
      handler: async ({ params }) => ({ status: 200, body: await tasks.teardown(params.id) }),
    }),
    route({
      method: 'DELETE',
      path: '/api/tasks/:id',
      owner: 'task',
      summary: 'Archive a task: worktree removed, branch kept, ports released',
      params: IdParams,
      query: DeleteTaskQuery,
      responses: { 200: Task },
      errors: ['WORKTREE_DIRTY', 'REPO_LOCKED', 'GIT_TIMEOUT'],
      handler: async ({ params, query }) => ({ status: 200, body: await tasks.archive(params.id, query.force === true) }),
    }),
  ];
}
