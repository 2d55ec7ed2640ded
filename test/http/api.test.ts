// The API's request pipeline (daemon/http/api.ts) alone: a route table of its own served by a
// real HTTP server, without a daemon. Routing, the checks of ids, query and body, the answers
// and problem documents, the client gone, and forwarding to (or refusal by) another host.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import test, { type TestContext } from 'node:test';
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import { createApiHandler } from '../../daemon/http/api.ts';
import { COMMAND_HEADER, route, type Remote, type Route } from '../../daemon/http/route.ts';
import { GroveError } from '../../daemon/errors.ts';
import { openPostgresStore } from '../../daemon/store/driver/postgres.ts';
import { UUID_PATTERN } from '../../schemas/common.ts';
import { rawRequest } from '../helpers/raw.ts';
import { memoryLog } from '../helpers/store.ts';

const ID = '0b6f7c1e-7c1a-4d2b-9a57-8f0c7a1b2c3d';
const OTHER = '1c6f7c1e-7c1a-4d2b-9a57-8f0c7a1b2c3d';
const Id = Type.Object({ id: Type.String({ pattern: UUID_PATTERN }) });

interface Seen {
  entered?: Promise<void>;
  gone?: Promise<unknown>;
}

// The routes of these tests: each answers what it was given, or fails as its name says.
function routes(host: string, seen: Seen = {}): Route[] {
  let entered!: () => void;
  seen.entered = new Promise<void>((r) => (entered = r));
  return [
    route({
      method: 'GET', path: '/api/things/:id', summary: 'a thing', params: Id, query: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1 })) }, { additionalProperties: false }), responses: { 200: null },
      handler: async ({ params, query }) => ({ status: 200, body: { host, id: params.id, query } }),
    }),
    route({
      method: 'POST', path: '/api/things', summary: 'make', body: Type.Object({ name: Type.String({ minLength: 1 }) }, { additionalProperties: false }), responses: { 201: null },
      handler: async ({ body }) => ({ status: 201, body: { host, made: body.name }, headers: { location: '/api/things/x' } }),
    }),
    route({
      method: 'POST', path: '/api/things/:id/poke', summary: 'optional fields', params: Id, body: Type.Object({ hard: Type.Optional(Type.Boolean()) }, { additionalProperties: false }), responses: { 200: null },
      owner: 'task',
      handler: async ({ params, body }) => {
        if (body.hard === false) throw new GroveError('TASK_NOT_READY', `not on ${host}`);
        return { status: 200, body: { host, id: params.id, body } };
      },
    }),
    route({
      method: 'POST', path: '/api/things/:id/land', summary: 'owner only', params: Id, responses: { 200: null }, owner: 'task', remote: 'refuse',
      handler: async () => ({ status: 200, body: { host } }),
    }),
    route({
      method: 'POST', path: '/api/placed', summary: 'placed', body: Type.Object({ task_id: Type.Optional(Type.String()), name: Type.String() }, { additionalProperties: false }), responses: { 200: null },
      owner: 'task', ownerIn: 'body', place: async (b) => ({ ...b, task_id: b.name === 'there' ? OTHER : ID }),
      handler: async ({ body }) => ({ status: 200, body: { host, body } }),
    }),
    route({ method: 'DELETE', path: '/api/things/:id', summary: 'gone', params: Id, responses: { 204: null }, handler: async () => ({ status: 204 }) }),
    route({ method: 'POST', path: '/api/ping', summary: 'no body schema', responses: { 200: null }, handler: async () => ({ status: 200, body: { pong: true } }) }),
    route({ method: 'GET', path: '/api/fail/grove', summary: '', responses: {}, handler: async () => { throw new GroveError('TASK_NOT_READY', 'not yet', { headers: { 'x-why': 'setup' } }); } }),
    route({ method: 'GET', path: '/api/fail/bug', summary: '', responses: {}, handler: async () => { throw new TypeError('secret internals at /some/path'); } }),
    route({
      method: 'GET', path: '/api/fail/disk', summary: '', responses: {},
      // A real ENOSPC: /dev/full takes no byte.
      handler: async () => { writeFileSync('/dev/full', 'x'); return { status: 200 }; },
    }),
    route({
      method: 'GET', path: '/api/fail/store', summary: '', responses: {},
      // A real unreachable store: PostgreSQL on a port nothing listens on.
      handler: async () => { await openPostgresStore({ url: `postgresql://u:pw@127.0.0.1:${closedPort}/x`, log: pino({ level: 'silent' }) }); return { status: 200 }; },
    }),
    route({
      method: 'GET', path: '/api/fail/late', summary: '', responses: {},
      handler: async ({ res }) => { res.writeHead(200, { 'content-type': 'text/plain' }); res.write('half'); throw new Error('broke mid-answer'); },
    }),
    route({
      method: 'GET', path: '/api/slow', summary: '', responses: {},
      handler: async ({ signal }) => {
        seen.gone = new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
        entered();
        await seen.gone;
        return { status: 200, body: {} };
      },
    }),
  ];
}

let closedPort = 0;
{
  const srv = createServer().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  closedPort = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
}

