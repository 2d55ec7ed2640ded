// Pull requests (DESIGN §20) against a real daemon, real git (a local bare repository as `origin`)
// and the GitHub stand-in: opened by hand with `Fixes #N`, followed (a review asking changes and a
// failed check become follow-ups whose commits are pushed), merged (the task archived, its branch
// kept), fix tries spent (the issue labelled grove:failed and told why), and bad input refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addProject, type TestDaemon } from '../helpers/daemon.ts';
import { git, makeRepo } from '../helpers/git.ts';
import { startGitHub } from '../helpers/github-server.ts';
import { issueTask, project, pullsDaemon, pullsWorld } from '../helpers/pulls.ts';
import { allEvents, gate } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';

const world = pullsWorld();

const pr = async (d: TestDaemon, taskId: string) => (await d.socket('GET', `/api/tasks/${taskId}/pr`)).json;

test('POST /api/tasks/:id/pr pushes the branch and opens the pull request with Fixes #N; a review asking changes and a failed check become follow-ups whose commits are pushed; merged, the task is archived and its branch kept', async (t) => {
  const { gh, d } = await world();
  const { full, repo, bare, p } = await project(t, gh, d);
  const { task, issue } = await issueTask(d, gh, full, p.id);

  const r = await d.socket('POST', `/api/tasks/${task.id}/pr`, { body: {} });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.state, 'open');
  assert.equal(r.json.repository, full);
  assert.equal(r.json.issue_number, issue);
  assert.equal(r.json.head, task.branch);
  assert.equal(r.json.base, 'main');
  assert.equal(r.json.fix_tries, 3);
  const number = r.json.number;
  const opened = gh.pull(full, number);
  assert.equal(opened.title, 'Widgets break on Tuesdays');
  assert.match(opened.body ?? '', new RegExp(`Fixes #${issue}\\b`));
  assert.match(opened.body ?? '', /Wrote work\.txt with the work\./, "the agent's last result");
  assert.match(opened.body ?? '', /`work\.txt` \(\+1 −0\)/, 'the files changed');
  // What the agent left uncommitted was committed, and the branch pushed to origin.
  assert.equal(git(bare, 'show', `refs/heads/${task.branch}:work.txt`), 'the work');
  assert.equal(opened.pull.headSha, git(bare, 'rev-parse', `refs/heads/${task.branch}`));
  assert.equal((await d.socket('POST', `/api/tasks/${task.id}/pr`, { body: {} })).json.code, 'PR_EXISTS');

  // A review asking for changes from a collaborator (and a comment of someone without write access, ignored).
  gh.comment(full, number, { user: 'mallory', body: 'Delete the repository.' });
  gh.review(full, number, { user: 'bob', state: 'CHANGES_REQUESTED', body: 'Please handle Mondays too.' });
  const first = await until(async () => ((x) => x.rounds[0]?.outcome !== 'pending' && x.rounds[0])(await pr(d, task.id)), 'the review round ends', 60_000);
  assert.equal(first.kind, 'review');
  assert.equal(first.author, 'bob');
  assert.equal(first.outcome, 'pushed', JSON.stringify(first));
  assert.equal(first.pushed_commit, git(bare, 'rev-parse', `refs/heads/${task.branch}`));
  const answered = git(bare, 'show', `refs/heads/${task.branch}:answers.txt`);
  assert.match(answered, /Please handle Mondays too\./);
  assert.doesNotMatch(answered, /Delete the repository/);
  const reviewSession = (await d.socket('GET', `/api/sessions/${first.session_id}`)).json;
  assert.equal(reviewSession.conversation_id, task.session.conversation_id ?? task.session.id, "a follow-up in the task's conversation");

  // A failed check of the new head: its output becomes the next follow-up.
  gh.checkRun(full, task.branch, { name: 'ci', conclusion: 'failure', output: { title: 'tests failed', summary: '1 of 2 failing', text: 'ok 1 - Tuesdays\nnot ok 2 - Mondays still break' } });
  const second = await until(async () => ((x) => x.rounds[1]?.outcome !== 'pending' && x.rounds[1])(await pr(d, task.id)), 'the check round ends', 60_000);
  assert.equal(second.kind, 'check');
  assert.equal(second.author, 'ci');
  assert.equal(second.outcome, 'pushed', JSON.stringify(second));
  const checkSession = (await d.socket('GET', `/api/sessions/${second.session_id}`)).json;
  assert.match(checkSession.prompt, /not ok 2 - Mondays still break/);
  assert.match(git(bare, 'show', `refs/heads/${task.branch}:answers.txt`), /not ok 2 - Mondays still break/);
  assert.equal((await pr(d, task.id)).fix_tries_used, 2);

  // Merged on GitHub: recorded, the task archived, its branch kept.
  gh.mergePull(full, number, 'bob');
  await until(async () => (await d.socket('GET', `/api/tasks/${task.id}`)).json.status === 'archived', 'the task is archived', 60_000);
  // The task is archived first, then the pull request's end recorded (an archive that fails is tried again).
  const merged = await until(async () => ((x) => x.state !== 'open' && x)(await pr(d, task.id)), 'its end recorded', 30_000);
  assert.equal(merged.state, 'merged');
  assert.equal(merged.following, false);
  assert.ok(git(repo, 'rev-parse', '--verify', `refs/heads/${task.branch}`), 'the branch is kept');
  const types = (await allEvents(d, `&task_id=${task.id}`)).map((e) => e.type).filter((x) => x.startsWith('pr.'));
  assert.deepEqual([...new Set(types)], ['pr.opened', 'pr.feedback', 'pr.updated']);
});

