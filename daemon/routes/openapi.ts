import { Type } from '@sinclair/typebox';
import { buildOpenApi } from './openapi-doc.ts';
import { route, type Reply, type Route } from '../http/route.ts';

// GET /api/openapi.json: the document of every other route, built at its first request and
// kept (building it took ~40 ms of every start, for a document few clients ask for).
export function openApiRoute(deps: { routes: Route[]; version: string }): Route[] {
  let doc: unknown = null;
  const self: Route = route({
    method: 'GET',
    path: '/api/openapi.json',
    summary: 'This API as an OpenAPI 3.1 document',
    responses: { 200: Type.Object({ openapi: Type.Literal('3.1.0') }, { additionalProperties: true }) },
    handler: async (): Promise<Reply> => ({ status: 200, body: (doc ??= buildOpenApi([...deps.routes, self], deps.version)) }),
  });
  return [self];
}
