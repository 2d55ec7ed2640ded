import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { GROVE, grove, running } from '../helpers/cli.ts';
import { makeHome, ROOT } from '../helpers/daemon.ts';
import { makeRepo, makeTempDir } from '../helpers/git.ts';
import { pathWithoutBwrap } from '../helpers/sandbox.ts';
import { gate, sharedAgentDaemon, waitSessionEnd } from '../helpers/sessions.ts';

const STREAM = path.join(ROOT, 'test', 'fixtures', 'stream-agent.mjs');
// The CLI through one daemon for the file (each test with projects and tasks of its own names),
// but for the test of `grove daemon`, which runs its own in the foreground.
const daemon = sharedAgentDaemon({
  default_agent: 'fixture',
  agents: { talk: { command: [STREAM, '--', '{prompt}'], resume: [STREAM, '--resume', '{session}', '--', '{prompt}'], format: 'claude', modes: { read: ['--ro'], edit: [] } } },
});

// First on the file's daemon: `grove status` counts what this test made, and nothing else.
test('grove CLI: projects, tasks, sessions, logs, agents, status — as tables and as --json', async (t) => {
  const d = await daemon();
  const home = d.home;
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ setup: ['echo prepared'] }) } });

  const added = await grove(home, ['project', 'add', '.', '--name', 'demo', '--json'], { cwd: repo });
  assert.equal(added.code, 0, added.stderr);
  assert.equal(added.json.path, repo);
  assert.equal(added.json.name, 'demo');
  const ls = await grove(home, ['project', 'ls']);
  assert.match(ls.stdout, /^ID\s+NAME\s+PATH/m);
  assert.match(ls.stdout, new RegExp(`${added.json.id.slice(0, 8)}\\s+demo\\s+${repo}`));

  const made = await grove(home, ['task', 'new', 'demo', 'Fix it', '--json']);
  assert.equal(made.code, 0, made.stderr);
  assert.equal(made.json.status, 'ready');
  assert.equal(made.json.branch, 'grove/fix-it');
  // Progress: the setup's commands and output on stderr while it runs, the result on stdout.
  const shown = await grove(home, ['task', 'new', 'demo', 'with progress', '--progress']);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stderr, /\$ echo prepared\n {2}prepared\n {2}→ exit 0/);
  assert.match(shown.stdout, /task with progress \(.*\) is ready/);
  const later = await grove(home, ['task', 'new', added.json.id.slice(0, 6), 'later', '--no-wait', '--json']);
  assert.equal(later.json.status, 'setting_up');
  const tasks = await grove(home, ['task', 'ls', 'demo', '--json']);
  assert.deepEqual(tasks.json.map((x: any) => x.name).sort(), ['Fix it', 'later', 'with progress']);
  const show = await grove(home, ['task', 'show', made.json.id.slice(0, 8)]);
  assert.match(show.stdout, /\$ echo prepared {2}→ exit 0/);
  assert.match(show.stdout, /\| prepared/);

  const started = await grove(home, ['session', 'start', made.json.id, '--prompt', 'exit:0', '--json', '--', 'echo:hello', 'err:warn']);
  assert.equal(started.code, 0, started.stderr);
  assert.equal(started.json.status, 'starting');
  assert.deepEqual(started.json.command.slice(1), ['echo:hello', 'err:warn', 'exit:0']);
  await waitSessionEnd(d, started.json.id);
  const sessions = await grove(home, ['session', 'ls', made.json.id, '--json']);
  assert.deepEqual(sessions.json.map((s: any) => [s.id, s.status]), [[started.json.id, 'exited']]);
  const logs = await grove(home, ['logs', started.json.id.slice(0, 8)]);
  assert.deepEqual(logs.stdout.trim().split('\n').sort(), ['hello', 'warn']);
  const logsJson = await grove(home, ['logs', started.json.id, '--json']);
  assert.deepEqual(logsJson.stdout.trim().split('\n').map((l) => JSON.parse(l).seq), [1, 2]);

  const agents = await grove(home, ['agents', '--json']);
  assert.ok(agents.json.some((a: any) => a.name === 'fixture' && a.available));
  const status = await grove(home, ['status', '--json']);
  assert.equal(status.json.pid, d.proc.pid);
  assert.equal(status.json.projects, 1);
  assert.equal(status.json.tasks, 3);
  assert.equal(status.json.socket, d.socketPath);
  assert.equal(status.json.port, d.port);
  const human = await grove(home, ['status']);
  assert.match(human.stdout, new RegExp(`running, pid ${d.proc.pid}, up `));

  const rmTask = await grove(home, ['task', 'rm', made.json.id, '--json']);
  assert.equal(rmTask.json.status, 'archived');
});

