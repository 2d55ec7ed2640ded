import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import path from 'node:path';
import test, { type TestContext } from 'node:test';
import { MessageChannel } from 'node:worker_threads';
import { LOW_PRIORITY } from '../../daemon/proc/priority.ts';
import { processStartTime } from '../../daemon/proc/stat.ts';
import { runSetup, type SetupMessage } from '../../workers/setup.ts';
import { makeTempDir } from '../helpers/git.ts';
import { autogroupNice } from '../helpers/priority.ts';
import { waitPidGone } from '../helpers/state.ts';

// Runs setup in this thread over a real MessageChannel, as the pool does across threads;
// resolves with the outcome and every message, in the order they arrived.
function run(t: TestContext, commands: string[], opts: { timeoutMs?: number; cwd?: string; nice?: boolean; onMessage?: (m: SetupMessage, cancel: () => void) => void } = {}) {
  const { port1, port2 } = new MessageChannel();
  t.after(() => port1.close());
  const messages: SetupMessage[] = [];
  const cancel = () => port1.postMessage({ type: 'cancel' });
  const done = new Promise<void>((resolve) =>
    port1.on('message', (m: SetupMessage) => {
      messages.push(m);
      opts.onMessage?.(m, cancel);
      if (m.type === 'done') resolve();
    }),
  );
  const cwd = opts.cwd ?? makeTempDir(t);
  const outcome = runSetup({ cwd, commands, env: { PATH: process.env.PATH!, ONLY: 'this' }, timeoutMs: opts.timeoutMs ?? 30_000, nice: opts.nice, port: port2 });
  return { cwd, outcome, messages: done.then(() => messages) };
}

// The messages without their times and pids, to compare them whole.
function shape(messages: SetupMessage[]): unknown[] {
  return messages.map((m) => {
    if (m.type === 'start') return { type: m.type, idx: m.idx, command: m.command };
    if (m.type === 'spawned') return { type: m.type, idx: m.idx };
    if (m.type === 'lines') return { type: m.type, idx: m.idx, lines: m.lines.map((l) => `${l.stream}:${l.text}`) };
    if (m.type === 'end') return { type: m.type, idx: m.idx, exit_code: m.exit_code, timed_out: m.timed_out };
    return { type: m.type };
  });
}

test('commands run in order in cwd with only the given environment; per command: start, spawned, lines, end; done last', async (t) => {
  const r = run(t, ['echo one; echo two >&2', 'pwd; echo "$ONLY-${HOME:-nohome}"; printf tail']);
  assert.deepEqual(await r.outcome, { ok: true, failed: false, cancelled: false });
  const messages = await r.messages;
  assert.deepEqual(shape(messages), [
    { type: 'start', idx: 0, command: 'echo one; echo two >&2' },
    { type: 'spawned', idx: 0 },
    ...shape(messages.filter((m) => m.type === 'lines' && m.idx === 0)),
    { type: 'end', idx: 0, exit_code: 0, timed_out: false },
    { type: 'start', idx: 1, command: 'pwd; echo "$ONLY-${HOME:-nohome}"; printf tail' },
    { type: 'spawned', idx: 1 },
    ...shape(messages.filter((m) => m.type === 'lines' && m.idx === 1)),
    { type: 'end', idx: 1, exit_code: 0, timed_out: false },
    { type: 'done' },
  ]);
  const lines = (idx: number) => messages.flatMap((m) => (m.type === 'lines' && m.idx === idx ? m.lines.map((l) => `${l.stream}:${l.text}`) : []));
  assert.deepEqual(lines(0).sort(), ['stderr:two', 'stdout:one']);
  assert.deepEqual(lines(1), [`stdout:${r.cwd}`, 'stdout:this-nohome', 'stdout:tail'], 'a last line without a newline is kept');
  for (const m of messages) if (m.type === 'spawned') assert.ok(m.pid > 0);
});

test('the first failing command stops the run: its exit code is recorded, later commands never start', async (t) => {
  const r = run(t, ['echo before', 'echo failing >&2; exit 3', 'echo never']);
  assert.deepEqual(await r.outcome, { ok: true, failed: true, cancelled: false });
  const messages = await r.messages;
  assert.deepEqual(
    messages.filter((m) => m.type === 'end').map((m) => m.type === 'end' && [m.idx, m.exit_code]),
    [
      [0, 0],
      [1, 3],
    ],
  );
  assert.ok(!messages.some((m) => m.type === 'start' && m.idx === 2));
  assert.equal(messages.at(-1)?.type, 'done');
  assert.ok(!JSON.stringify(messages).includes('never'));
});

