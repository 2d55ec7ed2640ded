// grove's GitHub client alone (daemon/github/client.ts, token.ts) against the local server that
// speaks GitHub's REST API: conditional GETs answered from memory on a 304; every page of a list;
// a spent rate limit holds every request until it resets; 5xx and a hanging GitHub retried with
// back-off, each try bounded; failures as data (kind, GitHub's message), never the token.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test, { type TestContext } from 'node:test';
import { createGitHub, GitHubError, type GitHubDeps } from '../../daemon/github/client.ts';
import { createTokenSource } from '../../daemon/github/token.ts';
import { makeRepo } from '../helpers/git.ts';
import { startGitHub, type GitHubServer } from '../helpers/github-server.ts';
import { memoryLog } from '../helpers/store.ts';

const TOKEN = 'ghp_test_token';

async function setup(t: TestContext, opts: Partial<GitHubDeps> = {}) {
  const gh = await startGitHub();
  t.after(gh.close);
  gh.addRepo('acme/app');
  const client = createGitHub({ apiUrl: gh.url, token: createTokenSource({ env: { GH_TOKEN: TOKEN } }), timeoutMs: 5000, log: memoryLog().log, retryBaseMs: 10, ...opts });
  t.after(client.close);
  return { gh, client };
}

const failure = async (p: Promise<unknown>): Promise<GitHubError> => {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof GitHubError, String(err));
    return err;
  }
  assert.fail('it went through');
};

const ISSUES = '/repos/{owner}/{repo}/issues';
const where = { owner: 'acme', repo: 'app' };

test('a GET asks again with its ETag: a 304 answers with what the last 200 said, and costs none of the limit', async (t) => {
  const { gh, client } = await setup(t);
  const n = gh.addIssue('acme/app', { title: 'one' });
  const first = await client.get<any[]>(ISSUES, where);
  assert.equal(first.changed, true);
  assert.deepEqual(first.data.map((i) => i.number), [n]);
  gh.clearRequests();
  const again = await client.get<any[]>(ISSUES, where);
  assert.equal(again.changed, false);
  assert.deepEqual(again.data, first.data);
  assert.equal(gh.requests[0]!.status, 304);
  assert.ok(gh.requests[0]!.ifNoneMatch, 'it sent the ETag');
  gh.addIssue('acme/app', { title: 'two' });
  const changed = await client.get<any[]>(ISSUES, where);
  assert.equal(changed.changed, true);
  assert.equal(changed.data.length, 2);
  assert.equal(gh.requests.at(-1)!.authorization, `token ${TOKEN}`);
});

test('a list is read to its last page, a hundred at a time, each page conditional', async (t) => {
  const { gh, client } = await setup(t);
  for (let i = 0; i < 130; i++) gh.addIssue('acme/app', { title: `issue ${i}` });
  gh.clearRequests();
  const all = await client.list<any>(ISSUES, where);
  assert.equal(all.data.length, 130);
  assert.equal(all.changed, true);
  assert.deepEqual(gh.requests.map((r) => [r.query.per_page, r.query.page]), [['100', '1'], ['100', '2']]);
  gh.clearRequests();
  const quiet = await client.list<any>(ISSUES, where);
  assert.equal(quiet.changed, false);
  assert.equal(quiet.data.length, 130);
  assert.deepEqual(gh.requests.map((r) => r.status), [304, 304]);
});

test('a spent rate limit: no request leaves until it resets, each failing at once as rate_limited with its time', async (t) => {
  const { gh, client } = await setup(t);
  const resetAt = new Date(Date.now() + 2000);
  gh.setRateLimit({ remaining: 1, resetAt });
  await client.get(ISSUES, where); // the last one: its answer says none are left
  gh.clearRequests();
  const held = await failure(client.get('/repos/{owner}/{repo}', where));
  assert.equal(held.kind, 'rate_limited');
  assert.ok(held.until !== null && Math.abs(held.until.getTime() - resetAt.getTime()) <= 1000, `until ${held.until?.toISOString()}`);
  assert.ok(client.limitedUntil() !== null);
  assert.equal(gh.requests.length, 0, 'nothing was sent');
  await new Promise((r) => setTimeout(r, held.until!.getTime() - Date.now() + 50));
  assert.equal(client.limitedUntil(), null);
  assert.equal((await client.get<any>('/repos/{owner}/{repo}', where)).data.full_name, 'acme/app');
});

