// A session's own socket (DESIGN §18) on a real store and approval service, over real unix
// sockets with the client the bridges use: its session's ask and long poll work, a decision made
// through the main API reaches that poll, and every other call is refused with 403
// SESSION_SOCKET_SCOPE; the socket is private, replaces a stale file and closes idempotently.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, lstatSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { pino } from 'pino';
import type { Approval } from '../../schemas/approval.ts';
import { decide } from '../../daemon/bridges/ask.ts';
import { withCalls, type Client } from '../../daemon/client/calls.ts';
import { ApiProblem } from '../../daemon/client/problem.ts';
import { createTransport } from '../../daemon/client/transport.ts';
import { createApiHandler } from '../../daemon/http/api.ts';
import { listenOnSocket } from '../../daemon/http/server.ts';
import { createSessionSockets } from '../../daemon/http/session-socket.ts';
import { createProjectConfigs } from '../../daemon/projects/config.ts';
import { createProjectService } from '../../daemon/projects/service.ts';
import { projectsTable } from '../../daemon/store/projects.ts';
import { approvalRoutes } from '../../daemon/routes/approvals.ts';
import { projectRoutes } from '../../daemon/routes/projects.ts';
import { liveSession } from '../helpers/approvals.ts';
import { makeTempDir } from '../helpers/git.ts';
import { rawRequest } from '../helpers/raw.ts';
import { approvalService, openTestStore, TEST_HOST_ID, type TestStore } from '../helpers/store.ts';

const s: TestStore = await openTestStore(after);
const log = pino({ level: 'silent' });
const configs = createProjectConfigs({ log });
after(() => configs.close());

const client = (t: TestContext, socketPath: string): Client => {
  const api = withCalls(createTransport(socketPath));
  t.after(api.close);
  return api;
};

// The main API (approvals and projects, as the daemon serves them) on a socket of its own, and
// the session sockets made from the same routes.
async function setUp(t: TestContext) {
  const approvals = approvalService(t, s, configs);
  const projects = createProjectService({ projects: projectsTable(s.store.db, s.events), hostId: TEST_HOST_ID, countLiveTasks: async () => 0, configs });
  const routes = [...approvalRoutes({ approvals }), ...projectRoutes({ projects })];
  const dir = makeTempDir(t);
  const main = await listenOnSocket({ socketPath: path.join(dir, 'api.sock'), handler: createApiHandler({ routes, log }), log });
  t.after(() => main.close());
  const sockets = createSessionSockets({ routes, approvals, log });
  t.after(() => sockets.closeAll());
  return { approvals, sockets, dir, main: client(t, path.join(dir, 'api.sock')) };
}

const refused = (code: string) => (err: unknown) => err instanceof ApiProblem && err.status === (code === 'SESSION_SOCKET_SCOPE' ? 403 : 400) && err.code === code;

test("its session's ask and long poll work, a network approval's too; a decision made through the main API reaches the poll; bad input is the API's own problem", async (t) => {
  const { approvals, sockets, dir, main } = await setUp(t);
  const session = await liveSession(t, s);
  const socketPath = path.join(dir, 'sessions', session.id, 'run', 'grove.sock');
  await sockets.open(session.id, socketPath);
  const own = client(t, socketPath);

  const asked = await own.call<Approval>('POST', `/api/sessions/${session.id}/approvals`, { key: 'k1', tool: 'Bash', input: { command: 'make' } });
  assert.equal(asked.status, 'pending');
  const poll = own.call<Approval>('GET', `/api/approvals/${asked.id}?wait=30`);
  await main.decide(asked.id, { nonce: asked.nonce, decision: 'deny', message: 'not now' });
  assert.deepEqual((await poll).verdict, { behavior: 'deny', message: 'not now' });

  // The bridges' own loop, through the socket: asked, waited on, allowed from the main API.
  const requested = new Promise<string>((resolve) => {
    const stop = s.bus.committed.onAnyChange((e) => {
      if (e.type === 'approval.requested' && e.session_id === session.id && (e.data as Approval).key === 'k2') resolve((stop(), (e.data as Approval).id));
    });
  });
  const verdict = decide(own, session.id, { key: 'k2', kind: 'tool', tool: 'Bash', input: { command: 'make test' } }, AbortSignal.timeout(20_000));
  const id = await requested;
  await main.decide(id, { nonce: (await approvals.get(id)).nonce, decision: 'allow' });
  assert.deepEqual(await verdict, { behavior: 'allow', answer: null });

  // The network proxy's ask (DESIGN §18), the same way: allowed for the project from the main
  // API, the same host and port is then allowed at once, with no one asked.
  const net = { kind: 'network' as const, tool: 'Network', input: { host: 'registry.npmjs.org', port: 443 } };
  const connecting = new Promise<Approval>((resolve) => {
    const stop = s.bus.committed.onAnyChange((e) => {
      if (e.type === 'approval.requested' && (e.data as Approval).key === 'n1') resolve((stop(), e.data as Approval));
    });
  });
  const held = decide(own, session.id, { key: 'n1', ...net }, AbortSignal.timeout(20_000));
  const n1 = await connecting;
  await main.decide(n1.id, { nonce: n1.nonce, decision: 'allow', remember: 'project' });
  assert.deepEqual(await held, { behavior: 'allow', answer: null });
  const n2 = await own.call<Approval>('POST', `/api/sessions/${session.id}/approvals`, { key: 'n2', ...net });
  assert.deepEqual([n2.status, n2.reason], ['allowed', 'allowed by the rule Network(registry.npmjs.org:443)']);
  await assert.rejects(own.call('POST', `/api/sessions/${session.id}/approvals`, { key: 'n3', ...net, input: { host: 'registry.npmjs.org', port: 0 } }), refused('VALIDATION_FAILED'));

  await assert.rejects(own.call('POST', `/api/sessions/${session.id}/approvals`, { key: 'k3', tool: '' }), refused('VALIDATION_FAILED'));
  await assert.rejects(own.call('GET', `/api/approvals/${asked.id}?wait=600`), refused('VALIDATION_FAILED'));
});