test('grove logs -f follows a live session to its end; session kill stops one', async (t) => {
  const d = await daemon();
  const home = d.home;
  const repo = makeRepo(t);
  const p = (await grove(home, ['project', 'add', repo, '--json'])).json;
  const task = (await grove(home, ['task', 'new', p.name, 'follow', '--json'])).json;
  const g = gate(t);
  const s = (await grove(home, ['session', 'start', task.id, '--prompt', 'exit:4', '--json', '--', 'echo:before', `wait:${g.path}`, 'echo:after'])).json;
  const follow = grove(home, ['logs', s.id, '-f']);
  await d.waitForLog((l) => l.msg === 'session running' && l.session === s.id);
  g.release();
  const r = await follow;
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), ['before', 'after']);
  assert.match(r.stderr, /session failed \(exit 4\)/);

  const sleeper = (await grove(home, ['session', 'start', task.id, '--prompt', 'sleep:300', '--json'])).json;
  await d.waitForLog((l) => l.msg === 'session running' && l.session === sleeper.id);
  const killed = await grove(home, ['session', 'kill', sleeper.id.slice(0, 8), '--json']);
  assert.equal(killed.code, 0, killed.stderr);
  assert.equal(killed.json.status, 'killed');
});

test('grove say continues a conversation and follows the new session; session ls shows conversation, mode and result', async (t) => {
  const d = await daemon();
  const home = d.home;
  const p = (await grove(home, ['project', 'add', makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'talk' }) } }), '--json'])).json;
  const task = (await grove(home, ['task', 'new', p.name, 'talk', '--json'])).json;
  const first = (await grove(home, ['session', 'start', task.id, '--prompt', 'hi', '--mode', 'read', '--timeout', '90', '--json'])).json;
  assert.equal(first.timeout_s, 90);
  await waitSessionEnd(d, first.id);
  const agentId = (await d.socket('GET', `/api/sessions/${first.id}`)).json.agent_session_id;

  const said = await grove(home, ['say', first.id.slice(0, 8), '--prompt=- next step', '-f']);
  assert.equal(said.code, 0, said.stderr);
  assert.deepEqual(JSON.parse(said.stdout.split('\n')[0]!).argv, ['--resume', agentId, '--ro', '--', '- next step'], 'followed: its output on stdout');
  assert.match(said.stderr, /session [0-9a-f]{8} starting\n[^]*session exited \(exit 0\)/);
  const json = await grove(home, ['say', first.id, 'and more', '--mode', 'edit', '--json']);
  assert.equal(json.code, 0, json.stderr);
  assert.equal(json.json.conversation_id, first.id);
  assert.equal(json.json.mode, 'edit');
  await waitSessionEnd(d, json.json.id);

  const ls = await grove(home, ['session', 'ls', task.id]);
  assert.match(ls.stdout, /^ID\s+CONVERSATION\s+AGENT\s+MODE\s+SANDBOX\s+STATUS\s+EXIT_CODE\s+RESULT/m);
  assert.match(ls.stdout, new RegExp(`${first.id.slice(0, 8)}\\s+${first.id.slice(0, 8)}\\s+talk\\s+read\\s+confined\\s+exited\\s+0\\s+got 3 arguments \\$0\\.0125`));
  assert.equal(ls.stdout.trim().split('\n').length, 4);
  const one = await grove(home, ['session', 'ls', task.id, '--conversation', json.json.id, '--json']);
  assert.equal(one.json.length, 3, 'the whole conversation of that session');
  const bad = await grove(home, ['say', first.id, 'x', '--timeout', 'soon']);
  assert.equal(bad.code, 2);
});

