// Forwarding to the owner (daemon/hosts/commands.ts: requester.ts and owner.ts, DESIGN §14.2) alone: two hosts' command
// loops on one real store in this process, the owner's API a real HTTP server on a unix socket.
// What a team of daemons does with it is test/team/'s.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import path from 'node:path';
import test, { after, type TestContext } from 'node:test';
import { createCommands } from '../../daemon/hosts/commands.ts';
import { COMMAND_HEADER } from '../../daemon/http/route.ts';
import { COMMANDS_CHANNEL, commandsTable } from '../../daemon/store/commands.ts';
import { hostsTable } from '../../daemon/store/hosts.ts';
import { makeTempDir } from '../helpers/git.ts';
import { addTask, memoryLog, openTestStore, TEST_HOST_ID } from '../helpers/store.ts';

const OWNER = TEST_HOST_ID;
const ASKER = '00000000-0000-4000-8000-000000000002';

// The owner's API: answers with what it was asked, a header it keeps and one it does not.
async function ownerApi(t: TestContext, dir: string): Promise<{ socketPath: string; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const socketPath = path.join(dir, 'owner.sock');
  const server = createServer(async (req, res) => {
    seen.push(req);
    let body = '';
    for await (const c of req) body += c;
    res.writeHead(201, { 'content-type': 'application/json', 'grove-note': 'kept', 'x-private': 'dropped' });
    res.end(JSON.stringify({ method: req.method, url: req.url, body, command: req.headers[COMMAND_HEADER] }));
  });
  server.listen(socketPath);
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  return { socketPath, seen };
}

// One store for the file; each test starts both hosts again and has command loops of its own.
const s = await openTestStore(after);
const hosts = hostsTable(s.store.db, s.events);
const rows = commandsTable(s.store.db);
// Two hosts on one store make it a shared one, whichever driver is under the test (the team's
// wake-ups, store/wakes.ts, listen only on a shared store).
const teamStore = { ...s.store, shared: true };
const commandCount = async () => (await s.store.db.query('SELECT id FROM commands')).rows.length;

async function team(t: TestContext, opts: { ownerAccepts?: boolean; ownerRowAccepts?: boolean; socketPath?: string } = {}) {
  await hosts.start({ id: OWNER, name: 'owner', version: '1', accept_remote: opts.ownerRowAccepts ?? true });
  await hosts.start({ id: ASKER, name: 'asker', version: '1' });
  const dir = makeTempDir(t);
  const api = await ownerApi(t, dir);
  const { log, records } = memoryLog();
  const make = (hostId: string, socketPath: string, acceptRemote = true) => {
    const c = createCommands({ store: teamStore, rows, hosts, hostId, acceptRemote, socketPath, log });
    t.after(async () => {
      await c.stop();
      await c.close();
    });
    return c;
  };
  const owner = make(OWNER, opts.socketPath ?? api.socketPath, opts.ownerAccepts ?? true);
  const asker = make(ASKER, path.join(dir, 'asker.sock'));
  return { owner, asker, api, records };
}

const req = { method: 'POST', path: '/api/tasks/x/commit?dry=1', headers: { 'content-type': 'application/json' }, body: '{"message":"m"}' };
const code = (c: string) => (err: any) => {
  assert.equal(err.code, c, err.message);
  return true;
};

test('elsewhere names the owning host of another host’s row, and null for one’s own or no row', async (t) => {
  const { owner, asker } = await team(t);
  const task = await addTask(t, s);
  assert.equal(await asker.elsewhere('task', task.id), OWNER);
  assert.equal(await asker.elsewhere('project', task.project_id), OWNER);
  assert.equal(await owner.elsewhere('task', task.id), null, 'its own');
  assert.equal(await asker.elsewhere('task', '00000000-0000-4000-8000-00000000dead'), null);
  assert.equal(await asker.nameOf(OWNER), 'owner');
  assert.equal(await asker.nameOf('00000000-0000-4000-8000-00000000beef'), '00000000-0000-4000-8000-00000000beef');
});

