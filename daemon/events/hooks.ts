import { execa } from 'execa';
import type { Hook } from '../../schemas/config.ts';
import type { GroveEvent } from '../../schemas/event.ts';
import { signalGroup } from '../proc/group.ts';
import { GRACE_MS, terminate } from '../proc/terminate.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import type { EventBus } from './bus.ts';

const DEFAULT_TIMEOUT_S = 30;
// Events waiting for one hook beyond this are dropped (and logged): a hook slower than the
// events it follows must not grow the daemon's memory without bound.
const MAX_WAITING = 1000;

// The user's hooks (DESIGN §11): each matching event runs the hook's command with the event's
// JSON on stdin, one at a time per hook and in order, bounded in time, whatever it leaves
// running killed, failures logged. They run after the change is committed and answered.
export function createHooks(deps: { hooks: Hook[]; bus: EventBus; log: Logger }) {
  const { hooks, bus, log } = deps;
  const lines = hooks.map(() => ({ tail: Promise.resolve(), waiting: 0 }));
  const running = new Set<number>();
  let closed = false;

  async function run(hook: Hook, index: number, e: GroveEvent): Promise<void> {
    if (closed) return;
    const [file, ...args] = hook.command;
    const child = execa(file!, args, { input: `${JSON.stringify(e)}\n`, detached: true, cleanup: false, reject: false, stdout: 'ignore', stderr: 'pipe', buffer: true });
    const pid = child.pid;
    if (pid !== undefined) running.add(pid);
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
    }
    const ok = !timedOut && res.exitCode === 0;
    const fields = { hook: index, command: hook.command, event: e.seq, type: e.type, exit_code: res.exitCode ?? null, signal: res.signal ?? null, timed_out: timedOut };
    if (ok) log.debug(fields, 'hook ran');
    else log.warn({ ...fields, stderr: String(res.stderr ?? '').split('\n').slice(-3).join('\n') || (res.failed && res.exitCode === undefined ? res.shortMessage : '') }, 'hook failed');
  }

  const onEvent = (e: GroveEvent) => {
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
  if (hooks.length > 0) bus.emitter.on('event', onEvent);

  return {
    // Stops following events and kills the hooks still running.
    close: once(async () => {
      closed = true;
      bus.emitter.off('event', onEvent);
      await Promise.all([...running].map((pid) => terminate(pid, { graceMs: GRACE_MS.setup })));
    }),
  };
}