test('a turn whose agent denied calls by itself never reads as a plain success: session ls, session show and the end line of logs say them', async (t) => {
  const d = await daemon();
  const home = d.home;
  const p = (await grove(home, ['project', 'add', makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'talk' }) } }), '--json'])).json;
  const task = (await grove(home, ['task', 'new', p.name, 'denied', '--json'])).json;
  const s = (await grove(home, ['session', 'start', task.id, '--prompt', 'deny:tee ran.txt </dev/null && echo done', '--json'])).json;
  const plain = (await grove(home, ['session', 'start', task.id, '--prompt', 'hi', '--json'])).json;
  await Promise.all([waitSessionEnd(d, s.id), waitSessionEnd(d, plain.id)]);

  const ls = await grove(home, ['session', 'ls', task.id]);
  assert.match(ls.stdout, new RegExp(`${s.id.slice(0, 8)}.*exited\\s+0\\s+1 call denied: Bash tee ran\\.txt </dev/null && echo done got 2 arguments`));
  assert.match(ls.stdout, new RegExp(`${plain.id.slice(0, 8)}.*exited\\s+0\\s+got 2 arguments \\$`));

  const show = await grove(home, ['session', 'show', s.id.slice(0, 8)]);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, /exited, exit 0\n[^]*result: got 2 arguments \(\$0\.0125\)\n1 call denied:\n {2}Bash tee ran\.txt <\/dev\/null && echo done\n/);
  assert.doesNotMatch((await grove(home, ['session', 'show', plain.id])).stdout, /denied/);
  assert.deepEqual((await grove(home, ['session', 'show', s.id, '--json'])).json.result.denials, [{ tool: 'Bash', input: { command: 'tee ran.txt </dev/null && echo done', description: 'Run the command' } }]);

  for (const args of [['logs', s.id], ['logs', s.id, '-f']]) {
    const logs = await grove(home, args);
    assert.equal(logs.code, 0, logs.stderr);
    assert.equal(logs.stderr, 'session exited (exit 0) · 1 call denied: Bash tee ran.txt </dev/null && echo done\n', args.join(' '));
  }
  assert.equal((await grove(home, ['logs', plain.id])).stderr, 'session exited (exit 0)\n');
});

test('an unconfined agent says so: session start, ls and show; --sandbox takes auto, true or false; grove doctor checks for real and says what to install', async (t) => {
  const d = await daemon();
  const home = d.home;
  const p = (await grove(home, ['project', 'add', makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'talk' }) } }), '--json'])).json;
  const task = (await grove(home, ['task', 'new', p.name, 'sandboxed', '--json'])).json;
  const open = await grove(home, ['session', 'start', task.id, '--prompt', 'hi', '--sandbox', 'false']);
  assert.equal(open.code, 0, open.stderr);
  assert.match(open.stdout, /\nUNCONFINED: sandbox is false \(by the request\)\n$/);
  const id = open.stdout.split(' ')[1]!;
  const confined = (await grove(home, ['session', 'start', task.id, '--prompt', 'hi', '--sandbox', 'true', '--json'])).json;
  assert.deepEqual(confined.sandbox, { confined: true });
  await Promise.all([waitSessionEnd(d, id), waitSessionEnd(d, confined.id)]);
  const ls = await grove(home, ['session', 'ls', task.id]);
  assert.match(ls.stdout, new RegExp(`${id.slice(0, 8)}\\s+\\S+\\s+talk\\s+edit\\s+UNCONFINED\\s+exited`));
  assert.match(ls.stdout, new RegExp(`${confined.id.slice(0, 8)}\\s+\\S+\\s+talk\\s+edit\\s+confined\\s+exited`));
  assert.match((await grove(home, ['session', 'show', id])).stdout, /\nsandbox: UNCONFINED \(sandbox is false \(by the request\)\)\n/);
  assert.match((await grove(home, ['session', 'show', confined.id])).stdout, /\nsandbox: confined\n/);
  const bad = await grove(home, ['session', 'start', task.id, '--prompt', 'hi', '--sandbox', 'maybe']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--sandbox must be auto, true or false/);

  const ok = await grove(home, ['doctor']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /^sandbox: ok: agent sessions can be confined \(\/\S+\/bwrap\)\nterminal: ok: terminal sessions can run \(a pseudo-terminal was made\)\n$/);
  const missing = await grove(home, ['doctor', '--json'], { env: { PATH: pathWithoutBwrap(t) } });
  assert.equal(missing.code, 1);
  assert.equal(missing.json.sandbox.missing, 'bubblewrap');
  assert.deepEqual(missing.json.pty, { ok: true });
  assert.match(missing.json.sandbox.detail, /install bubblewrap/);
  // A bwrap that cannot make namespaces (as where user namespaces are refused) is not trusted for being there.
  const refusing = makeTempDir(t);
  writeFileSync(path.join(refusing, 'bwrap'), '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n', { mode: 0o755 });
  const denied = await grove(home, ['doctor'], { env: { PATH: `${refusing}:${pathWithoutBwrap(t)}` } });
  assert.equal(denied.code, 1);
  assert.match(denied.stdout, /^sandbox: missing namespaces: .*No permissions to create new namespace/);
});

