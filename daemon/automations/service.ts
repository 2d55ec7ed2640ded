// Automations as the routes use them (DESIGN §19): made, read, changed, removed and run now;
// wires the scheduler and the runner together.
import { randomUUID } from 'node:crypto';
import type { Automation, AutomationRun, CreateAutomation, DeclaredAutomation, PatchAutomation } from '../../schemas/automation.ts';
import type { Project } from '../../schemas/project.ts';
import type { ProjectConfig } from '../../schemas/project-config.ts';
import type { CreateSession } from '../../schemas/session.ts';
import { GroveError } from '../errors.ts';
import { normaliseOrigin } from '../git/origin.ts';
import { onProjectConfig } from '../projects/on-config.ts';
import type { Logger } from '../runtime/log.ts';
import { createCoalescer } from '../runtime/coalesce.ts';
import { once } from '../runtime/once.ts';
import type { Listen } from '../runtime/signal.ts';
import { publicRun, type AutomationRunsTable } from '../store/automation-runs.ts';
import { publicAutomation, type AutomationSpec, type AutomationsTable, type StoredAutomation } from '../store/automations.ts';
import { createRunner, type RunnerDeps } from './runner.ts';
import { createScheduler, type Clock } from './scheduler.ts';
import { checkSchedule, nextTime, type StoredSchedule } from './schedule.ts';

// Missed times within 12 hours run once, folded (DESIGN §19).
const DEFAULT_MISSED = { policy: 'latest', grace_s: 12 * 3600 } as const;

export interface AutomationDeps extends Omit<RunnerDeps, 'runs' | 'automations'> {
  automations: AutomationsTable;
  runs: AutomationRunsTable;
  /** checks a session as a task's first would be (agent, mode): throws UNKNOWN_AGENT, MODE_UNSUPPORTED, … */
  checkSession: (projectPath: string, session: CreateSession) => void;
  /** the projects' .grove.json, whose `automations` are applied when it changes */
  configs: { load: (projectPath: string) => ProjectConfig; changes: Listen<string> };
  localProjects: () => Promise<Project[]>;
  clock?: Clock;
}

// Who made an automation: the API, or the project's .grove.json with its entry there.
type Origin = { source: 'api' } | { source: 'file'; declared: DeclaredAutomation };