test("everything else is refused with 403 SESSION_SOCKET_SCOPE: another session's ask or approval, deciding, listing, other routes", async (t) => {
  const { approvals, sockets, dir, main } = await setUp(t);
  const session = await liveSession(t, s);
  const other = await liveSession(t, s);
  const socketPath = path.join(dir, 's', 'grove.sock');
  await sockets.open(session.id, socketPath);
  const own = client(t, socketPath);
  const { approval: mine } = await approvals.ask(session.id, { key: 'm', tool: 'Bash', input: { command: 'make' } });
  const { approval: theirs } = await approvals.ask(other.id, { key: 't', tool: 'Bash', input: { command: 'make' } });

  const scope = refused('SESSION_SOCKET_SCOPE');
  await assert.rejects(own.call('POST', `/api/sessions/${other.id}/approvals`, { key: 'x', tool: 'Bash', input: { command: 'rm -rf /' } }), scope);
  await assert.rejects(own.call('GET', `/api/approvals/${theirs.id}`), scope);
  await assert.rejects(own.call('GET', `/api/approvals/${theirs.id}?wait=1`), scope);
  await assert.rejects(own.call('GET', '/api/approvals/00000000-0000-4000-8000-000000000000'), scope, 'an unknown approval says no more than another session’s');
  await assert.rejects(own.call('GET', '/api/approvals/not-an-id'), scope);
  await assert.rejects(own.call('POST', `/api/approvals/${mine.id}`, { nonce: mine.nonce, decision: 'allow' }), scope, 'it cannot decide its own');
  await assert.rejects(own.call('GET', '/api/approvals'), scope);
  await assert.rejects(own.call('GET', `/api/approvals?session_id=${session.id}`), scope);
  await assert.rejects(own.call('GET', '/api/projects'), scope);
  await assert.rejects(own.call('POST', '/api/projects', { path: '/tmp' }), scope);
  await assert.rejects(own.call('DELETE', `/api/sessions/${session.id}`), scope);
  await assert.rejects(own.call('GET', '/'), scope);
  await assert.rejects(own.call('GET', `/api/sessions/${session.id}/approvals`), scope);
  // HEAD is not the GET it matches; an absolute-form target names no path of ours.
  const head = await rawRequest({ path: socketPath }, `HEAD /api/approvals/${mine.id} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  assert.equal(head.status, 403);
  const absolute = await rawRequest({ path: socketPath }, `GET http://x/api/approvals/${mine.id} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  assert.deepEqual([absolute.status, JSON.parse(absolute.body).code], [403, 'SESSION_SOCKET_SCOPE']);

  // Nothing was decided or asked by the refused calls.
  assert.equal((await main.approval(mine.id)).status, 'pending');
  assert.deepEqual((await main.approvals({ session_id: other.id })).map((a) => a.key), ['t']);
  // Its own approval it may read.
  assert.equal((await own.call<Approval>('GET', `/api/approvals/${mine.id}`)).id, mine.id);
});

test('the socket is 0600 in a 0700 folder; opening over a stale socket replaces it; close is idempotent and removes the file', async (t) => {
  const { sockets, dir } = await setUp(t);
  const session = await liveSession(t, s);
  const folder = path.join(dir, 'sessions', session.id, 'run');
  const socketPath = path.join(folder, 'grove.sock');

  // A daemon killed with SIGKILL leaves the session's socket file behind, with nobody listening.
  const killed = spawn(process.execPath, ['-e', "require('fs').mkdirSync(require('path').dirname(process.argv[1]), {recursive: true}); require('net').createServer().listen(process.argv[1], () => console.log('up'))", socketPath], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => killed.kill('SIGKILL'));
  await once(killed.stdout!, 'data');
  killed.kill('SIGKILL');
  await once(killed, 'exit');
  assert.ok(lstatSync(socketPath).isSocket(), 'the stale socket is there');

  await sockets.open(session.id, socketPath);
  assert.equal(statSync(socketPath).mode & 0o777, 0o600);
  assert.equal(statSync(folder).mode & 0o777, 0o700);
  const own = client(t, socketPath);
  const { id } = await own.call<Approval>('POST', `/api/sessions/${session.id}/approvals`, { key: 'k', tool: 'Bash', input: { command: 'make' } });
  assert.equal((await own.call<Approval>('GET', `/api/approvals/${id}`)).status, 'pending');

  // Opened again (a re-attach): the session's socket is replaced, not refused as another's (a
  // new connection: the old server's were closed with it, which a bridge's retries ride over).
  await sockets.open(session.id, socketPath);
  assert.equal((await client(t, socketPath).call<Approval>('GET', `/api/approvals/${id}`)).status, 'pending');

  await sockets.close(session.id);
  assert.equal(existsSync(socketPath), false);
  await sockets.close(session.id);
  await sockets.close('never-opened');
  await sockets.closeAll();
  await sockets.closeAll();
  await assert.rejects(sockets.open(session.id, socketPath), /closed/);
});
