import { Type } from '@sinclair/typebox';
import { buildOpenApi } from '../openapi.ts';
import { route, type Route } from '../http/route.ts';

// GET /api/openapi.json: the document of every other route, built once when the table is made.
export function openApiRoute(deps: { routes: Route[]; version: string }): Route[] {
  const self = route({
    method: 'GET',
    path: '/api/openapi.json',
    summary: 'This API as an OpenAPI 3.1 document',
    responses: { 200: Type.Object({ openapi: Type.Literal('3.1.0') }, { additionalProperties: true }) },
    handler: async () => ({ status: 200, body: doc }),
  });
  const doc = buildOpenApi([...deps.routes, self], deps.version);
  return [self];
}
