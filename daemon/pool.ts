import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { ROOT } from './root.ts';
import { Piscina } from 'piscina';
import type { GitRelay, GitRequest, GitReply } from './git.ts';
import type { CreatedWorktree, CreateWorktreeInput, RemoveWorktreeInput } from '../workers/worktree.ts';
import type { RunSetupInput } from '../workers/setup.ts';
import type { Result } from '../workers/result.ts';

// From the bundle (daemon/start.mjs), the worker code is bundled beside this module as plain
// JavaScript; from the sources, workers/entry.mjs registers tsx in each thread first. A thread
// with tsx's hooks cost more memory and ~0.25 s to start.
const BUNDLED = new URL('./worker.mjs', import.meta.url);
const ENTRY = import.meta.url.endsWith('.mjs') && existsSync(BUNDLED) ? BUNDLED.href : pathToFileURL(path.join(ROOT, 'workers', 'entry.mjs')).href;

// The worker pool for git worktrees and setup commands, typed by task name. With `gitRelay`,
// the git calls of worktree tasks are made by it (the session spawner) instead of the thread.
export function createPool(opts: { maxThreads?: number; gitRelay?: GitRelay } = {}) {
  const maxThreads = opts.maxThreads ?? Math.max(2, cpus().length * 2);
  const piscina = new Piscina({
    filename: ENTRY,
    minThreads: 0,
    maxThreads,
    // Setup commands mostly wait on child processes: a thread may run several at once.
    concurrentTasksPerWorker: 4,
    idleTimeout: 60_000,
  });
  const { gitRelay } = opts;
  // One channel per task: the thread's git calls come in on it, their results go back.
  function runWithGit<I extends object, R>(input: I, name: string): Promise<R> {
    if (!gitRelay) return piscina.run(input, { name }) as Promise<R>;
    const { port1, port2 } = new MessageChannel();
    port1.on('message', (m: GitRequest) => {
      const answer = (result: GitReply['result']) => port1.postMessage({ id: m.id, result } satisfies GitReply);
      gitRelay(m.cwd, m.args).then(answer, () => answer(null));
    });
    return (piscina.run({ ...input, git: port2 }, { name, transferList: [port2] }) as Promise<R>).finally(() => port1.close());
  }
  let closing: Promise<void> | null = null;
  return {
    createWorktree: (input: CreateWorktreeInput) => runWithGit<CreateWorktreeInput, Result<CreatedWorktree>>(input, 'createWorktree'),
    removeWorktree: (input: RemoveWorktreeInput) =>
      runWithGit<RemoveWorktreeInput, Result<{ removed: 'worktree' | 'link' | 'missing' | 'foreign' }>>(input, 'removeWorktree'),
    runSetup: (input: RunSetupInput) =>
      piscina.run(input, { name: 'runSetup', transferList: [input.port] }) as Promise<Result<{ failed: boolean; cancelled: boolean }>>,
    close(): Promise<void> {
      closing ??= piscina.destroy().then(() => {});
      return closing;
    },
  };
}

export type Pool = ReturnType<typeof createPool>;
