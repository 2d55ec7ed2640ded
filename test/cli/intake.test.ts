// `grove intake add|ls|rm` and `grove task new --issue` through the real CLI against a real daemon
// that polls a local GitHub stand-in (DESIGN §20): a writer's label taken, a reader's refused,
// both shown with the watch's state and polls; refusals exit 1 with the API's code, usage errors 2.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { grove } from '../helpers/cli.ts';
import { addProject, removeProject, ROOT, sharedForFile, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeRepo } from '../helpers/git.ts';
import { startGitHub } from '../helpers/github-server.ts';
import { agentHome } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';

const STREAM = path.join(ROOT, 'test', 'fixtures', 'stream-agent.mjs');
const AGENTS = { claudish: { command: [STREAM, '--', '{prompt}'], format: 'claude' } };
// The CLI in UTC, so that the local times it prints are known.
const UTC = { env: { TZ: 'UTC' } };

const both = sharedForFile(async (c) => {
  const gh = await startGitHub();
  c.after(gh.close);
  const d = await startDaemon(c, { home: agentHome(c, { agents: AGENTS, github: { api_url: gh.url } }), env: { GH_TOKEN: 'ghp_test_token' } });
  return { gh, d };
});

const intake = (d: TestDaemon, ...args: string[]) => grove(d.home, ['intake', ...args], UTC);
const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\#]/g, '\\$&');

async function projectOn(t: TestContext, d: TestDaemon) {
  const p = await addProject(d, makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'claudish' }) } }));
  t.after(async () => {
    await d.socket('DELETE', `/api/projects/${p.id}/intake`);
    await removeProject(d, p.id);
  });
  return p;
}

test('grove intake: add, ls (the watch, a taken and a refused issue), ls of every project, rm, with --json', async (t) => {
  const { gh, d } = await both();
  gh.addRepo('acme/cli');
  gh.setPermission('acme/cli', 'maria', 'write');
  gh.setPermission('acme/cli', 'rita', 'read');
  const p = await projectOn(t, d);
  const taken = gh.addIssue('acme/cli', { title: 'Crash on empty input', user: 'rita' });
  gh.label('acme/cli', taken, 'grove', 'maria');
  const refused = gh.addIssue('acme/cli', { title: 'Delete the database', user: 'rita' });
  gh.label('acme/cli', refused, 'grove', 'rita');

  const added = await intake(d, 'add', p.name, '--label', 'grove', '--repo', 'acme/cli', '--agent', 'claudish', '--prompt', 'write:fix.txt=fixed', '--land', 'none', '--every', '1');
  assert.equal(added.code, 0, added.stderr);
  assert.equal(added.stdout, `project ${p.name} takes the issues of acme/cli labelled grove: polled every 1 s, land none\n`);
  const w = await until(async () => {
    const r = await intake(d, 'ls', p.name, '--json');
    return r.json?.items?.filter((i: any) => i.outcome !== 'claimed').length === 2 && r.json;
  }, 'both issues dealt with', 30_000);
  assert.deepEqual([w.repository, w.label, w.state, w.land, w.interval_s, w.session], ['acme/cli', 'grove', 'polling', 'none', 1, { prompt: 'write:fix.txt=fixed', agent: 'claudish' }]);
  const item = w.items.find((i: any) => i.number === taken);
  assert.equal(item.outcome, 'taken');
  const taskName = (await d.socket('GET', `/api/tasks/${item.task_id}`)).json.name;

  const ls = await intake(d, 'ls', p.name);
  assert.equal(ls.code, 0, ls.stderr);
  const lines = ls.stdout.trimEnd().split('\n');
  assert.equal(lines[0], `intake of project ${p.name}: acme/cli, label grove: polling`);
  assert.equal(lines[1], 'session: claudish, mode edit; land: none; every 1 s');
  assert.equal(lines[2], 'prompt: write:fix.txt=fixed');
  assert.match(lines[3]!, /^last poll: \d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})? (changed|not_modified)$/);
  assert.match(lines[4]!, /^next poll: \d{4}-\d{2}-\d{2} \d{2}:\d{2}/);
  assert.deepEqual(lines.slice(5, 7), ['', 'items:']);
  assert.match(lines[7]!, /^ {2}NUMBER\s+TITLE\s+OUTCOME\s+ACTOR\s+TASK\s+REASON$/);
  const rows = lines.slice(8).join('\n');
  assert.match(rows, new RegExp(`^ {2}#${taken}\\s+Crash on empty input\\s+taken\\s+maria\\s+${escaped(taskName)}\\s+-$`, 'm'));
  assert.match(rows, new RegExp(`^ {2}#${refused}\\s+Delete the database\\s+refused\\s+rita\\s+-\\s+@rita, who added the label, has read permission`, 'm'));

  // Every project's watch, one row each.
  const all = await intake(d, 'ls');
  assert.equal(all.code, 0, all.stderr);
  assert.match(all.stdout, /^PROJECT\s+REPOSITORY\s+LABEL\s+STATE\s+LAST_POLL\s+NEXT_POLL\s+ITEMS\n/);
  assert.match(all.stdout, new RegExp(`\\n${escaped(p.name)}\\s+acme/cli\\s+grove\\s+polling\\s+\\d{4}-\\S+ \\S+ \\w+\\s+\\d{4}-\\S+ \\S+\\s+2\\n`));
  assert.ok((await intake(d, 'ls', '--json')).json.some((x: any) => x.project_id === p.id));

  // Replaced: the same project, a new label, the API's defaults.
  const again = await intake(d, 'add', p.name, '--label', 'later', '--repo', 'acme/cli', '--agent', 'claudish', '--json');
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual([again.json.label, again.json.land, again.json.interval_s], ['later', 'pr', 60]);

  const removed = await intake(d, 'rm', p.name);
  assert.equal(removed.stdout, `project ${p.name} no longer watches its issues (its tasks stay)\n`);
  const gone = await intake(d, 'ls', p.name, '--json');
  assert.deepEqual([gone.code, gone.json.code], [1, 'NOT_FOUND']);
  assert.ok(!(await intake(d, 'ls', '--json')).json.some((x: any) => x.project_id === p.id));
  assert.equal((await d.socket('GET', `/api/tasks/${item.task_id}`)).status, 200, 'its tasks stay');
});