test('forward: the owner runs the request through its own API, marked as a command, and the answer comes back with its status, its describing headers and its bytes', async (t) => {
  const { owner, asker, api, records } = await team(t);
  await owner.start();
  const a = await asker.forward(OWNER, req);
  assert.equal(a.status, 201);
  assert.deepEqual(a.headers, { 'content-type': 'application/json', 'grove-note': 'kept' }, 'only the headers that describe the body');
  const body = JSON.parse(a.body.toString());
  assert.deepEqual([body.method, body.url, body.body], ['POST', '/api/tasks/x/commit?dry=1', '{"message":"m"}']);
  assert.equal(api.seen.length, 1);
  const row = (await rows.get(body.command))!;
  assert.deepEqual([row.status, row.host_id, row.from_host_id], ['done', OWNER, ASKER], 'the command header is the command’s id');
  assert.ok(records.some((r) => r.msg === 'forwarded to the owning host' && r.host === 'owner'));
  assert.ok(records.some((r) => r.msg === 'running a command of another host' && r.from === ASKER));
});

test('forward refuses at once, sending nothing, to a host that never joined, is offline or does not accept remote requests', async (t) => {
  const { asker, api } = await team(t, { ownerRowAccepts: false });
  const before = await commandCount();
  await assert.rejects(asker.forward(OWNER, req), (err: any) => err.code === 'REMOTE_REFUSED' && /host owner does not run requests from other hosts/.test(err.detail));
  await assert.rejects(asker.forward('00000000-0000-4000-8000-00000000dead', req), code('HOST_OFFLINE'));
  await hosts.start({ id: OWNER, name: 'owner', version: '1' });
  await hosts.stop(OWNER);
  await assert.rejects(asker.forward(OWNER, req), (err: any) => err.code === 'HOST_OFFLINE' && /offline; nothing was sent/.test(err.detail));
  assert.equal(await commandCount(), before, 'no command written');
  assert.equal(api.seen.length, 0);
});

test('an owner that does not accept remote requests answers REMOTE_REFUSED without running it', async (t) => {
  const refusing = await team(t, { ownerAccepts: false });
  await refusing.owner.start();
  const r = await refusing.asker.forward(OWNER, req);
  assert.equal(r.status, 403);
  assert.equal(JSON.parse(r.body.toString()).code, 'REMOTE_REFUSED');
  assert.equal(refusing.api.seen.length, 0);
});

test('an owner whose API cannot be reached answers UNAVAILABLE', async (t) => {
  const dir = makeTempDir(t);
  const unreachable = await team(t, { socketPath: path.join(dir, 'nobody.sock') });
  await unreachable.owner.start();
  const u = await unreachable.asker.forward(OWNER, req);
  assert.deepEqual([u.status, u.headers['content-type'], JSON.parse(u.body.toString()).code], [503, 'application/problem+json', 'UNAVAILABLE']);
  assert.ok(unreachable.records.some((x) => x.msg === 'a command could not be run through the API socket'));
});

test('at its start the owner abandons what its last run took and never answered; the requester is told it may have run in part', async (t) => {
  const { owner, asker, records } = await team(t);
  // A request taken by the owner's last run, which stopped before answering: taken once the
  // owner is told of it.
  const told = new Promise<void>((resolve) => {
    const stop = s.store.listen(COMMANDS_CHANNEL, () => (stop(), resolve()));
  });
  const waiting = asker.forward(OWNER, req);
  await told;
  const taken = (await rows.take(OWNER))!;
  await owner.start();
  await assert.rejects(waiting, (err: any) => err.code === 'HOST_OFFLINE' && /stopped while running the request; it may have run in part/.test(err.detail));
  assert.equal((await rows.get(taken.id))!.status, 'abandoned');
  assert.ok(records.some((r) => r.msg === 'commands taken by the last run and never answered are abandoned, not run again' && r.abandoned === 1));
});
