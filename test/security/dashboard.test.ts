import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { sharedDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { openPage, sharedBrowser } from '../helpers/browser.ts';
import { rawRequest } from '../helpers/raw.ts';
import { newSince } from '../helpers/since.ts';

const browser = sharedBrowser();
// One daemon for both tests; the second looks only at what happened since it began.
const daemon = sharedDaemon();

test("the dashboard's page and assets: same-origin CSP, never framed, no inline script, hashed assets cached for good; over the socket and the TCP front", async (t) => {
  const d = await daemon();
  for (const via of ['socket', 'tcp'] as const) {
    const page = await d[via]('GET', '/');
    assert.equal(page.status, 200, page.text);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /(^|; )default-src 'self'(;|$)/, csp);
    assert.match(csp, /(^|; )frame-ancestors 'none'(;|$)/, csp);
    // Inline style only, for the terminal's renderer (DESIGN §21): scripts are the page's own files.
    assert.doesNotMatch(csp.replace(/(^|; )style-src [^;]*/, ''), /unsafe|script-src/, csp);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.equal(page.headers['cache-control'], 'no-cache');
    assert.equal(page.headers['access-control-allow-origin'], undefined, 'no CORS');
    assert.doesNotMatch(page.text, /<script(?![^>]*\ssrc=)[^>]*>/, 'no inline script');
    const assets = [...page.text.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), page.text);
    for (const a of assets) {
      assert.match(a, /-[A-Za-z0-9_-]{8}\.(js|css)$/, 'a hashed name');
      const r = await d[via]('GET', a);
      assert.equal(r.status, 200, a);
      assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.match(String(r.headers['content-security-policy']), /default-src 'self'/);
    }
  }
  // Nothing outside the built folder, and the API's problems for what is not there.
  for (const target of ['/assets/..%2f..%2fpackage.json', '/assets/%2e%2e%2fpackage.json', '/assets/.hidden', '/assets/nope.js']) {
    const r = await rawRequest({ path: d.socketPath }, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    assert.equal(r.status, 404, `${target}: ${r.body}`);
    assert.match(r.headers, /content-type: application\/problem\+json/i, target);
  }
  // The page of a saved host (DESIGN §14.1) is the same page; a name no host could have is refused.
  const onHost = await d.tcp('GET', '/?host=box-1');
  assert.equal(onHost.status, 200, onHost.text);
  assert.equal(onHost.text, (await d.tcp('GET', '/')).text);
  for (const target of ['/?host=../x', '/?host=', '/?other=1']) {
    const r = await d.tcp('GET', target);
    assert.equal(r.status, 400, `${target}: ${r.text}`);
    assert.equal(r.json.code, 'VALIDATION_FAILED', target);
  }
  // The §6 guards are unchanged in front of the page.
  const rebound = await rawRequest({ port: d.port! }, `GET / HTTP/1.1\r\nHost: evil.example:${d.port}\r\nConnection: close\r\n\r\n`);
  assert.equal(rebound.status, 403);
  assert.match(rebound.body, /FORBIDDEN_HOST/);
  // health names the newest event: what the page follows from after loading the state.
  await d.socket('POST', '/api/projects', { body: { path: makeRepo(t) } });
  const events = (await d.socket('GET', '/api/events?after=0')).json.events;
  assert.equal((await d.socket('GET', '/api/health')).json.last_event_seq, events.at(-1).seq);
});

test('a page on another origin in the same browser cannot read the dashboard, act through it, post a form to it or frame it', async (t) => {
  const d = await daemon();
  const added = await newSince(d, '/api/projects');
  const seq = (await d.socket('GET', '/api/health')).json.last_event_seq;
  const logsBefore = d.logs.length;
  const repo = makeRepo(t);
  const dashboard = `http://127.0.0.1:${d.port}`;
  const body = JSON.stringify({ path: repo });
  // The hostile page: every way a page can reach another origin without its consent.
  const hostile = `<!doctype html><body><h1>hostile</h1>
<form id="f" method="POST" action="${dashboard}/api/projects" enctype="text/plain" target="sink"><input name='${body.slice(0, -1)}' value='"}'></form>
<iframe name="sink"></iframe>
<iframe id="framed" src="${dashboard}/"></iframe>
<script>
window.results = {};
const attempt = async (name, fn) => { try { const r = await fn(); window.results[name] = 'status ' + r.status + ' ' + (r.type || ''); } catch (e) { window.results[name] = 'blocked'; } };
(async () => {
  await attempt('read', () => fetch('${dashboard}/api/projects').then(async (r) => ({ status: r.status + ':' + (await r.text()) })));
  await attempt('post-json', () => fetch('${dashboard}/api/projects', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '${body}' }));
  await attempt('post-no-cors', () => fetch('${dashboard}/api/projects', { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '${body}' }));
  await attempt('page', () => fetch('${dashboard}/').then(async (r) => ({ status: r.status + ':' + (await r.text()).length })));
  document.getElementById('f').submit();
  window.done = true;
})();
</script></body>`;
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(hostile));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  const other = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { page } = await openPage(t, await browser());
  await page.goto(`${other}/`);
  await page.waitForFunction('window.done === true');
  // The form's post and the frame have had their answers.
  await page.waitForLoadState('load');
  const results = (await page.evaluate('window.results')) as Record<string, string>;
  assert.equal(results.read, 'blocked', 'no CORS: the answer cannot be read');
  assert.equal(results['post-json'], 'blocked', 'the preflight is refused');
  assert.equal(results['post-no-cors'], 'status 0 opaque', 'sent blind, and refused by the guards (below)');
  assert.equal(results.page, 'blocked');
  // The framed dashboard never rendered: frame-ancestors 'none' (and the guards) stop it.
  const framed = page.frames().find((f) => f !== page.mainFrame() && f.name() !== 'sink');
  assert.ok(framed, 'the frame exists');
  assert.equal(await framed.locator('#app').count(), 0, `the dashboard is not in the frame (${framed.url()})`);
  // Nothing was created by any of it.
  assert.deepEqual(added((await d.socket('GET', '/api/projects')).json), []);
  assert.deepEqual((await d.socket('GET', `/api/events?after=${seq}`)).json.events, []);
  const refused = d.logs.slice(logsBefore).filter((l) => l.msg === 'refused').map((l) => l.code);
  assert.ok(refused.includes('FORBIDDEN_ORIGIN'), `the guards refused them: ${refused}`);
});
