import assert from 'node:assert/strict';
import test from 'node:test';
import { checkBrowserGuards } from '../../daemon/http/guards.ts';
import { answering } from '../helpers/http.ts';
import { rawRequest } from '../helpers/raw.ts';

// The guards of a front on `port`, judged on requests sent byte for byte as a browser or a
// rebinding page would send them.
async function judge(t: test.TestContext) {
  let port = 0;
  port = await answering(t, (req) => checkBrowserGuards(req, port));
  return {
    port,
    async verdict(target: string, headers: string[]) {
      const res = await rawRequest({ port }, [`GET ${target} HTTP/1.1`, ...headers, 'Connection: close', '', ''].join('\r\n'));
      assert.equal(res.status, 200, res.body);
      return (JSON.parse(res.body) as { value: { code: string; detail: string } | null }).value;
    },
  };
}

test('browser guards: our own host and origin pass, with or without a page', async (t) => {
  const { port, verdict } = await judge(t);
  assert.equal(await verdict('/api/health', [`Host: 127.0.0.1:${port}`]), null, 'curl: no Origin, no Sec-Fetch-Site');
  assert.equal(await verdict('/api/health', [`Host: LOCALHOST:${port}`, `Origin: http://localhost:${port}`, 'Sec-Fetch-Site: same-origin']), null);
  assert.equal(await verdict('/', [`Host: [::1]:${port}`, 'Sec-Fetch-Site: none']), null, 'typed in the address bar');
});

test('browser guards: another host (DNS rebinding), another origin or site, or an odd request target is refused with its code', async (t) => {
  const { port, verdict } = await judge(t);
  const host = `Host: 127.0.0.1:${port}`;
  assert.deepEqual(await verdict('/api/tasks', ['Host: evil.example']), {
    code: 'FORBIDDEN_HOST',
    detail: `Host "evil.example" is not allowed; use 127.0.0.1:${port} or localhost:${port}`,
  });
  assert.equal((await verdict('/api/tasks', [`Host: 127.0.0.1:${port + 1}`]))?.code, 'FORBIDDEN_HOST', 'another port is another site');
  assert.equal((await verdict('/api/tasks', [host, host]))?.code, 'FORBIDDEN_HOST', 'two Host headers');
  assert.deepEqual(await verdict(`http://127.0.0.1:${port}/api/tasks`, [host]), { code: 'FORBIDDEN_HOST', detail: 'absolute-form and asterisk request targets are not accepted' });
  assert.deepEqual(await verdict('/api/tasks', [host, 'Origin: http://evil.example']), { code: 'FORBIDDEN_ORIGIN', detail: 'Origin "http://evil.example" is not allowed' });
  assert.equal((await verdict('/api/tasks', [host, 'Origin: null']))?.code, 'FORBIDDEN_ORIGIN', 'a sandboxed page');
  assert.equal((await verdict('/api/tasks', [host, `Origin: http://127.0.0.1:${port}`, `Origin: http://127.0.0.1:${port}`]))?.code, 'FORBIDDEN_ORIGIN');
  assert.deepEqual(await verdict('/api/tasks', [host, 'Sec-Fetch-Site: same-site']), { code: 'FORBIDDEN_ORIGIN', detail: 'Sec-Fetch-Site "same-site" is not allowed' });
  assert.equal((await verdict('/api/tasks', [host, 'Sec-Fetch-Site: cross-site']))?.code, 'FORBIDDEN_ORIGIN');
});
