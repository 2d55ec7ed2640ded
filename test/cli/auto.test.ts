// `grove auto add|ls|show|run|pause|resume|rm|runs` through the real CLI against a real daemon
// (DESIGN §19): runs are started with `run` (now), never waited for at a cron's time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { grove } from '../helpers/cli.ts';
import type { TestDaemon } from '../helpers/daemon.ts';
import { fixtureProject, sharedAgentDaemon } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';

const daemon = sharedAgentDaemon();
// The CLI in UTC, so that the local times it prints are known.
const UTC = { env: { TZ: 'UTC' } };
const auto = (d: TestDaemon, ...args: string[]) => grove(d.home, ['auto', ...args], UTC);

// The automation's runs once none is going.
const settled = (d: TestDaemon, id: string) =>
  until(async () => {
    const runs = (await d.socket('GET', `/api/automations/${id}/runs`)).json as any[];
    return runs.every((r) => r.ended_at !== null) && runs;
  }, 'the runs to end', 30_000);

test('grove auto: add, ls, show, run (followed and not), pause and resume, runs, rm, with --json', async (t) => {
  const d = await daemon();
  const p = await fixtureProject(t, d, 'autocli');

  const added = await auto(d, 'add', 'autocli', 'nightly', '--cron', '0 9 * * *', '--timezone', 'Asia/Tokyo', '--prompt', 'write:auto.txt={date}', '--precheck', 'echo work', '--json');
  assert.equal(added.code, 0, added.stderr);
  const a = added.json;
  assert.deepEqual([a.project_id, a.name, a.schedule, a.session, a.precheck, a.land, a.overlap, a.enabled], [p.id, 'nightly', { cron: '0 9 * * *', timezone: 'Asia/Tokyo' }, { prompt: 'write:auto.txt={date}' }, 'echo work', 'none', 'skip', true]);
  assert.match(a.next_run_at, /T00:00:00(\.000)?Z$/, '09:00 in Tokyo');
  const at = '2099-01-02T03:04:00Z';
  const weekly = await auto(d, 'add', 'autocli', 'later', '--at', at, '--prompt', 'echo:hi', '--agent', 'fixture', '--mode', 'edit', '--timeout', '60', '--task-name', 'later {run_id}', '--land', 'queue', '--overlap', 'queue', '--missed', 'skip', '--paused');
  assert.equal(weekly.code, 0, weekly.stderr);
  assert.match(weekly.stdout, /^automation later \([0-9a-f-]{36}\) of project autocli: once at 2099-01-02 03:04, next run none \(paused\)\n$/);
  const later = (await auto(d, 'show', 'later', '--json')).json;
  assert.deepEqual([later.schedule, later.session, later.task, later.land, later.overlap, later.missed, later.enabled], [{ at: '2099-01-02T03:04:00.000Z' }, { prompt: 'echo:hi', agent: 'fixture', mode: 'edit', timeout_s: 60 }, { name: 'later {run_id}' }, 'queue', 'queue', { policy: 'skip', grace_s: 0 }, false]);

  // Run now, followed: its changes on stderr, its end on stdout.
  const followed = await auto(d, 'run', 'nightly', '-f');
  assert.equal(followed.code, 0, followed.stderr);
  const [, id, made] = /^run ([0-9a-f]{8}) of nightly succeeded: (task [0-9a-f]{8}, session [0-9a-f]{8})\n$/.exec(followed.stdout) ?? assert.fail(followed.stdout);
  // Each change once, the task and session as soon as they are made.
  assert.equal(followed.stderr, ['pending', 'precheck', 'running', `running: ${made}`].map((x) => `run ${id} of nightly ${x}\n`).join(''));
  // Not followed: the run as it was made, in JSON.
  const now = await auto(d, 'run', a.id.slice(0, 8), '--json');
  assert.equal(now.code, 0, now.stderr);
  assert.deepEqual([now.json.automation_id, now.json.trigger, now.json.status, now.json.task_id], [a.id, 'manual', 'pending', null]);
  const runs = await settled(d, a.id);
  assert.deepEqual(runs.map((r: any) => [r.id.slice(0, 8), r.status, r.changes?.files]), [[now.json.id.slice(0, 8), 'succeeded', 1], [id, 'succeeded', 1]], 'newest first');

  const ls = await auto(d, 'ls', 'autocli');
  assert.equal(ls.code, 0, ls.stderr);
  const lines = ls.stdout.trimEnd().split('\n');
  assert.match(lines[0]!, /^ID\s+NAME\s+SCHEDULE\s+NEXT_RUN\s+LAST_RUN\s+ENABLED$/);
  assert.match(lines[1]!, new RegExp(`^${a.id.slice(0, 8)}\\s+nightly\\s+0 9 \\* \\* \\* \\(Asia/Tokyo\\)\\s+\\d{4}-\\d{2}-\\d{2} 00:00\\s+succeeded\\s+yes$`));
  assert.match(lines[2]!, /^[0-9a-f]{8}\s+later\s+once at 2099-01-02 03:04\s+-\s+-\s+no$/);
  assert.equal(lines.length, 3);
  assert.deepEqual((await auto(d, 'ls', 'autocli', '--json')).json.map((x: any) => [x.name, x.last_run?.id ?? null]), [['nightly', now.json.id], ['later', null]]);
  // Without a project: every project's, with its name.
  assert.match((await auto(d, 'ls')).stdout, /^PROJECT\s+ID\s+NAME[^\n]*\nautocli\s+[0-9a-f]{8}\s+nightly/);

  const taskName = (await d.socket('GET', `/api/tasks/${runs[0].task_id}`)).json.name;
  assert.match(taskName, /^nightly \d{4}-\d{2}-\d{2}$/);
  const listed = await auto(d, 'runs', 'nightly');
  const rows = listed.stdout.trimEnd().split('\n');
  assert.match(rows[0]!, /^ID\s+STATUS\s+WHY\s+SCHEDULED_FOR\s+MISSED\s+TRIGGER\s+TASK$/);
  assert.match(rows[1]!, new RegExp(`^${now.json.id.slice(0, 8)}\\s+succeeded\\s+-\\s+\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}(:\\d{2})?\\s+0\\s+manual\\s+${taskName}$`));
  assert.equal(rows.length, 3);

  const shown = await auto(d, 'show', 'nightly');
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, new RegExp(`^automation nightly \\(${a.id}\\) of project autocli: enabled\\n`));
  assert.match(shown.stdout, /\nschedule: 0 9 \* \* \* \(Asia\/Tokyo\); next run \d{4}-\d{2}-\d{2} 00:00\n/);
  assert.match(shown.stdout, /\nsession: the project's agent\nprompt: write:auto\.txt=\{date\}\nprecheck: echo work\nland: none; overlap: skip; missed: latest within 43200 s\n\nruns:\n  ID\s+STATUS/);
  const shownJson = (await auto(d, 'show', 'nightly', '--json')).json;
  assert.deepEqual([shownJson.id, shownJson.last_run.id, shownJson.runs.map((r: any) => r.id)], [a.id, now.json.id, runs.map((r: any) => r.id)]);

  const paused = await auto(d, 'pause', 'nightly');
  assert.equal(paused.stdout, 'automation nightly is paused\n');
  assert.deepEqual(((x) => [x.enabled, x.next_run_at])((await auto(d, 'show', 'nightly', '--json')).json), [false, null]);
  const resumed = await auto(d, 'resume', 'nightly', '--json');
  assert.equal(resumed.json.enabled, true);
  assert.match(resumed.json.next_run_at, /T00:00:00(\.000)?Z$/);
  assert.equal((await auto(d, 'pause', 'nightly', '--json')).json.next_run_at, null);
  assert.match((await auto(d, 'resume', 'nightly')).stdout, /^automation nightly is resumed: next run \d{4}-\d{2}-\d{2} 00:00\n$/);

  const removed = await auto(d, 'rm', 'later');
  assert.equal(removed.stdout, 'removed automation later and its runs (their tasks stay)\n');
  assert.deepEqual((await auto(d, 'rm', 'nightly', '--json')).json, { removed: a.id });
  const gone = await auto(d, 'show', 'nightly', '--json');
  assert.equal(gone.code, 1);
  assert.equal(gone.json.code, 'NOT_FOUND');
  assert.equal((await d.socket('GET', `/api/tasks/${runs[0].task_id}`)).json.status, 'ready', 'its tasks stay');
});

