import assert from 'node:assert/strict';
import test from 'node:test';
import type { Method, Route } from '../../daemon/http/route.ts';
import { createRouter } from '../../daemon/http/router.ts';

const row = (method: Method, path: string): Route => ({ method, path, summary: `${method} ${path}`, responses: { 200: null }, handler: async () => ({ status: 200 }) });

const routes = [
  row('GET', '/api/tasks/:id'),
  row('DELETE', '/api/tasks/:id'),
  row('GET', '/api/tasks'),
  row('POST', '/api/tasks'),
  row('GET', '/api/tasks/archived'),
  row('POST', '/api/tasks/:id/sessions'),
];

test('router: parameters are taken from their segment, a literal segment wins over a parameter, HEAD is GET', () => {
  const router = createRouter(routes);
  const found = (method: string, path: string) => {
    const m = router.match(method, path);
    assert.equal(m.kind, 'found', `${method} ${path}`);
    return m.kind === 'found' ? { path: m.route.path, method: m.route.method, params: m.params } : null;
  };
  assert.deepEqual(found('GET', '/api/tasks/t1'), { path: '/api/tasks/:id', method: 'GET', params: { id: 't1' } });
  assert.deepEqual(found('POST', '/api/tasks/t1/sessions'), { path: '/api/tasks/:id/sessions', method: 'POST', params: { id: 't1' } });
  assert.deepEqual(found('GET', '/api/tasks/archived'), { path: '/api/tasks/archived', method: 'GET', params: {} });
  assert.deepEqual(found('DELETE', '/api/tasks/archived'), { path: '/api/tasks/:id', method: 'DELETE', params: { id: 'archived' } }, 'no literal DELETE: the parameter route');
  assert.deepEqual(found('HEAD', '/api/tasks'), { path: '/api/tasks', method: 'GET', params: {} });
  // The table is sorted once, the same in every locale.
  assert.deepEqual(router.routes.map((r) => `${r.method} ${r.path}`), [
    'GET /api/tasks',
    'POST /api/tasks',
    'DELETE /api/tasks/:id',
    'GET /api/tasks/:id',
    'POST /api/tasks/:id/sessions',
    'GET /api/tasks/archived',
  ]);
});

test('router: a known path with another method answers the methods it has; an unknown path, an empty parameter or a trailing slash none', () => {
  const router = createRouter(routes);
  assert.deepEqual(router.match('PUT', '/api/tasks'), { kind: 'method', allow: ['GET', 'HEAD', 'POST'] });
  assert.deepEqual(router.match('POST', '/api/tasks/t1'), { kind: 'method', allow: ['DELETE', 'GET', 'HEAD'] });
  assert.deepEqual(router.match('GET', '/api/tasks/'), { kind: 'none' }, 'an empty :id is no id');
  assert.deepEqual(router.match('GET', '/api/tasks/t1/'), { kind: 'none' });
  assert.deepEqual(router.match('GET', '/api/nothing'), { kind: 'none' });
  assert.deepEqual(router.match('GET', '/api/tasks/t1/sessions/extra'), { kind: 'none' });
});

test('router: two routes for one method and path shape are refused at start, whatever their parameter names', () => {
  assert.throws(() => createRouter([row('GET', '/api/x/:id'), row('GET', '/api/x/:name')]), /duplicate route GET \/api\/x\/:(id|name)/);
  assert.doesNotThrow(() => createRouter([row('GET', '/api/x/:id'), row('POST', '/api/x/:name')]));
});
