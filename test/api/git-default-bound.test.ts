import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { DEFAULT_GIT_TIMEOUT_S } from '../../daemon/runtime/settings.ts';
import { addProject, sharedDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { git, makeRepo, makeTempDir } from '../helpers/git.ts';
import { commitFile } from '../helpers/queue.ts';
import { gitChildren, gone, marker, processesMatching } from '../helpers/state.ts';
import { until } from '../helpers/store.ts';

const run = promisify(execFile);

// git_timeout_s as users have it (the daemon has no config): these tests wait it out, so they run
// side by side (the file takes about one bound), each in a project of its own on one daemon.
const BOUND_S = DEFAULT_GIT_TIMEOUT_S;
// What "within the bound" allows on top of it: the stop's grace, a loaded machine.
const SLACK_MS = 8_000;
const daemon = sharedDaemon();

// A request's answer and how long it took, as curl (a client of its own, on a connection of its
// own) measures it: this process is busy with its fixtures' git and process tables, which would
// add its own delays to a time it took.
async function timed(d: TestDaemon, what: string, method: string, urlPath: string, body?: object, signal?: AbortSignal) {
  const args = ['-sS', '--max-time', String(BOUND_S + 60), '--unix-socket', d.socketPath, '-X', method, '-w', '\n%{http_code} %{time_total}', `http://localhost${urlPath}`];
  if (body) args.push('-H', 'content-type: application/json', '--data-binary', JSON.stringify(body));
  const { stdout } = await run('curl', args, { signal });
  const end = stdout.lastIndexOf('\n');
  const [status, seconds] = stdout.slice(end + 1).split(' ');
  const text = stdout.slice(0, end);
  assert.notEqual(status, '000', `${what}: no answer`);
  return { status: Number(status), text, json: JSON.parse(text), ms: Math.round(Number(seconds) * 1000) };
}

// Asserts a 504 GIT_TIMEOUT answered within the bound (and its slack).
function timedOut(r: { status: number; json: any; text: string; ms: number }, what: string): void {
  assert.equal(r.status, 504, `${what}: ${r.text}`);
  assert.equal(r.json.code, 'GIT_TIMEOUT', what);
  assert.match(r.json.detail, new RegExp(`took longer than git_timeout_s \\(${BOUND_S} s\\)`), what);
  assert.ok(r.ms <= BOUND_S * 1000 + SLACK_MS, `${what} answered after ${r.ms} ms`);
}

// Nothing of the test's is left: no process with its marker, no git the daemon started in `repo`.
async function nothingLeft(d: TestDaemon, m: string, repo: string): Promise<void> {
  await gone(m);
  await until(() => gitChildren(d.proc.pid!, repo).length === 0, 'the git the daemon started is gone', 10_000);
}

// A project whose repository cleans *.txt through a filter that never ends, and a ready task whose
// worktree has an untracked x.txt: every read of its work runs the filter.
async function hungProject(t: test.TestContext, d: TestDaemon, m: string) {
  const repo = makeRepo(t, { files: { '.gitattributes': '*.txt filter=hang\n', 'README.md': '# hang\n' } });
  const project = await addProject(d, repo);
  const created = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'hung' } });
  assert.equal(created.status, 201, created.text);
  git(repo, 'config', 'filter.hang.clean', `sleep ${m}`);
  writeFileSync(path.join(repo, created.json.worktree_path, 'x.txt'), 'x\n');
  // The fixture as the daemon must find it (a CI run once read no untracked file here).
  assert.equal(git(path.join(repo, created.json.worktree_path), 'ls-files', '--others', '--exclude-standard'), 'x.txt');
  return { repo, project, task: created.json };
}

// A project with a task and `origin`, a local bare remote set up by `hang` to never answer a push.
async function pushProject(t: test.TestContext, d: TestDaemon, hang: (repo: string, remote: string, dir: string) => void) {
  const repo = makeRepo(t);
  const dir = makeTempDir(t);
  const remote = path.join(dir, 'remote.git');
  git(dir, 'init', '-q', '--bare', remote);
  git(repo, 'remote', 'add', 'origin', remote);
  hang(repo, remote, dir);
  const project = await addProject(d, repo);
  const created = await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'pushed' } });
  assert.equal(created.status, 201, created.text);
  // The fixture as the daemon must find it (a CI run once found no remote here).
  assert.equal(git(repo, 'remote'), 'origin');
  return { repo, task: created.json };
}

