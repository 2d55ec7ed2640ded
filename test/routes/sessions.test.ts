// The session routes (daemon/routes/sessions.ts) alone: their table served by the API pipeline
// on a real HTTP server, over the session service of a real store with real agent processes,
// without a daemon. What the routes add to the service: the checks the schema cannot make, the
// output as a page, its last lines or an SSE stream to the end, and the agents list.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import test, { after, type TestContext } from 'node:test';
import { pino } from 'pino';
import { createAgents } from '../../daemon/agents/agents.ts';
import { sseMessages } from '../../daemon/client/sse.ts';
import { createApiHandler } from '../../daemon/http/api.ts';
import { sessionRoutes } from '../../daemon/routes/sessions.ts';
import { createLimiter } from '../../daemon/runtime/limiter.ts';
import { createTeamWakes } from '../../daemon/store/wakes.ts';
import { MAX_ARG_BYTES } from '../../schemas/common.ts';
import { AGENT, liveGroupMembers } from '../helpers/sessions.ts';
import { addTask, openTestStore, sessionService } from '../helpers/store.ts';

const s = await openTestStore(after);
const agents = { fixture: { command: [AGENT, '{prompt}'] } };
const log = pino({ level: 'silent' });

async function serve(t: TestContext) {
  const sessions = sessionService(t, s, { agents });
  const outputWakes = createTeamWakes({ store: s.store, channel: 'grove_output', tellOn: [sessions.output, sessions.ended], log });
  t.after(() => outputWakes.close());
  const handle = createApiHandler({ routes: sessionRoutes({ sessions, agents: createAgents({ agents }), streamReads: createLimiter(4), outputWakes }), log });
  const server = createServer(handle).listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(base + path, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
    return { status: r.status, json: await r.json() as any };
  };
  return { base, call };
}

test('session routes: an agent name that is only an object’s member, and a prompt or argument past the OS limit in bytes, are refused before anything starts', async (t) => {
  const { call } = await serve(t);
  const task = await addTask(t, s);
  const path = `/api/tasks/${task.id}/sessions`;
  assert.deepEqual([(await call('POST', path, { agent: 'constructor', prompt: 'x' })).json.code, (await call('POST', path, { agent: 'nobody', prompt: 'x' })).status], ['UNKNOWN_AGENT', 422]);
  // Fewer characters than the limit, more bytes: each 'é' is two.
  const long = 'é'.repeat(MAX_ARG_BYTES / 2 + 1);
  const r = await call('POST', path, { agent: 'fixture', prompt: long, args: ['ok', long] });
  assert.equal(r.status, 400);
  assert.deepEqual(r.json.errors.map((e: any) => e.path), ['/prompt', '/args/1']);
  assert.equal((await call('GET', path)).json.length, 0, 'nothing started');
  const agentsList = (await call('GET', '/api/agents')).json;
  assert.ok(JSON.stringify(agentsList).includes('fixture'));
});

test('session routes: a session started, its output as a page, its last lines and an SSE stream to its end; last does not go with after; DELETE kills', async (t) => {
  const { base, call } = await serve(t);
  const task = await addTask(t, s);
  const started = await call('POST', `/api/tasks/${task.id}/sessions`, { agent: 'fixture', args: ['echo:one', 'echo:two', 'echo:three'] });
  assert.equal(started.status, 201);
  const id = started.json.id;
  const res = await fetch(`${base}/api/sessions/${id}/output`, { headers: { accept: 'text/event-stream' } });
  assert.equal(res.headers.get('content-type')?.split(';')[0], 'text/event-stream');
  const seen: string[] = [];
  for await (const m of sseMessages(res.body!)) {
    seen.push(m.event === 'end' ? `end ${JSON.parse(m.data).status}` : JSON.parse(m.data).text);
    if (m.event === 'end') break;
  }
  assert.deepEqual(seen, ['one', 'two', 'three', 'end exited']);

  const page = (await call('GET', `/api/sessions/${id}/output?after=0&limit=2`)).json;
  assert.deepEqual(page.lines.map((l: any) => l.text), ['one', 'two']);
  assert.deepEqual((await call('GET', `/api/sessions/${id}/output?last=1`)).json.lines.map((l: any) => l.text), ['three']);
  const both = await call('GET', `/api/sessions/${id}/output?last=1&after=0`);
  assert.deepEqual([both.status, both.json.code, both.json.errors], [400, 'VALIDATION_FAILED', [{ path: '/query/last', message: 'must not be given with after or limit' }]]);

  const sleeper = (await call('POST', `/api/tasks/${task.id}/sessions`, { agent: 'fixture', args: ['sleep:300'] })).json;
  t.after(() => liveGroupMembers(sleeper.pid).forEach((p) => process.kill(p, 'SIGKILL')));
  assert.deepEqual((await call('DELETE', `/api/sessions/${sleeper.id}`)).json, { status: 'killed' });
  assert.equal((await call('GET', `/api/sessions/${sleeper.id}`)).json.status, 'killed');
  assert.deepEqual((await call('GET', `/api/tasks/${task.id}/sessions`)).json.map((x: any) => x.id), [id, sleeper.id]);
});