test('grove auto: a followed run that fails exits 1 with why; one its precheck skips exits 0 with the reason', async (t) => {
  const d = await daemon();
  await fixtureProject(t, d, 'autofail');
  assert.equal((await auto(d, 'add', 'autofail', 'failing', '--cron', '0 0 1 1 *', '--prompt', 'exit:3')).code, 0);
  const failed = await auto(d, 'run', 'failing', '--follow');
  assert.equal(failed.code, 1, failed.stderr);
  assert.match(failed.stdout, /^run [0-9a-f]{8} of failing failed \(its session failed with exit code 3\): task [0-9a-f]{8}, session [0-9a-f]{8}\n$/);
  const failedJson = await auto(d, 'run', 'failing', '-f', '--json');
  assert.equal(failedJson.code, 1);
  assert.deepEqual([failedJson.json.status, failedJson.json.error], ['failed', 'its session failed with exit code 3']);

  assert.equal((await auto(d, 'add', 'autofail', 'quiet', '--cron', '0 0 1 1 *', '--prompt', 'echo:hi', '--precheck', 'echo nothing to do; exit 1')).code, 0);
  const skipped = await auto(d, 'run', 'quiet', '-f');
  assert.equal(skipped.code, 0, skipped.stderr);
  assert.match(skipped.stdout, /^run [0-9a-f]{8} of quiet skipped \(precheck\)\n$/);
  const [run] = (await auto(d, 'runs', 'quiet', '--json')).json;
  assert.deepEqual(run.precheck, { exit_code: 1, output: 'nothing to do\n' });
  assert.match((await auto(d, 'runs', 'quiet')).stdout, /\n[0-9a-f]{8}\s+skipped\s+precheck\s+\S+ \S+\s+0\s+manual\s+-$/m);
});