describe(`git held up answers 504 GIT_TIMEOUT within the default git_timeout_s (${BOUND_S} s)`, { concurrency: true }, () => {
  test('20 reads of a task whose clean filter hangs: those waiting for a place count the wait; each answers, nothing is left', { timeout: 240_000 }, async (t) => {
    const d = await daemon();
    const m = marker(t);
    const { repo, task } = await hungProject(t, d, m);
    const reads = Array.from({ length: 20 }, (_, i) => {
      const what = `read ${i} (${i % 2 ? 'diff' : 'changes'})`;
      return timed(d, what, 'GET', `/api/tasks/${task.id}/${i % 2 ? 'diff' : 'changes'}`).then((r) => ({ ...r, what }));
    });
    await until(() => processesMatching(m).length > 0, 'the hanging filter runs', 60_000);
    const answers = await Promise.all(reads);
    t.diagnostic(`answered after ${Math.min(...answers.map((r) => r.ms))}..${Math.max(...answers.map((r) => r.ms))} ms`);
    for (const r of answers) timedOut(r, r.what);
    await nothingLeft(d, m, repo);
  });

  test('a conflict check and the turns of a task whose clean filter hangs answer within the bound', { timeout: 240_000 }, async (t) => {
    const d = await daemon();
    const m = marker(t);
    const { repo, project, task } = await hungProject(t, d, m);
    // Four reads take the project's places first: the check waits for one, and its wait counts.
    const first = Array.from({ length: 4 }, () => timed(d, 'a read', 'GET', `/api/tasks/${task.id}/changes`));
    await until(() => processesMatching(m).length > 0, 'the hanging filter runs', 60_000);
    const [conflicts, turns] = await Promise.all([timed(d, 'GET conflicts', 'GET', `/api/projects/${project.id}/conflicts`), timed(d, 'GET turns', 'GET', `/api/tasks/${task.id}/turns`)]);
    t.diagnostic(`conflicts after ${conflicts.ms} ms, turns ${turns.status} after ${turns.ms} ms`);
    timedOut(conflicts, 'the conflict check');
    // The turns are refs: they need no filter, and answer as soon as a place is free.
    assert.ok(turns.status === 200 || turns.status === 504, turns.text);
    if (turns.status === 504) timedOut(turns, 'the turns');
    for (const r of await Promise.all(first)) timedOut(r, 'a read');
    await nothingLeft(d, m, repo);
  });

  test("a push whose remote's receive-pack never answers", { timeout: 240_000 }, async (t) => {
    const d = await daemon();
    const m = marker(t);
    // The remote's "receive-pack" runs here: a child in a session of its own keeps git's stderr.
    const { repo, task } = await pushProject(t, d, (repo, _remote, dir) => {
      const helper = path.join(dir, 'receive-pack');
      writeFileSync(helper, `#!/bin/sh\nsetsid sleep ${m}1 &\nexec sleep ${m}2\n`);
      chmodSync(helper, 0o755);
      git(repo, 'config', 'remote.origin.receivepack', helper);
    });
    const r = await timed(d, 'the push', 'POST', `/api/tasks/${task.id}/push`, {});
    t.diagnostic(`answered ${r.status} after ${r.ms} ms`);
    assert.match(r.json.detail, /^git push took longer than/);
    timedOut(r, 'the push');
    await nothingLeft(d, m, repo);
  });

  test("a push whose remote's pre-receive hook never ends", { timeout: 240_000 }, async (t) => {
    const d = await daemon();
    const m = marker(t);
    const { repo, task } = await pushProject(t, d, (_repo, remote) => {
      const hook = path.join(remote, 'hooks', 'pre-receive');
      writeFileSync(hook, `#!/bin/sh\nexec sleep ${m}\n`);
      chmodSync(hook, 0o755);
    });
    const r = await timed(d, 'the push', 'POST', `/api/tasks/${task.id}/push`, {});
    t.diagnostic(`answered ${r.status} after ${r.ms} ms`);
    timedOut(r, 'the push');
    await nothingLeft(d, m, repo);
  });

  test('a rebase whose checkout hangs in a smudge filter', { timeout: 240_000 }, async (t) => {
    const d = await daemon();
    const m = marker(t);
    const repo = makeRepo(t, { files: { '.gitattributes': '*.txt filter=hang\n', 'a.txt': 'a\n' } });
    const project = await addProject(d, repo);
    const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'rebased' } })).json;
    const wt = path.join(repo, task.worktree_path);
    commitFile(wt, 'c.md', 'c\n', 'task work');
    commitFile(repo, 'b.txt', 'b\n', 'base moves on');
    git(repo, 'config', 'filter.hang.smudge', `sleep ${m}`);
    const head = git(wt, 'rev-parse', 'HEAD');
    const r = await timed(d, 'the rebase', 'POST', `/api/tasks/${task.id}/rebase`);
    t.diagnostic(`answered ${r.status} after ${r.ms} ms`);
    timedOut(r, 'the rebase');
    await nothingLeft(d, m, repo);
    assert.equal(git(wt, 'rev-parse', 'HEAD'), head, 'the branch is where it was');
  });

  test("a rebase waiting for its task's turn behind a commit whose pre-commit hook hangs (bounded by setup_timeout_s, 600 s) counts the wait", { timeout: 240_000 }, async (t) => {
    const d = await daemon();
    const m = marker(t);
    const repo = makeRepo(t);
    const project = await addProject(d, repo);
    const task = (await d.socket('POST', '/api/tasks', { body: { project_id: project.id, name: 'turns' } })).json;
    const hook = path.join(repo, '.git', 'hooks', 'pre-commit');
    writeFileSync(hook, `#!/bin/sh\nexec sleep ${m}\n`);
    chmodSync(hook, 0o755);
    writeFileSync(path.join(repo, task.worktree_path, 'work.md'), 'work\n');
    const client = new AbortController();
    let answered: unknown = null;
    const commit = timed(d, 'the commit', 'POST', `/api/tasks/${task.id}/commit`, { message: 'work' }, client.signal).then(
      (r) => (answered = r),
      (err: Error) => err,
    );
    await until(() => processesMatching(m).length > 0 || answered !== null, 'the pre-commit hook runs', 60_000);
    assert.equal(answered, null, 'the commit waits for its hook');
    const r = await timed(d, 'the rebase', 'POST', `/api/tasks/${task.id}/rebase`);
    t.diagnostic(`answered ${r.status} after ${r.ms} ms`);
    timedOut(r, 'the rebase');
    assert.match(r.json.detail, /^the rebase took longer/);
    assert.ok(processesMatching(m).length > 0, 'the commit still holds the turn');
    client.abort();
    assert.ok((await commit) instanceof Error, 'the commit was left by its client');
    await nothingLeft(d, m, repo);
  });
});
