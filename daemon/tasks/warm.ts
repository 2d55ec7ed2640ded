import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ProjectConfig } from '../../schemas/project-config.ts';
import type { Project } from '../../schemas/project.ts';
import type { CreateTaskInput } from '../../schemas/task.ts';
import type { ProjectPool } from '../../schemas/pool.ts';
import type { BaseWatch } from '../projects/base-watch.ts';
import type { ProjectConfigs } from '../projects/config.ts';
import { createCoalescer } from '../runtime/coalesce.ts';
import { createKeyedMutex, type KeyedMutex } from '../runtime/keyed-mutex.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import { retryWhenUnreachable } from '../store/store.ts';
import type { SlotRow, TasksTable } from '../store/tasks.ts';
import type { TaskMaker } from './create.ts';
import { timeBound, type Pool } from './threads.ts';
import type { SetupRunner } from './setup-run.ts';
import { slugify } from './slug.ts';

export interface WarmPoolDeps {
  tasks: TasksTable;
  maker: TaskMaker;
  setups: SetupRunner;
  pool: Pick<Pool, 'run'>;
  configs: ProjectConfigs;
  /** where each pooled project's default base is: its slots follow it */
  bases: Pick<BaseWatch, 'watch' | 'unwatch' | 'changes'>;
  getProject: (id: string) => Promise<Project>;
  /** the projects on this host's disk: only their slots are this daemon's to make */
  localProjects: () => Promise<Project[]>;
  /** shared with creations and archives: git worktree changes on one repository take turns (the
   * pool's at low priority: a creation waiting for the turn goes first) */
  perProject: KeyedMutex;
  gitTimeoutS: number;
  log: Logger;
}

// What a slot's making depends on, as stored with it (the files copied in, the setup with its
// environment and ports): a slot made with another is replaced. The rest of the file (agents,
// rules, checks, automations) is read when it is used, and a change to it keeps the slots.
const configKey = (c: ProjectConfig) => JSON.stringify({ copy: c.copy ?? null, setup: c.setup ?? null, env: c.env ?? null, ports: c.ports ?? null });

// The default base as it is now; undefined where it could not be read (then not held against a slot).
type Head = { base: string; base_commit: string } | null | undefined;
const atHead = (head: Head, s: { base: string; base_commit: string }) => head === undefined || (head !== null && s.base === head.base && s.base_commit === head.base_commit);

