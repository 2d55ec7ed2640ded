import { cpus } from 'node:os';
import { MessageChannel, MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { createLimiter } from '../runtime/limiter.ts';
import { once } from '../runtime/once.ts';
import { built } from '../runtime/root.ts';
import type * as Workers from '../../workers/index.ts';
import { fail, type Fail } from '../../workers/result.ts';
import type { Bound } from '../../workers/review/bound.ts';
import type { TimeBound } from '../../workers/timeout.ts';
import { GroveError, type ErrorCode } from '../errors.ts';

// How long closing waits for cancelled review tasks to stop their git (a landing stopped part-way
// is put right from its intent at the next start).
const STOP_MS = 5000;

// Setup commands and git mostly wait on child processes: a thread may run several at once.
const TASKS_PER_THREAD = 4;

// What a review task is given besides its input (workers/review/bound.ts): what it answers when
// its bound runs out, and the signal that stops it (runBound).
export interface RunBound extends TimeBound {
  code: ErrorCode;
  /** aborted when the bound runs out or the client goes; its reason is then the answer, a GroveError */
  signal: AbortSignal;
}

// The request a bounded run is for: its client's signal, and when it arrived (else now).
export interface Caller {
  signal?: AbortSignal | undefined;
  arrived?: number | undefined;
}

// A request's bound, whose clock starts when the request arrived: what it waits for (a place
// among its project's reads, a task's turn, a pool thread) counts in it, so that it answers within
// the bound whatever held it up.
export function runBound(t: TimeBound, code: ErrorCode, caller: Caller = {}): RunBound {
  const client = caller.signal;
  const stop = new AbortController();
  const left = t.ms - (Date.now() - (caller.arrived ?? Date.now()));
  const timer = setTimeout(() => stop.abort(new GroveError(code, t.detail)), Math.max(0, left)).unref();
  const gone = () => {
    clearTimeout(timer);
    stop.abort(new GroveError('UNAVAILABLE', 'stopped: the client has gone'));
  };
  if (client?.aborted) gone();
  else client?.addEventListener('abort', gone, { once: true });
  return { ...t, code, signal: stop.signal };
}

// The pool's tasks, typed from the workers' own functions (a type-only import: the main thread
// never loads worker code). A review task takes a Bound, which the pool makes from a RunBound.
type Tasks = typeof Workers;
export type TaskName = keyof Tasks;
type Reviewed = { [K in TaskName]: Parameters<Tasks[K]>[0] extends { bound: Bound } ? K : never }[TaskName];
type WithoutBound<P> = P extends { bound: Bound } ? Omit<P, 'bound'> : P;
export type TaskInput<K extends TaskName> = WithoutBound<Parameters<Tasks[K]>[0]>;
export type TaskResult<K extends TaskName> = Awaited<ReturnType<Tasks[K]>>;
type BoundArg<K extends TaskName> = K extends Reviewed ? [bound: RunBound] : [];

// The worker pools for git worktrees and setup commands (DESIGN §1), typed by task name. The
// threads run the built JavaScript of workers/ and call git themselves. Review and landing have
// a pool of their own: git held up in one repository (a slow filter, a hook, a remote) can fill
// it, but never takes the threads that create, set up and archive tasks.
export function createPool(opts: { maxThreads?: number } = {}) {
  const maxThreads = opts.maxThreads ?? Math.max(2, cpus().length * 2);
  const make = () =>
    new Piscina({
      filename: built('workers/index.js'),
      minThreads: 0,
      maxThreads,
      concurrentTasksPerWorker: TASKS_PER_THREAD,
      idleTimeout: 60_000,
    });
  const piscina = make();
  const review = make();
  // Review tasks wait for a place here rather than in Piscina's queue, which cannot be left
  // without ending a thread: one whose bound runs out while it waits answers at once.
  const places = createLimiter(maxThreads * TASKS_PER_THREAD);
  // The signal crosses to the worker as a port: Piscina's own abort would end the whole thread.
  // Running ones are kept, so that closing stops their git (in groups of their own, it would
  // outlive the threads).
  const running = new Map<Promise<unknown>, () => void>();
  const dispatch = async (name: TaskName, input: object, b: RunBound) => {
    const { port1, port2 } = new MessageChannel();
    const stop = () => port1.postMessage((b.signal.reason as GroveError).code === 'UNAVAILABLE' ? 'gone' : 'timeout');
    if (b.signal.aborted) stop();
    else b.signal.addEventListener('abort', stop, { once: true });
    const bound: Bound = { port: port2, code: b.code, detail: b.detail };
    const run = review.run({ ...input, bound }, { name, transferList: [port2] });
    running.set(run, () => port1.postMessage('gone'));
    try {
      return await run;
    } finally {
      running.delete(run);
      b.signal.removeEventListener('abort', stop);
      port1.close();
    }
  };
  // Stopped before it had a place, it never runs, and answers as the worker would have.
  const reviewed = (name: TaskName, input: object, b: RunBound) =>
    places.run(() => dispatch(name, input, b), b.signal).catch((err: unknown) => {
      if (err !== b.signal.reason) throw err;
      return fail(b.signal.reason.code, b.signal.reason.detail);
    });
  return {
    // Runs the worker task `name`: a review task with its bound in the review pool, any other in
    // the first. A port in the input (setup's progress) is transferred: a port cannot be copied.
    run<K extends TaskName>(name: K, input: TaskInput<K>, ...bound: BoundArg<K>): Promise<TaskResult<K>> {
      if (bound[0]) return reviewed(name, input, bound[0]);
      const transferList = Object.values(input).filter((v) => v instanceof MessagePort);
      return piscina.run(input, { name, transferList });
    },
    close: once(async () => {
      for (const cancel of running.values()) cancel();
      await Promise.race([Promise.allSettled(running.keys()), new Promise((r) => setTimeout(r, STOP_MS).unref())]);
      await Promise.all([piscina.destroy(), review.destroy()]);
    }),
  };
}

export type Pool = ReturnType<typeof createPool>;

// The time bound of a request's git: `what` took longer than the user config's `key`, and `then`
// what became of the request.
export function timeBound(what: string, key: 'setup_timeout_s' | 'git_timeout_s', seconds: number, then?: string): TimeBound {
  return { ms: seconds * 1000, detail: `${what} took longer than ${key} (${seconds} s) and was stopped${then ? `; ${then}` : ''}` };
}

// A worker's failure as the domain error the API answers with (a field path becomes `errors`).
export function fromWorker(f: Fail): GroveError {
  return new GroveError(f.code, f.message, { ...(f.path ? { errors: [{ path: f.path, message: f.message }] } : {}), ...(f.files ? { files: f.files } : {}) });
}
