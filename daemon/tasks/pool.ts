import { cpus } from 'node:os';
import { Piscina } from 'piscina';
import { once } from '../runtime/once.ts';
import { built } from '../runtime/root.ts';
import type { CreatedWorktree, CreateWorktreeInput } from '../../workers/worktree/create.ts';
import type { RemovedWorktree, RemoveWorktreeInput } from '../../workers/worktree/remove.ts';
import type { RunSetupInput, SetupOutcome } from '../../workers/setup.ts';
import type { CopyInput, CopyReport } from '../../workers/worktree/copy.ts';
import type { Fail, Result } from '../../workers/result.ts';
import type { Changes, ChangesInput } from '../../workers/review/changes.ts';
import type { DiffInput } from '../../workers/review/diff.ts';
import type { CommitInput } from '../../workers/review/commit.ts';
import type { RebaseInput } from '../../workers/review/rebase.ts';
import type { MergeInput, Merged } from '../../workers/review/merge.ts';
import type { PushInput } from '../../workers/review/push.ts';
import type { ConflictPair, ConflictsInput } from '../../workers/review/conflicts.ts';
import { GroveError } from '../errors.ts';

// The worker pool for git worktrees and setup commands (DESIGN §1), typed by task name. The
// threads run the built JavaScript of workers/ and call git themselves.
export function createPool(opts: { maxThreads?: number } = {}) {
  const piscina = new Piscina({
    filename: built('workers/index.js'),
    minThreads: 0,
    maxThreads: opts.maxThreads ?? Math.max(2, cpus().length * 2),
    // Setup commands mostly wait on child processes: a thread may run several at once.
    concurrentTasksPerWorker: 4,
    idleTimeout: 60_000,
  });
  return {
    createWorktree: (input: CreateWorktreeInput) => piscina.run(input, { name: 'createWorktree' }) as Promise<Result<CreatedWorktree>>,
    removeWorktree: (input: RemoveWorktreeInput) => piscina.run(input, { name: 'removeWorktree' }) as Promise<Result<RemovedWorktree>>,
    worktreeDirty: (input: { worktree: string }) => piscina.run(input, { name: 'worktreeDirty' }) as Promise<Result<{ files: string[] }>>,
    copyIncluded: (input: CopyInput) => piscina.run(input, { name: 'copyIncluded' }) as Promise<Result<CopyReport>>,
    runSetup: (input: RunSetupInput) => piscina.run(input, { name: 'runSetup', transferList: [input.port] }) as Promise<Result<SetupOutcome>>,
    taskChanges: (input: ChangesInput) => piscina.run(input, { name: 'taskChanges' }) as Promise<Result<Changes>>,
    taskDiff: (input: DiffInput) => piscina.run(input, { name: 'taskDiff' }) as Promise<Result<{ diff: Uint8Array; truncated: boolean }>>,
    commitTask: (input: CommitInput) => piscina.run(input, { name: 'commitTask' }) as Promise<Result<{ commit: string; files: string[] }>>,
    rebaseTask: (input: RebaseInput) => piscina.run(input, { name: 'rebaseTask' }) as Promise<Result<{ head: string }>>,
    mergeTask: (input: MergeInput) => piscina.run(input, { name: 'mergeTask' }) as Promise<Result<Merged>>,
    pushTask: (input: PushInput) => piscina.run(input, { name: 'pushTask' }) as Promise<Result<{ remote: string; branch: string }>>,
    projectConflicts: (input: ConflictsInput) => piscina.run(input, { name: 'projectConflicts' }) as Promise<Result<{ conflicts: ConflictPair[] }>>,
    close: once(() => piscina.destroy()),
  };
}

export type Pool = ReturnType<typeof createPool>;

// A worker's failure as the domain error the API answers with (a field path becomes `errors`).
export function fromWorker(f: Fail): GroveError {
  return new GroveError(f.code, f.message, { ...(f.path ? { errors: [{ path: f.path, message: f.message }] } : {}), ...(f.files ? { files: f.files } : {}) });
}
