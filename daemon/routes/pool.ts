import { IdParams } from '../../schemas/common.ts';
import { ProjectPool } from '../../schemas/pool.ts';
import { route, type Route } from '../http/route.ts';
import type { WarmPool } from '../tasks/warm.ts';

// /api/projects/:id/pool: the warm pool's slots (DESIGN §16), which no task list shows.
export function poolRoutes(deps: { warm: Pick<WarmPool, 'list'> }): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/projects/:id/pool',
      // Its slots' folders and .grove.json are on the project's host (DESIGN §14.2).
      owner: 'project',
      summary: "List a project's warm pool: the tasks prepared ahead",
      params: IdParams,
      responses: { 200: ProjectPool },
      handler: async ({ params }) => ({ status: 200, body: await deps.warm.list(params.id) }),
    }),
  ];
}
