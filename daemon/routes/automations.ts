import { Automation, AutomationList, AutomationListQuery, AutomationRun, AutomationRunList, CreateAutomation, PatchAutomation } from '../../schemas/automation.ts';
import { IdParams } from '../../schemas/common.ts';
import type { Automations } from '../automations/service.ts';
import { route, type Route } from '../http/route.ts';

// /api/automations (DESIGN §19). Made on its project's host, which checks its agent there and runs
// it; reads, changes and runs-now are the store's, answered anywhere.
export function automationRoutes(deps: { automations: Automations }): Route[] {
  const { automations } = deps;
  return [
    route({
      method: 'POST',
      path: '/api/automations',
      owner: 'project',
      ownerIn: 'body',
      summary: 'Make an automation: agent work started on a schedule (cron or one time), each scheduled time run once',
      body: CreateAutomation,
      responses: { 201: Automation },
      errors: ['SCHEDULE_INVALID', 'UNKNOWN_AGENT', 'MODE_UNSUPPORTED', 'AGENT_REQUIRED', 'AUTOMATION_EXISTS'],
      handler: async ({ body }) => ({ status: 201, body: await automations.create(body) }),
    }),
    route({
      method: 'GET',
      path: '/api/automations',
      summary: 'The automations, of one project or all, each with its next time and last run',
      query: AutomationListQuery,
      responses: { 200: AutomationList },
      handler: async ({ query }) => ({ status: 200, body: await automations.list(query.project_id) }),
    }),
    route({
      method: 'GET',
      path: '/api/automations/:id',
      summary: 'An automation, with its next time and last run',
      params: IdParams,
      responses: { 200: Automation },
      handler: async ({ params }) => ({ status: 200, body: await automations.get(params.id) }),
    }),
    route({
      method: 'PATCH',
      path: '/api/automations/:id',
      summary: 'Change an automation (enabled: false pauses it, true resumes it); a new schedule counts from now',
      params: IdParams,
      body: PatchAutomation,
      responses: { 200: Automation },
      errors: ['SCHEDULE_INVALID', 'UNKNOWN_AGENT', 'MODE_UNSUPPORTED', 'AGENT_REQUIRED', 'AUTOMATION_EXISTS'],
      handler: async ({ params, body }) => ({ status: 200, body: await automations.update(params.id, body) }),
    }),
    route({
      method: 'DELETE',
      path: '/api/automations/:id',
      summary: 'Remove an automation and its runs (their tasks stay)',
      params: IdParams,
      responses: { 204: null },
      handler: async ({ params }) => {
        await automations.remove(params.id);
        return { status: 204 };
      },
    }),
    route({
      method: 'POST',
      path: '/api/automations/:id/runs',
      summary: 'Run an automation now, paused or not',
      params: IdParams,
      responses: { 201: AutomationRun },
      handler: async ({ params }) => ({ status: 201, body: await automations.runNow(params.id) }),
    }),
    route({
      method: 'GET',
      path: '/api/automations/:id/runs',
      summary: "An automation's runs, newest first (the last 100)",
      params: IdParams,
      responses: { 200: AutomationRunList },
      handler: async ({ params }) => ({ status: 200, body: await automations.runs(params.id) }),
    }),
  ];
}