test('grove task new --issue: named from the issue unless named, its session always started; a URL grove cannot read exits 1', async (t) => {
  const { gh, d } = await both();
  gh.addRepo('acme/byhand');
  const p = await projectOn(t, d);
  const n = gh.addIssue('acme/byhand', { title: 'Add a --json flag', body: 'For scripts.', user: 'maria' });
  const url = `${gh.url}/acme/byhand/issues/${n}`;
  const made = await grove(d.home, ['task', 'new', p.name, '--issue', url, '--prompt', 'write:flag.txt=ok', '--agent', 'claudish', '--json']);
  assert.equal(made.code, 0, made.stderr);
  assert.equal(made.json.name, `#${n} Add a --json flag`);
  assert.deepEqual(made.json.issue, { provider: 'github', repository: 'acme/byhand', number: n, url, title: 'Add a --json flag' });
  assert.match(made.json.session.prompt, /^write:flag\.txt=ok\n[^]*For scripts\./);
  // Named, and with no --prompt: the session's prompt is the issue itself.
  const named = await grove(d.home, ['task', 'new', p.name, 'flag-by-hand', '--issue', url, '--agent', 'claudish']);
  assert.equal(named.code, 0, named.stderr);
  assert.match(named.stdout, /^task flag-by-hand \([0-9a-f-]{36}\) is ready: branch \S+, worktree \S+\nsession [0-9a-f-]{36} \(claudish\) \w+\n$/);

  const bad = await grove(d.home, ['task', 'new', p.name, '--issue', `${gh.url}/acme/byhand/issues/999`]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^grove: ISSUE_NOT_FOUND: /);
  const noName = await grove(d.home, ['task', 'new', p.name]);
  assert.equal(noName.code, 2);
  assert.match(noName.stderr, /missing <name>/);
});

test('grove intake: refusals exit 1 with the API’s code (nothing stored), usage errors exit 2', async (t) => {
  const { d } = await both();
  const p = await projectOn(t, d);
  const bad = await intake(d, 'add', p.name, '--label', 'grove', '--every', '0.5', '--repo', 'a/b');
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^grove: INTAKE_INVALID: .*interval_s/);
  const badJson = await intake(d, 'add', p.name, '--label', 'grove', '--json');
  assert.deepEqual([badJson.code, badJson.json.code], [1, 'INTAKE_INVALID'], 'no repository given, and its origin is not on GitHub');
  const agent = await intake(d, 'add', p.name, '--label', 'grove', '--repo', 'a/b', '--agent', 'no-such-agent', '--json');
  assert.deepEqual([agent.code, agent.json.code], [1, 'UNKNOWN_AGENT']);
  assert.equal((await intake(d, 'ls', p.name)).code, 1, 'nothing stored');

  const usages: Array<[string[], RegExp]> = [
    [['add', p.name], /missing --label/],
    [['add', '--label', 'grove'], /missing <project>/],
    [['add', p.name, '--label', 'grove', '--land', 'sideways'], /--land is one of none, queue, pr/],
    [['add', p.name, '--label', 'grove', '--every', 'often'], /--every must be a number of seconds/],
    [['rm'], /missing <project>/],
  ];
  for (const [args, re] of usages) {
    const r = await intake(d, ...args);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, re, args.join(' '));
  }
  const unknown = await intake(d, 'rm', 'no-such-project', '--json');
  assert.deepEqual([unknown.code, unknown.json.code], [1, 'NOT_FOUND']);
});
