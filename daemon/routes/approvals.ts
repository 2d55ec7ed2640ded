import { Approval, ApprovalAsk, ApprovalDecision, ApprovalList, ApprovalListQuery, ApprovalWaitQuery } from '../../schemas/approval.ts';
import { IdParams } from '../../schemas/common.ts';
import type { ApprovalService } from '../approvals/service.ts';
import { route, type Route } from '../http/route.ts';

// The person in the loop (DESIGN §15): approvals listed, read (or waited on), decided; and the
// ask API the agents' bridges call (a grove addition).
export function approvalRoutes(deps: { approvals: ApprovalService }): Route[] {
  const { approvals } = deps;
  return [
    route({
      method: 'GET',
      path: '/api/approvals',
      summary: 'Approvals (of a status, a task, a session), oldest first',
      query: ApprovalListQuery,
      responses: { 200: ApprovalList },
      handler: async ({ query }) => ({ status: 200, body: await approvals.list(query) }),
    }),
    route({
      method: 'GET',
      path: '/api/approvals/:id',
      summary: 'Get an approval; with ?wait=S (grove addition, at most 60) the answer waits up to S seconds while it is pending: how a bridge waits for its verdict, across daemon restarts too',
      params: IdParams,
      query: ApprovalWaitQuery,
      responses: { 200: Approval },
      handler: async ({ params, query, signal }) => ({ status: 200, body: await approvals.get(params.id, query.wait ?? 0, signal) }),
    }),
    route({
      method: 'POST',
      path: '/api/approvals/:id',
      owner: 'approval',
      summary: 'Decide a pending approval, once: allow (remember: a rule for the session or the project) or deny (with a message); a question is allowed with its answer',
      params: IdParams,
      body: ApprovalDecision,
      responses: { 200: Approval },
      errors: ['APPROVAL_DECIDED', 'APPROVAL_STALE'],
      handler: async ({ params, body }) => ({ status: 200, body: await approvals.decide(params.id, body) }),
    }),
    route({
      method: 'POST',
      path: '/api/sessions/:id/approvals',
      summary:
        "Grove addition, for agents' bridges: ask the person about a tool call (or a question). Idempotent by key (the agent's tool-use id): 201 when recorded, 200 with the same approval when asked again; already allowed when a rule matches",
      params: IdParams,
      body: ApprovalAsk,
      responses: { 200: Approval, 201: Approval },
      errors: ['SESSION_NOT_RUNNING'],
      handler: async ({ params, body }) => {
        const { created, approval } = await approvals.ask(params.id, body);
        return { status: created ? 201 : 200, body: approval };
      },
    }),
  ];
}
