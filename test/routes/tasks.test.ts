// The task routes (daemon/routes/tasks.ts) alone: their table served by the API pipeline on a real
// HTTP server, over the task service and review of a real store, real git and the git threads,
// without a daemon. What the routes add to the services: the review's range from ?from=&to=, the
// diff as git's bytes with its headers, setup as JSON or as an event stream, and the body a
// placement gave.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import test, { after } from 'node:test';
import { sseMessages } from '../../daemon/client/sse.ts';
import { GroveError } from '../../daemon/errors.ts';
import { createApiHandler } from '../../daemon/http/api.ts';
import { taskRoutes } from '../../daemon/routes/tasks.ts';
import type { CreateTaskBody } from '../../schemas/task.ts';
import { landingParts } from '../helpers/review.ts';

const parts = await landingParts({ after });
const placed: CreateTaskBody[] = [];
const handle = createApiHandler({
  routes: taskRoutes({
    tasks: parts.taskService,
    review: parts.review,
    create: (input) => parts.taskService.create(input),
    setupWakes: { watch: () => () => {} },
    // As a team's placement does: a body naming a repository gets the project_id of its host.
    place: async (body) => {
      placed.push(body);
      return body.repository === undefined ? body : { ...body, project_id: projectId };
    },
    // Issues are read from GitHub (test/api/intake.test.ts): none can be read here.
    issues: {
      fromUrl: async (url) => {
        throw new GroveError('ISSUE_NOT_FOUND', `${url} cannot be read here`);
      },
    },
  }),
  log: parts.log,
});
const server = createServer(handle).listen(0, '127.0.0.1');
await once(server, 'listening');
after(() => {
  server.closeAllConnections();
  return new Promise((r) => server.close(r));
});
const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
const projectId = (await parts.project()).id;

async function call(method: string, p: string, body?: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(base + p, { method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await r.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, headers: r.headers, text, json };
}

test('task routes: a creation by the project_id a placement gave a body naming a repository, then listed, read and archived; unknown and malformed ids', async () => {
  const made = await call('POST', '/api/tasks', { repository: 'github.com/acme/app', name: 'placed' });
  assert.equal(made.status, 201, made.text);
  assert.equal(made.json.project_id, projectId);
  assert.equal(made.json.branch, 'grove/placed');
  assert.deepEqual(placed.at(-1), { repository: 'github.com/acme/app', name: 'placed' }, 'the placement saw the body as sent');

  const listed = await call('GET', `/api/tasks?project_id=${projectId}`);
  assert.deepEqual(listed.json.map((t: any) => t.id), [made.json.id]);
  assert.equal((await call('GET', `/api/tasks/${made.json.id}`)).json.status, 'ready');
  assert.equal((await call('GET', '/api/tasks/00000000-0000-4000-8000-000000000000')).json.code, 'NOT_FOUND');
  assert.equal((await call('GET', '/api/tasks/not-an-id')).json.code, 'INVALID_ID');
  assert.equal((await call('GET', '/api/tasks?project_id=nope')).status, 400);

  const archived = await call('DELETE', `/api/tasks/${made.json.id}`);
  assert.equal(archived.json.status, 'archived', archived.text);
  assert.deepEqual((await call('GET', `/api/tasks/${made.json.id}/teardown`)).json.commands, [], 'no teardown configured, none ran');
});

test('task routes: ?from=&to= reach the review as its range (a turn by its number, the ends by name); a side of no such form is refused', async () => {
  const task = (await call('POST', '/api/tasks', { project_id: projectId, name: 'ranged' })).json;
  const wt = path.join((await parts.getProject(projectId)).path, task.worktree_path);
  writeFileSync(path.join(wt, 'new.txt'), 'new\n');

  const whole = await call('GET', `/api/tasks/${task.id}/changes`);
  assert.equal(whole.status, 200, whole.text);
  assert.deepEqual(whole.json.files.map((f: any) => f.path), ['new.txt']);
  assert.deepEqual((await call('GET', `/api/tasks/${task.id}/changes?from=base&to=work`)).json.files, whole.json.files);
  assert.equal((await call('GET', `/api/tasks/${task.id}/changes?from=turn:7`)).json.code, 'TURN_NOT_FOUND', 'turn:7 read as turn 7');
  assert.equal((await call('GET', `/api/tasks/${task.id}/changes?to=turn:0`)).status, 400);
  assert.equal((await call('GET', `/api/tasks/${task.id}/changes?from=yesterday`)).status, 400);
});

test('task routes: the diff is git\'s bytes as text/x-diff (HEAD: the same headers, no body); one file by ?path=', async () => {
  const task = (await call('POST', '/api/tasks', { project_id: projectId, name: 'diffed' })).json;
  const wt = path.join((await parts.getProject(projectId)).path, task.worktree_path);
  writeFileSync(path.join(wt, 'a.txt'), 'café\n');
  writeFileSync(path.join(wt, 'b.txt'), 'b\n');

  const d = await call('GET', `/api/tasks/${task.id}/diff`);
  assert.equal(d.status, 200);
  assert.equal(d.headers.get('content-type'), 'text/x-diff; charset=utf-8');
  assert.equal(d.headers.get('grove-diff-truncated'), null);
  assert.equal(Number(d.headers.get('content-length')), Buffer.byteLength(d.text));
  assert.match(d.text, /\+café/);
  assert.match(d.text, /b\.txt/);
  const head = await fetch(`${base}/api/tasks/${task.id}/diff`, { method: 'HEAD' });
  assert.equal(head.headers.get('content-length'), d.headers.get('content-length'));
  assert.equal((await head.text()).length, 0);
  const one = await call('GET', `/api/tasks/${task.id}/diff?path=b.txt`);
  assert.doesNotMatch(one.text, /a\.txt/);
  assert.match(one.text, /b\.txt/);
});

test('task routes: setup as JSON, and with Accept: text/event-stream as a stream that ends with the setup', async () => {
  const project = await parts.project({ setup: ['echo set up'] });
  const task = (await call('POST', '/api/tasks', { project_id: project.id, name: 'setup' })).json;
  const json = await call('GET', `/api/tasks/${task.id}/setup`);
  assert.deepEqual(json.json.commands.map((c: any) => [c.command, c.exit_code]), [['echo set up', 0]]);

  const res = await fetch(`${base}/api/tasks/${task.id}/setup`, { headers: { accept: 'text/event-stream' } });
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const events: string[] = [];
  for await (const m of sseMessages(res.body!)) events.push(m.event);
  assert.deepEqual(events, ['command', 'line', 'command', 'end'], 'the command begun, its line, its end, then the end of setup');
});
