import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sharedDaemon, type Reply } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { rawRequest } from '../helpers/raw.ts';

// None of these requests may create anything: the tests share one daemon.
const daemon = sharedDaemon();

function assertProblem(r: Reply, status: number, code: string, what: string) {
  assert.equal(r.status, status, `${what}: ${r.text}`);
  assert.match(String(r.headers['content-type']), /^application\/problem\+json/, what);
  assert.equal(r.json.code, code, what);
  assert.equal(r.json.status, status, what);
  for (const k of ['type', 'title', 'detail']) assert.equal(typeof r.json[k], 'string', `${what}: ${k}`);
  assert.ok(!/\bat .+:\d+:\d+/.test(r.text), `${what}: no stack trace`);
}

test('malformed ids get 400 INVALID_ID, unknown ones 404', async (t) => {
  const d = await daemon();
  const ids = [
    'abc',
    '3F2504E0-4F89-41D3-9A0C-0305E82C3301',
    'urn:uuid:3f2504e0-4f89-41d3-9a0c-0305e82c3301',
    '3f2504e0-4f89-41d3-9a0c-0305e82c330',
    "1'%20OR%20'1'='1",
    '%00',
    '..%2F..%2Fetc',
  ];
  for (const id of ids) {
    for (const method of ['GET', 'DELETE']) {
      assertProblem(await d.socket(method, `/api/projects/${id}`), 400, 'INVALID_ID', `${method} ${id}`);
    }
  }
  assertProblem(await d.tcp('GET', '/api/projects/3f2504e0-4f89-41d3-9a0c-0305e82c3301'), 404, 'NOT_FOUND', 'unknown id');
  assertProblem(await d.socket('GET', '/api/nope'), 404, 'NOT_FOUND', 'unknown route');
  assertProblem(await d.socket('GET', '/api/projects/3f2504e0-4f89-41d3-9a0c-0305e82c3301/extra'), 404, 'NOT_FOUND', 'deeper path');
  const put = await d.socket('PUT', '/api/projects');
  assertProblem(put, 405, 'METHOD_NOT_ALLOWED', 'PUT');
  assert.equal(put.headers.allow, 'GET, HEAD, POST');
});

test('bad bodies get 4xx with a stable code and create nothing', async (t) => {
  const d = await daemon();
  const repo = makeRepo(t);
  const cases: Array<[string, unknown, number, string]> = [
    ['malformed JSON', '{"path": ', 400, 'INVALID_JSON'],
    ['trailing garbage', `{"path": ${JSON.stringify(repo)}} x`, 400, 'INVALID_JSON'],
    ['empty body', '', 400, 'VALIDATION_FAILED'],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), 400, 'INVALID_JSON'],
    ['array', [repo], 400, 'VALIDATION_FAILED'],
    ['null', 'null', 400, 'VALIDATION_FAILED'],
    ['string', '"x"', 400, 'VALIDATION_FAILED'],
    ['missing path', { name: 'x' }, 400, 'VALIDATION_FAILED'],
    ['path of wrong type', { path: 42 }, 400, 'VALIDATION_FAILED'],
    ['name of wrong type', { path: repo, name: ['x'] }, 400, 'VALIDATION_FAILED'],
    ['unknown field', { path: repo, colour: 'red' }, 400, 'VALIDATION_FAILED'],
    ['__proto__ field', `{"path": ${JSON.stringify(repo)}, "__proto__": {"admin": true}}`, 400, 'VALIDATION_FAILED'],
    ['relative path', { path: 'some/repo' }, 400, 'VALIDATION_FAILED'],
    ['dot path', { path: '.' }, 400, 'VALIDATION_FAILED'],
    ['NUL in path', { path: `${repo}\u0000/x` }, 400, 'VALIDATION_FAILED'],
    ['NUL in name', { path: repo, name: 'a\u0000b' }, 400, 'VALIDATION_FAILED'],
    ['control character in name', { path: repo, name: 'a\nb' }, 400, 'VALIDATION_FAILED'],
    ['empty name', { path: repo, name: '' }, 400, 'VALIDATION_FAILED'],
    ['huge name', { path: repo, name: 'n'.repeat(100_000) }, 400, 'VALIDATION_FAILED'],
    ['huge path', { path: '/' + 'p'.repeat(500_000) }, 400, 'VALIDATION_FAILED'],
    ['deeply nested', '['.repeat(200_000) + ']'.repeat(200_000), 400, 'VALIDATION_FAILED'],
    ['deeply nested field', `{"path": ${JSON.stringify(repo)}, "name": ${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`, 400, 'VALIDATION_FAILED'],
    ['nested object field', { path: repo, name: { a: { b: { c: 1 } } } }, 400, 'VALIDATION_FAILED'],
    ['missing path dir', { path: `${repo}/missing` }, 422, 'NOT_A_GIT_REPO'],
  ];
  for (const [what, body, status, code] of cases) {
    const headers = { 'content-type': 'application/json' };
    for (const via of [d.socket, d.tcp]) assertProblem(await via('POST', '/api/projects', { body, headers }), status, code, what);
  }
  const unknown = await d.socket('POST', '/api/projects', { body: { path: repo, colour: 'red' } });
  assert.deepEqual(unknown.json.errors, [{ path: '/colour', message: 'is not an allowed field' }]);
  const missing = await d.socket('POST', '/api/projects', { body: {} });
  assert.deepEqual(missing.json.errors, [{ path: '/path', message: 'is required' }]);
  assert.deepEqual((await d.socket('GET', '/api/projects')).json, []);
});

test('bodies over 1 MiB get 413, declared or streamed, on both listeners', async (t) => {
  const d = await daemon();
  const big = JSON.stringify({ path: '/' + 'a'.repeat(1024 * 1024) });
  const headers = { 'content-type': 'application/json' };
  for (const via of [d.socket, d.tcp]) assertProblem(await via('POST', '/api/projects', { body: big, headers }), 413, 'PAYLOAD_TOO_LARGE', 'declared');

  // Chunked, with no length declared: the limit applies while reading.
  const chunk = 'a'.repeat(64 * 1024);
  let raw = `POST /api/projects HTTP/1.1\r\nHost: 127.0.0.1:${d.port}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
  for (let i = 0; i < 20; i++) raw += `${chunk.length.toString(16)}\r\n${chunk}\r\n`;
  raw += '0\r\n\r\n';
  for (const target of [{ port: d.port! }, { path: d.socketPath }]) {
    const r = await rawRequest(target, raw);
    assert.equal(r.status, 413, JSON.stringify(target));
    assert.equal(JSON.parse(r.body).code, 'PAYLOAD_TOO_LARGE');
  }
  // A body just under the limit is read and judged on its content.
  const under = JSON.stringify({ path: '/' + 'a'.repeat(1024 * 1024 - 20) });
  assertProblem(await d.socket('POST', '/api/projects', { body: under, headers }), 400, 'VALIDATION_FAILED', 'under the limit');
  assert.equal((await d.socket('GET', '/api/health')).status, 200, 'the daemon is still up');
});

test('query strings on endpoints that take none are refused', async (t) => {
  const d = await daemon();
  assertProblem(await d.socket('GET', "/api/projects?id=1'%20OR%201=1"), 400, 'VALIDATION_FAILED', 'unknown query');
  assertProblem(await d.tcp('GET', '/api/health?x=1&x=2'), 400, 'VALIDATION_FAILED', 'repeated query');
});