// The warm pool (DESIGN §16): per project with `pool`, `size` tasks made ahead at the default
// base, set up, under a placeholder name. A slot is a task row marked `slot`: a claim renames it
// and it becomes the task, with the id, ports and setup log its setup ran with. One loop per
// project keeps its slots in line with its config, one slot at a time.
export function createWarmPool(deps: WarmPoolDeps) {
  const { tasks, pool, log } = deps;
  // Projects being removed: their loop stops and makes nothing more.
  const removing = new Set<string>();
  const timers = new Map<string, NodeJS.Timeout>();
  // The slot each project's loop is setting up, with the config and base it is made with.
  const making = new Map<string, { id: string; key: string; base: string; base_commit: string }>();
  // Renames take turns per project: concurrent `git branch -m` in one repository share a
  // temporary reflog file, and all but one can fail (a claim then made cold for nothing).
  const renames = createKeyedMutex();
  let closed = false;
  // One loop per project at a time; a sync asked for while it runs has it go round once more.
  const loops = createCoalescer<string>((projectId) =>
    syncOnce(projectId).catch((err: unknown) => {
      log.error({ err, project: projectId }, 'keeping the warm pool failed');
      // A store that did not answer (down, or a statement past its bound): the pool is kept
      // again shortly rather than left as it was until the next claim or change.
      retryWhenUnreachable(err, () => void sync(projectId));
    }),
  );

  const folderOf = (project: Project, s: SlotRow) => path.join(project.path, s.worktree_path);

  // An invalid config refuses tasks too; its slots go with it and come back once it is fixed.
  const configOf = (project: Project): ProjectConfig => deps.configs.loadOrNone(project.path, 'the warm pool keeps no slots until it is fixed');

  // Removes a slot the caller holds (claimed, or taken): its setup, worktree, branch and row.
  async function drop(project: Project, s: SlotRow, why: string): Promise<void> {
    await deps.setups.stop(s.id);
    await deps.perProject.run(project.id, async () => {
      const res = await pool.run('removeWorktree', {
        repo: project.path,
        worktree_path: s.worktree_path,
        force: true,
        deleteBranch: s.branch,
        deleteBranchAt: s.base_commit,
        timeout: timeBound('removing a warm pool slot', 'git_timeout_s', deps.gitTimeoutS),
      });
      if (!res.ok) log.warn({ slot: s.id, project: project.id, err: res.message }, 'removing a warm pool slot failed; its row goes all the same');
      // Its port leases and setup log go with the row.
      await tasks.remove(s.id);
    }, { low: true });
    log.info({ slot: s.id, project: project.id, why }, 'warm pool slot removed');
  }

  // Why a slot can no longer be handed out, or null.
  function staleness(project: Project, config: ProjectConfig | null, s: SlotRow, head?: Head): string | null {
    if (!config?.pool) return 'the project has no pool';
    if (s.slot_config !== configKey(config)) return '.grove.json changed';
    if (s.status === 'setup_failed') return 'its setup failed';
    if (!atHead(head, s)) return 'its base moved';
    if (!existsSync(folderOf(project, s))) return 'its folder vanished';
    const ttl = config.pool.ttl_s;
    if (ttl !== undefined && Date.now() - s.created_at.getTime() >= ttl * 1000) return `older than ttl_s (${ttl} s)`;
    return null;
  }

  // Makes one slot and runs its setup (at low priority); resolves once it is ready or failed.
  async function makeSlot(project: Project, config: ProjectConfig): Promise<void> {
    const id = randomUUID();
    const needsSetup = (config.setup ?? []).length > 0;
    log.debug({ slot: id, project: project.id }, "a warm pool slot waits for the project's turn");
    const copied = await deps.perProject.run(
      project.id,
      () => deps.maker.make(id, project, config, { name: `pool-${id.slice(0, 8)}` }, needsSetup ? 'setting_up' : 'ready', configKey(config)),
      { low: true },
    );
    await deps.maker.reportCopies(id, copied);
    log.info({ slot: id, project: project.id }, 'warm pool slot made');
    const made = await tasks.getAny(id);
    if (needsSetup && made && !removing.has(project.id) && !closed) {
      making.set(project.id, { id, key: configKey(config), base: made.base, base_commit: made.base_commit });
      try {
        await deps.setups.start(project, { ...made, worktree_missing: false }, config, { slot: true });
      } finally {
        making.delete(project.id);
      }
    }
  }

  // Brings the project's slots in line with its config: stale ones removed, missing ones made.
  async function syncOnce(projectId: string): Promise<void> {
    const project = await deps.getProject(projectId).catch(() => null);
    if (!project) return;
    const config = configOf(project);
    // The base is watched while the project has a pool, from before its tip is read: a move
    // after that wakes the loop again.
    if (config?.pool) await deps.bases.watch(project.path);
    else await deps.bases.unwatch(project.path);
    const head = config?.pool ? await currentBase(project) : undefined;
    let kept = 0;
    for (const s of await tasks.slots(projectId)) {
      if (s.slot === 'claimed') continue;
      const why = staleness(project, config, s, head) ?? (kept >= (config?.pool?.size ?? 0) ? 'more slots than size' : null);
      if (why === null) kept++;
      else if (await tasks.takeSlot(s.id)) await drop(project, s, why);
    }
    const size = config?.pool?.size ?? 0;
    for (; kept < size && !closed && !removing.has(projectId) && !loops.pending(projectId); kept++) {
      await makeSlot(project, config!);
      if (loops.pending(projectId)) break;
      const slots = await tasks.slots(projectId);
      // A failed setup stops the filling (it would fail again): the slot shows why until the
      // next change of the config or of the base, claim or start.
      if (slots.some((s) => s.status === 'setup_failed')) {
        log.warn({ project: projectId }, 'a warm pool slot failed its setup; the pool is not refilled until the next change of .grove.json or of its base, claim or start');
        return;
      }
    }
    scheduleTtl(project, config);
  }

  // With `ttl_s`, the next sync is due when the oldest slot ages out.
  function scheduleTtl(project: Project, config: ProjectConfig | null): void {
    clearTimeout(timers.get(project.id));
    timers.delete(project.id);
    const ttl = config?.pool?.ttl_s;
    if (ttl === undefined || closed) return;
    void tasks.slots(project.id).then((slots) => {
      const oldest = slots[0];
      if (!oldest || closed) return;
      const due = Math.max(0, oldest.created_at.getTime() + ttl * 1000 - Date.now());
      timers.set(project.id, setTimeout(() => void sync(project.id), due).unref());
    });
  }

  async function currentBase(project: Project): Promise<Head> {
    const now = await pool.run('defaultBase', { repo: project.path });
    if (now.ok) return now.head;
    log.warn({ project: project.id, err: now.message }, "reading a project's default base failed; its slots are checked again at claim");
    return undefined;
  }

  // A setup under way for a config or a base that is no longer the project's is stopped: its
  // slot would be replaced as soon as it was ready.
  async function stopIfStale(projectId: string): Promise<void> {
    const m = making.get(projectId);
    const project = m && (await deps.getProject(projectId).catch(() => null));
    if (!m || !project) return;
    const config = configOf(project);
    if (!config?.pool || configKey(config) !== m.key || !atHead(await currentBase(project), m)) await deps.setups.stop(m.id);
  }

  // A slot a daemon stop (or a failed rename) left claimed is made whole again: a rename
  // that happened is undone (the client never had its answer, as for a creation cut short), and
  // the slot is free again; one whose placeholder branch cannot be had back is removed.
  async function resumeClaim(project: Project, s: SlotRow): Promise<void> {
    if (s.claim_branch !== null) {
      const left = await pool.run('claimLeft', { repo: project.path, from: s.branch, to: s.claim_branch });
      if (!left.ok || !left.from) {
        const to = s.claim_branch;
        const back = left.ok && left.to ? await renames.run(project.id, () => pool.run('renameBranch', { repo: project.path, from: to, to: s.branch })) : null;
        if (!back?.ok) return drop(project, s, 'a claim was interrupted by a daemon stop, and its branch could not be named back');
        log.info({ slot: s.id, project: project.id, branch: s.claim_branch }, 'undid a warm pool claim interrupted by a daemon stop');
      }
    }
    await tasks.releaseSlot(s.id);
  }

  // Runs the project's loop, or has the running one go round again (a sync asked for while the
  // project's loop runs).
  function sync(projectId: string): Promise<void> {
    if (closed || removing.has(projectId)) return Promise.resolve();
    if (loops.running(projectId)) void stopIfStale(projectId);
    return loops.run(projectId);
  }

  return {
    sync,
    // POST /api/tasks: the id of a ready slot made the task, or null (then the task is made cold).
    async claim(project: Project, config: ProjectConfig, input: CreateTaskInput): Promise<string | null> {
      for (;;) {
        const s = await tasks.claimSlot(project.id);
        if (!s) return null;
        // A slot that cannot be handed out is removed in the background: never a failed claim.
        const why = staleness(project, config, s);
        if (why !== null) {
          void drop(project, s, why).then(() => sync(project.id));
          continue;
        }
        const res = await pool.run('planClaim', {
          repo: project.path,
          from: s.branch,
          base: s.base,
          base_commit: s.base_commit,
          slug: slugify(input.name),
          ...(input.branch !== undefined ? { branch: input.branch } : {}),
          ...(input.base !== undefined ? { wantBase: input.base } : {}),
        });
        if (!res.ok) {
          if ('miss' in res && res.miss === 'moved') {
            void drop(project, s, 'its base moved').then(() => sync(project.id));
            continue;
          }
          // Another base, or a branch that cannot be had: the cold path answers it as ever.
          await tasks.releaseSlot(s.id);
          return null;
        }
        // The name and branch go in the row before the rename: a stop between the rename and
        // becomeTask is undone at the next start (resumeClaim), never a branch without its task.
        await tasks.recordClaim(s.id, input.name, res.branch);
        const renamed = await renames.run(project.id, () => pool.run('renameBranch', { repo: project.path, from: s.branch, to: res.branch }));
        if (!renamed.ok) {
          // git may fail after the ref moved (its reflog or config): put the slot right as a start would.
          await resumeClaim(project, { ...s, claim_name: input.name, claim_branch: res.branch });
          return null;
        }
        await tasks.becomeTask(s.id, input.name, res.branch, input.issue ?? null);
        log.info({ task: s.id, project: project.id, branch: res.branch }, 'warm pool slot claimed');
        void sync(project.id);
        return s.id;
      }
    },
    // GET /api/projects/:id/pool.
    async list(projectId: string): Promise<ProjectPool> {
      const project = await deps.getProject(projectId);
      const config = configOf(project);
      const now = Date.now();
      const slots = await tasks.slots(project.id);
      return {
        project_id: project.id,
        size: config?.pool?.size ?? 0,
        ttl_s: config?.pool?.ttl_s ?? null,
        slots: slots.map((s) => ({
          id: s.id,
          status: s.slot === 'claimed' ? 'claimed' : s.status,
          base: s.base,
          base_commit: s.base_commit,
          created_at: s.created_at.toISOString(),
          age_s: Math.max(0, Math.floor((now - s.created_at.getTime()) / 1000)),
        })),
      };
    },
    // At start: claims a stop cut short are undone, then every local project's pool is brought in line.
    async start(): Promise<void> {
      for (const project of await deps.localProjects()) {
        for (const s of await tasks.slots(project.id)) if (s.slot === 'claimed') await resumeClaim(project, s);
        void sync(project.id);
      }
      // A change of .grove.json, or a move of the default base (a commit, a checkout, a pull).
      const syncRoot = (root: string) =>
        void deps.localProjects().then((list) => {
          const p = list.find((x) => x.path === root);
          if (p) void sync(p.id);
        });
      deps.configs.changes.onAnyChange(syncRoot);
      deps.bases.changes.onAnyChange(syncRoot);
    },
    // Removing a project: its loop stops, then every slot goes (worktrees, branches, leases).
    async removeAll(projectId: string): Promise<void> {
      removing.add(projectId);
      try {
        const project = await deps.getProject(projectId);
        clearTimeout(timers.get(projectId));
        for (const s of await tasks.slots(projectId)) await deps.setups.stop(s.id);
        await loops.running(projectId);
        for (const s of await tasks.slots(projectId)) {
          if (s.slot === 'free' && !(await tasks.takeSlot(s.id))) continue;
          await drop(project, s, 'the project is removed');
        }
        await deps.bases.unwatch(project.path);
      } finally {
        removing.delete(projectId);
      }
    },
    // Stops the loops: running slot setups are stopped (a slot left setting up is remade at the next start).
    close: once(async () => {
      closed = true;
      const looping = loops.close();
      for (const t of timers.values()) clearTimeout(t);
      await deps.setups.close();
      await looping;
    }),
  };
}

export type WarmPool = ReturnType<typeof createWarmPool>;