export function createAutomations(deps: AutomationDeps) {
  const { automations, runs, log } = deps;
  const runner = createRunner({ ...deps, automations, runs });
  const scheduler = createScheduler({ automations, runs, started: runner.wake, hostId: deps.hostId, ...(deps.clock ? { clock: deps.clock } : {}), log });

  const notFound = (id: string) => new GroveError('NOT_FOUND', `no automation ${id}`);

  async function withLastRun(list: StoredAutomation[]): Promise<Automation[]> {
    const latest = await runs.latest(list.map((a) => a.id));
    return list.map((a) => publicAutomation(a, latest.has(a.id) ? publicRun(latest.get(a.id)!) : null));
  }

  // Everything but the schedule, checked against the project; refused before anything is stored.
  function checkSpec(project: Project, spec: AutomationSpec): void {
    deps.checkSession(project.path, spec.session);
  }

  // This host's project of a repository (given as an origin URL or as projects carry it).
  async function localOf(repository: string): Promise<Project> {
    const names = new Set([repository, normaliseOrigin(repository, '/')]);
    const here = (await deps.localProjects()).find((p) => p.repository !== null && names.has(p.repository));
    if (!here) throw new GroveError('NOT_FOUND', `this host has no project of repository ${JSON.stringify(repository)}: make the automation on a host that has one`);
    return here;
  }
  // The project an automation is checked against and run now in: its own, or this host's of its repository.
  const projectFor = (a: StoredAutomation) => (a.project_id !== null ? deps.getProject(a.project_id) : localOf(a.repository!));

  const nextOf = (schedule: StoredSchedule, enabled: boolean, now: Date) => (enabled ? nextTime(schedule, now) : null);

  // A definition's fields other than its schedule, with the defaults of those it leaves out.
  const filled = (def: Omit<DeclaredAutomation, 'enabled'>): Omit<AutomationSpec, 'schedule'> => ({
    session: def.session,
    task: def.task ?? {},
    precheck: def.precheck ?? null,
    land: def.land ?? 'none',
    missed: def.missed ?? DEFAULT_MISSED,
    overlap: def.overlap ?? 'skip',
  });

  // The stored form of a definition, checked: refused before anything is stored.
  function specOf(project: Project, def: Omit<DeclaredAutomation, 'enabled'>, now: Date): AutomationSpec {
    const spec: AutomationSpec = { schedule: checkSchedule(def.schedule, now), ...filled(def) };
    checkSpec(project, spec);
    return spec;
  }

  // Made in `project`, or, with `repository`, for every project of it (checked against `project`,
  // this host's).
  async function make(project: Project, name: string, def: DeclaredAutomation, origin: Origin, repository: string | null = null): Promise<StoredAutomation> {
    const now = new Date();
    const spec = specOf(project, def, now);
    const enabled = def.enabled ?? true;
    const declared = origin.source === 'file' ? origin.declared : null;
    const stored = await automations.insert({ id: randomUUID(), project_id: repository === null ? project.id : null, repository, name, enabled, source: origin.source, declared, cursor: now.toISOString(), next_run_at: nextOf(spec.schedule as StoredSchedule, enabled, now)?.toISOString() ?? null, ...spec });
    if (stored === null) throw new GroveError('AUTOMATION_EXISTS', `${repository === null ? `project ${project.name}` : `repository ${repository}`} has an automation named ${JSON.stringify(name)} already`);
    log.info({ automation: stored.id, project: project.id, repository, source: origin.source, next_run_at: stored.next_run_at }, 'automation created');
    scheduler.poke();
    return stored;
  }

  // A new schedule or a resume counts from now: times that passed meanwhile are not missed.
  async function change(before: StoredAutomation, patch: PatchAutomation, origin: Origin | null): Promise<StoredAutomation> {
    const project = await projectFor(before);
    const now = new Date();
    const schedule = patch.schedule !== undefined ? checkSchedule(patch.schedule, now) : (before.schedule as StoredSchedule);
    const spec: AutomationSpec = {
      schedule,
      session: patch.session ?? before.session,
      task: patch.task ?? before.task,
      precheck: patch.precheck !== undefined ? patch.precheck : before.precheck,
      land: patch.land ?? before.land,
      missed: patch.missed ?? before.missed,
      overlap: patch.overlap ?? before.overlap,
    };
    checkSpec(project, spec);
    const enabled = patch.enabled ?? before.enabled;
    const restart = patch.schedule !== undefined || (enabled && !before.enabled);
    const stored = await automations.update(before.id, (a) => ({
      ...a,
      ...spec,
      name: patch.name ?? a.name,
      enabled,
      ...(origin !== null ? { source: origin.source, declared: origin.source === 'file' ? origin.declared : null } : {}),
      cursor: restart ? now.toISOString() : a.cursor,
      next_run_at: !enabled ? null : restart ? (nextOf(schedule, true, now)?.toISOString() ?? null) : a.next_run_at,
    }));
    if (stored === null) throw notFound(before.id);
    if (stored === 'exists') throw new GroveError('AUTOMATION_EXISTS', `project ${project.name} has an automation named ${JSON.stringify(patch.name)} already`);
    // Paused: the runs still waiting for their turn will not have it.
    if (!enabled) for (const r of await runs.active(before.id)) if (r.status === 'pending') await runs.change(r.id, ['pending'], { status: 'skipped', reason: 'disabled', ended_at: now });
    scheduler.poke();
    return stored;
  }

  // A project's .grove.json `automations` applied (DESIGN §19): an entry new to it is made, a
  // changed one replaces what it declared (fields it leaves out go back to their defaults; its
  // `enabled` only when it says), one gone is removed. An entry that cannot be applied is logged
  // and left as it was; an invalid file changes nothing.
  async function applyFile(projectId: string): Promise<void> {
    const project = await deps.getProject(projectId).catch(() => null);
    if (project === null || project.host_id !== deps.hostId) return;
    let config: ProjectConfig;
    try {
      config = deps.configs.load(project.path);
    } catch (err) {
      if (!(err instanceof GroveError)) throw err;
      log.warn({ project: project.id, err: err.detail }, "the project's .grove.json is invalid: its automations are left as they were");
      return;
    }
    const declared = config.automations ?? {};
    const existing = (await automations.list(project.id)).filter((a) => a.project_id === project.id);
    for (const [name, def] of Object.entries(declared)) {
      const row = existing.find((a) => a.name === name);
      try {
        if (!row) await make(project, name, def, { source: 'file', declared: def });
        else if (row.source !== 'file' || JSON.stringify(row.declared) !== JSON.stringify(def)) {
          const prev = (row.declared ?? null) as DeclaredAutomation | null;
          const sameSchedule = prev !== null && JSON.stringify(prev.schedule) === JSON.stringify(def.schedule);
          await change(
            row,
            {
              ...(sameSchedule ? {} : { schedule: def.schedule }),
              ...filled(def),
              ...(def.enabled !== undefined ? { enabled: def.enabled } : {}),
            },
            { source: 'file', declared: def },
          );
          log.info({ automation: row.id, project: project.id }, 'automation changed by .grove.json');
        }
      } catch (err) {
        if (!(err instanceof GroveError)) throw err;
        log.warn({ project: project.id, name, code: err.code, err: err.detail }, 'an automation in .grove.json cannot be applied: left as it was');
      }
    }
    for (const a of existing) {
      if (a.source === 'file' && !Object.hasOwn(declared, a.name)) {
        await automations.remove(a.id);
        log.info({ automation: a.id, project: project.id }, 'automation removed from .grove.json');
      }
    }
  }
  const fileSync = createCoalescer<string>(async (projectId) => {
    try {
      await applyFile(projectId);
    } catch (err) {
      log.error({ err, project: projectId }, "applying a project's .grove.json automations failed");
    }
  });
  let stopWatching: () => void = () => {};

  return {
    async create(body: CreateAutomation): Promise<Automation> {
      const { project_id, repository, name, ...def } = body;
      if ((project_id === undefined) === (repository === undefined)) {
        const path = project_id === undefined ? '/project_id' : '/repository';
        throw new GroveError('VALIDATION_FAILED', 'give one of project_id and repository', { errors: [{ path, message: project_id === undefined ? 'or repository is required' : 'must not be given with project_id' }] });
      }
      if (project_id !== undefined) return publicAutomation(await make(await deps.getProject(project_id), name, def, { source: 'api' }), null);
      const here = await localOf(repository!);
      return publicAutomation(await make(here, name, def, { source: 'api' }, here.repository), null);
    },
    // A project added: its .grove.json automations are made.
    applyFile: (projectId: string) => fileSync.run(projectId),
    async list(projectId?: string): Promise<Automation[]> {
      return withLastRun(await automations.list(projectId));
    },
    async get(id: string): Promise<Automation> {
      const a = await automations.get(id);
      if (!a) throw notFound(id);
      return (await withLastRun([a]))[0]!;
    },
    async update(id: string, patch: PatchAutomation): Promise<Automation> {
      const before = await automations.get(id);
      if (!before) throw notFound(id);
      return (await withLastRun([await change(before, patch, null)]))[0]!;
    },
    async remove(id: string): Promise<void> {
      if (!(await automations.remove(id))) throw notFound(id);
    },
    // A run now, paused or not (overlap as the automation says); a repository's runs in this
    // host's project of it.
    async runNow(id: string): Promise<AutomationRun> {
      const a = await automations.get(id);
      if (!a) throw notFound(id);
      const run = await runs.runNow(id, (await projectFor(a)).id, randomUUID(), new Date());
      if (run === null) throw notFound(id);
      if (run.status === 'pending') runner.wake(id);
      return publicRun(run);
    },
    async runs(id: string): Promise<AutomationRun[]> {
      if (!(await automations.get(id))) throw notFound(id);
      return (await runs.list(id)).map(publicRun);
    },
    // At start, after sessions re-attached: runs a stop left go on, the projects' files are
    // applied, then the clock starts.
    async start(): Promise<void> {
      await runner.recover();
      stopWatching = onProjectConfig(deps.configs.changes, deps.localProjects, (id) => void fileSync.run(id));
      for (const p of await deps.localProjects()) await fileSync.run(p.id);
      scheduler.start();
    },
    close: once(async () => {
      stopWatching();
      await fileSync.close();
      await scheduler.close();
      await runner.close();
    }),
  };
}

export type Automations = ReturnType<typeof createAutomations>;
