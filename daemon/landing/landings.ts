import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../runtime/log.ts';
import type { TasksTable } from '../store/tasks.ts';
import type { Result } from '../../workers/result.ts';
import type { Recovered } from '../../workers/review/recover-landing.ts';
import type { LandingIntent, RestackOf } from '../../schemas/journal.ts';
import type { LandingJournal } from '../journal/landing.ts';
import { fromWorker, runBound, timeBound, type Pool } from '../tasks/threads.ts';

export interface LandingsDeps {
  journal: LandingJournal;
  pool: Pick<Pool, 'run'>;
  tasks: Pick<TasksTable, 'markMerged' | 'restacked'>;
  log: Logger;
  /** a recovery's bound (user config git_timeout_s): its git may hang as the landing's did */
  gitTimeoutS: number;
}

// Rebases and merges into a checkout, each under an intent (journal/landing.ts): what one cut short
// leaves (a daemon or a git killed) is finished or undone at start, right after a failure, and
// before any review write that touches the same checkouts.
export function createLandings(deps: LandingsDeps) {
  const { journal, pool, log } = deps;
  // Intents of landings under way in this process: theirs to end, never to recover.
  const running = new Set<string>();
  // One recovery per intent at a time; a second caller waits for the first.
  const settling = new Map<string, Promise<Result<Recovered> | null>>();

  async function recoverOne(file: string): Promise<Result<Recovered> | null> {
    const intent = journal.read(file);
    if (!intent) {
      journal.done(file); // torn: the worker died while writing it, before git ran
      return null;
    }
    // Not the client's to stop: a recovery is shared by whoever waits for it.
    const res = await pool.run('recoverLanding', intent, runBound(timeBound(`putting right an interrupted ${intent.kind}`, 'git_timeout_s', deps.gitTimeoutS, 'it is tried again before the next review write'), 'GIT_TIMEOUT'));
    if (!res.ok) {
      const why = res.code === 'GIT_TIMEOUT' ? 'putting right an interrupted landing was stopped at its bound; it is tried again before the next review write in its scope' : 'an interrupted landing cannot be put right by grove; review writes of its project are refused until it can';
      log.warn({ task: intent.task, intent, err: res.message }, why);
      return res;
    }
    // A merge that had landed, or was landed now, is the task's merge as if it had answered.
    if (res.outcome === 'finished' && intent.kind === 'merge') await deps.tasks.markMerged(intent.task, intent.next);
    // So is a restack whose rebase had ended: its row, if the stop came before it was written.
    if (res.outcome === 'finished' && intent.kind === 'rebase' && intent.restack && res.head) await recordRestack(deps.tasks, intent.task, intent.restack, intent.onto, res.head);
    journal.done(file);
    log.warn({ task: intent.task, kind: intent.kind, outcome: res.outcome, kept: res.kept }, 'put right a landing that was interrupted');
    return res;
  }

  function settleFile(file: string): Promise<Result<Recovered> | null> {
    let p = settling.get(file);
    if (!p) {
      p = recoverOne(file).finally(() => settling.delete(file));
      settling.set(file, p);
    }
    return p;
  }

  // After a landing failed: its intent, if still there, put right; what was done, if anything,
  // or 'pending' when it could not be (kept for the next try).
  async function putRight(file: string): Promise<Recovered['outcome'] | 'pending' | null> {
    if (!existsSync(file)) return null;
    // The landing's own answer stands; a recovery that throws is logged, and tried again later.
    const res = await settleFile(file).catch((err: unknown) => {
      log.error({ err, file }, 'putting right an interrupted landing failed');
      return null;
    });
    if (res?.ok) return res.outcome;
    return existsSync(file) ? 'pending' : null;
  }

  return {
    // Runs a landing whose worker records its intent in `file`: an answer that says it ended
    // (`ended`, by default a success) voids it; after any other (maybe a git cut short) what it
    // left is put right at once, and the answer says so.
    async run<T extends object>(file: string, land: () => Promise<Result<T>>, ended: (res: Result<T>) => boolean = (r) => r.ok): Promise<Result<T>> {
      running.add(file);
      const res = await land()
        .finally(() => running.delete(file))
        .catch(async (err: unknown) => {
          await putRight(file);
          throw err;
        });
      if (ended(res)) {
        journal.done(file);
        return res;
      }
      const outcome = await putRight(file);
      const then =
        outcome === 'undone'
          ? 'grove then undid what it had begun'
          : outcome === 'finished'
            ? 'yet it had gone through, and grove completed it'
            : outcome === 'pending'
              ? 'what it had begun could not be put right yet: grove tries again before the next review write it touches'
              : null;
      return !res.ok && then ? { ...res, message: `${res.message}; ${then}` } : res;
    },
    // Before a review write: interrupted landings in its scope are put right, or it is refused.
    async settle(scope: (intent: LandingIntent) => boolean): Promise<void> {
      for (const { file, intent } of journal.pending()) {
        if (running.has(file) || (intent && !scope(intent))) continue;
        const res = await settleFile(file);
        if (res && !res.ok) throw fromWorker(res);
      }
    },
    // At start, before the API listens: every intent a stopped daemon left.
    async recoverAll(): Promise<void> {
      for (const { file } of journal.pending()) {
        await settleFile(file).catch((err: unknown) => log.error({ err, file }, 'putting right an interrupted landing failed'));
      }
    },
  };
}

export type Landings = ReturnType<typeof createLandings>;

// The scope of a write in one checkout (a commit, a rebase): that task's intents and any landing
// in the same checkout (a merge into the task's branch).
export function touching(task: string, checkout: string): (intent: LandingIntent) => boolean {
  const dir = path.resolve(checkout);
  return (i) => i.task === task || path.resolve(i.kind === 'rebase' ? i.worktree : i.checkout) === dir;
}

// A restack's rebase ended (DESIGN §17): the task's base is now the base of the merged task it was
// stacked on, told as a task.status event with `restack`. False when that was recorded already.
export function recordRestack(tasks: Pick<TasksTable, 'restacked'>, task: string, of: RestackOf, onto: string, head: string): Promise<boolean> {
  return tasks.restacked(task, of.branch, of.onto, onto, { restack: { status: 'restacked', ...of, head } });
}