test('a timeout kills the whole process group, background children included', async (t) => {
  const dir = makeTempDir(t);
  const pids = path.join(dir, 'pids');
  const t0 = Date.now();
  // The shell lives until the timeout: its recorded start time can be checked against /proc.
  let recorded: { pid: number; pid_start: string | null; now: string | null } | null = null;
  const r = run(t, [`sleep 60 & echo $! > '${pids}'; echo started; sleep 60`, 'echo never'], {
    timeoutMs: 1000,
    cwd: dir,
    onMessage: (m) => {
      if (m.type === 'spawned') recorded = { pid: m.pid, pid_start: m.pid_start, now: processStartTime(m.pid) };
    },
  });
  assert.deepEqual(await r.outcome, { ok: true, failed: true, cancelled: false });
  assert.ok(recorded, 'the pid was recorded');
  const { pid, pid_start, now } = recorded as { pid: number; pid_start: string | null; now: string | null };
  assert.ok(pid_start !== null && pid_start === now, 'with its start time, so a reused pid is never taken for it');
  await waitPidGone(pid, 5000);
  assert.ok(Date.now() - t0 < 20_000, 'it did not wait for the sleeps');
  const end = (await r.messages).find((m) => m.type === 'end');
  assert.ok(end?.type === 'end');
  assert.equal(end.timed_out, true);
  assert.equal(end.signal, 'SIGTERM');
  await waitPidGone(Number(readFileSync(pids, 'utf8')), 5000);
  assert.ok(!(await r.messages).some((m) => m.type === 'start' && m.idx === 1));
});

test('cancel stops the running command and the run: failed and cancelled, nothing after it', async (t) => {
  const dir = makeTempDir(t);
  const pids = path.join(dir, 'pids');
  const r = run(t, [`sleep 60 & echo $! > '${pids}'; echo started; wait`, 'echo never'], {
    cwd: dir,
    onMessage: (m, cancel) => {
      if (m.type === 'lines' && m.lines.some((l) => l.text === 'started')) cancel();
    },
  });
  assert.deepEqual(await r.outcome, { ok: true, failed: true, cancelled: true });
  const messages = await r.messages;
  const end = messages.find((m) => m.type === 'end');
  assert.ok(end?.type === 'end' && end.exit_code !== 0 && !end.timed_out, JSON.stringify(end));
  assert.ok(!messages.some((m) => m.type === 'start' && m.idx === 1));
  await waitPidGone(Number(readFileSync(pids, 'utf8')), 5000);
});

test('a command that cannot start is a failure like any other', async (t) => {
  const r = run(t, ['no-such-command-grove-test', 'echo never'], {});
  assert.deepEqual(await r.outcome, { ok: true, failed: true, cancelled: false });
  const messages = await r.messages;
  const end = messages.find((m) => m.type === 'end');
  assert.equal(end?.type === 'end' && end.exit_code, 127);
  assert.ok(messages.some((m) => m.type === 'lines' && m.lines.some((l) => l.stream === 'stderr' && /not found/.test(l.text))));
});

test('a warm slot’s setup yields the CPU: its commands and their session’s autogroup at low priority; a cold one’s do not', async (t) => {
  const group = autogroupNice('self') !== null;
  const show = 'read go < ./go; ps -o ni= -p $$; cat /proc/self/autogroup 2>/dev/null || true';
  const seen = async (nice: boolean) => {
    const cwd = makeTempDir(t);
    execFileSync('mkfifo', [path.join(cwd, 'go')]);
    // Let go once it is spawned: what it shows is what it runs with after the pool has set it.
    const r = run(t, [show], { cwd, nice, onMessage: (m) => m.type === 'spawned' && writeFileSync(path.join(cwd, 'go'), 'go\n') });
    assert.deepEqual(await r.outcome, { ok: true, failed: false, cancelled: false });
    const out = (await r.messages).flatMap((m) => (m.type === 'lines' ? m.lines.map((l) => l.text) : []));
    return { nice: Number(out[0]), group: group ? Number(/nice (-?\d+)/.exec(out[1] ?? '')?.[1]) : null };
  };
  assert.deepEqual(await seen(true), { nice: LOW_PRIORITY, group: group ? LOW_PRIORITY : null });
  assert.deepEqual(await seen(false), { nice: getPriority(), group: group ? 0 : null });
});