test('grove changes, diff, commit, rebase, merge, push and conflicts: the review and landing of a task', async (t) => {
  const home = (await daemon()).home;
  const repo = makeRepo(t, { files: { 'f.txt': 'one\n' } });
  const p = (await grove(home, ['project', 'add', repo, '--json'])).json;
  const task = (await grove(home, ['task', 'new', p.name, 'land it', '--json'])).json;
  const wt = path.join(repo, task.worktree_path);
  writeFileSync(path.join(wt, 'f.txt'), 'one\ntwo\n');
  writeFileSync(path.join(wt, 'new.txt'), 'new\n');

  const changes = await grove(home, ['changes', 'land it']);
  assert.equal(changes.code, 0, changes.stderr);
  assert.match(changes.stdout, /grove\/land-it: 0 commit\(s\) ahead of main, 0 behind; 2 uncommitted file\(s\)/);
  assert.match(changes.stdout, /modified\s+\+1 -0\s+f\.txt/);
  assert.match(changes.stdout, /untracked\s+\+1 -0\s+new\.txt/);
  const diff = await grove(home, ['diff', 'land it', 'f.txt']);
  assert.equal(diff.code, 0, diff.stderr);
  assert.match(diff.stdout, /^diff --git a\/f\.txt b\/f\.txt\n[^]*^\+two$/m);
  assert.doesNotMatch(diff.stdout, /\x1b\[/, 'no colour when not on a terminal');
  // On a terminal (script(1) gives it one): coloured, through the pager.
  const onTty = execFileSync('script', ['-qec', `${process.execPath} ${GROVE} diff 'land it' f.txt`, '/dev/null'], {
    env: { ...process.env, GROVE_HOME: home, PAGER: 'cat' },
    encoding: 'utf8',
  });
  assert.match(onTty, /\x1b\[32m\+two\x1b\[0m/);
  assert.match(onTty, /\x1b\[1mdiff --git a\/f\.txt b\/f\.txt/);

  const committed = await grove(home, ['commit', 'land it', '-m', 'work done', '--json']);
  assert.equal(committed.code, 0, committed.stderr);
  assert.deepEqual(committed.json.files.sort(), ['f.txt', 'new.txt']);
  assert.equal((await grove(home, ['commit', 'land it', '-m', 'again'])).code, 1, 'nothing to commit');
  assert.equal((await grove(home, ['rebase', 'land it'])).code, 0);
  const conflicts = await grove(home, ['conflicts', p.name]);
  assert.equal(conflicts.stdout.trim(), 'no conflicts');
  const merged = await grove(home, ['merge', 'land it', '--squash', '-m', 'land it']);
  assert.equal(merged.code, 0, merged.stderr);
  assert.match(merged.stdout, /merged grove\/land-it into main \(squash\)/);
  assert.equal(execFileSync('git', ['-C', repo, 'log', '-1', '--format=%s'], { encoding: 'utf8' }).trim(), 'land it');
  const push = await grove(home, ['push', 'land it', '--json']);
  assert.equal(push.code, 1);
  assert.equal(push.json.code, 'NO_REMOTE');
  assert.equal((await grove(home, ['merge', 'land it', '--squash', '--ff'])).code, 2);
});

test('grove service ls|start|stop, and task show with services and their URLs', async (t) => {
  const web = path.join(ROOT, 'test', 'fixtures', 'web-service.mjs');
  const home = (await daemon()).home;
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ ports: [3000], services: { web: { command: `exec node ${web}` } } }) } });
  const p = (await grove(home, ['project', 'add', repo, '--json'])).json;
  const task = (await grove(home, ['task', 'new', p.name, 'served', '--json'])).json;
  const port = task.ports['3000'];
  const started = await grove(home, ['service', 'start', 'served', 'web']);
  assert.equal(started.code, 0, started.stderr);
  assert.match(started.stdout, new RegExp(`service web (starting|running), pid \\d+, session [0-9a-f]{8}; http://127\\.0\\.0\\.1:${port}`));
  assert.equal((await grove(home, ['service', 'start', 'served', 'web', '--json'])).json.code, 'SERVICE_RUNNING');
  const ls = await grove(home, ['service', 'ls', 'served']);
  assert.match(ls.stdout, /^NAME\s+STATUS\s+PID\s+SESSION\s+AUTOSTART\s+COMMAND/m);
  assert.match(ls.stdout, /^web\s+(starting|running)\s+\d+/m);
  const show = await grove(home, ['task', 'show', 'served']);
  assert.match(show.stdout, new RegExp(`ports:\\n  3000 → http://127\\.0\\.0\\.1:${port}`));
  assert.match(show.stdout, /services:\n  NAME[^\n]*\n  web\s+(starting|running)/);
  const stopped = await grove(home, ['service', 'stop', 'served', 'web']);
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.equal(stopped.stdout.trim(), 'service web stopped');
  assert.equal((await grove(home, ['service', 'stop', 'served', 'web'])).code, 1, 'not running any more');
  assert.match((await grove(home, ['service', 'ls', 'served'])).stdout, /^web\s+killed\s+-/m);
});

