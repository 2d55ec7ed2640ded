// The GitHub stand-in of test/helpers/github-server.ts, driven by the real @octokit/core with the
// throttling and retry plugins grove uses: if Octokit understands its answers (304, 401, a spent
// rate limit, Link pagination, 5xx, 422 bodies), tests built on it exercise grove's real client.
import assert from 'node:assert/strict';
import path from 'node:path';
import test, { type TestContext } from 'node:test';
import { Octokit } from '@octokit/core';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { commitFile, git, gitSucceeds, makeRepo, makeTempDir } from '../helpers/git.ts';
import { type GitHubOptions, type GitHubServer, startGitHub } from '../helpers/github-server.ts';

const TOKEN = 'ghp_test_token';
const Client = Octokit.plugin(throttling, retry);

async function github(t: TestContext, opts?: GitHubOptions): Promise<GitHubServer> {
  const gh = await startGitHub(opts);
  t.after(gh.close);
  return gh;
}

// As grove will build it. Writes go through `plain`: the throttling plugin spaces writes a
// second apart, which would only slow these tests down.
function client(gh: GitHubServer, opts: { throttle?: object; retry?: object; auth?: string } = {}) {
  return new Client({
    baseUrl: gh.url,
    auth: opts.auth ?? TOKEN,
    throttle: { onRateLimit: () => false, onSecondaryRateLimit: () => false, ...opts.throttle },
    retry: { retries: 0, ...opts.retry },
  });
}
const plain = (gh: GitHubServer, auth = TOKEN) => new Octokit({ baseUrl: gh.url, auth });

// The RequestError a call fails with (Octokit throws for 304 as for 4xx and 5xx).
async function failure(p: Promise<unknown>): Promise<{ status: number; message: string; response?: { headers: Record<string, string>; data: any } }> {
  return p.then(
    () => assert.fail('expected the request to fail'),
    (err) => err,
  );
}

test('the token names the user: `token` and `Bearer` alike, under /api/v3 too; a bad or missing token is 401 Bad credentials', async (t) => {
  const gh = await github(t, { tokens: { [TOKEN]: 'grove-bot', ghp_other: 'alice' } });
  const me = await client(gh).request('GET /user');
  assert.equal(me.data.login, 'grove-bot');
  assert.equal(me.data.type, 'User');
  assert.equal(me.headers['content-type'], 'application/json; charset=utf-8');
  assert.equal(gh.requests.at(-1)!.authorization, `token ${TOKEN}`);

  const viaPrefix = await fetch(`${gh.url}/api/v3/user`, { headers: { authorization: 'Bearer ghp_other' } });
  assert.equal(viaPrefix.status, 200);
  assert.equal(((await viaPrefix.json()) as { login: string }).login, 'alice');
  assert.equal(gh.requests.at(-1)!.path, '/user');

  for (const auth of ['ghp_wrong', undefined]) {
    const err = await failure(auth ? client(gh, { auth }).request('GET /user') : new Octokit({ baseUrl: gh.url }).request('GET /user'));
    assert.equal(err.status, 401);
    assert.deepEqual(err.response!.data, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });
    assert.equal(err.response!.headers['x-ratelimit-remaining'], undefined);
  }
  assert.equal(gh.requests.at(-1)!.authorization, undefined);

  gh.tokens.ghp_new = 'bob';
  assert.equal((await client(gh, { auth: 'ghp_new' }).request('GET /user')).data.login, 'bob');
});