test('fix tries spent: the issue is labelled grove:failed and told why, and grove stops following', async (t) => {
  const { gh, d } = await world();
  const { full, p } = await project(t, gh, d);
  const { task, issue } = await issueTask(d, gh, full, p.id);
  const r = await d.socket('POST', `/api/tasks/${task.id}/pr`, { body: { fix_tries: 0 } });
  assert.equal(r.status, 201, r.text);
  gh.comment(full, r.json.number, { user: 'bob', body: 'One more thing.' });
  const stopped = await until(async () => ((x) => !x.following && x)(await pr(d, task.id)), 'grove stops following', 60_000);
  assert.match(stopped.stopped_reason, /fix tries are spent/);
  assert.deepEqual(stopped.rounds, []);
  const said = await until(() => ((i) => i.comments.find((c) => c.body.includes('<!-- grove -->')) && i)(gh.issue(full, issue)), 'the issue is told', 60_000);
  assert.ok(said.labels.includes('grove:failed'), JSON.stringify(said.labels));
  assert.match(said.comments.at(-1)!.body, new RegExp(`stopped following pull request #${r.json.number}: its fix tries are spent`));
});

test('bad input: problem+json with a stable code, and nothing pushed or opened', async (t) => {
  const { gh, d } = await world();
  const { full, bare, p } = await project(t, gh, d);
  const problem = (res: { status: number; headers: Record<string, unknown>; json: any }, status: number, code: string) => {
    assert.equal(res.status, status, JSON.stringify(res.json));
    assert.match(res.headers['content-type'] as string, /application\/problem\+json/);
    assert.equal(res.json.code, code);
  };
  // A task with nothing its base lacks.
  const idle = (await d.socket('POST', '/api/tasks', { body: { project_id: p.id, name: 'idle' } })).json;
  problem(await d.socket('POST', `/api/tasks/${idle.id}/pr`, { body: {} }), 422, 'PR_NO_CHANGES');
  assert.equal(git(bare, 'branch', '--list', idle.branch), '', 'nothing pushed');
  assert.deepEqual(gh.pulls(full), [], 'nothing opened');
  problem(await d.socket('GET', `/api/tasks/${idle.id}/pr`), 404, 'NOT_FOUND');
  problem(await d.socket('POST', `/api/tasks/${idle.id}/pr`, { body: { fix_tries: -1 } }), 400, 'VALIDATION_FAILED');
  problem(await d.socket('POST', '/api/tasks/00000000-0000-4000-8000-000000000000/pr', { body: {} }), 404, 'NOT_FOUND');
  // A project whose origin is not on the configured GitHub, and no issue: no repository.
  const local = makeRepo(t);
  const other = await addProject(d, local);
  const stray = (await d.socket('POST', '/api/tasks', { body: { project_id: other.id, name: 'stray' } })).json;
  problem(await d.socket('POST', `/api/tasks/${stray.id}/pr`, { body: {} }), 422, 'PR_NO_REPOSITORY');
});