async function serve(t: TestContext, handler: (req: any, res: any) => void): Promise<{ port: number; server: Server; url: (p: string) => string }> {
  const server = createServer(handler).listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  const { port } = server.address() as { port: number };
  return { port, server, url: (p) => `http://127.0.0.1:${port}${p}` };
}

async function api(t: TestContext, opts: { remote?: Remote; log?: ReturnType<typeof memoryLog>['log'] } = {}) {
  const seen: Seen = {};
  const handle = createApiHandler({ routes: routes('here', seen), log: opts.log ?? pino({ level: 'silent' }), ...(opts.remote ? { remote: opts.remote } : {}) });
  return { ...(await serve(t, handle)), seen };
}

async function problem(r: Response, status: number, code: string) {
  assert.equal(r.status, status);
  assert.equal(r.headers.get('content-type'), 'application/problem+json');
  assert.equal(r.headers.get('cache-control'), 'no-store');
  const body = await r.json();
  assert.equal(body.code, code, JSON.stringify(body));
  assert.equal(body.status, status);
  return body;
}

test('api: a route answers its JSON with the common headers; 204 and HEAD have no body; an unknown path or method has its problem', async (t) => {
  const { url, port } = await api(t);
  const r = await fetch(url(`/api/things/${ID}?limit=3`));
  assert.equal(r.status, 200);
  assert.deepEqual([r.headers.get('content-type'), r.headers.get('x-content-type-options')], ['application/json', 'nosniff']);
  assert.deepEqual(await r.json(), { host: 'here', id: ID, query: { limit: 3 } }, 'the query coerced to its schema');
  const made = await fetch(url('/api/things'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"a"}' });
  assert.deepEqual([made.status, made.headers.get('location'), await made.json()], [201, '/api/things/x', { host: 'here', made: 'a' }]);
  const del = await fetch(url(`/api/things/${ID}`), { method: 'DELETE' });
  assert.deepEqual([del.status, await del.text()], [204, '']);
  const head = await fetch(url(`/api/things/${ID}`), { method: 'HEAD' });
  assert.deepEqual([head.status, await head.text()], [200, '']);

  await problem(await fetch(url('/api/nothing')), 404, 'NOT_FOUND');
  const wrong = await fetch(url('/api/things'), { method: 'DELETE' });
  assert.equal(wrong.headers.get('allow'), 'POST');
  await problem(wrong, 405, 'METHOD_NOT_ALLOWED');
  const absolute = await rawRequest({ port }, `GET http://127.0.0.1:${port}/api/things/${ID} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  assert.equal(absolute.status, 404, 'a target that is not a path');
  assert.match(absolute.body, /request targets must be a path/);
});

test('api: a malformed id, a repeated or unknown query parameter, a bad body or content type are refused before the handler', async (t) => {
  const { url } = await api(t);
  const bad = await problem(await fetch(url('/api/things/NOT-A-UUID%21')), 400, 'INVALID_ID');
  assert.equal(bad.detail, 'id "NOT-A-UUID!" is not a lowercase UUID');
  const twice = await problem(await fetch(url(`/api/things/${ID}?limit=1&limit=2`)), 400, 'VALIDATION_FAILED');
  assert.deepEqual(twice.errors, [{ path: '/limit', message: 'is given more than once' }]);
  await problem(await fetch(url(`/api/things/${ID}?limit=0`)), 400, 'VALIDATION_FAILED');
  const unknown = await problem(await fetch(url(`/api/things/${ID}?extra=1`)), 400, 'VALIDATION_FAILED');
  assert.ok(JSON.stringify(unknown.errors).includes("extra"), JSON.stringify(unknown.errors));
  const noQuery = await problem(await fetch(url('/api/ping?x=1'), { method: 'POST' }), 400, 'VALIDATION_FAILED');
  assert.deepEqual(noQuery.errors, [{ path: '/x', message: 'is not an allowed query parameter' }]);

  const post = (path: string, body?: string, type = 'application/json') => fetch(url(path), { method: 'POST', ...(body === undefined ? {} : { body, headers: { 'content-type': type } }) });
  const missing = await problem(await post('/api/things'), 400, 'VALIDATION_FAILED');
  assert.deepEqual(missing.errors, [{ path: '/', message: 'a JSON body is required' }]);
  await problem(await post('/api/things', '{"name":""}'), 400, 'VALIDATION_FAILED');
  await problem(await post('/api/things', '{"name":"a","more":1}'), 400, 'VALIDATION_FAILED');
  await problem(await post('/api/things', '{"name":'), 400, 'INVALID_JSON');
  await problem(await post('/api/things', 'name=a', 'application/x-www-form-urlencoded'), 415, 'UNSUPPORTED_MEDIA_TYPE');
  // A body where every field is optional may be left out; one sent to a route without a body schema is read and dropped.
  assert.deepEqual(await (await post(`/api/things/${ID}/poke`)).json(), { host: 'here', id: ID, body: {} });
  assert.deepEqual(await (await post('/api/ping', '{"ignored":true}')).json(), { pong: true });
  await problem(await post('/api/ping', 'x', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
});

test('api: a handler’s failure is its problem document: a GroveError as it says, an unreachable store 503 with Retry-After, a full disk 507, anything else 500 without detail, logged', async (t) => {
  const { log, records } = memoryLog();
  const { url, port } = await api(t, { log });
  const grove = await fetch(url('/api/fail/grove'));
  assert.equal(grove.headers.get('x-why'), 'setup');
  assert.equal((await problem(grove, 409, 'TASK_NOT_READY')).detail, 'not yet');
  const store = await fetch(url('/api/fail/store'));
  assert.equal(store.headers.get('retry-after'), '2');
  assert.match((await problem(store, 503, 'STORE_UNAVAILABLE')).detail, /cannot reach the store at postgresql:\/\/u:\*\*\*@.*; try again shortly$/);
  await problem(await fetch(url('/api/fail/disk')), 507, 'INSUFFICIENT_STORAGE');
  const bug = await problem(await fetch(url('/api/fail/bug')), 500, 'INTERNAL');
  assert.equal(bug.detail, 'an internal error occurred; see the daemon log');
  assert.ok(!JSON.stringify(bug).includes('secret'), 'nothing of the error is told');
  assert.ok(records.some((r) => r.msg === 'request failed' && r.level === 50 && r.err.message.includes('secret')), 'the bug is logged');
  assert.ok(records.some((r) => r.msg === 'request failed: the store cannot be reached' && r.level === 40));
  // An answer already begun cannot become a problem: the connection is cut.
  const late = await rawRequest({ port }, 'GET /api/fail/late HTTP/1.1\r\nHost: x\r\n\r\n');
  assert.equal(late.status, 200);
  assert.ok(!late.body.includes('problem'), late.body);
});

test('api: the handler’s signal is aborted when the client goes before its answer', async (t) => {
  const { url, seen } = await api(t);
  const ac = new AbortController();
  const asked = fetch(url('/api/slow'), { signal: ac.signal }).catch((e: Error) => e.name);
  await seen.entered;
  ac.abort();
  assert.equal(await asked, 'AbortError');
  assert.equal(((await seen.gone) as Error).message, 'the client has gone');
});

test('api: with a team, a request on another host’s row is run there (its answer passed on as written), refused where the route says so, and a command from another host is run here', async (t) => {
  // The owner: the same pipeline on another server, answering as host "there".
  const owner = await serve(t, createApiHandler({ routes: routes('there'), log: pino({ level: 'silent' }) }));
  const forwarded: Array<{ method: string; path: string; body: string | null }> = [];
  const remote: Remote = {
    elsewhere: async (kind, id) => (kind === 'task' && id === OTHER ? 'host-2' : null),
    nameOf: async (hostId) => `name-of-${hostId}`,
    forward: async (_hostId, req) => {
      forwarded.push({ method: req.method, path: req.path, body: req.body });
      const r = await fetch(owner.url(req.path), { method: req.method, headers: { ...req.headers, [COMMAND_HEADER]: 'here' }, body: req.body });
      return { status: r.status, headers: { 'content-type': r.headers.get('content-type')! }, body: Buffer.from(await r.arrayBuffer()) };
    },
  };
  const { url } = await api(t, { remote });
  const post = (path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(url(path), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

  assert.deepEqual(await (await post(`/api/things/${ID}/poke`, { hard: true })).json(), { host: 'here', id: ID, body: { hard: true } }, 'its own row: run here');
  const there = await post(`/api/things/${OTHER}/poke`, { hard: true });
  assert.deepEqual([there.status, await there.json()], [200, { host: 'there', id: OTHER, body: { hard: true } }]);
  const optional = await post(`/api/things/${OTHER}/poke`);
  assert.deepEqual(await optional.json(), { host: 'there', id: OTHER, body: {} }, 'the body as validated is sent on');
  // The owner's problem is passed on as it wrote it.
  assert.equal((await problem(await post(`/api/things/${OTHER}/poke`, { hard: false }), 409, 'TASK_NOT_READY')).detail, 'not on there');
  assert.deepEqual(forwarded.map((f) => [f.method, f.path, f.body]), [
    ['POST', `/api/things/${OTHER}/poke`, '{"hard":true}'],
    ['POST', `/api/things/${OTHER}/poke`, '{}'],
    ['POST', `/api/things/${OTHER}/poke`, '{"hard":false}'],
  ]);

  const refused = await problem(await post(`/api/things/${OTHER}/land`), 403, 'REMOTE_REFUSED');
  assert.match(refused.detail, /runs only on the task's own host, name-of-host-2; ask there/);
  assert.deepEqual(await (await post(`/api/things/${OTHER}/land`, undefined, { [COMMAND_HEADER]: 'host-2' })).json(), { host: 'here' }, 'a command another host sent is run here');
  // The owner found from the body, once placed.
  assert.deepEqual(await (await post('/api/placed', { name: 'there' })).json(), { host: 'there', body: { name: 'there', task_id: OTHER } });
  assert.deepEqual(await (await post('/api/placed', { name: 'here' })).json(), { host: 'here', body: { name: 'here', task_id: ID } });
  assert.equal(forwarded.length, 4);
});