test('grove logs -f shows each pending approval of the session inline on stderr, the one pending at the start and the one asked while it follows, once each', async (t) => {
  const d = await daemon();
  const home = d.home;
  const p = (await grove(home, ['project', 'add', makeRepo(t), '--json'])).json;
  const task = (await grove(home, ['task', 'new', p.name, 'asks', '--json'])).json;
  const g = gate(t);
  const s = (await grove(home, ['session', 'start', task.id, '--prompt', 'exit:0', '--json', '--', 'echo:before', `wait:${g.path}`, 'echo:after'])).json;
  t.after(() => d.socket('DELETE', `/api/sessions/${s.id}`));
  await d.waitForLog((l) => l.msg === 'session running' && l.session === s.id);
  const ask = async (key: string, input: object) => (await d.socket('POST', `/api/sessions/${s.id}/approvals`, { body: { key, tool: 'Bash', input } })).json;
  const first = await ask('toolu_1', { command: 'npm test' });
  const follow = running(home, ['logs', s.id, '-f']);
  t.after(() => follow.stop());
  const line = (a: any, what: string) => `waiting for approval ${a.id.slice(0, 8)}: Bash ${what} — grove approve ${a.id.slice(0, 8)}\n`;
  await follow.waitFor(/waiting for approval/, 15_000, 'stderr');
  const second = await ask('toolu_2', { command: 'rm -rf\n  build' });
  await follow.waitFor(new RegExp(second.id.slice(0, 8)), 15_000, 'stderr');
  // Answered: nothing more is printed for it, and the output goes on to the end.
  assert.equal((await grove(home, ['approve', first.id])).code, 0);
  g.release();
  assert.equal(await follow.exited, 0, follow.errors());
  assert.deepEqual(follow.output().trim().split('\n'), ['before', 'after']);
  assert.equal(follow.errors(), `${line(first, 'npm test')}${line(second, 'rm -rf build')}session exited (exit 0)\n`);
});