test('rate-limit headers on every answer; a matching If-None-Match is a 304 that costs nothing; a label event or a comment changes the ETag', async (t) => {
  const gh = await github(t);
  gh.addRepo('o/r');
  const n = gh.addIssue('o/r', { title: 'first', user: 'carol' });
  const octo = client(gh);

  const first = await octo.request('GET /repos/{owner}/{repo}/issues', { owner: 'o', repo: 'r' });
  assert.equal(first.headers['x-ratelimit-limit'], '5000');
  assert.equal(first.headers['x-ratelimit-remaining'], '4999');
  assert.equal(first.headers['x-ratelimit-used'], '1');
  assert.equal(first.headers['x-ratelimit-resource'], 'core');
  assert.ok(Number(first.headers['x-ratelimit-reset']) > Date.now() / 1000);
  const etag = first.headers.etag!;
  assert.match(etag, /^W\/"[0-9a-f]{40}"$/);

  const conditional = { owner: 'o', repo: 'r', headers: { 'if-none-match': etag } };
  const notModified = await failure(octo.request('GET /repos/{owner}/{repo}/issues', conditional));
  assert.equal(notModified.status, 304);
  assert.equal(notModified.response!.headers['x-ratelimit-remaining'], '4999');
  assert.equal(notModified.response!.headers.etag, etag);
  assert.equal(gh.requests.at(-1)!.ifNoneMatch, etag);
  assert.equal(gh.requests.at(-1)!.status, 304);

  // a label event, made by the test or through the API, changes the list
  gh.label('o/r', n, 'grove', 'maintainer');
  const changed = await octo.request('GET /repos/{owner}/{repo}/issues', conditional);
  assert.equal(changed.status, 200);
  assert.equal(changed.headers['x-ratelimit-remaining'], '4998', 'the 304 did not count');
  assert.notEqual(changed.headers.etag, etag);
  assert.deepEqual(changed.data[0]!.labels.map((l) => (typeof l === 'string' ? l : l.name)), ['grove']);

  const events = await octo.request('GET /repos/{owner}/{repo}/issues/{n}/events', { owner: 'o', repo: 'r', n });
  const comments = await octo.request('GET /repos/{owner}/{repo}/issues/{n}/comments', { owner: 'o', repo: 'r', n });
  await plain(gh).request('POST /repos/{owner}/{repo}/issues/{n}/comments', { owner: 'o', repo: 'r', n, body: 'on it' });
  const lists = [['GET /repos/{owner}/{repo}/issues', changed], ['GET /repos/{owner}/{repo}/issues/{n}/comments', comments], ['GET /repos/{owner}/{repo}/issues/{n}/events', events]] as const;
  for (const [route, before] of lists) {
    const after = await octo.request(route, { owner: 'o', repo: 'r', n, headers: { 'if-none-match': before.headers.etag } });
    assert.equal(after.status, 200, route);
  }
  // and the same removal and re-adding within one second still shows
  const labeled = await octo.request('GET /repos/{owner}/{repo}/issues', { owner: 'o', repo: 'r' });
  gh.unlabel('o/r', n, 'grove', 'maintainer');
  gh.label('o/r', n, 'grove', 'maintainer');
  assert.equal((await octo.request('GET /repos/{owner}/{repo}/issues', { owner: 'o', repo: 'r', headers: { 'if-none-match': labeled.headers.etag } })).status, 200);
});

test('a spent limit is 403 with remaining 0 until its reset; the throttling plugin sees it and, if told to, retries after the reset', async (t) => {
  const gh = await github(t, { rateLimit: 100 });
  gh.addRepo('o/r');
  gh.setRateLimit({ remaining: 1 });
  const seen: number[] = [];
  const octo = client(gh, { throttle: { onRateLimit: (after: number) => void seen.push(after) } });
  const last = await octo.request('GET /repos/{owner}/{repo}', { owner: 'o', repo: 'r' });
  assert.equal(last.headers['x-ratelimit-remaining'], '0');
  assert.equal(last.headers['x-ratelimit-used'], '100');

  const spent = await failure(octo.request('GET /repos/{owner}/{repo}', { owner: 'o', repo: 'r' }));
  assert.equal(spent.status, 403);
  assert.equal(spent.response!.headers['x-ratelimit-remaining'], '0');
  assert.match(spent.response!.data.message, /^API rate limit exceeded for user ID \d+\./);
  assert.equal(seen.length, 1, 'onRateLimit was called');
  assert.ok(seen[0]! >= 1 && seen[0]! <= 3602, `retry after ${seen[0]}s`);

  // the window resets at its reset time, and a retrying client gets through then
  gh.setRateLimit({ remaining: 0, resetAt: new Date(Date.now() + 300) });
  let tries = 0;
  const patient = client(gh, { throttle: { retryAfterBaseValue: 100, onRateLimit: () => ++tries < 20 } });
  const through = await patient.request('GET /repos/{owner}/{repo}', { owner: 'o', repo: 'r' });
  assert.equal(through.status, 200);
  assert.ok(tries >= 1);
  assert.equal(through.headers['x-ratelimit-remaining'], '99');
});

