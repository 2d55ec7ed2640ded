// A run's life (DESIGN §19): pending → (precheck →) running → succeeded | failed | skipped. Runs
// of one automation go one at a time, oldest first (an overlap `queue` run waits its turn); the
// work of each automation is a coalescing loop that a claim, a session's end or a start wakes.
import { MessageChannel } from 'node:worker_threads';
import type { RunChanges, RunStatus } from '../../schemas/automation.ts';
import type { Changes } from '../../schemas/review.ts';
import type { Project } from '../../schemas/project.ts';
import type { CreatedTask, CreateTask } from '../../schemas/task.ts';
import type { QueueBody } from '../../schemas/queue.ts';
import type { Session } from '../../schemas/session.ts';
import type { SetupMessage } from '../../workers/setup.ts';
import { GroveError } from '../errors.ts';
import { stopOrphanGroup } from '../proc/orphan.ts';
import { createCoalescer } from '../runtime/coalesce.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import type { Listen } from '../runtime/signal.ts';
import type { AutomationRunsTable, RunChange, StoredRun } from '../store/automation-runs.ts';
import type { AutomationsTable, StoredAutomation } from '../store/automations.ts';
import type { Pool } from '../tasks/threads.ts';
import { dateIn, type StoredSchedule } from './schedule.ts';

// The most of a precheck's output a run keeps (and a prompt's {precheck_output} gets): its end.
const PRECHECK_KEEP = 16 * 1024;

export interface RunnerDeps {
  runs: AutomationRunsTable;
  automations: Pick<AutomationsTable, 'get'>;
  getProject: (id: string) => Promise<Project>;
  pool: Pick<Pool, 'run'>;
  setupTimeoutS: number;
  /** makes the task with its first session (POST /api/tasks with `session`) */
  create: (input: CreateTask) => Promise<{ task: CreatedTask }>;
  sessions: { get: (id: string) => Promise<Session>; ended: Listen<string> };
  changes: (taskId: string) => Promise<Changes>;
  /** commits what is uncommitted in the task's worktree (before it is queued to land) */
  commit: (taskId: string, message: string) => Promise<unknown>;
  archive: (taskId: string) => Promise<unknown>;
  queue: { add: (projectId: string, body: QueueBody) => Promise<unknown> };
  /** opens the task's pull request (DESIGN §20): commit, push, open, follow */
  openPr: (taskId: string) => Promise<{ number: number; url: string }>;
  hostId: string;
  log: Logger;
}

// {name} in a template, from `values`; an unknown name is left as written.
export function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{([a-z_]+)\}/g, (all, name: string) => values[name] ?? all);
}

const tail = (text: string) => (text.length > PRECHECK_KEEP ? text.slice(text.length - PRECHECK_KEEP) : text);

