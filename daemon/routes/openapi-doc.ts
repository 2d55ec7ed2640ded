import type { TSchema } from '@sinclair/typebox';
import { ERRORS, type ErrorCode } from '../errors.ts';
import type { Route } from '../http/route.ts';
import { Problem } from '../../schemas/common.ts';

// Errors any endpoint can answer, by what it takes: every route can fail validation of its
// path or query, be asked with the wrong method, or fail inside.
const GENERIC: ErrorCode[] = ['NOT_FOUND', 'METHOD_NOT_ALLOWED', 'INSUFFICIENT_STORAGE', 'STORE_UNAVAILABLE', 'INTERNAL'];
const WITH_PARAMS: ErrorCode[] = ['INVALID_ID'];
const WITH_QUERY: ErrorCode[] = ['VALIDATION_FAILED'];
const WITH_BODY: ErrorCode[] = ['INVALID_JSON', 'VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];
// Answered by the TCP front before a request reaches any route.
const FRONT: ErrorCode[] = ['FORBIDDEN_HOST', 'FORBIDDEN_ORIGIN', 'FORBIDDEN_PEER', 'UNAVAILABLE'];

// A TypeBox schema as plain JSON Schema: symbols dropped, named schemas referenced.
function plain(schema: TSchema, named: Map<string, unknown>, top = true): unknown {
  const json = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  const walk = (node: unknown, root: boolean): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n, false));
    if (node === null || typeof node !== 'object') return node;
    const obj = node as Record<string, unknown>;
    const id = typeof obj.$id === 'string' ? obj.$id : null;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(obj)) if (k !== '$id') out[k] = walk(v, false);
    if (id && !(root && !top)) {
      named.set(id, out);
      return { $ref: `#/components/schemas/${id}` };
    }
    return out;
  };
  return walk(json, true);
}

// The OpenAPI 3.1 document of the route table, built from the same schemas as the validators.
export function buildOpenApi(routes: Route[], version: string): unknown {
  const named = new Map<string, unknown>();
  const problemRef = plain(Problem, named);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const p = r.path.replace(/:([a-z_]+)/g, '{$1}');
    const parameters: unknown[] = [];
    const params = r.params as unknown as { properties?: Record<string, TSchema> } | undefined;
    for (const [name, s] of Object.entries(params?.properties ?? {})) {
      parameters.push({ name, in: 'path', required: true, schema: plain(s, named) });
    }
    const query = r.query as unknown as { properties?: Record<string, TSchema>; required?: string[] } | undefined;
    for (const [name, s] of Object.entries(query?.properties ?? {})) {
      parameters.push({ name, in: 'query', required: query?.required?.includes(name) ?? false, schema: plain(s, named) });
    }
    const responses: Record<string, unknown> = {};
    for (const [status, s] of Object.entries(r.responses)) {
      responses[status] = s
        ? { description: ERRORS_DESCRIPTION[status] ?? 'success', content: { [r.produces ?? 'application/json']: { schema: plain(s, named) } } }
        : { description: 'no content' };
    }
    const codes = new Set<ErrorCode>([
      ...GENERIC,
      ...FRONT,
      ...(r.params ? WITH_PARAMS : []),
      ...(r.query ? WITH_QUERY : []),
      ...(r.body ? WITH_BODY : []),
      // Run on another host's resource: that host offline, or refusing (DESIGN §14.2).
      ...(r.owner ? (['HOST_OFFLINE', 'REMOTE_REFUSED'] as const) : []),
      ...(r.errors ?? []),
    ]);
    const byStatus = new Map<number, ErrorCode[]>();
    for (const c of codes) byStatus.set(ERRORS[c].status, [...(byStatus.get(ERRORS[c].status) ?? []), c]);
    for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
      responses[String(status)] = {
        description: `problem: ${list.sort().join(', ')}`,
        content: { 'application/problem+json': { schema: { allOf: [problemRef, { properties: { code: { enum: list } } }] } } },
      };
    }
    // No operation needs authentication (the socket's mode and the front's guards are the defence,
    // DESIGN §6): said on each, as linters ask, rather than left out.
    const op: Record<string, unknown> = { summary: r.summary, operationId: operationId(r), parameters, responses, security: [] };
    if (r.body) op.requestBody = { required: true, content: { 'application/json': { schema: plain(r.body, named) } } };
    if (r.path === '/api/sessions/:id/output') {
      (responses['200'] as { content: Record<string, unknown> }).content['text/event-stream'] = {
        schema: { type: 'string', description: 'with Accept: text/event-stream: `id: <seq>`, `event: line` with an OutputLine, then `event: end` with the Session; resumes after Last-Event-ID' },
      };
      parameters.push({ name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string', pattern: '^[0-9]+$' } });
    }
    if (r.path === '/api/events') {
      (responses['200'] as { content: Record<string, unknown> }).content['text/event-stream'] = {
        schema: { type: 'string', description: 'with Accept: text/event-stream: `id: <seq>`, `event: <type>`, data an Event; resumes after Last-Event-ID; heartbeats as comments; a client too slow to read gets `event: end` and may resume' },
      };
      parameters.push({ name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string', pattern: '^[0-9]+$' } });
    }
    if (r.path === '/api/tasks/:id/setup') {
      (responses['200'] as { content: Record<string, unknown> }).content['text/event-stream'] = {
        schema: { type: 'string', description: 'with Accept: text/event-stream: `event: command` (a setup command starting, then ending), `event: line` (`id: <seq>`, an OutputLine), then `event: end` with the Task' },
      };
    }
    (paths[p] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'grove',
      version,
      description: 'Local supervisor daemon for coding agents. Served on a unix socket and on a loopback TCP front.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: 'http://127.0.0.1:7433' }],
    paths,
    components: { schemas: Object.fromEntries([...named].sort((a, b) => a[0].localeCompare(b[0]))) },
  };
}

const ERRORS_DESCRIPTION: Record<string, string> = { '200': 'OK', '201': 'created', '202': 'accepted, still being prepared' };

function operationId(r: Route): string {
  const parts = r.path
    .split('/')
    .filter((s) => s && s !== 'api')
    .map((s) => (s.startsWith(':') ? 'By' + s.slice(1)[0]!.toUpperCase() + s.slice(2) : s[0]!.toUpperCase() + s.slice(1)));
  return r.method.toLowerCase() + parts.join('');
}
