import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { execa } from 'execa';
import type { Hook } from '../../schemas/config.ts';
import type { GroveEvent } from '../../schemas/event.ts';
import { signalGroup } from '../proc/group.ts';
import { stopOrphanGroup } from '../proc/orphan.ts';
import { processStartTime } from '../proc/stat.ts';
import { GRACE_MS, terminate } from '../proc/terminate.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import type { EventBus } from './bus.ts';

const DEFAULT_TIMEOUT_S = 30;
// Events waiting for one hook beyond this are dropped (and logged): a hook slower than the
// events it follows must not grow the daemon's memory without bound.
const MAX_WAITING = 1000;
// What is kept of a hook's stderr for the log: its end, where the reason of a failure is.
export const STDERR_TAIL_BYTES = 64 * 1024;

// The last `max` bytes a stream carries, the rest read and dropped as it comes.
function keepTail(stream: Readable | null, max: number): () => string {
  let chunks: Buffer[] = [];
  let size = 0;
  stream?.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.length;
    if (size > 2 * max) {
      const all = Buffer.concat(chunks);
      chunks = [all.subarray(all.length - max)];
      size = max;
    }
  });
  return () => {
    const all = Buffer.concat(chunks);
    return all.subarray(Math.max(0, all.length - max)).toString('utf8');
  };
}

// Each running hook is recorded in `dir` as a file named by its pid holding its start time, so
// that a daemon killed while it ran can have the next one stop what it left.
function runRecords(dir: string) {
  return {
    add(pid: number): void {
      const start = processStartTime(pid);
      if (start === null) return;
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(path.join(dir, String(pid)), start);
    },
    remove(pid: number): void {
      rmSync(path.join(dir, String(pid)), { force: true });
    },
    left(): Array<{ pid: number; start: string }> {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return [];
      }
      return names.filter((n) => /^\d+$/.test(n)).map((n) => ({ pid: Number(n), start: readFileSync(path.join(dir, n), 'utf8').trim() }));
    },
  };
}

// At start: the process groups of hooks that a killed daemon left running are stopped.
export async function stopLeftHooks(dir: string, log: Logger): Promise<void> {
  const records = runRecords(dir);
  const left = records.left();
  if (left.length === 0) return;
  await Promise.all(left.map((r) => stopOrphanGroup(r.pid, r.start)));
  for (const r of left) records.remove(r.pid);
  log.warn({ pids: left.map((r) => r.pid) }, 'stopped hooks left running by a daemon that was killed');
}

// The user's hooks (DESIGN §11): each matching event runs the hook's command with the event's
// JSON on stdin, one at a time per hook and in order, bounded in time, whatever it leaves
// running killed, failures logged. They run after the change is committed and answered.
// On a shared store the bus carries every host's events: a hook runs where its event happened
// (DESIGN §14.2), on the machine whose user configured it for that host's work.
export function createHooks(deps: { hooks: Hook[]; bus: EventBus; hostId: string; runDir: string; log: Logger }) {
  const { hooks, bus, log } = deps;
  const records = runRecords(deps.runDir);
  const lines = hooks.map(() => ({ tail: Promise.resolve(), waiting: 0 }));
  const running = new Set<number>();
  let closed = false;

  async function run(hook: Hook, index: number, e: GroveEvent): Promise<void> {
    if (closed) return;
    const [file, ...args] = hook.command;
    // stderr is read as it comes and only its end kept: a hook may print without limit.
    const child = execa(file!, args, { input: `${JSON.stringify(e)}\n`, detached: true, cleanup: false, reject: false, stdout: 'ignore', stderr: 'pipe', buffer: false });
    const stderr = keepTail(child.stderr, STDERR_TAIL_BYTES);
    const pid = child.pid;
    if (pid !== undefined) {
      running.add(pid);
      records.add(pid);
    }
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (pid !== undefined) void terminate(pid, { graceMs: GRACE_MS.setup });
    }, (hook.timeout_s ?? DEFAULT_TIMEOUT_S) * 1000);
    const res = await child;
    clearTimeout(timer);
    // Nothing a hook started may outlive it.
    if (pid !== undefined) {
      signalGroup(pid, 'SIGKILL');
      running.delete(pid);
      records.remove(pid);
    }
    const ok = !timedOut && res.exitCode === 0;
    const fields = { hook: index, command: hook.command, event: e.seq, type: e.type, exit_code: res.exitCode ?? null, signal: res.signal ?? null, timed_out: timedOut };
    if (ok) log.debug(fields, 'hook ran');
    else log.warn({ ...fields, stderr: stderr().split('\n').slice(-3).join('\n') || (res.failed && res.exitCode === undefined ? res.shortMessage : '') }, 'hook failed');
  }

  const onEvent = (e: GroveEvent) => {
    if (e.host_id !== deps.hostId) return;
    hooks.forEach((hook, i) => {
      if (!hook.on.includes(e.type) && !hook.on.includes('*')) return;
      const line = lines[i]!;
      if (line.waiting >= MAX_WAITING) return log.warn({ hook: i, event: e.seq }, 'hook is too far behind; event dropped for it');
      line.waiting++;
      line.tail = line.tail
        .then(() => run(hook, i, e))
        .catch((err: unknown) => log.warn({ err, hook: i }, 'hook failed'))
        .finally(() => line.waiting--);
    });
  };
  const stopFollowing = hooks.length > 0 ? bus.committed.onAnyChange(onEvent) : () => {};

  return {
    // Stops following events and kills the hooks still running.
    close: once(async () => {
      closed = true;
      stopFollowing();
      await Promise.all(
        [...running].map(async (pid) => {
          await terminate(pid, { graceMs: GRACE_MS.setup });
          records.remove(pid);
        }),
      );
    }),
  };
}