export function createRunner(deps: RunnerDeps) {
  const { runs, log } = deps;
  // The prechecks running here, by run: cancelled when the daemon stops.
  const prechecks = new Map<string, () => void>();
  // Sessions of runs this daemon follows: their end ends the run.
  const following = new Map<string, StoredRun>();
  let closed = false;

  const loop = createCoalescer<string>(async (automationId) => {
    try {
      await step(automationId);
    } catch (err) {
      log.error({ err, automation: automationId }, 'an automation run step failed');
    }
  });
  const wake = (automationId: string) => void loop.run(automationId);

  // One round for an automation: a running run is followed to its end; else the oldest pending
  // one goes.
  // Runs of another host's project (a team's store) are its own daemon's to go on with.
  const mine = async (r: StoredRun) => r.project_id !== null && (await deps.getProject(r.project_id).catch(() => null))?.host_id === deps.hostId;

  async function step(automationId: string): Promise<void> {
    if (closed) return;
    const active = await runs.active(automationId);
    const running = active.find((r) => r.status === 'running');
    if (running) {
      if (await mine(running)) await follow(running);
      return;
    }
    const next = active[0];
    if (next && (await mine(next))) await execute(next);
  }

  const fail = (run: StoredRun, from: RunStatus[], error: string, more: RunChange = {}) =>
    runs.change(run.id, from, { status: 'failed', error, ended_at: new Date(), ...more });

  async function execute(run: StoredRun): Promise<void> {
    const a = await deps.automations.get(run.automation_id);
    if (!a) return;
    if (run.status === 'precheck') {
      // Cut short by a stop: its process goes, and the precheck runs again.
      await stopOrphanGroup(run.precheck_pid, run.precheck_pid_start);
    }
    let project: Project;
    try {
      project = await deps.getProject(run.project_id!);
    } catch (err) {
      if (!(err instanceof GroveError)) throw err;
      await fail(run, ['pending', 'precheck'], `its project cannot be read: ${err.detail}`);
      return;
    }
    let precheckOutput = '';
    if (a.precheck !== null) {
      const begun = await runs.change(run.id, ['pending', 'precheck'], { status: 'precheck', precheck: null });
      if (!begun) return;
      const checked = await precheck(run, project, a);
      if (checked === null) return; // stopped with the daemon: the next start runs it again
      precheckOutput = checked.output;
      if (checked.exit_code !== 0) {
        await runs.change(run.id, ['precheck'], { status: 'skipped', reason: 'precheck', precheck: checked, ended_at: new Date() });
        log.info({ automation: a.id, run: run.id, exit_code: checked.exit_code }, 'automation run skipped: its precheck did not pass');
        return;
      }
      await runs.change(run.id, ['precheck'], { precheck: checked });
    }
    // Running before the task is made: a stop in between ends the run failed at the next start,
    // never a second task.
    const started = await runs.change(run.id, ['pending', 'precheck'], { status: 'running', started_at: new Date() });
    if (!started) return;
    const schedule = a.schedule as StoredSchedule;
    const values = { date: dateIn(schedule, new Date(run.scheduled_for)), run_id: run.id, precheck_output: precheckOutput };
    try {
      const { task } = await deps.create({
        project_id: project.id,
        name: fill(a.task.name ?? `${a.name} {date}`, values).slice(0, 200),
        ...(a.task.base !== undefined ? { base: a.task.base } : {}),
        wait: false,
        session: { ...a.session, prompt: fill(a.session.prompt, values) },
      });
      const withSession = await runs.change(run.id, ['running'], { task_id: task.id, session_id: task.session!.id });
      log.info({ automation: a.id, run: run.id, task: task.id, session: task.session!.id }, 'automation run started');
      if (withSession) await follow(withSession);
    } catch (err) {
      if (!(err instanceof GroveError)) throw err;
      await fail(run, ['running'], err.detail);
    }
  }

  // Runs the precheck in the project's checkout, bounded by setup_timeout_s: its exit code and
  // output's end, or null when it was cancelled (the daemon stopping).
  async function precheck(run: StoredRun, project: Project, a: StoredAutomation): Promise<{ exit_code: number | null; output: string } | null> {
    const { port1, port2 } = new MessageChannel();
    let output = '';
    let exitCode: number | null = null;
    let recorded: Promise<unknown> = Promise.resolve();
    let sawDone: () => void = () => {};
    const lastMessage = new Promise<void>((resolve) => (sawDone = resolve));
    port1.on('message', (m: SetupMessage) => {
      if (m.type === 'done') return sawDone();
      if (m.type === 'spawned') recorded = runs.change(run.id, ['precheck'], { precheck_pid: m.pid, precheck_pid_start: m.pid_start });
      if (m.type === 'lines') output = tail(output + m.lines.map((l) => `${l.text}\n`).join(''));
      if (m.type === 'end') exitCode = m.timed_out ? null : m.exit_code;
    });
    prechecks.set(run.id, () => port1.postMessage({ type: 'cancel' }));
    try {
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
      Object.assign(env, { GROVE_PROJECT_ID: project.id, GROVE_PROJECT_PATH: project.path, GROVE_AUTOMATION_ID: a.id, GROVE_RUN_ID: run.id });
      const res = await deps.pool.run('runSetup', { cwd: project.path, commands: [a.precheck!], env, timeoutMs: deps.setupTimeoutS * 1000, port: port2 });
      await lastMessage;
      await recorded;
      if (!res.ok || res.cancelled) return null;
      return { exit_code: exitCode, output };
    } finally {
      prechecks.delete(run.id);
      port1.close();
    }
  }

  // Waits for the run's session to end (now, if it has), then ends the run.
  async function follow(run: StoredRun): Promise<void> {
    if (run.session_id === null) {
      await fail(run, ['running'], 'the daemon stopped while the run was starting its task; nothing was started twice: look for the task in its project');
      return;
    }
    if (following.has(run.session_id)) return;
    following.set(run.session_id, run);
    const s = await deps.sessions.get(run.session_id).catch(() => null);
    if (s === null || !isBusy(s)) await finish(run.session_id);
  }

  const isBusy = (s: Session) => s.status === 'queued' || s.status === 'starting' || s.status === 'running';

  async function finish(sessionId: string): Promise<void> {
    const run = following.get(sessionId);
    if (!run) return;
    following.delete(sessionId);
    const s = await deps.sessions.get(sessionId).catch(() => null);
    if (s !== null && isBusy(s)) {
      following.set(sessionId, run);
      return;
    }
    const a = await deps.automations.get(run.automation_id);
    const ok = s !== null && s.status === 'exited' && s.exit_code === 0;
    let changes: RunChanges | null = null;
    let uncommitted = 0;
    if (run.task_id !== null) {
      try {
        const c = await deps.changes(run.task_id);
        uncommitted = c.uncommitted;
        changes = {
          files: c.files.length,
          additions: c.files.reduce((n, f) => n + f.additions, 0),
          deletions: c.files.reduce((n, f) => n + f.deletions, 0),
          commits: c.ahead,
        };
      } catch (err) {
        if (!(err instanceof GroveError)) throw err;
        log.warn({ run: run.id, task: run.task_id, err: err.detail }, "an automation run's changes could not be read");
      }
    }
    const how: Record<string, string> = { exited: 'exited', failed: 'failed', killed: 'was killed', lost: 'was lost' };
    const error = ok ? null : s === null ? 'its session is gone' : `its session ${how[s.status] ?? s.status}${s.exit_code !== null ? ` with exit code ${s.exit_code}` : ''}`;
    const ended = await runs.change(run.id, ['running'], {
      status: ok ? 'succeeded' : 'failed',
      ...(error !== null ? { error } : {}),
      result: s?.result ?? null,
      changes,
      ended_at: new Date(),
    });
    log.info({ automation: run.automation_id, run: run.id, ok, changes }, 'automation run ended');
    if (ended && run.task_id !== null) {
      // Only runs that left work stay on the board.
      if (changes !== null && changes.files === 0 && changes.commits === 0) {
        await deps.archive(run.task_id).catch((err: unknown) => log.warn({ err, task: run.task_id }, 'archiving the task of a run that changed nothing failed'));
      } else if (ok && changes !== null && a?.land === 'queue') {
        await landByQueue(run, a, uncommitted, s?.result?.text ?? null).catch((err: unknown) => log.warn({ err, task: run.task_id }, "queueing an automation run's task failed"));
      } else if (ok && changes !== null && a?.land === 'pr') {
        // The opening commits what is uncommitted (the agent's last words as its message) and pushes.
        await deps.openPr(run.task_id).then(
          (pr) => log.info({ automation: a.id, run: run.id, task: run.task_id, pr: pr.url }, "an automation run's pull request opened"),
          (err: unknown) => log.warn({ err: err instanceof GroveError ? err.detail : err, task: run.task_id }, "opening an automation run's pull request failed; the task is left for review"),
        );
      }
    }
    wake(run.automation_id);
  }

  // land "queue": what the agent left uncommitted is committed (the queue lands commits), with the
  // automation's name and the agent's last words, then the task is queued with `fix`.
  async function landByQueue(run: StoredRun, a: StoredAutomation, uncommitted: number, said: string | null): Promise<void> {
    if (uncommitted > 0) {
      const subject = `${a.name}: automation run of ${run.scheduled_for.slice(0, 10)}`;
      await deps.commit(run.task_id!, said ? `${subject}\n\n${said.trim()}` : subject);
    }
    await deps.queue.add(run.project_id!, { task_id: run.task_id!, fix: true });
    log.info({ automation: a.id, run: run.id, task: run.task_id }, "an automation run's task queued to land");
  }

  const stopEnded = deps.sessions.ended.onAnyChange((sessionId) => {
    if (following.has(sessionId)) void finish(sessionId).catch((err: unknown) => log.error({ err, session: sessionId }, 'ending an automation run failed'));
  });

  return {
    wake,
    // At start: this host's runs a stop left go on (prechecks again, sessions followed).
    async recover(): Promise<void> {
      for (const id of await runs.automationsWithActive(deps.hostId)) wake(id);
    },
    close: once(async () => {
      closed = true;
      stopEnded();
      for (const cancel of prechecks.values()) cancel();
      await loop.close();
    }),
  };
}

export type Runner = ReturnType<typeof createRunner>;
