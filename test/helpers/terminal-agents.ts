// What the real-agent terminal tests (test/real-agents/terminal*.test.ts) share: a session of a
// real CLI's interface under grove's pseudo-terminal, waited on, ended, and checked gone.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import type { TestDaemon } from './daemon.ts';
import { endedSession } from './real-agents.ts';
import { liveGroupMembers } from './sessions.ts';
import { until } from './store.ts';
import { programPid, type TerminalClient } from './terminal.ts';

// The processes whose working directory is in `dir` (the agent and anything it started there).
export function runningIn(dir: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (cwd === dir || cwd.startsWith(dir + path.sep)) out.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')}`);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

// A session that a failing test leaves running would outlive its daemon (as sessions do): its
// holder's group and its program's are killed when the test ends, whatever happened. The
// program's group is read as soon as the holder writes it: the daemon's cleanups, registered
// before this one, run first and remove its home.
export function killWhenDone(t: { after(fn: () => unknown): void }, d: TestDaemon, s: { id: string; pid: number }): void {
  let program: number | null = null;
  const read = () => {
    try {
      program ??= programPid(d, s.id);
    } catch {
      // not written yet, or the home is gone
    }
    return program !== null;
  };
  const poll = setInterval(() => read() && clearInterval(poll), 100).unref();
  t.after(() => {
    clearInterval(poll);
    read();
    const groups = program === null ? [s.pid] : [s.pid, program];
    for (const g of groups) {
      try {
        process.kill(-g, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

// Ends a running session with `end` (what a person types, a kill): its exit frame, the session as
// stored at its end; its holder's group, its program's, and anything that ran in its worktree gone.
export async function endedBy(d: TestDaemon, c: TerminalClient, s: { id: string; pid: number }, worktree: string, end: () => unknown) {
  const program = programPid(d, s.id);
  assert.ok(liveGroupMembers(program).includes(program), 'the program leads its group');
  assert.notDeepEqual(runningIn(worktree), []);
  await end();
  const exit = await c.waitFrame((f) => f.type === 'exit', 30_000);
  const ended = await endedSession(d, s.id);
  assert.deepEqual([liveGroupMembers(s.pid), liveGroupMembers(program), runningIn(worktree)], [[], [], []]);
  return { exit, ended };
}

// The session as stored, once `pred` holds of it.
export async function sessionWhen(d: TestDaemon, id: string, pred: (s: any) => boolean, what: string, ms = 30_000): Promise<any> {
  let last: any;
  try {
    await until(async () => pred((last = (await d.socket('GET', `/api/sessions/${id}`)).json)), what, ms);
  } catch (err) {
    const approvals = (await d.socket('GET', `/api/approvals?session_id=${id}`)).json;
    let transcript = '';
    try {
      const place = JSON.parse(readFileSync(path.join(d.home, 'data', 'sessions', id, 'transcript.json'), 'utf8'));
      transcript = readFileSync(place.file, 'utf8').split('\n').map((l) => l.slice(0, 300)).join('\n');
    } catch (e) {
      transcript = String(e);
    }
    throw new Error(`${(err as Error).message}; the session is ${JSON.stringify(last)}; approvals ${JSON.stringify(approvals)}; transcript:\n${transcript}`);
  }
  return last;
}
