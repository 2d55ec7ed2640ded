import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './root.ts';
import { Piscina } from 'piscina';
import type { CreatedWorktree, CreateWorktreeInput, RemoveWorktreeInput } from '../workers/worktree.ts';
import type { RunSetupInput } from '../workers/setup.ts';
import type { Result } from '../workers/result.ts';

// From the bundle (daemon/start.mjs), the worker code is bundled beside this module as plain
// JavaScript; from the sources, workers/entry.mjs registers tsx in each thread first. A thread
// with tsx's hooks cost more memory and ~0.25 s to start.
const BUNDLED = new URL('./worker.mjs', import.meta.url);
const ENTRY = import.meta.url.endsWith('.mjs') && existsSync(BUNDLED) ? BUNDLED.href : pathToFileURL(path.join(ROOT, 'workers', 'entry.mjs')).href;

// The worker pool for git worktrees and setup commands, typed by task name.
export function createPool(opts: { maxThreads?: number } = {}) {
  const maxThreads = opts.maxThreads ?? Math.max(2, cpus().length * 2);
  const piscina = new Piscina({
    filename: ENTRY,
    minThreads: 0,
    maxThreads,
    // Setup commands mostly wait on child processes: a thread may run several at once.
    concurrentTasksPerWorker: 4,
    idleTimeout: 60_000,
  });
  let closing: Promise<void> | null = null;
  return {
    createWorktree: (input: CreateWorktreeInput) => piscina.run(input, { name: 'createWorktree' }) as Promise<Result<CreatedWorktree>>,
    removeWorktree: (input: RemoveWorktreeInput) =>
      piscina.run(input, { name: 'removeWorktree' }) as Promise<Result<{ removed: 'worktree' | 'link' | 'missing' | 'foreign' }>>,
    runSetup: (input: RunSetupInput) =>
      piscina.run(input, { name: 'runSetup', transferList: [input.port] }) as Promise<Result<{ failed: boolean; cancelled: boolean }>>,
    close(): Promise<void> {
      closing ??= piscina.destroy().then(() => {});
      return closing;
    },
  };
}

export type Pool = ReturnType<typeof createPool>;
