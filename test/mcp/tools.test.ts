// The MCP tool table (daemon/mcp/tools.ts) alone: its input schemas and hints as data, and what
// its tools do with the API's answers, through the real client (daemon/client) over a real unix
// socket to a scripted API in this process (each route answers as the daemon's contract says;
// what the daemon itself answers is test/mcp/server.test.ts's, through `grove mcp`).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import path from 'node:path';
import test, { type TestContext } from 'node:test';
import { withCalls } from '../../daemon/client/calls.ts';
import { createTransport } from '../../daemon/client/transport.ts';
import { TOOLS, type Tool } from '../../daemon/mcp/tools.ts';
import { compile, createAjv } from '../../daemon/runtime/validation.ts';
import { makeTempDir } from '../helpers/git.ts';

const TASK = '0b6f7c1e-7c1a-4d2b-9a57-8f0c7a1b2c3d';
const SESSION = '1c6f7c1e-7c1a-4d2b-9a57-8f0c7a1b2c3d';
const PROJECT = '2c6f7c1e-7c1a-4d2b-9a57-8f0c7a1b2c3d';
const APPROVAL = '3c6f7c1e-7c1a-4d2b-9a57-8f0c7a1b2c3d';

const tool = (name: string): Tool => TOOLS.find((t) => t.name === name) ?? assert.fail(`no tool ${name}`);
const session = (over: Record<string, unknown> = {}) => ({
  id: SESSION, task_id: TASK, kind: 'agent', status: 'running', exit_code: null, ended_at: null, result: null, limit_resets_at: null, sandbox: { confined: true }, ...over,
});

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL, body: any) => unknown;