test('pagination: per_page (default 30, at most 100) and page, with a Link header to follow; issues newest first', async (t) => {
  const gh = await github(t);
  gh.addRepo('o/r');
  for (let i = 1; i <= 35; i++) gh.addIssue('o/r', { title: `issue ${i}` });
  const octo = client(gh);

  const byDefault = await octo.request('GET /repos/{owner}/{repo}/issues', { owner: 'o', repo: 'r' });
  assert.equal(byDefault.data.length, 30);
  assert.match(byDefault.headers.link!, /[?&]page=2>; rel="next"/);

  gh.clearRequests();
  const numbers: number[] = [];
  let next: string | undefined = `GET /repos/o/r/issues?per_page=10`;
  while (next) {
    const page: any = await octo.request(next);
    numbers.push(...page.data.map((i: { number: number }) => i.number));
    const link: string = page.headers.link ?? '';
    if (numbers.length === 10) assert.match(link, /<http:\/\/127\.0\.0\.1:\d+\/repos\/o\/r\/issues\?per_page=10&page=4>; rel="last"/);
    const url = /<([^>]+)>; rel="next"/.exec(link)?.[1];
    next = url && `GET ${url}`;
  }
  assert.deepEqual(numbers, Array.from({ length: 35 }, (_, i) => 35 - i));
  assert.deepEqual(gh.requests.map((r) => r.query.page ?? '1'), ['1', '2', '3', '4']);

  const capped = await octo.request('GET /repos/o/r/issues?per_page=500');
  assert.equal(capped.data.length, 35);
  assert.equal(capped.headers.link, undefined, 'all on one page: no Link');
});

test('issues: state and labels filters, pull requests among them, events oldest first, comments with their author association, labels added and removed', async (t) => {
  const gh = await github(t, { htmlBase: 'https://github.example' });
  const { bare, work } = bareRepo(t);
  gh.addRepo('o/r', { bare });
  gh.setPermission('o/r', 'grove-bot', 'write');
  const a = gh.addIssue('o/r', { title: 'a', body: 'do a', user: 'carol' });
  const b = gh.addIssue('o/r', { title: 'b' });
  gh.label('o/r', a, 'grove', 'o');
  gh.label('o/r', a, 'bug', 'o');
  gh.label('o/r', b, 'grove', 'o');
  gh.closeIssue('o/r', b, 'o');
  const octo = client(gh);
  const w = plain(gh);
  const issues = (query: string) => octo.request(`GET /repos/o/r/issues${query}`).then((r) => r.data.map((i: { number: number }) => i.number));

  assert.deepEqual(await issues(''), [a]);
  assert.deepEqual(await issues('?state=all&labels=grove'), [b, a]);
  assert.deepEqual(await issues('?state=all&labels=grove,bug'), [a]);
  assert.deepEqual(await issues('?state=closed'), [b]);

  const one = (await octo.request('GET /repos/{owner}/{repo}/issues/{n}', { owner: 'o', repo: 'r', n: a })).data;
  assert.equal(one.html_url, 'https://github.example/o/r/issues/1');
  assert.equal(one.url, `${gh.url}/repos/o/r/issues/1`);
  assert.equal(one.user.login, 'carol');
  assert.equal(one.author_association, 'NONE');
  assert.equal(one.body, 'do a');
  assert.equal(one.pull_request, undefined);
  const missing = await failure(octo.request('GET /repos/o/r/issues/99'));
  assert.equal(missing.status, 404);
  assert.equal(missing.response!.data.message, 'Not Found');
  assert.equal((await failure(octo.request('GET /repos/o/nope'))).status, 404);

  // a pull request takes the next number and is listed among the issues
  pushCommit(work, 'feature');
  const pr = (await w.request('POST /repos/o/r/pulls', { title: 'feature', head: 'feature', base: 'main' })).data;
  assert.equal(pr.number, 3);
  const listed = (await octo.request('GET /repos/o/r/issues')).data;
  assert.deepEqual(listed.map((i: { number: number }) => i.number), [3, a]);
  assert.equal(listed[0]!.pull_request!.html_url, 'https://github.example/o/r/pull/3');
  assert.equal(listed[0]!.user.login, 'grove-bot');

  // labels through the API: the token's user is the actor, a missing label is created
  const added = await w.request('POST /repos/o/r/issues/1/labels', { labels: ['grove:working'] });
  assert.deepEqual(added.data.map((l: { name: string }) => l.name), ['grove', 'bug', 'grove:working']);
  const removed = await w.request('DELETE /repos/o/r/issues/1/labels/{name}', { name: 'bug' });
  assert.deepEqual(removed.data.map((l: { name: string }) => l.name), ['grove', 'grove:working']);
  const absent = await failure(w.request('DELETE /repos/o/r/issues/1/labels/{name}', { name: 'bug' }));
  assert.equal(absent.status, 404);
  assert.equal(absent.response!.data.message, 'Label does not exist');

  await w.request('PATCH /repos/o/r/issues/1', { state: 'closed' });
  const events = (await octo.request('GET /repos/o/r/issues/1/events')).data;
  assert.deepEqual(events.map((e: any) => [e.event, e.actor.login, e.label?.name]), [
    ['labeled', 'o', 'grove'],
    ['labeled', 'o', 'bug'],
    ['labeled', 'grove-bot', 'grove:working'],
    ['unlabeled', 'grove-bot', 'bug'],
    ['closed', 'grove-bot', undefined],
  ]);
  const ids = events.map((e: { id: number }) => e.id);
  assert.deepEqual(ids, [...ids].sort((x, y) => x - y));
  assert.ok(events[0].created_at.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/));
  assert.equal(gh.issue('o/r', a).state, 'closed');

  gh.comment('o/r', a, { body: 'from the owner', user: 'o' });
  const posted = await w.request('POST /repos/o/r/issues/1/comments', { body: 'from the bot' });
  assert.equal(posted.status, 201);
  gh.comment('o/r', a, { body: 'from a stranger', user: 'dave' });
  const comments = (await octo.request('GET /repos/o/r/issues/1/comments')).data;
  assert.deepEqual(comments.map((c: any) => [c.body, c.user.login, c.author_association]), [
    ['from the owner', 'o', 'OWNER'],
    ['from the bot', 'grove-bot', 'COLLABORATOR'],
    ['from a stranger', 'dave', 'NONE'],
  ]);
  assert.equal(comments[1].html_url, `https://github.example/o/r/issues/1#issuecomment-${posted.data.id}`);
  assert.equal((await octo.request('GET /repos/o/r/issues/1')).data.comments, 3);

  const invalid = await failure(w.request('PATCH /repos/o/r/issues/1', { state: 'done' }));
  assert.equal(invalid.status, 422);
  assert.deepEqual(invalid.response!.data.errors, [{ resource: 'Issue', field: 'state', code: 'invalid' }]);
});