test("a 403 for a spent limit is read as the limit; a secondary limit's Retry-After holds the requests too", async (t) => {
  const { gh, client } = await setup(t);
  gh.fail({ path: /\/issues$/ }, { status: 403, times: 1, body: { message: 'You have exceeded a secondary rate limit' }, headers: { 'retry-after': '1' } });
  const e = await failure(client.get(ISSUES, where));
  assert.equal(e.kind, 'rate_limited');
  assert.ok(e.until !== null && e.until.getTime() > Date.now());
  gh.clearRequests();
  assert.equal((await failure(client.get('/repos/{owner}/{repo}', where))).kind, 'rate_limited');
  assert.equal(gh.requests.length, 0);
});

test('5xx answers are tried again with back-off; a GitHub that does not answer is a bounded try, tried again, then unavailable', async (t) => {
  const { gh, client } = await setup(t, { timeoutMs: 300 });
  gh.fail({ path: /\/issues$/ }, { status: 502, times: 2 });
  const ok = await client.get<any[]>(ISSUES, where);
  assert.equal(ok.changed, true);
  assert.deepEqual(gh.requests.filter((r) => r.path.endsWith('/issues')).map((r) => r.status), [502, 502, 200]);
  gh.clearRequests();
  gh.fail({ path: /\/repos\/acme\/app$/ }, { hang: true });
  const started = Date.now();
  const e = await failure(client.get('/repos/{owner}/{repo}', where));
  assert.equal(e.kind, 'unavailable');
  assert.equal(gh.requests.length, 3, 'the first try and two more');
  assert.ok(Date.now() - started < 3000, `bounded: ${Date.now() - started} ms`);
});

test('failures are data: unauthorized, not_found and invalid with GitHub\'s message, and never the token', async (t) => {
  const { gh } = await setup(t);
  const bad = createGitHub({ apiUrl: gh.url, token: createTokenSource({ env: { GH_TOKEN: 'ghp_not_it' } }), timeoutMs: 5000, log: memoryLog().log });
  t.after(bad.close);
  const e = await failure(bad.get(ISSUES, where));
  assert.equal(e.kind, 'unauthorized');
  assert.match(e.message, /Bad credentials/);
  assert.ok(!JSON.stringify({ ...e, message: e.message, stack: e.stack }).includes('ghp_not_it'));
  const { client } = await setup(t);
  assert.equal((await failure(client.get('/repos/{owner}/{repo}/issues/{n}', { ...where, n: 999 }))).kind, 'not_found');
  const invalid = await failure(client.send('POST', '/repos/{owner}/{repo}/pulls', { ...where, title: 'x', head: 'nope', base: 'main' }));
  assert.equal(invalid.kind, 'invalid');
  assert.match(invalid.message, /Validation Failed/);
  const none = createGitHub({ apiUrl: gh.url, token: createTokenSource({ env: { PATH: '' } }), timeoutMs: 5000, log: memoryLog().log });
  t.after(none.close);
  assert.equal((await failure(none.get(ISSUES, where))).kind, 'no_token');
});

test('the token command: read when needed, kept a minute, read again once forgotten; its failure says so without its output', async (t) => {
  const dir = makeRepo(t);
  const file = path.join(dir, 'token');
  writeFileSync(file, 'ghp_one\n');
  let now = 0;
  const source = createTokenSource({ env: { PATH: process.env.PATH }, command: ['cat', file], now: () => now });
  assert.deepEqual(await source.read(), { token: 'ghp_one' });
  writeFileSync(file, 'ghp_two\n');
  assert.deepEqual(await source.read(), { token: 'ghp_one' }, 'kept');
  now += 61_000;
  assert.deepEqual(await source.read(), { token: 'ghp_two' }, 'read again after a minute');
  writeFileSync(file, 'ghp_three\n');
  source.forget();
  assert.deepEqual(await source.read(), { token: 'ghp_three' }, 'read again once forgotten');
  const failing = createTokenSource({ env: { PATH: process.env.PATH }, command: ['sh', '-c', 'echo ghp_secret; exit 3'] });
  const read = await failing.read();
  assert.equal(read.token, null);
  assert.match((read as { why: string }).why, /exit code 3/);
  assert.ok(!JSON.stringify(read).includes('ghp_secret'));
  assert.deepEqual(await createTokenSource({ env: { GITHUB_TOKEN: 'ghp_env' } }).read(), { token: 'ghp_env' });
});
