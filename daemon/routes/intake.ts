import { IdParams } from '../../schemas/common.ts';
import { CreateIntake, Intake } from '../../schemas/intake.ts';
import { route, type Route } from '../http/route.ts';
import type { IntakeService } from '../intake/service.ts';

// /api/projects/:id/intake (DESIGN §20): a project's watch of its repository's labelled issues.
// Its host polls and makes the tasks, and keeps the watch's state: every call goes there.
export function intakeRoutes(deps: { intake: IntakeService }): Route[] {
  const { intake } = deps;
  return [
    route({
      method: 'POST',
      path: '/api/projects/:id/intake',
      owner: 'project',
      summary: "Watch the project's repository: each open issue that carries the label becomes a task, once (a second POST replaces the watch)",
      params: IdParams,
      body: CreateIntake,
      responses: { 200: Intake },
      errors: ['INTAKE_INVALID', 'UNKNOWN_AGENT', 'MODE_UNSUPPORTED', 'AGENT_REQUIRED'],
      handler: async ({ params, body }) => ({ status: 200, body: await intake.put(params.id, body) }),
    }),
    route({
      method: 'GET',
      path: '/api/projects/:id/intake',
      owner: 'project',
      summary: "The project's intake: the watch, its last poll, and what it took or refused and why",
      params: IdParams,
      responses: { 200: Intake },
      handler: async ({ params }) => ({ status: 200, body: await intake.get(params.id) }),
    }),
    route({
      method: 'DELETE',
      path: '/api/projects/:id/intake',
      owner: 'project',
      summary: "Stop watching the project's repository (its tasks stay)",
      params: IdParams,
      responses: { 204: null },
      handler: async ({ params }) => {
        await intake.remove(params.id);
        return { status: 204 };
      },
    }),
  ];
}