test('grove auto: refusals — the daemon’s detail and exit 1 (a bad cron: SCHEDULE_INVALID, nothing stored), usage errors exit 2, a name in two projects', async (t) => {
  const d = await daemon();
  const p = await fixtureProject(t, d, 'autobad');
  const bad = await auto(d, 'add', 'autobad', 'bad', '--cron', '0 25 * * *', '--prompt', 'echo:hi');
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^grove: SCHEDULE_INVALID: schedule\.cron \S.*\n$/);
  const badJson = await auto(d, 'add', 'autobad', 'bad', '--cron', '0 9 * * *', '--timezone', 'Europe/Atlantis', '--prompt', 'echo:hi', '--json');
  assert.equal(badJson.code, 1);
  assert.equal(badJson.json.code, 'SCHEDULE_INVALID');
  assert.equal(badJson.json.errors[0].path, '/schedule/timezone');
  const past = await auto(d, 'add', 'autobad', 'bad', '--at', '2020-01-01T00:00:00Z', '--prompt', 'echo:hi');
  assert.match(past.stderr, /SCHEDULE_INVALID: schedule\.at is in the past/);
  const agent = await auto(d, 'add', 'autobad', 'bad', '--cron', '0 9 * * *', '--prompt', 'echo:hi', '--agent', 'no-such-agent', '--json');
  assert.deepEqual([agent.code, agent.json.code], [1, 'UNKNOWN_AGENT']);
  assert.deepEqual((await auto(d, 'ls', 'autobad', '--json')).json, [], 'nothing stored');

  const usages: Array<[string[], RegExp]> = [
    [['add', 'autobad', 'x', '--prompt', 'echo:hi'], /give one schedule/],
    [['add', 'autobad', 'x', '--cron', '0 9 * * *', '--at', '2099-01-01T00:00:00Z', '--prompt', 'echo:hi'], /give one schedule/],
    [['add', 'autobad', 'x', '--at', '2099-01-01T00:00:00Z', '--timezone', 'UTC', '--prompt', 'echo:hi'], /--timezone goes with --cron/],
    [['add', 'autobad', 'x', '--cron', '0 9 * * *'], /missing --prompt/],
    [['add', 'autobad', 'x', '--cron', '0 9 * * *', '--prompt', 'echo:hi', '--land', 'sideways'], /--land is one of none, queue, pr/],
    [['add', 'autobad', 'x', '--cron', '0 9 * * *', '--prompt', 'echo:hi', '--missed', 'skip', '--grace', '60'], /--grace goes with --missed latest/],
    [['add', 'autobad', 'x', '--cron', '0 9 * * *', '--prompt', 'echo:hi', '--timeout', 'soon'], /--timeout must be a number of seconds/],
    [['add', 'autobad'], /missing <name>/],
    [['show'], /missing <automation>/],
  ];
  for (const [args, re] of usages) {
    const r = await auto(d, ...args);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, re, args.join(' '));
  }
  const unknown = await auto(d, 'run', 'no-such-automation', '--json');
  assert.deepEqual([unknown.code, unknown.json.code], [1, 'NOT_FOUND']);

  // One name in two projects: ambiguous alone, one with --project.
  const other = await fixtureProject(t, d, 'autobad2');
  for (const name of ['autobad', 'autobad2']) assert.equal((await auto(d, 'add', name, 'same', '--cron', '0 9 * * *', '--prompt', 'echo:hi')).code, 0);
  const ambiguous = await auto(d, 'show', 'same');
  assert.equal(ambiguous.code, 2);
  assert.match(ambiguous.stderr, /automation "same" is ambiguous: [0-9a-f]{8}, [0-9a-f]{8}; give an id, or its project with --project/);
  assert.equal((await auto(d, 'show', 'same', '--project', 'autobad2', '--json')).json.project_id, other.id);
  assert.equal((await auto(d, 'show', 'same', '--project', 'autobad', '--json')).json.project_id, p.id);
});