test('collaborator permission: role_name as given, permission as GitHub folds it; the owner is admin; strangers read a public repo and find no private one', async (t) => {
  const gh = await github(t);
  gh.addRepo('o/r');
  gh.addRepo('o/secret', { private: true });
  gh.setPermission('o/r', 'mia', 'maintain');
  gh.setPermission('o/r', 'tom', 'triage');
  gh.setPermission('o/r', 'wes', 'write');
  const octo = client(gh);
  const permission = async (user: string) => {
    const { data } = await octo.request('GET /repos/{owner}/{repo}/collaborators/{username}/permission', { owner: 'o', repo: 'r', username: user });
    assert.equal(data.user!.login, user);
    return [data.permission, data.role_name];
  };
  assert.deepEqual(await permission('o'), ['admin', 'admin']);
  assert.deepEqual(await permission('mia'), ['write', 'maintain']);
  assert.deepEqual(await permission('wes'), ['write', 'write']);
  assert.deepEqual(await permission('tom'), ['read', 'triage']);
  assert.deepEqual(await permission('nobody'), ['read', 'read']);

  const repo = (await octo.request('GET /repos/o/r')).data;
  assert.deepEqual([repo.full_name, repo.owner.login, repo.default_branch, repo.private, repo.clone_url], ['o/r', 'o', 'main', false, `${gh.url}/o/r.git`]);
  assert.equal((await failure(octo.request('GET /repos/o/secret'))).status, 404);
  gh.setPermission('o/secret', 'grove-bot', 'read');
  assert.equal((await octo.request('GET /repos/o/secret')).data.private, true);
});

// A bare repository with `main` (one commit), and a clone of it to push from.
function bareRepo(t: TestContext): { bare: string; work: string } {
  const work = makeRepo(t);
  const bare = path.join(makeTempDir(t), 'r.git');
  git(work, 'clone', '-q', '--bare', work, bare);
  git(work, 'remote', 'add', 'origin', bare);
  return { bare, work };
}

