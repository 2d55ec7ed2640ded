// Automations as the routes use them (DESIGN §19): made, read, changed, removed and run now;
// wires the scheduler and the runner together.
import { randomUUID } from 'node:crypto';
import type { Automation, AutomationRun, CreateAutomation, PatchAutomation } from '../../schemas/automation.ts';
import type { Project } from '../../schemas/project.ts';
import type { CreateSession } from '../../schemas/session.ts';
import { GroveError } from '../errors.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
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
  clock?: Clock;
}

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
    if (spec.land === 'pr') throw new GroveError('LAND_UNSUPPORTED', 'land "pr" needs pull requests (DESIGN §20), which this grove does not open yet: use "none" or "queue"');
    deps.checkSession(project.path, spec.session);
  }

  const nextOf = (schedule: StoredSchedule, enabled: boolean, now: Date) => (enabled ? nextTime(schedule, now) : null);

  return {
    async create(body: CreateAutomation): Promise<Automation> {
      const project = await deps.getProject(body.project_id);
      const now = new Date();
      const schedule = checkSchedule(body.schedule, now);
      const spec: AutomationSpec = {
        schedule,
        session: body.session,
        task: body.task ?? {},
        precheck: body.precheck ?? null,
        land: body.land ?? 'none',
        missed: body.missed ?? DEFAULT_MISSED,
        overlap: body.overlap ?? 'skip',
      };
      checkSpec(project, spec);
      const enabled = body.enabled ?? true;
      const stored = await automations.insert({ id: randomUUID(), project_id: project.id, name: body.name, enabled, cursor: now.toISOString(), next_run_at: nextOf(schedule, enabled, now)?.toISOString() ?? null, ...spec });
      if (stored === null) throw new GroveError('AUTOMATION_EXISTS', `project ${project.name} has an automation named ${JSON.stringify(body.name)} already`);
      log.info({ automation: stored.id, project: project.id, next_run_at: stored.next_run_at }, 'automation created');
      scheduler.poke();
      return publicAutomation(stored, null);
    },
    async list(projectId?: string): Promise<Automation[]> {
      return withLastRun(await automations.list(projectId));
    },
    async get(id: string): Promise<Automation> {
      const a = await automations.get(id);
      if (!a) throw notFound(id);
      return (await withLastRun([a]))[0]!;
    },
    // A new schedule or a resume counts from now: times that passed meanwhile are not missed.
    async update(id: string, patch: PatchAutomation): Promise<Automation> {
      const before = await automations.get(id);
      if (!before) throw notFound(id);
      const project = await deps.getProject(before.project_id);
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
      const stored = await automations.update(id, (a) => ({
        ...a,
        ...spec,
        name: patch.name ?? a.name,
        enabled,
        cursor: restart ? now.toISOString() : a.cursor,
        next_run_at: !enabled ? null : restart ? (nextOf(schedule, true, now)?.toISOString() ?? null) : a.next_run_at,
      }));
      if (stored === null) throw notFound(id);
      if (stored === 'exists') throw new GroveError('AUTOMATION_EXISTS', `project ${project.name} has an automation named ${JSON.stringify(patch.name)} already`);
      // Paused: the runs still waiting for their turn will not have it.
      if (!enabled) for (const r of await runs.active(id)) if (r.status === 'pending') await runs.change(r.id, ['pending'], { status: 'skipped', reason: 'disabled', ended_at: now });
      scheduler.poke();
      return (await withLastRun([stored]))[0]!;
    },
    async remove(id: string): Promise<void> {
      if (!(await automations.remove(id))) throw notFound(id);
    },
    // A run now, paused or not (overlap as the automation says).
    async runNow(id: string): Promise<AutomationRun> {
      const run = await runs.runNow(id, randomUUID(), new Date());
      if (run === null) throw notFound(id);
      if (run.status === 'pending') runner.wake(id);
      return publicRun(run);
    },
    async runs(id: string): Promise<AutomationRun[]> {
      if (!(await automations.get(id))) throw notFound(id);
      return (await runs.list(id)).map(publicRun);
    },
    // At start, after sessions re-attached: runs a stop left go on, then the clock starts.
    async start(): Promise<void> {
      await runner.recover();
      scheduler.start();
    },
    close: once(async () => {
      await scheduler.close();
      await runner.close();
    }),
  };
}

export type Automations = ReturnType<typeof createAutomations>;
