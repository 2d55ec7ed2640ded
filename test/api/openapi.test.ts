import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Ajv } from 'ajv';
import { createAjv } from '../../daemon/runtime/validation.ts';
import { addProject, startDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { waitQueueEvent } from '../helpers/queue.ts';

// DESIGN §14.2: the endpoints that act on a host's worktrees or processes, run by their owner
// (the one refused elsewhere, take-over, included); every other one the store answers anywhere.
const OWNED = [
  'post /api/tasks',
  'delete /api/tasks/{id}',
  'get /api/tasks/{id}/changes',
  'get /api/tasks/{id}/diff',
  'post /api/tasks/{id}/commit',
  'post /api/tasks/{id}/rebase',
  'post /api/tasks/{id}/merge',
  'post /api/tasks/{id}/push',
  'get /api/tasks/{id}/turns',
  'post /api/tasks/{id}/restore',
  'get /api/projects/{id}/pool',
  'get /api/sessions/{id}/transcript',
  'post /api/projects/{id}/queue',
  'delete /api/projects/{id}/queue/{task_id}',
  'get /api/tasks/{id}/services',
  'post /api/tasks/{id}/services/{name}',
  'post /api/tasks/{id}/sessions',
  'post /api/tasks/{id}/terminals',
  'delete /api/sessions/{id}',
  'post /api/sessions/{id}/messages',
  'post /api/sessions/{id}/takeover',
  'post /api/sessions/{id}/end',
  'delete /api/projects/{id}',
  'get /api/projects/{id}/conflicts',
  'post /api/approvals/{id}',
  'post /api/automations',
  'post /api/projects/{id}/intake',
  'get /api/projects/{id}/intake',
  'delete /api/projects/{id}/intake',
  'post /api/tasks/{id}/pr',
  'get /api/tasks/{id}/pr',
];
// DESIGN §4's table, every endpoint and every error code: those the store answers on any host, and the owned ones.
const ENDPOINTS = [
  'get /api/health',
  'get /api/hosts',
  'get /api/projects',
  'post /api/projects',
  'get /api/projects/{id}',
  'get /api/tasks',
  'get /api/tasks/{id}',
  'get /api/tasks/{id}/setup',
  'get /api/tasks/{id}/teardown',
  'get /api/events',
  'get /api/tasks/{id}/sessions',
  'get /api/sessions',
  'get /api/sessions/{id}',
  'get /api/sessions/{id}/output',
  'get /api/agents',
  'get /api/openapi.json',
  'get /api/approvals',
  'get /api/approvals/{id}',
  'post /api/sessions/{id}/approvals',
  'get /api/projects/{id}/queue',
  'get /api/automations',
  'get /api/automations/{id}',
  'patch /api/automations/{id}',
  'delete /api/automations/{id}',
  'post /api/automations/{id}/runs',
  'get /api/automations/{id}/runs',
  ...OWNED,
];
const CODES = `INVALID_JSON VALIDATION_FAILED INVALID_ID FORBIDDEN_HOST FORBIDDEN_ORIGIN NOT_FOUND METHOD_NOT_ALLOWED
  PROJECT_EXISTS PROJECT_HAS_TASKS BRANCH_EXISTS TASK_NOT_READY WORKTREE_DIRTY SESSION_NOT_RUNNING PAYLOAD_TOO_LARGE
  UNSUPPORTED_MEDIA_TYPE NOT_A_GIT_REPO CONFIG_INVALID AGENT_REQUIRED UNKNOWN_AGENT AGENT_NOT_INSTALLED BASE_NOT_FOUND INTERNAL
  MODE_UNSUPPORTED RESUME_UNAVAILABLE RESUME_UNSUPPORTED NOTHING_TO_COMMIT
  CONFLICT BASE_CHECKOUT_DIRTY NO_REMOTE REMOTE_FAILED SERVICE_RUNNING APPROVAL_DECIDED APPROVAL_STALE
  HOST_OFFLINE REMOTE_REFUSED ALREADY_QUEUED SCHEDULE_INVALID AUTOMATION_EXISTS INTAKE_INVALID ISSUE_NOT_FOUND
  PR_EXISTS PR_NO_REPOSITORY PR_NO_CHANGES GITHUB_REFUSED GITHUB_UNAVAILABLE INTERFACE_UNSUPPORTED`.split(/\s+/);

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
  const owned = ops.filter((op) => {
    const [m, p] = op.split(' ') as [string, string];
    return JSON.stringify(doc.paths[p][m].responses['503'] ?? null).includes('HOST_OFFLINE');
  });
  assert.deepEqual(owned.sort(), [...OWNED].sort(), 'the endpoints run by their owner');
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

  // The daemon compiles a route's schemas at their first use, not at start: each request body and
  // parameter schema compiles here with its strict Ajv, so a keyword it refuses fails the suite.
  let compiled = 0;
  for (const item of Object.values(doc.paths) as any[]) {
    for (const op of Object.values(item) as any[]) {
      const body = op.requestBody?.content?.['application/json']?.schema;
      for (const schema of [...(body ? [body] : []), ...(op.parameters ?? []).map((p: any) => p.schema)]) {
        createAjv().compile(deref(schema, doc.components.schemas));
        compiled++;
      }
    }
  }
  assert.ok(compiled > 50, `${compiled} schemas compiled`);

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
  const queued = await d.socket('POST', `/api/projects/${project.id}/queue`, { body: { task_id: task.json.id } });
  check('post', '/api/projects/{id}/queue', 201, queued.json);
  check('get', '/api/projects/{id}/queue', 200, (await d.socket('GET', `/api/projects/${project.id}/queue`)).json);
  await waitQueueEvent(d, task.json.id, 'queue.landed'); // its landing ends before the daemon stops
  check('get', '/api/tasks/{id}/setup', 200, (await d.socket('GET', `/api/tasks/${task.json.id}/setup`)).json);
  check('get', '/api/health', 200, (await d.socket('GET', '/api/health')).json);
  check('get', '/api/hosts', 200, (await d.socket('GET', '/api/hosts')).json);
  check('get', '/api/agents', 200, (await d.socket('GET', '/api/agents')).json);
  const dup = await d.socket('POST', '/api/projects', { body: { path: repo } });
  check('post', '/api/projects', 409, dup.json);
  const bad = await d.socket('POST', '/api/tasks', { body: { project_id: project.id } });
  check('post', '/api/tasks', 400, bad.json);
});

// A third-party tool reads the document as published: Redocly's strictest ruleset passes with no
// problem at all (the API has no authentication, and says so on every operation).
test("GET /api/openapi.json passes Redocly's recommended-strict lint with no problem", async (t) => {
  const d = await startDaemon(t);
  const r = await d.socket('GET', '/api/openapi.json');
  assert.equal(r.status, 200);
  const problems = await lintFromString({ source: JSON.stringify(r.json), absoluteRef: 'openapi.json', config: await createConfig({ extends: ['recommended-strict'] }) });
  assert.deepEqual(
    problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`),
    [],
  );
  for (const [p, ops] of Object.entries(r.json.paths as Record<string, Record<string, { security?: unknown }>>)) {
    for (const [m, op] of Object.entries(ops)) assert.deepEqual(op.security, [], `${m} ${p} says it needs no authentication`);
  }
  assert.deepEqual(r.json.info.license, { name: 'MIT', identifier: 'MIT' });
});
