// The CLI of a team (DESIGN §14.2): one host's `grove` lists every host's work with its host,
// names a project of several hosts as this host's or NAME@HOST, and places a task by repository.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { grove, running } from '../helpers/cli.ts';
import { makeRepo } from '../helpers/git.ts';
import { AGENT, waitSessionEnd } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';
import { startTeam, type TeamHost } from '../helpers/team.ts';

const agentConfig = () => ({ agents: { fixture: { command: [AGENT, '{prompt}'] } }, default_agent: 'fixture' });
const run = async (h: TeamHost, ...args: string[]) => {
  const r = await grove(h.daemon.home, args);
  assert.equal(r.code, 0, `grove ${args.join(' ')} on ${h.name}: ${r.stderr}`);
  return r;
};
const rowsOf = (stdout: string) => stdout.trim().split('\n').slice(1);

test("three hosts whose clones are all called app: host ls, HOST columns, this host's app, app@HOST, and a name only on other hosts", async (t) => {
  const team = await startTeam(t, { hosts: ['alpha', 'beta', 'gamma'], clone: (name) => path.join(name, 'app'), config: agentConfig });
  const [alpha, beta, gamma] = team.hosts as [TeamHost, TeamHost, TeamHost];

  const hosts = await run(gamma, 'host', 'ls');
  assert.match(hosts.stdout, /^NAME\s+ONLINE\s+VERSION\s+RUNNING\s+SEEN\n/);
  assert.deepEqual(rowsOf(hosts.stdout).map((r) => r.split(/\s+/).slice(0, 2)).sort(), [['alpha', 'yes'], ['beta', 'yes'], ['gamma', 'yes']]);
  assert.deepEqual((await run(gamma, 'host', 'ls', '--json')).json.map((h: any) => h.name).sort(), ['alpha', 'beta', 'gamma']);
  const status = await run(gamma, 'status');
  assert.match(status.stdout, /^host {3}gamma, one of 3 host\(s\) on a shared store, 3 online$/m);
  assert.match(status.stdout, /^3 project\(s\), 0 task\(s\), 0 running session\(s\) on all hosts$/m);

  // Each host makes a task in its own app, by the name every host's project has.
  const made = new Map<string, any>();
  for (const h of [alpha, beta]) {
    const r = await run(h, 'task', 'new', 'app', 'twin', '--json');
    assert.equal(r.json.project_id, h.project.id, `${h.name}'s app is its own`);
    made.set(h.name, r.json);
  }
  const s = await run(beta, 'session', 'start', made.get('beta').id, '--prompt', 'exit:0', '--json');
  await waitSessionEnd(beta.daemon, s.json.id);

  // Gamma's CLI sees the whole team, each row with its host.
  const tasks = await run(gamma, 'task', 'ls');
  assert.match(tasks.stdout, /^ID\s+NAME\s+STATUS\s+BRANCH\s+PORTS\s+HOST\n/);
  assert.deepEqual(rowsOf(tasks.stdout).map((r) => [r.split(/\s+/)[1], r.split(/\s+/).at(-1)]).sort(), [['twin', 'alpha'], ['twin', 'beta']]);
  // grove watch names each task's host too (its last column).
  const watch = running(gamma.daemon.home, ['watch'], true);
  t.after(watch.stop);
  await watch.waitFor(/TASK\s+STATUS\s+BRANCH\s+SESSION\s+AGENT\s+STATE\s+RESULT\s+HOST\r?\n/);
  await watch.waitFor(/twin\s+ready\s+grove\/twin\s+alpha\r?\n[^]*twin\s+ready\s+grove\/twin\s+beta\r?\n|twin\s+ready\s+grove\/twin\s+beta\r?\n[^]*twin\s+ready\s+grove\/twin\s+alpha\r?\n/);
  await watch.stop();
  const sessions = await run(gamma, 'session', 'ls', made.get('beta').id);
  assert.match(sessions.stdout, new RegExp(`^${s.json.id.slice(0, 8)}\\s.*\\sbeta$`, 'm'));
  const projects = await run(gamma, 'project', 'ls');
  assert.deepEqual(rowsOf(projects.stdout).map((r) => r.split(/\s+/).at(-1)).sort(), ['alpha', 'beta', 'gamma']);

  // `app` is gamma's own (no tasks); app@beta is beta's.
  assert.deepEqual((await run(gamma, 'task', 'ls', 'app', '--json')).json, []);
  assert.deepEqual((await run(gamma, 'task', 'ls', 'app@beta', '--json')).json.map((x: any) => x.id), [made.get('beta').id]);
  assert.deepEqual((await run(alpha, 'task', 'ls', 'app', '--json')).json.map((x: any) => x.id), [made.get('alpha').id]);
  // A task of one name on two other hosts: gamma cannot tell which, and says where each is.
  const which = await grove(gamma.daemon.home, ['task', 'show', 'twin']);
  assert.equal(which.code, 2, which.stderr);
  assert.match(which.stderr, new RegExp(`task "twin" is on several hosts and not on this one: give one of .*${made.get('alpha').id.slice(0, 8)} \\(on alpha\\)`));
  assert.equal((await run(alpha, 'task', 'show', 'twin', '--json')).json.id, made.get('alpha').id, "on alpha, alpha's twin");
  // A project name on two other hosts: NAME@HOST is the way to say which.
  for (const h of [alpha, beta]) await run(h, 'project', 'add', makeRepo(t), '--name', 'lib');
  const lib = await grove(gamma.daemon.home, ['task', 'ls', 'lib']);
  assert.equal(lib.code, 2, lib.stderr);
  assert.match(lib.stderr, /project "lib" is on several hosts and not on this one: give one of (lib@alpha, lib@beta|lib@beta, lib@alpha)/);
  assert.deepEqual((await run(gamma, 'task', 'ls', 'lib@alpha', '--json')).json, []);

  // A host that stops shows offline in the others' host ls.
  await beta.daemon.stop();
  await until(async () => / *beta\s+no\s/.test((await run(gamma, 'host', 'ls')).stdout), 'beta offline in host ls', 30_000);
});

// Placement is the daemon's (POST /api/tasks {repository, name, host?}, DESIGN §14.2).
test('grove task new --repository URL --host NAME from one host makes the task on the named host', async (t) => {
  const team = await startTeam(t, { hosts: ['alpha', 'beta'] });
  const [alpha, beta] = team.hosts as [TeamHost, TeamHost];
  const r = await run(alpha, 'task', 'new', '--repository', team.repository, 'placed', '--host', 'beta');
  assert.match(r.stdout, new RegExp(`^task placed \\(.*\\) is ready on host beta: branch grove/placed, worktree ${beta.clone}/\\.grove/worktrees/placed/$`, 'm'));
  const json = await run(alpha, 'task', 'new', '--repository', team.repository, 'anywhere', '--json');
  assert.ok([alpha.project.id, beta.project.id].includes(json.json.project_id), json.stdout);
  const nowhere = await grove(alpha.daemon.home, ['task', 'new', '--repository', team.repository, 'lost', '--host', 'nobody', '--json']);
  assert.equal(nowhere.code, 1);
  assert.equal(nowhere.json.code, 'NOT_FOUND');
});
