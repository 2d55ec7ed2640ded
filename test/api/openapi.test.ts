import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { addProject, startDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';

// DESIGN §4's table: every endpoint and every error code.
const ENDPOINTS = [
  'get /api/health',
  'get /api/hosts',
  'get /api/projects',
  'post /api/projects',
  'get /api/projects/{id}',
  'delete /api/projects/{id}',
  'get /api/tasks',
  'post /api/tasks',
  'get /api/tasks/{id}',
  'get /api/tasks/{id}/setup',
  'delete /api/tasks/{id}',
  'get /api/tasks/{id}/changes',
  'get /api/tasks/{id}/diff',
  'post /api/tasks/{id}/commit',
  'post /api/tasks/{id}/rebase',
  'post /api/tasks/{id}/merge',
  'post /api/tasks/{id}/push',
  'get /api/projects/{id}/conflicts',
  'get /api/projects/{id}/pool',
  'get /api/tasks/{id}/teardown',
  'get /api/tasks/{id}/services',
  'post /api/tasks/{id}/services/{name}',
  'get /api/events',
  'get /api/tasks/{id}/sessions',
  'post /api/tasks/{id}/sessions',
  'get /api/sessions',
  'get /api/sessions/{id}',
  'delete /api/sessions/{id}',
  'get /api/sessions/{id}/output',
  'post /api/sessions/{id}/end',
  'post /api/sessions/{id}/messages',
  'post /api/sessions/{id}/takeover',
  'get /api/agents',
  'get /api/openapi.json',
  'get /api/approvals',
  'get /api/approvals/{id}',
  'post /api/approvals/{id}',
  'post /api/sessions/{id}/approvals',
];
const CODES = `INVALID_JSON VALIDATION_FAILED INVALID_ID FORBIDDEN_HOST FORBIDDEN_ORIGIN NOT_FOUND METHOD_NOT_ALLOWED
  PROJECT_EXISTS PROJECT_HAS_TASKS BRANCH_EXISTS TASK_NOT_READY WORKTREE_DIRTY SESSION_NOT_RUNNING PAYLOAD_TOO_LARGE
  UNSUPPORTED_MEDIA_TYPE NOT_A_GIT_REPO CONFIG_INVALID AGENT_REQUIRED UNKNOWN_AGENT AGENT_NOT_INSTALLED BASE_NOT_FOUND INTERNAL
  MODE_UNSUPPORTED RESUME_UNAVAILABLE RESUME_UNSUPPORTED NOTHING_TO_COMMIT
  CONFLICT BASE_CHECKOUT_DIRTY NO_REMOTE REMOTE_FAILED SERVICE_RUNNING APPROVAL_DECIDED APPROVAL_STALE`.split(/\s+/);

function deref(node: any, components: Record<string, unknown>): any {
  if (Array.isArray(node)) return node.map((n) => deref(n, components));
  if (node === null || typeof node !== 'object') return node;
  if (typeof node.$ref === 'string') return deref(components[node.$ref.split('/').pop()], components);
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, deref(v, components)]));
}

test('GET /api/openapi.json describes every endpoint, body, response and error, and matches real answers', async (t) => {
  const d = await startDaemon(t);
  const r = await d.tcp('GET', '/api/openapi.json');
  assert.equal(r.status, 200);
  const doc = r.json;
  assert.equal(doc.openapi, '3.1.0');
  assert.match(doc.info.version, /^\d+\.\d+\.\d+/);

  const ops = Object.entries(doc.paths).flatMap(([p, item]: [string, any]) => Object.keys(item).map((m) => `${m} ${p}`));
  assert.deepEqual(ops.sort(), [...ENDPOINTS].sort());
  const text = JSON.stringify(doc);
  for (const code of CODES) assert.ok(text.includes(`"${code}"`), `error ${code} is documented`);
  for (const ref of text.match(/"#\/components\/schemas\/[^"]+"/g) ?? []) {
    assert.ok(doc.components.schemas[JSON.parse(ref).split('/').pop()], `${ref} resolves`);
  }
  assert.ok(doc.paths['/api/tasks'].post.requestBody.content['application/json'].schema);
  assert.ok(doc.paths['/api/sessions/{id}/output'].get.responses['200'].content['text/event-stream']);
  assert.deepEqual(Object.keys(doc.paths['/api/tasks/{id}/diff'].get.responses['200'].content), ['text/x-diff']);
  assert.ok(doc.paths['/api/events'].get.responses['200'].content['text/event-stream']);
  assert.deepEqual(
    doc.paths['/api/tasks/{id}'].delete.parameters.map((p: any) => [p.name, p.in]),
    [
      ['id', 'path'],
      ['force', 'query'],
    ],
  );

  // Real answers validate against the documented response schemas.
  const ajv = new Ajv({ strict: false, allErrors: true });
  const check = (method: string, p: string, status: number, body: unknown) => {
    const resp = doc.paths[p][method].responses[String(status)];
    const ct = Object.keys(resp.content)[0]!;
    const validate = ajv.compile(deref(resp.content[ct].schema, doc.components.schemas));
    assert.ok(validate(body), `${method} ${p} ${status}: ${JSON.stringify(validate.errors)}`);
  };
  const repo = makeRepo(t);
  const project = await addProject(d, repo);
  check('post', '/api/projects', 201, project);
  check('get', '/api/projects', 200, (await d.socket('GET', '/api/projects')).json);
  const task = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'doc' } });
  check('post', '/api/tasks', 201, task.json);
  check('get', '/api/tasks/{id}/setup', 200, (await d.socket('GET', `/api/tasks/${task.json.id}/setup`)).json);
  check('get', '/api/health', 200, (await d.socket('GET', '/api/health')).json);
  check('get', '/api/hosts', 200, (await d.socket('GET', '/api/hosts')).json);
  check('get', '/api/agents', 200, (await d.socket('GET', '/api/agents')).json);
  const dup = await d.socket('POST', '/api/projects', { body: { path: repo } });
  check('post', '/api/projects', 409, dup.json);
  const bad = await d.socket('POST', '/api/tasks', { body: { project_id: project.id } });
  check('post', '/api/tasks', 400, bad.json);
});
