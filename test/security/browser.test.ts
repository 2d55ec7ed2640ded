import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addProject, sharedDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { rawRequest } from '../helpers/raw.ts';
import { AGENT } from '../helpers/sessions.ts';
import { newSince } from '../helpers/since.ts';
import { processesMatching, repoState } from '../helpers/state.ts';

// The tests share one daemon, with the fixture agent (each makes its own repository, and looks
// only at what it made).
const daemon = sharedDaemon({ config: { agents: { fixture: { command: [AGENT, '{prompt}'] } } } });

test('the TCP front refuses foreign hosts, origins and cross-site fetches with 403, creating nothing', async (t) => {
  const d = await daemon();
  const added = await newSince(d, '/api/projects');
  const repo = makeRepo(t);
  const port = d.port!;
  const refused: Array<[string, Record<string, string>, string]> = [
    ['foreign Host', { host: `evil.example:${port}` }, 'FORBIDDEN_HOST'],
    ['suffix-trick Host', { host: `127.0.0.1.evil.example:${port}` }, 'FORBIDDEN_HOST'],
    ['Host without port', { host: '127.0.0.1' }, 'FORBIDDEN_HOST'],
    ['0.0.0.0 Host', { host: `0.0.0.0:${port}` }, 'FORBIDDEN_HOST'],
    ['Host on another port', { host: `localhost:${port + 1}` }, 'FORBIDDEN_HOST'],
    ['foreign Origin', { origin: 'https://evil.example' }, 'FORBIDDEN_ORIGIN'],
    ['null Origin', { origin: 'null' }, 'FORBIDDEN_ORIGIN'],
    ['Origin on another port', { origin: `http://localhost:${port + 1}` }, 'FORBIDDEN_ORIGIN'],
    ['Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }, 'FORBIDDEN_ORIGIN'],
    ['Sec-Fetch-Site same-site', { 'sec-fetch-site': 'same-site' }, 'FORBIDDEN_ORIGIN'],
  ];
  for (const [what, headers, code] of refused) {
    for (const [method, body] of [
      ['GET', undefined],
      ['POST', { path: repo }],
    ] as const) {
      const r = await d.tcp(method, '/api/projects', { headers, body });
      assert.equal(r.status, 403, `${what} ${method}: ${r.text}`);
      assert.equal(r.json.code, code, what);
      assert.match(String(r.headers['content-type']), /^application\/problem\+json/);
      assert.equal(r.headers['access-control-allow-origin'], undefined, 'no CORS headers');
    }
  }
  assert.deepEqual(added((await d.socket('GET', '/api/projects')).json), [], 'nothing was created');

  // The allowed forms pass.
  const allowed: Array<Record<string, string>> = [
    { host: `localhost:${port}` },
    { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin' },
    { host: `LOCALHOST:${port}`, origin: `http://localhost:${port}` },
  ];
  for (const headers of allowed) {
    assert.equal((await d.tcp('GET', '/api/health', { headers })).status, 200, JSON.stringify(headers));
  }
});

test('missing Host and absolute-form targets are refused on the TCP front', async (t) => {
  const d = await daemon();
  const port = d.port!;
  const noHost = await rawRequest({ port }, 'GET /api/health HTTP/1.0\r\n\r\n');
  assert.equal(noHost.status, 403);
  assert.equal(JSON.parse(noHost.body).code, 'FORBIDDEN_HOST');
  const absolute = await rawRequest({ port }, `GET http://evil.example/api/health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
  assert.equal(absolute.status, 403);
  assert.equal(JSON.parse(absolute.body).code, 'FORBIDDEN_HOST');
  const twoHosts = await rawRequest(
    { port },
    `GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nHost: evil.example\r\nConnection: close\r\n\r\n`,
  );
  assert.ok(twoHosts.status === 400 || twoHosts.status === 403, `two Host headers: ${twoHosts.status}`);
});

test('form, text/plain and multipart posts get 415 and create nothing', async (t) => {
  const d = await daemon();
  const added = await newSince(d, '/api/projects');
  const repo = makeRepo(t);
  const json = JSON.stringify({ path: repo });
  for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1']) {
    for (const via of [d.tcp, d.socket]) {
      const r = await via('POST', '/api/projects', { body: json, headers: { 'content-type': ct } });
      assert.equal(r.status, 415, `${ct}: ${r.text}`);
      assert.equal(r.json.code, 'UNSUPPORTED_MEDIA_TYPE');
    }
  }
  const none = await d.tcp('POST', '/api/projects', { body: json });
  assert.equal(none.status, 415, 'no Content-Type at all');
  assert.deepEqual(added((await d.socket('GET', '/api/projects')).json), [], 'nothing was created');
  // The same body as JSON is accepted, so the refusals above were about the type alone.
  const ok = await d.tcp('POST', '/api/projects', { body: json, headers: { 'content-type': 'application/json; charset=utf-8' } });
  assert.equal(ok.status, 201, ok.text);
});

test('a CORS preflight gets no CORS headers', async (t) => {
  const d = await daemon();
  const r = await d.tcp('OPTIONS', '/api/projects', {
    headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
  });
  assert.equal(r.status, 403);
  assert.equal(r.headers['access-control-allow-origin'], undefined);
  const same = await d.tcp('OPTIONS', '/api/projects');
  assert.equal(same.status, 405);
  assert.equal(same.json.code, 'METHOD_NOT_ALLOWED');
  assert.equal(same.headers['access-control-allow-origin'], undefined);
  assert.equal(same.headers['access-control-allow-methods'], undefined);
});

test('refused browser requests on every endpoint that acts run nothing: no branch, worktree, session or process', async (t) => {
  const d = await daemon();
  const added = await newSince(d, '/api/tasks');
  // A project whose .grove.json names the fixture agent, and one ready task.
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture' }) } });
  const project = await addProject(d, repo);
  const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'agent work' } })).json;
  assert.equal(task.status, 'ready');
  const port = d.port!;
  const before = repoState(repo);
  const refusals: Array<[string, string]> = [
    ['empty Host', `Host: \r\n`],
    ['port-only Host', `Host: :${port}\r\n`],
    ['rebinding Host', `Host: attacker.example:${port}\r\n`],
    ['foreign Origin', `Host: 127.0.0.1:${port}\r\nOrigin: https://evil.example\r\n`],
    ['null Origin', `Host: 127.0.0.1:${port}\r\nOrigin: null\r\n`],
    ['cross-site fetch', `Host: 127.0.0.1:${port}\r\nSec-Fetch-Site: cross-site\r\n`],
  ];
  const requests: Array<[string, string, string]> = [
    ['POST', '/api/tasks', JSON.stringify({ project_id: project.id, name: 'from a page' })],
    ['POST', `/api/tasks/${task.id}/sessions`, JSON.stringify({ prompt: 'echo:from-a-page' })],
    ['DELETE', `/api/tasks/${task.id}?force=true`, ''],
    ['DELETE', `/api/projects/${project.id}`, ''],
    ['GET', `/api/tasks/${task.id}/setup`, ''],
  ];
  let n = 0;
  for (const [what, headers] of refusals) {
    for (const [method, target, body] of requests) {
      const bodyHeaders = body ? `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` : '';
      const r = await rawRequest({ port }, `${method} ${target} HTTP/1.1\r\n${headers}${bodyHeaders}Connection: close\r\n\r\n${body}`);
      assert.equal(r.status, 403, `${what} ${method} ${target}: ${r.status} ${r.body}`);
      assert.match(JSON.parse(r.body).code, /^FORBIDDEN_(HOST|ORIGIN)$/);
      n++;
    }
  }
  assert.equal(n, refusals.length * requests.length);
  assert.deepEqual(repoState(repo), before, 'no branch or worktree made or removed');
  assert.equal((await d.socket('GET', `/api/tasks/${task.id}`)).json.status, 'ready');
  assert.equal(added((await d.socket('GET', '/api/tasks')).json).length, 1);
  assert.deepEqual((await d.socket('GET', `/api/tasks/${task.id}/sessions`)).json, []);
  assert.deepEqual(processesMatching('echo:from-a-page'), []);
});