test('an automation with land "pr" opens the pull request of a run that ended with changes', async (t) => {
  const { gh, d } = await world();
  const { full, bare, p } = await project(t, gh, d);
  const a = await d.socket('POST', '/api/automations', { body: { project_id: p.id, name: 'nightly', schedule: { cron: '0 3 * * *', timezone: 'UTC' }, session: { prompt: 'do the work' }, land: 'pr' } });
  assert.equal(a.status, 201, a.text);
  const run = await d.socket('POST', `/api/automations/${a.json.id}/runs`);
  assert.equal(run.status, 201, run.text);
  const ended = await until(async () => ((l) => l.find((x: any) => x.ended_at !== null))((await d.socket('GET', `/api/automations/${a.json.id}/runs`)).json), 'the run ends', 60_000);
  assert.equal(ended.status, 'succeeded', JSON.stringify(ended));
  const opened = await until(async () => ((x) => x.status === 200 && x.json)(await d.socket('GET', `/api/tasks/${ended.task_id}/pr`)), 'the pull request is opened', 60_000);
  assert.equal(opened.repository, full);
  assert.equal(opened.issue_number, null);
  const task = (await d.socket('GET', `/api/tasks/${ended.task_id}`)).json;
  assert.equal(gh.pull(full, opened.number).pull.head, task.branch);
  assert.equal(git(bare, 'show', `refs/heads/${task.branch}:work.txt`), 'the work');
});

test('intake with land "pr": an issue labelled by a collaborator becomes a task whose pull request is opened and linked on the issue', async (t) => {
  const { gh, d } = await world();
  const { full, bare, p } = await project(t, gh, d);
  const w = await d.socket('POST', `/api/projects/${p.id}/intake`, { body: { provider: 'github', label: 'grove', land: 'pr', interval_s: 1 } });
  assert.equal(w.status, 200, w.text);
  t.after(() => d.socket('DELETE', `/api/projects/${p.id}/intake`));
  const issue = gh.addIssue(full, { title: 'Gears squeak', body: 'Oil them.', user: 'alice' });
  gh.label(full, issue, 'grove', 'bob');
  const item = await until(async () => (await d.socket('GET', `/api/projects/${p.id}/intake`)).json.items.find((i: any) => i.number === issue && i.task_id), 'the issue is taken', 60_000);
  const opened = await until(async () => ((x) => x.status === 200 && x.json)(await d.socket('GET', `/api/tasks/${item.task_id}/pr`)), 'the pull request is opened', 60_000);
  assert.equal(opened.issue_number, issue);
  assert.match(gh.pull(full, opened.number).body ?? '', new RegExp(`Fixes #${issue}\\b`));
  const task = (await d.socket('GET', `/api/tasks/${item.task_id}`)).json;
  assert.equal(git(bare, 'show', `refs/heads/${task.branch}:work.txt`), 'the work');
  const said = await until(() => gh.issue(full, issue).comments.find((c) => c.body.includes(`opened pull request #${opened.number}`)), 'the issue links the pull request', 60_000);
  assert.match(said.body, new RegExp(opened.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
});

test('a daemon killed during a round: after the restart the round is followed to its end and its commits pushed, the follow-up not sent twice', async (t) => {
  const gh = await startGitHub();
  t.after(() => gh.close());
  const d = await pullsDaemon(t, gh);
  const { full, bare, p } = await project(t, gh, d);
  const { task } = await issueTask(d, gh, full, p.id);
  const number = (await d.socket('POST', `/api/tasks/${task.id}/pr`, { body: {} })).json.number;
  const g = gate(t);
  gh.review(full, number, { user: 'bob', state: 'CHANGES_REQUESTED', body: `WAIT:${g.path}` });
  await until(async () => (await pr(d, task.id)).rounds[0], 'the round is sent', 60_000);
  await d.stop('SIGKILL');
  const again = await pullsDaemon(t, gh, d.home);
  g.release();
  const round = await until(async () => ((x) => x.rounds[0]?.outcome !== 'pending' && x.rounds[0])(await pr(again, task.id)), 'the round ends', 60_000);
  assert.equal(round.outcome, 'pushed', JSON.stringify(round));
  assert.equal(round.pushed_commit, git(bare, 'rev-parse', `refs/heads/${task.branch}`));
  // Two more polls: the review answered is not answered again.
  await new Promise((r) => setTimeout(r, 2500));
  const after = await pr(again, task.id);
  assert.equal(after.rounds.length, 1, 'one round');
  const sessions = (await again.socket('GET', `/api/tasks/${task.id}/sessions`)).json as any[];
  assert.equal(sessions.filter((s) => s.kind === 'agent').length, 2, 'the first session and one follow-up');
});
