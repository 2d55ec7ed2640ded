// One poll of a watch alone (daemon/intake/poll.ts) on a real store, against the local server
// that speaks GitHub's REST API: a writer's label taken, a reader's or triager's refused and
// recorded once, a pull request refused; a quiet poll is one 304 and reads no issue again; a
// label removed and added again is a new label event, taken again; four pollers at once take an
// issue once.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test, { after, type TestContext } from 'node:test';
import { createGitHub } from '../../daemon/github/client.ts';
import { createTokenSource } from '../../daemon/github/token.ts';
import { pollOnce, type PollDeps } from '../../daemon/intake/poll.ts';
import { intakeItemsTable } from '../../daemon/store/intake-items.ts';
import type { StoredIntake } from '../../daemon/store/intakes.ts';
import { makeRepo } from '../helpers/git.ts';
import { startGitHub } from '../helpers/github-server.ts';
import { addTask, memoryLog, openTestStore, TEST_HOST_ID } from '../helpers/store.ts';

const s = await openTestStore(after);
const items = intakeItemsTable(s.store.db, s.events);
const gh = await startGitHub();
after(gh.close);
const github = createGitHub({ apiUrl: gh.url, token: createTokenSource({ env: { GH_TOKEN: 'ghp_test_token' } }), timeoutMs: 5000, log: memoryLog().log });
after(github.close);

let repos = 0;
async function watchOf(t: TestContext) {
  const repository = `acme/poll${++repos}`;
  gh.addRepo(repository);
  for (const [login, role] of [['wes', 'write'], ['mia', 'maintain'], ['tom', 'triage'], ['rita', 'read']] as const) gh.setPermission(repository, login, role);
  const task = await addTask(t, s);
  const watch: StoredIntake = { project_id: task.project_id, provider: 'github', repository, label: 'grove', session: {}, land: 'none', interval_s: 60, source: 'api', declared: null, created_at: new Date().toISOString() };
  const taken: Array<{ number: number; actor: string | null; label_event: string }> = [];
  // As the service takes: claimed in the store first, once.
  const deps: PollDeps = {
    github,
    items,
    take: async (_w, item) => {
      const claimed = await items.claim({ ...item, id: randomUUID(), host_id: TEST_HOST_ID });
      if (claimed) taken.push({ number: item.number, actor: item.actor, label_event: item.label_event });
    },
    newItemId: randomUUID,
    hostId: TEST_HOST_ID,
    log: memoryLog().log,
  };
  return { repository, watch, taken, deps, seen: new Map<number, string>() };
}

const refusals = async (projectId: string) => (await s.events.page({ project_id: projectId }, 0, 1000)).filter((e) => e.type === 'intake.refused');

test("a writer's or maintainer's label is taken; a triager's or reader's refused with why, recorded once; a pull request refused", async (t) => {
  const w = await watchOf(t);
  const byWriter = gh.addIssue(w.repository, { title: 'by a writer' });
  gh.label(w.repository, byWriter, 'grove', 'wes');
  const byMaintainer = gh.addIssue(w.repository, { title: 'by a maintainer' });
  gh.label(w.repository, byMaintainer, 'Grove', 'mia');
  const byTriager = gh.addIssue(w.repository, { title: 'by a triager' });
  gh.label(w.repository, byTriager, 'grove', 'tom');
  const byReader = gh.addIssue(w.repository, { title: 'by a reader' });
  gh.label(w.repository, byReader, 'grove', 'rita');
  const other = gh.addIssue(w.repository, { title: 'another label' });
  gh.label(w.repository, other, 'bug', 'wes');
  assert.deepEqual(await pollOnce(w.deps, w.watch, w.seen), { changed: true });
  assert.deepEqual(w.taken.map((x) => [x.number, x.actor]).sort(), [[byWriter, 'wes'], [byMaintainer, 'mia']].sort());
  const refused = await refusals(w.watch.project_id);
  assert.deepEqual(refused.map((e) => [(e.data as any).number, (e.data as any).actor]).sort(), [[byTriager, 'tom'], [byReader, 'rita']].sort());
  assert.match((refused.find((e) => (e.data as any).number === byTriager)!.data as any).reason, /@tom, who added the label, has triage permission on acme\/poll\d+: write, maintain or admin is needed/);
  // Seen again (a fresh memory, as after a restart): nothing is taken or refused twice.
  await pollOnce(w.deps, w.watch, new Map());
  assert.equal(w.taken.length, 2);
  assert.equal((await refusals(w.watch.project_id)).length, 2);
});

test('a quiet poll is one 304 and reads no issue again; an issue that changed is read again, and a label added again is taken again', async (t) => {
  const w = await watchOf(t);
  const n = gh.addIssue(w.repository, { title: 'again' });
  gh.label(w.repository, n, 'grove', 'wes');
  await pollOnce(w.deps, w.watch, w.seen);
  assert.equal(w.taken.length, 1);
  gh.clearRequests();
  assert.deepEqual(await pollOnce(w.deps, w.watch, w.seen), { changed: false });
  assert.deepEqual(gh.requests.map((r) => [r.path, r.status]), [[`/repos/${w.repository}/issues`, 304]]);
  gh.unlabel(w.repository, n, 'grove', 'wes');
  await pollOnce(w.deps, w.watch, w.seen);
  gh.label(w.repository, n, 'grove', 'mia');
  await pollOnce(w.deps, w.watch, w.seen);
  assert.equal(w.taken.length, 2, 'a new label event: taken again');
  assert.notEqual(w.taken[0]!.label_event, w.taken[1]!.label_event);
  assert.equal(w.taken[1]!.actor, 'mia');
});

test('a pull request carrying the label is refused, even labelled by a writer: intake never checks one out', async (t) => {
  const repository = `acme/prs${++repos}`;
  const work = makeRepo(t);
  const bare = `${work}.git`;
  t.after(() => rmSync(bare, { recursive: true, force: true }));
  execFileSync('git', ['clone', '-q', '--bare', work, bare]);
  execFileSync('git', ['-C', work, 'checkout', '-q', '-b', 'feature']);
  writeFileSync(path.join(work, 'f.txt'), 'x\n');
  execFileSync('git', ['-C', work, 'add', '-A']);
  execFileSync('git', ['-C', work, 'commit', '-q', '-m', 'feature']);
  execFileSync('git', ['-C', work, 'push', '-q', bare, 'feature']);
  gh.addRepo(repository, { bare });
  gh.setPermission(repository, 'wes', 'write');
  const w = await watchOf(t);
  const watch = { ...w.watch, repository };
  const pr = await github.send<{ number: number }>('POST', '/repos/{owner}/{repo}/pulls', { owner: 'acme', repo: repository.split('/')[1], title: 'a change', head: 'feature', base: 'main' });
  gh.label(repository, pr.number, 'grove', 'wes');
  await pollOnce(w.deps, watch, w.seen);
  assert.equal(w.taken.length, 0);
  const [refused] = await refusals(w.watch.project_id);
  assert.match((refused!.data as any).reason, /it is a pull request: intake takes issues, and never checks out a pull request/);
});

test('four polls at once take an issue once', async (t) => {
  const w = await watchOf(t);
  const n = gh.addIssue(w.repository, { title: 'once' });
  gh.label(w.repository, n, 'grove', 'wes');
  await Promise.all([0, 1, 2, 3].map(() => pollOnce(w.deps, w.watch, new Map())));
  assert.deepEqual(w.taken.map((x) => x.number), [n]);
});
