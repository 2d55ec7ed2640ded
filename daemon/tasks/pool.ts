import { cpus } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { once } from '../runtime/once.ts';
import { built } from '../runtime/root.ts';
import type { CreatedWorktree, CreateWorktreeInput } from '../../workers/worktree/create.ts';
import type { RemovedWorktree, RemoveWorktreeInput } from '../../workers/worktree/remove.ts';
import type { RunSetupInput, SetupOutcome } from '../../workers/setup.ts';
import type { CopyInput, CopyReport } from '../../workers/worktree/copy.ts';
import type { Fail, Result } from '../../workers/result.ts';
import type { TimeBound } from '../../workers/timeout.ts';
import type { Changes, ChangesInput } from '../../workers/review/changes.ts';
import type { DiffInput } from '../../workers/review/diff.ts';
import type { CommitInput } from '../../workers/review/commit.ts';
import type { RebaseInput } from '../../workers/review/rebase.ts';
import type { MergeInput, Merged } from '../../workers/review/merge.ts';
import type { PushInput } from '../../workers/review/push.ts';
import type { ConflictPair, ConflictsInput } from '../../workers/review/conflicts.ts';
import type { Recovered } from '../../workers/review/recover-landing.ts';
import type { LandingIntent } from '../../schemas/journal.ts';
import { GroveError, type ErrorCode } from '../errors.ts';

// How long closing waits for cancelled review tasks to stop their git (a landing stopped part-way
// is put right from its intent at the next start).
const STOP_MS = 5000;

// What a review task is given besides its input (workers/review/bound.ts): its time bound, the
// code it answers then, and the request's signal (its client gone).
export interface RunBound extends TimeBound {
  code: ErrorCode;
  signal?: AbortSignal | undefined;
}

// The worker pools for git worktrees and setup commands (DESIGN §1), typed by task name. The
// threads run the built JavaScript of workers/ and call git themselves. Review and landing have
// a pool of their own: git held up in one repository (a slow filter, a hook, a remote) can fill
// it, but never takes the threads that create, set up and archive tasks.
export function createPool(opts: { maxThreads?: number } = {}) {
  const make = () =>
    new Piscina({
      filename: built('workers/index.js'),
      minThreads: 0,
      maxThreads: opts.maxThreads ?? Math.max(2, cpus().length * 2),
      // Setup commands and git mostly wait on child processes: a thread may run several at once.
      concurrentTasksPerWorker: 4,
      idleTimeout: 60_000,
    });
  const piscina = make();
  const review = make();
  // The signal crosses to the worker as a port: Piscina's own abort would end the whole thread.
  // Running ones are kept, so that closing stops their git (in groups of their own, it would
  // outlive the threads).
  const running = new Map<Promise<unknown>, () => void>();
  const bounded = async <T>(name: string, input: object, b: RunBound): Promise<Result<T>> => {
    const { port1, port2 } = new MessageChannel();
    const cancel = () => port1.postMessage('cancel');
    if (b.signal?.aborted) cancel();
    else b.signal?.addEventListener('abort', cancel, { once: true });
    const run = review.run({ ...input, bound: { port: port2, ms: b.ms, code: b.code, detail: b.detail } }, { name, transferList: [port2] });
    running.set(run, cancel);
    try {
      return (await run) as Result<T>;
    } finally {
      running.delete(run);
      b.signal?.removeEventListener('abort', cancel);
      port1.close();
    }
  };
  return {
    createWorktree: (input: CreateWorktreeInput & { timeout: TimeBound }) => piscina.run(input, { name: 'createWorktree' }) as Promise<Result<CreatedWorktree>>,
    removeWorktree: (input: RemoveWorktreeInput & { timeout: TimeBound }) => piscina.run(input, { name: 'removeWorktree' }) as Promise<Result<RemovedWorktree>>,
    worktreeDirty: (input: { worktree: string; timeout: TimeBound }) => piscina.run(input, { name: 'worktreeDirty' }) as Promise<Result<{ files: string[] }>>,
    copyIncluded: (input: CopyInput) => piscina.run(input, { name: 'copyIncluded' }) as Promise<Result<CopyReport>>,
    runSetup: (input: RunSetupInput) => piscina.run(input, { name: 'runSetup', transferList: [input.port] }) as Promise<Result<SetupOutcome>>,
    taskChanges: (input: ChangesInput, b: RunBound) => bounded<Changes>('taskChanges', input, b),
    taskDiff: (input: DiffInput, b: RunBound) => bounded<{ diff: Uint8Array; truncated: boolean }>('taskDiff', input, b),
    commitTask: (input: CommitInput, b: RunBound) => bounded<{ commit: string; files: string[] }>('commitTask', input, b),
    rebaseTask: (input: RebaseInput, b: RunBound) => bounded<{ head: string }>('rebaseTask', input, b),
    mergeTask: (input: MergeInput, b: RunBound) => bounded<Merged>('mergeTask', input, b),
    pushTask: (input: PushInput, b: RunBound) => bounded<{ remote: string; branch: string }>('pushTask', input, b),
    recoverLanding: (intent: LandingIntent, b: RunBound) => bounded<Recovered>('recoverLanding', intent, b),
    projectConflicts: (input: ConflictsInput, b: RunBound) => bounded<{ conflicts: ConflictPair[] }>('projectConflicts', input, b),
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