// A new commit on `branch` (made from main if it is new) in `work`, pushed; its sha.
function pushCommit(work: string, branch: string): string {
  if (gitSucceeds(work, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`)) git(work, 'checkout', '-q', branch);
  else git(work, 'checkout', '-q', '-b', branch, 'main');
  const sha = commitFile(work, `${branch.replaceAll('/', '-')}-${git(work, 'rev-list', '--count', 'HEAD')}.txt`);
  git(work, 'push', '-q', 'origin', branch);
  return sha;
}

test('pull requests against a real bare repository: head read with git (a push shows), the 422s GitHub gives, listing, reviews, merge', async (t) => {
  const gh = await github(t);
  const { bare, work } = bareRepo(t);
  gh.addRepo('o/r', { bare });
  gh.addIssue('o/r', { title: 'an issue first' });
  const w = plain(gh);
  const octo = client(gh);

  const first = pushCommit(work, 'grove/fix');
  git(work, 'branch', '-q', 'empty', 'main');
  git(work, 'push', '-q', 'origin', 'empty');
  const created = await w.request('POST /repos/{owner}/{repo}/pulls', { owner: 'o', repo: 'r', title: 'Fix it', head: 'o:grove/fix', base: 'main', body: 'Closes #1', draft: true });
  assert.equal(created.status, 201);
  const pr = created.data;
  assert.equal(pr.number, 2, 'issues and pull requests share one sequence');
  assert.deepEqual([pr.state, pr.draft, pr.merged, pr.merged_at, pr.title, pr.body, pr.user.login], ['open', true, false, null, 'Fix it', 'Closes #1', 'grove-bot']);
  assert.deepEqual([pr.head.ref, pr.head.sha, pr.head.repo!.full_name], ['grove/fix', first, 'o/r']);
  assert.deepEqual([pr.base.ref, pr.base.sha], ['main', git(work, 'rev-parse', 'main')]);
  assert.equal(pr.html_url, `${gh.url}/o/r/pull/2`);
  assert.equal(gh.issue('o/r', 2).pull!.head, 'grove/fix');

  const refused = async (body: object) => {
    const err = await failure(w.request('POST /repos/o/r/pulls', { title: 't', base: 'main', ...body }));
    assert.equal(err.status, 422);
    assert.equal(err.response!.data.message, 'Validation Failed');
    assert.match(err.message, /^Validation Failed: /);
    return err.response!.data.errors;
  };
  assert.deepEqual(await refused({ head: 'nowhere' }), [{ resource: 'PullRequest', field: 'head', code: 'invalid' }]);
  assert.deepEqual(await refused({ head: 'empty' }), [{ resource: 'PullRequest', code: 'custom', message: 'No commits between main and empty' }]);
  assert.deepEqual(await refused({ head: 'grove/fix' }), [{ resource: 'PullRequest', code: 'custom', message: 'A pull request already exists for o:grove/fix.' }]);

  // a push moves head.sha
  const second = pushCommit(work, 'grove/fix');
  assert.equal((await octo.request('GET /repos/o/r/pulls/2')).data.head.sha, second);
  assert.equal((await failure(octo.request('GET /repos/o/r/pulls/1'))).status, 404, 'an issue is not a pull request');

  const byHead = (await octo.request('GET /repos/o/r/pulls', { head: 'o:grove/fix' })).data;
  assert.deepEqual(byHead.map((p: { number: number }) => p.number), [2]);
  assert.deepEqual((await octo.request('GET /repos/o/r/pulls', { head: 'o:other' })).data, []);

  gh.setPermission('o/r', 'rev', 'write');
  gh.review('o/r', 2, { user: 'rev', state: 'CHANGES_REQUESTED', body: 'please test' });
  gh.reviewComment('o/r', 2, { user: 'rev', body: 'off by one', path: 'src/a.ts', line: 3 });
  const reviews = (await octo.request('GET /repos/o/r/pulls/2/reviews')).data;
  assert.deepEqual(reviews.map((r: any) => [r.user.login, r.state, r.body, r.commit_id, r.author_association]), [
    ['rev', 'CHANGES_REQUESTED', 'please test', second, 'COLLABORATOR'],
    ['rev', 'COMMENTED', '', second, 'COLLABORATOR'],
  ]);
  const remarks = (await octo.request('GET /repos/o/r/pulls/2/comments')).data;
  assert.deepEqual(remarks.map((c: any) => [c.pull_request_review_id, c.path, c.line, c.body, c.user.login]), [[reviews[1].id, 'src/a.ts', 3, 'off by one', 'rev']]);

  const merged = await w.request('PUT /repos/o/r/pulls/2/merge');
  assert.equal(merged.data.merged, true);
  const after = (await octo.request('GET /repos/o/r/pulls/2')).data;
  assert.deepEqual([after.state, after.merged, typeof after.merged_at], ['closed', true, 'string']);
  assert.deepEqual((await octo.request('GET /repos/o/r/pulls')).data, []);
  assert.equal((await octo.request('GET /repos/o/r/pulls?state=closed')).data.length, 1);
  // once merged, a new pull request from the same branch is allowed again
  pushCommit(work, 'grove/fix');
  assert.equal((await w.request('POST /repos/o/r/pulls', { title: 'again', head: 'grove/fix', base: 'main' })).data.number, 3);
});

test('check runs for a ref: by branch name or sha, the newest run of each name unless filter=all', async (t) => {
  const gh = await github(t);
  const { bare, work } = bareRepo(t);
  gh.addRepo('o/r', { bare });
  const sha = pushCommit(work, 'grove/ci');
  gh.checkRun('o/r', sha, { name: 'test', conclusion: 'failure', output: { title: '2 failed', summary: 'a.test.ts' } });
  gh.checkRun('o/r', 'grove/ci', { name: 'test', status: 'in_progress', conclusion: null });
  gh.checkRun('o/r', sha, { name: 'lint', conclusion: 'success' });
  gh.checkRun('o/r', 'main', { name: 'test', conclusion: 'success' });
  const octo = client(gh);

  const { data } = await octo.request('GET /repos/{owner}/{repo}/commits/{ref}/check-runs', { owner: 'o', repo: 'r', ref: 'grove/ci' });
  assert.equal(data.total_count, 2);
  assert.deepEqual(data.check_runs.map((r: any) => [r.name, r.head_sha, r.status, r.conclusion]), [
    ['lint', sha, 'completed', 'success'],
    ['test', sha, 'in_progress', null],
  ]);
  assert.equal(data.check_runs[0]!.app!.slug, 'github-actions');
  const all = (await octo.request('GET /repos/o/r/commits/{ref}/check-runs?filter=all', { ref: sha })).data;
  assert.equal(all.total_count, 3);
  assert.deepEqual(all.check_runs.at(-1)!.output, { title: '2 failed', summary: 'a.test.ts', text: null, annotations_count: 0, annotations_url: all.check_runs.at(-1)!.output.annotations_url });
  const unknown = await failure(octo.request('GET /repos/o/r/commits/nowhere/check-runs'));
  assert.equal(unknown.status, 422);
  assert.equal(unknown.response!.data.message, 'No commit found for SHA: nowhere');
});

test('faults: a 502 page the retry plugin retries, JSON bodies for others, a hang until the client gives up or close()', async (t) => {
  const gh = await github(t);
  gh.addRepo('o/r');
  gh.fail({ path: /^\/repos\/o\/r$/ }, { status: 502, times: 1 });
  const gateway = await failure(client(gh).request('GET /repos/o/r'));
  assert.equal(gateway.status, 502);
  assert.match(gateway.response!.headers['content-type']!, /^text\/html/);
  assert.match(gateway.message, /Unicorn/);

  gh.fail({ path: /^\/repos\/o\/r$/ }, { status: 502, times: 1 });
  const retried = await client(gh, { retry: { retries: 2, retryAfterBaseValue: 1 } }).request('GET /repos/o/r');
  assert.equal(retried.status, 200);
  assert.deepEqual(gh.requests.slice(-2).map((r) => r.status), [502, 200]);

  gh.fail({ method: 'POST', path: /\/comments$/ }, { status: 500, times: 1 });
  gh.addIssue('o/r', { title: 'x' });
  const server = await failure(plain(gh).request('POST /repos/o/r/issues/1/comments', { body: 'hi' }));
  assert.equal(server.status, 500);
  assert.equal(server.response!.data.message, 'Internal Server Error');
  assert.equal((await plain(gh).request('POST /repos/o/r/issues/1/comments', { body: 'hi' })).status, 201, 'times: 1 is spent');

  gh.fail({ path: /^\/user$/ }, { hang: true });
  const gaveUp = await failure(client(gh).request('GET /user', { request: { signal: AbortSignal.timeout(200) } }));
  assert.equal(gaveUp.status, 500, 'Octokit reports an abort as 500');
  assert.equal(gh.requests.at(-1)!.status, 0);

  const before = gh.requests.length;
  const pending = fetch(`${gh.url}/user`, { headers: { authorization: `token ${TOKEN}` } });
  while (gh.requests.length === before) await new Promise((r) => setTimeout(r, 10));
  await gh.close();
  await assert.rejects(pending);
  await gh.close(); // idempotent
});