// The scripted API: `METHOD /path` → what it answers (JSON, 200), or a handler that writes itself.
// Every request is recorded, and the streams still open are counted.
async function api(t: TestContext, routes: Record<string, Handler>) {
  const asked: string[] = [];
  const open = new Set<ServerResponse>();
  // Waits until exactly `n` streams are open (each one opening or closing looks again).
  const waits = new Set<() => void>();
  const look = () => waits.forEach((w) => w());
  const streams = (n: number) =>
    new Promise<void>((resolve) => {
      const w = () => open.size === n && (waits.delete(w), resolve());
      waits.add(w);
      w();
    });
  const server = createServer(async (req, res) => {
    const url = new URL(req.url!, 'http://x');
    asked.push(`${req.method} ${url.pathname}${url.search}`);
    let text = '';
    for await (const c of req) text += c;
    const route = routes[`${req.method} ${url.pathname}`];
    if (!route) {
      res.writeHead(404, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ status: 404, code: 'NOT_FOUND', title: 'Not found', detail: `no ${req.method} ${url.pathname}` }));
      return;
    }
    const answer = await route(req, res, url, text ? JSON.parse(text) : undefined);
    if (res.headersSent) {
      open.add(res);
      res.once('close', () => (open.delete(res), look()));
      look();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
  const socket = path.join(makeTempDir(t), 'api.sock');
  server.listen(socket);
  await once(server, 'listening');
  const client = withCalls(createTransport(socket));
  t.after(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return { client, asked, streams };
}

// An SSE stream the test writes events to.
function stream(hold: (send: (event: string, data: unknown) => void, res: ServerResponse) => void): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': open\n\n');
    hold((event, data) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`), res);
  };
}

test('tools: unique names; every input an object of its own properties only, ids lowercase UUIDs; read-only tools change nothing and destructive ones are marked', () => {
  const ajv = createAjv();
  assert.equal(new Set(TOOLS.map((t) => t.name)).size, TOOLS.length);
  for (const t of TOOLS) {
    assert.equal(t.input.type, 'object', t.name);
    assert.equal(t.input.additionalProperties, false, `${t.name} refuses fields it does not know`);
    assert.ok(t.description.length > 20, t.name);
    assert.ok(!(t.readOnly && t.destructive), `${t.name} cannot be both`);
    const check = compile(ajv, t.input);
    assert.equal(check({ surprise: 1 }), false, t.name);
    for (const key of Object.keys(t.input.properties).filter((k) => k.endsWith('_id'))) {
      assert.equal(check({ [key]: TASK.toUpperCase() }), false, `${t.name}.${key} takes lowercase UUIDs only`);
    }
  }
  assert.deepEqual(TOOLS.filter((t) => t.readOnly).map((t) => t.name).sort(), [
    'conflicts', 'get_changes', 'get_diff', 'get_output', 'get_session', 'list_approvals', 'list_automations', 'list_projects', 'list_queue', 'list_tasks', 'list_turns', 'wait_for_session',
  ]);
  assert.deepEqual(TOOLS.filter((t) => t.destructive).map((t) => t.name).sort(), ['archive_task', 'kill_session', 'merge_task', 'queue_task']);
  const create = compile(ajv, tool('create_task').input);
  assert.equal(create({ project_id: PROJECT, name: 'x', wait: false }), false, 'create_task always waits: wait is not an input');
  assert.equal(create({ project_id: PROJECT, name: 'x' }), true);
  assert.equal(compile(ajv, tool('wait_for_session').input)({ session_id: SESSION, timeout_s: 0 }), false);
  assert.equal(compile(ajv, tool('respond_to_approval').input)({ approval_id: APPROVAL, decision: 'allow', nonce: 'n' }), false, 'the nonce is read for the agent');
});

// Bounded: a wait that kept its streams would otherwise never end.
test('wait_for_session: answers at the session’s end from its output stream, with the denials in words, and lets go of its streams', { timeout: 20_000 }, async (t) => {
  let end!: () => void;
  const { client, asked, streams } = await api(t, {
    'GET /api/health': () => ({ last_event_seq: 41 }),
    [`GET /api/sessions/${SESSION}`]: () => session(),
    'GET /api/approvals': () => [],
    [`GET /api/sessions/${SESSION}/output`]: stream((send) => {
      send('line', { seq: 1, text: 'x' });
      end = () =>
        send('end', session({ status: 'exited', exit_code: 0, ended_at: '2026-01-01T00:00:00Z', result: { text: 'done', denials: [{ tool: 'Bash', input: { command: 'rm -rf /' } }] }, sandbox: { confined: false, reason: 'sandbox is false (by the request)' } }));
    }),
    'GET /api/events': stream(() => {}),
  });
  const waiting = tool('wait_for_session').run(client, { session_id: SESSION, timeout_s: 60 });
  await streams(2);
  end();
  const r: any = await waiting;
  assert.deepEqual([r.ended, r.status, r.exit_code, r.waiting, r.approvals, r.result.text], [true, 'exited', 0, null, [], 'done']);
  assert.match(r.denied, /Bash/);
  assert.match(r.denied, /the agent refused them by itself; the work they were for was not done/);
  assert.equal(r.confined, false, 'an unconfined agent says so (DESIGN §18)');
  assert.equal(r.unconfined, "not confined: sandbox is false (by the request); it runs with the user's full rights");
  assert.ok(asked.includes(`GET /api/events?after=41&task_id=${TASK}`), 'events after the newest seq read before looking');
  assert.ok(asked.some((a) => a.startsWith(`GET /api/sessions/${SESSION}/output`)));
  await streams(0);
});

test('wait_for_session: answers when the session waits on an approval, already pending or asked while it waits', async (t) => {
  const pending = { id: APPROVAL, session_id: SESSION, status: 'pending', tool: 'Bash', nonce: 'n1' };
  let approvals: unknown[] = [pending];
  let ask!: () => void;
  const { client, streams } = await api(t, {
    'GET /api/health': () => ({ last_event_seq: 0 }),
    [`GET /api/sessions/${SESSION}`]: () => session(),
    'GET /api/approvals': (_q, _r, url) => {
      assert.deepEqual(Object.fromEntries(url.searchParams), { status: 'pending', session_id: SESSION });
      return approvals;
    },
    [`GET /api/sessions/${SESSION}/output`]: stream(() => {}),
    'GET /api/events': stream((send) => {
      ask = () => {
        approvals = [pending];
        send('approval.requested', { type: 'approval.requested', session_id: 'another-session' });
        send('approval.requested', { type: 'approval.requested', session_id: SESSION });
      };
    }),
  });
  const already: any = await tool('wait_for_session').run(client, { session_id: SESSION, timeout_s: 60 });
  assert.deepEqual([already.ended, already.waiting, already.approvals], [false, 'approval', [pending]]);

  approvals = [];
  await streams(0);
  const waiting = tool('wait_for_session').run(client, { session_id: SESSION, timeout_s: 60 });
  await streams(2);
  ask();
  const asked: any = await waiting;
  assert.deepEqual([asked.ended, asked.waiting, asked.approvals.length, asked.status], [false, 'approval', 1, 'running']);
});

test('wait_for_session: after timeout_s with nothing happening, the session as it is then', async (t) => {
  const { client } = await api(t, {
    'GET /api/health': () => ({ last_event_seq: 0 }),
    [`GET /api/sessions/${SESSION}`]: () => session(),
    'GET /api/approvals': () => [],
    [`GET /api/sessions/${SESSION}/output`]: stream(() => {}),
    'GET /api/events': stream(() => {}),
  });
  const started = Date.now();
  const r: any = await tool('wait_for_session').run(client, { session_id: SESSION, timeout_s: 1 });
  assert.ok(Date.now() - started >= 1000);
  assert.deepEqual([r.ended, r.status, r.waiting], [false, 'running', null]);
});

test('get_output: the last lines or the page after a seq, as text with stderr marked; get_diff: the streamed diff whole', async (t) => {
  const lines = [{ seq: 7, stream: 'stdout', text: 'out' }, { seq: 8, stream: 'stderr', text: 'err' }];
  const { client, asked } = await api(t, {
    [`GET /api/sessions/${SESSION}/output`]: () => ({ lines, next: 8 }),
    [`GET /api/tasks/${TASK}/diff`]: (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/x-diff' });
      res.write('--- a/x\n');
      res.end('+++ b/x\n');
    },
  });
  assert.deepEqual(await tool('get_output').run(client, { session_id: SESSION }), { lines: 2, first_seq: 7, next: 8, text: 'out\n[stderr] err' });
  await tool('get_output').run(client, { session_id: SESSION, after: 6, last: 5 });
  assert.deepEqual(asked.slice(-2), [`GET /api/sessions/${SESSION}/output?last=200`, `GET /api/sessions/${SESSION}/output?after=6&limit=5`]);
  assert.equal(await tool('get_diff').run(client, { task_id: TASK, path: 'x', from: 'turn:1' }), '--- a/x\n+++ b/x\n');
  assert.match(asked.at(-1)!, new RegExp(`^GET /api/tasks/${TASK}/diff\\?`));
});

test('respond_to_approval sends the approval’s own nonce; queue_task queues on the task’s project; create_task waits; a problem comes back as the API’s', async (t) => {
  const bodies: Record<string, unknown> = {};
  const { client } = await api(t, {
    [`GET /api/approvals/${APPROVAL}`]: () => ({ id: APPROVAL, nonce: 'the-nonce' }),
    [`POST /api/approvals/${APPROVAL}`]: (_q, _r, _u, body) => ((bodies.decide = body), { id: APPROVAL, status: 'allowed' }),
    [`GET /api/tasks/${TASK}`]: () => ({ id: TASK, project_id: PROJECT }),
    [`POST /api/projects/${PROJECT}/queue`]: (_q, _r, _u, body) => ((bodies.queue = body), { position: 1 }),
    'POST /api/tasks': (_q, _r, _u, body) => ((bodies.create = body), { id: TASK, status: 'ready' }),
  });
  assert.deepEqual(await tool('respond_to_approval').run(client, { approval_id: APPROVAL, decision: 'allow', remember: 'session' }), { id: APPROVAL, status: 'allowed' });
  assert.deepEqual(bodies.decide, { decision: 'allow', remember: 'session', nonce: 'the-nonce' });
  assert.deepEqual(await tool('queue_task').run(client, { task_id: TASK, strategy: 'squash' }), { position: 1 });
  assert.deepEqual(bodies.queue, { task_id: TASK, strategy: 'squash' });
  await tool('create_task').run(client, { project_id: PROJECT, name: 'job' });
  assert.deepEqual(bodies.create, { project_id: PROJECT, name: 'job', wait: true });
  await assert.rejects(tool('kill_session').run(client, { session_id: SESSION }), (err: any) => err.code === 'NOT_FOUND' && err.status === 404);
});