test('grove events follows every change (the last ten, then live); grove watch redraws a table of tasks and sessions on a terminal', async (t) => {
  const d = await daemon();
  const home = d.home;
  const repo = makeRepo(t);
  const p = (await grove(home, ['project', 'add', repo, '--name', 'evp', '--json'])).json;
  const json = running(home, ['events', '--json']);
  t.after(json.stop);
  await json.waitFor(/"type":"project.added"/);
  const watch = running(home, ['watch'], true);
  t.after(watch.stop);
  await watch.waitFor(/grove watch/);
  const task = (await grove(home, ['task', 'new', 'evp', 'watched task', '--json'])).json;
  await json.waitFor(new RegExp(`"type":"task.created","at":"[^"]+","project_id":"${p.id}","task_id":"${task.id}"`));
  await watch.waitFor(/\x1b\[H\x1b\[2J[^]*watched task\s+ready\s+grove\/watched-task/);
  const human = running(home, ['events', '--task', 'watched task']);
  t.after(human.stop);
  await human.waitFor(/ \d+ task.created task watched task ready\n/);
  const s = (await grove(home, ['session', 'start', task.id, '--prompt', 'echo:hi', '--json'])).json;
  await waitSessionEnd(d, s.id);
  await human.waitFor(new RegExp(`session.status session ${s.id.slice(0, 8)} fixture exited`));
  await watch.waitFor(new RegExp(`${s.id.slice(0, 8)}\\s+fixture\\s+exited`));
  await watch.stop();
});

test('grove exit codes: 1 with the problem code and detail, 2 for usage, 3 when no daemon runs', async (t) => {
  const home = (await daemon()).home;
  const notRepo = makeHome(t);
  const api = await grove(home, ['project', 'add', notRepo]);
  assert.equal(api.code, 1);
  assert.match(api.stderr, /NOT_A_GIT_REPO/);
  assert.match(api.stderr, new RegExp(notRepo));
  const apiJson = await grove(home, ['project', 'add', notRepo, '--json']);
  assert.equal(apiJson.code, 1);
  assert.equal(apiJson.json.code, 'NOT_A_GIT_REPO');
  const missing = await grove(home, ['task', 'show', 'ffffffff']);
  assert.equal(missing.code, 1);

  for (const args of [[], ['frobnicate'], ['project', 'add'], ['task', 'new', 'x'], ['logs', 'x', '--bogus']]) {
    const r = await grove(home, args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
  }
  const help = await grove(home, ['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /usage: grove/);

  const nobody = makeHome(t);
  const down = await grove(nobody, ['status']);
  assert.equal(down.code, 3);
  assert.match(down.stderr, /not running/);
  assert.match(down.stderr, /grove daemon|grove install/);
});

test('grove daemon runs the daemon in the foreground; grove project rm removes a project by name; grove open without the TCP front, a clear error', async (t) => {
  const home = makeHome(t);
  const { seedStore } = await import('../helpers/template.ts');
  await seedStore(path.join(home, 'data'));
  const { storeUrlFor } = await import('../helpers/postgres.ts');
  const url = await storeUrlFor(home);
  const daemon = spawn(process.execPath, [GROVE, 'daemon'], { env: { ...process.env, GROVE_HOME: home, GROVE_PORT: 'off', ...(url ? { GROVE_DATABASE_URL: url } : {}) }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((r) => daemon.once('exit', (c) => r(c)));
  t.after(async () => {
    if (daemon.exitCode === null) {
      daemon.kill('SIGTERM');
      await exited;
    }
  });
  await new Promise<void>((resolve, reject) => {
    daemon.stdout!.on('data', (d: Buffer) => d.toString().includes('grove daemon ready') && resolve());
    void exited.then((c) => reject(new Error(`grove daemon exited ${c}`)));
  });
  const status = await grove(home, ['status', '--json']);
  assert.equal(status.json.pid, daemon.pid);
  assert.equal(status.json.port, null);
  const repo = makeRepo(t);
  assert.equal((await grove(home, ['project', 'add', repo, '--name', 'gone-soon'])).code, 0);
  const rm = await grove(home, ['project', 'rm', 'gone-soon', '--json']);
  assert.equal(rm.code, 0, rm.stderr);
  assert.deepEqual((await grove(home, ['project', 'ls', '--json'])).json, []);
  // Without the TCP front (GROVE_PORT=off), `grove open` has no address to give.
  const off = await grove(home, ['open'], { env: { BROWSER: 'false' } });
  assert.equal(off.code, 1);
  assert.match(off.stderr, /without its TCP front/);
  daemon.kill('SIGTERM');
  assert.equal(await exited, 0);
});

test('grove open: the dashboard\'s address in $BROWSER, printed too', async (t) => {
  const d = await daemon();
  const home = d.home;
  const dir = makeTempDir(t);
  const fifo = path.join(dir, 'opened');
  execFileSync('mkfifo', [fifo]);
  const browser = path.join(dir, 'browser');
  writeFileSync(browser, `#!/bin/sh\nprintf '%s' "$1" > '${fifo}'\n`, { mode: 0o755 });
  const opened = readFile(fifo, 'utf8');
  const r = await grove(home, ['open'], { env: { BROWSER: browser } });
  assert.equal(r.code, 0, r.stderr);
  const url = `http://127.0.0.1:${d.port}/`;
  assert.equal(r.stdout.trim(), url);
  assert.equal(await opened, url, 'the browser was given the address');
  const page = await d.tcp('GET', '/');
  assert.equal(page.status, 200);
  assert.match(page.text, /<title>grove<\/title>/);
});

test('grove approvals lists what agents ask; approve (--remember, --answer) and deny -m decide by id prefix', async (t) => {
  const d = await daemon();
  const home = d.home;
  const repo = makeRepo(t);
  const p = (await grove(home, ['project', 'add', repo, '--json'])).json;
  const task = (await grove(home, ['task', 'new', p.name, 'asks', '--json'])).json;
  const s = (await grove(home, ['session', 'start', task.id, '--prompt', 'sleep:300', '--json'])).json;
  t.after(() => grove(home, ['session', 'kill', s.id]));
  // What an agent's bridge does (POST /api/sessions/:id/approvals).
  const ask = async (body: object) => (await d.socket('POST', `/api/sessions/${s.id}/approvals`, { body })).json;
  const run = await ask({ key: 'toolu_1', tool: 'Bash', input: { command: 'npm run deploy -- --prod' } });
  const edit = await ask({ key: 'toolu_2', tool: 'Edit', input: { file_path: 'src/main.ts', old_string: 'a', new_string: 'b' } });
  const question = await ask({ key: 'toolu_3', kind: 'question', tool: 'AskUserQuestion', input: { question: 'Which port?' } });

  const ls = await grove(home, ['approvals', '--task', task.id]);
  assert.equal(ls.code, 0, ls.stderr);
  assert.match(ls.stdout, /^ID\s+SESSION\s+STATUS\s+TOOL\s+ASKS/m);
  assert.match(ls.stdout, new RegExp(`${run.id.slice(0, 8)}\\s+${s.id.slice(0, 8)}\\s+pending\\s+Bash\\s+npm run deploy -- --prod`));
  assert.match(ls.stdout, /Edit\s+src\/main\.ts/);
  assert.match(ls.stdout, /AskUserQuestion\s+Which port\?/);

  const denied = await grove(home, ['deny', run.id.slice(0, 8), '-m', 'not on a Friday', '--json']);
  assert.equal(denied.code, 0, denied.stderr);
  assert.deepEqual(denied.json.verdict, { behavior: 'deny', message: 'not on a Friday' });
  const approved = await grove(home, ['approve', edit.id.slice(0, 8), '--remember', 'session']);
  assert.equal(approved.code, 0, approved.stderr);
  assert.match(approved.stdout, /approval \w+ \(Edit\) allowed; remembered for the session/);
  const answered = await grove(home, ['approve', question.id, '--answer', '8080', '--json']);
  assert.deepEqual(answered.json.verdict, { behavior: 'allow', answer: '8080' });
  assert.equal((await ask({ key: 'toolu_4', tool: 'Write', input: { file_path: 'x' } })).status, 'allowed', 'the remembered rule');

  const again = await grove(home, ['deny', run.id, '--json']);
  assert.equal(again.code, 1);
  assert.equal(again.json.code, 'APPROVAL_DECIDED');
  assert.equal((await grove(home, ['approve', run.id, '--remember', 'forever'])).code, 2);
  assert.match((await grove(home, ['approvals', '--task', task.id])).stdout, /\(none\)/);
  const all = await grove(home, ['approvals', '--all', '--task', task.id, '--json']);
  assert.deepEqual(all.json.map((a: any) => a.status), ['denied', 'allowed', 'allowed', 'allowed']);
});
