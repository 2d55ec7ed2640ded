import { Type } from '@sinclair/typebox';
import { buildOpenApi } from './openapi-doc.ts';
import { route, type Route } from '../http/route.ts';

// GET /api/openapi.json: the document of every route, this one included, built once from the
// route table and its schemas.
export function openApiRoute(deps: { routes: Route[]; version: string }): Route[] {
  const self: Route = route({
    method: 'GET',
    path: '/api/openapi.json',
    summary: 'This API as an OpenAPI 3.1 document',
    responses: { 200: Type.Object({ openapi: Type.Literal('3.1.0') }, { additionalProperties: true }) },
    handler: async () => ({ status: 200, body: doc }),
  });
  const doc = buildOpenApi([...deps.routes, self], deps.version);
  return [self];
}
