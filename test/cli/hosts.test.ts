// The CLI of hosts and placement on one daemon (DESIGN §14.2): `grove host ls`, the HOST column
// only on a shared store, `task new --repository`, projects named NAME@HOST.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { grove } from '../helpers/cli.ts';
import { git, makeRepo, makeTempDir } from '../helpers/git.ts';
import { onPostgres } from '../helpers/postgres.ts';
import { sharedAgentDaemon, waitSessionEnd } from '../helpers/sessions.ts';

const daemon = sharedAgentDaemon({ host_name: 'solo', default_agent: 'fixture' });

// A clone (so that it has an origin), added as a project through the CLI.
async function clonedProject(t: test.TestContext, home: string, name: string) {
  const clone = path.join(makeTempDir(t), name);
  git(path.dirname(clone), 'clone', '-q', makeRepo(t), clone);
  const added = await grove(home, ['project', 'add', clone, '--json']);
  assert.equal(added.code, 0, added.stderr);
  return added.json;
}

test('grove host ls: this daemon, online, with its version, running sessions and last heartbeat; --json is GET /api/hosts', async () => {
  const d = await daemon();
  const ls = await grove(d.home, ['host', 'ls']);
  assert.equal(ls.code, 0, ls.stderr);
  const [head, row, ...more] = ls.stdout.trim().split('\n');
  assert.match(head!, /^NAME\s+ONLINE\s+VERSION\s+RUNNING\s+SEEN$/);
  const version = (await d.socket('GET', '/api/health')).json.version;
  assert.match(row!, new RegExp(`^solo\\s+yes\\s+${version.replace(/\./g, '\\.')}\\s+0\\s+(\\d+m )?\\d+s ago$`));
  assert.deepEqual(more, []);

  const json = await grove(d.home, ['host', 'ls', '--json']);
  const api = (await d.socket('GET', '/api/hosts')).json;
  // seen_at moves with each heartbeat: the rest is the API's array as it is.
  const still = (list: any[]) => list.map(({ seen_at, ...h }) => (assert.ok(seen_at), h));
  assert.deepEqual(still(json.json), still(api));
  assert.equal(json.json[0].kind, 'team');
});

test('task ls, session ls and project ls: a HOST column only on a shared store, with the host name', async (t) => {
  const d = await daemon();
  const p = await clonedProject(t, d.home, 'columns');
  const made = await grove(d.home, ['task', 'new', 'columns', 'look', '--json']);
  assert.equal(made.code, 0, made.stderr);
  const s = await grove(d.home, ['session', 'start', made.json.id, '--prompt', 'exit:0', '--json']);
  assert.equal(s.code, 0, s.stderr);
  await waitSessionEnd(d, s.json.id);
  const heads = {
    task: /^ID\s+NAME\s+STATUS\s+BRANCH\s+PORTS/,
    session: /^ID\s+CONVERSATION\s+AGENT\s+MODE\s+SANDBOX\s+STATUS\s+EXIT_CODE\s+RESULT\s+CREATED_AT/,
    project: /^ID\s+NAME\s+PATH/,
  };
  for (const [what, args] of [['task', ['task', 'ls', p.id]], ['session', ['session', 'ls', made.json.id]], ['project', ['project', 'ls']]] as const) {
    const ls = await grove(d.home, [...args]);
    assert.equal(ls.code, 0, ls.stderr);
    const [head, ...rows] = ls.stdout.trim().split('\n');
    assert.match(head!, heads[what]);
    if (onPostgres) {
      assert.match(head!, /\s+HOST$/, `${what} ls on PostgreSQL`);
      assert.ok(rows.length > 0 && rows.every((r) => /\s+solo$/.test(r)), `${what} ls rows name the host:\n${ls.stdout}`);
    } else {
      assert.doesNotMatch(ls.stdout, /HOST|solo/, `${what} ls on PGlite looks as it did`);
    }
  }
});

test('projects by name, by NAME@HOST or with --host; an unknown host is NOT_FOUND', async (t) => {
  const d = await daemon();
  const p = await clonedProject(t, d.home, 'named');
  for (const args of [['named', 'by name'], ['named@solo', 'by name at host'], ['named', 'with host', '--host', 'solo']]) {
    const made = await grove(d.home, ['task', 'new', ...args, '--json']);
    assert.equal(made.code, 0, `${args.join(' ')}: ${made.stderr}`);
    assert.equal(made.json.project_id, p.id);
  }
  const nowhere = await grove(d.home, ['task', 'new', 'named@elsewhere', 'x', '--json']);
  assert.equal(nowhere.code, 1, nowhere.stderr);
  assert.equal(nowhere.json.code, 'NOT_FOUND');
  assert.match(nowhere.stderr, /no host named "elsewhere"/);
  const flag = await grove(d.home, ['task', 'new', 'named', 'x', '--host', 'elsewhere']);
  assert.equal(flag.code, 1);
  for (const args of [['task', 'new', '--repository', 'x'], ['task', 'new', '--repository', '', 'x']]) {
    const r = await grove(d.home, args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
  }
});

// Placement is the daemon's (POST /api/tasks {repository, name, host?}, DESIGN §14.2).
test('grove task new --repository URL [--host NAME]: the task on the host with that repository; unknown ones are NOT_FOUND', async (t) => {
  const d = await daemon();
  const p = await clonedProject(t, d.home, 'placed');
  assert.ok(p.repository, 'a clone has an origin');
  const made = await grove(d.home, ['task', 'new', '--repository', p.repository, 'placed work', '--json']);
  assert.equal(made.code, 0, made.stderr);
  assert.equal(made.json.project_id, p.id);
  assert.equal(made.json.status, 'ready');
  const human = await grove(d.home, ['task', 'new', '--repository', p.repository, 'more work', '--host', 'solo']);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, new RegExp(`task more work \\(.*\\) is ready${onPostgres ? ' on host solo' : ''}: branch grove/more-work, worktree ${p.path}/\\.grove/worktrees/more-work/`));
  for (const args of [['--repository', 'example.com/none/such'], ['--repository', p.repository, '--host', 'elsewhere']]) {
    const r = await grove(d.home, ['task', 'new', ...args, 'lost', '--json']);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.json.code, 'NOT_FOUND', r.stdout);
  }
});
