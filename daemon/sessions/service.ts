import { randomUUID } from 'node:crypto';
import { isBusy, isLive, type Session, type TranscriptView } from '../../schemas/session.ts';
import { outputReader } from '../agents/dialects.ts';
import { GroveError } from '../errors.ts';
import { once } from '../runtime/once.ts';
import { createSignal, type Listen } from '../runtime/signal.ts';
import { publicSession, type NewSession, type SessionRecord } from '../store/sessions.ts';
import { retryWhenUnreachable } from '../store/store.ts';
import { createConversations } from './conversation.ts';
import type { SessionServiceDeps } from './deps.ts';
import { createInteractive } from './interactive.ts';
import { createKill } from './kill.ts';
import { createLive, type SessionSignals } from './live.ts';
import { createReattach } from './reattach.ts';
import { transcriptLines, transcriptSource } from './transcript.ts';
import { findSession } from './record.ts';
import { createStart, type Ask } from './start.ts';
import { sessionFiles, sessionSocket } from './wrapper.ts';

// Agent sessions for the routes and the daemon: reads here, each verb in its own module.
export function createSessionService(deps: SessionServiceDeps) {
  const { sessions, agents, log } = deps;

  // The follow-up that picks a conversation up where a usage limit stopped it, at the reset time.
  function limitFollowUp(rec: SessionRecord, resetsAt: string): NewSession | null {
    if (!deps.autoResume.enabled) return null;
    const { task_id, agent, mode, args, timeout_s, conversation_id } = rec;
    return { id: randomUUID(), task_id, agent, command: [], mode, prompt: deps.autoResume.prompt, args, timeout_s, conversation_id, parent_id: rec.id, not_before: resetsAt, sandbox_setting: rec.sandbox_setting };
  }

  const signals: SessionSignals = { output: createSignal(), ended: createSignal(), deadline: createSignal() };
  const live = createLive({
    sessions,
    signals,
    dataDir: deps.dataDir,
    log,
    readerOf: (agent) => (agents.has(agent) ? outputReader(agents.get(agent)) : null),
    transcriptOf: (agent, file) => (agents.has(agent) ? transcriptSource(file, agents.get(agent)) : null),
    followUp: limitFollowUp,
    checkpoint: (rec) => deps.checkpoint(rec.task_id, rec.id),
  });
  const starter = createStart({ ...deps, live, signals });
  const conversations = createConversations({ sessions, live, starter, log, dataDir: deps.dataDir });
  const interactive = createInteractive({ sessions, agents, starter, live, turn: conversations.turn, log });
  const { kill, killAllOfTask } = createKill({ sessions, live, interactive, dataDir: deps.dataDir });

  // The services of the task's `.grove.json`, each with its latest session (or null).
  async function listServices(taskId: string) {
    const task = await deps.getTask(taskId);
    const project = await deps.getProject(task.project_id);
    const services = deps.configs.load(project.path).services ?? {};
    const all = (await sessions.listOfTask(taskId)) ?? [];
    return Object.entries(services).map(([name, svc]) => {
      const latest = all.findLast((s) => s.kind === 'service' && s.agent === name);
      return { name, command: svc.command, autostart: svc.autostart === true, session: latest ? publicSession(latest) : null };
    });
  }

  // A session that ended lets its conversation go on; one past its deadline is killed.
  let closed = false;
  // A session ended: its conversation's next session may start.
  const afterEnd = (id: string): void =>
    void starter.closeSocket(id).then(() => sessions.get(id)).then(
      (rec) => rec && conversations.next(rec.conversation_id),
      (err: unknown) => {
        log.error({ err, session: id }, 'reading an ended session failed');
        retryWhenUnreachable(err, () => void (closed || afterEnd(id)));
      },
    );
  const stops = [
    signals.ended.onAnyChange(afterEnd),
    signals.deadline.onAnyChange((id) => {
      log.info({ session: id }, 'session ran past its timeout_s; killing it');
      kill(id, { timedOut: true }).catch((err: unknown) => {
        log.warn({ err, session: id }, 'killing a timed-out session failed');
        retryWhenUnreachable(err, () => void (closed || signals.deadline.changed(id)));
      });
    }),
  ];

  return {
    // What output streams wait on: a session's lines stored (or it runs), and its end stored.
    output: signals.output as Listen<string>,
    ended: signals.ended as Listen<string>,

    // One store round trip: under load every query waits its turn behind the output being stored.
    async list(taskId: string, conversationId?: string): Promise<Session[]> {
      const list = await sessions.listOfTask(taskId, conversationId);
      if (list === null) throw new GroveError('NOT_FOUND', `no task with id ${taskId}`);
      return list.map(publicSession);
    },

    // What a board of every task shows, without one request per task.
    async listAll(projectId?: string): Promise<Session[]> {
      return (await sessions.listAll(projectId)).map(publicSession);
    },

    // The task's agent session with a process (queued ones have not begun), if any.
    async runningAgent(taskId: string): Promise<string | null> {
      const list = (await sessions.listOfTask(taskId)) ?? [];
      return list.find((s) => s.kind !== 'service' && isLive(s.status))?.id ?? null;
    },

    async get(id: string): Promise<Session> {
      return publicSession(await findSession(sessions, id));
    },

    // Not ended yet: running, or waiting to (an output stream follows it on).
    isBusy: (s: Session) => isBusy(s.status),

    async lines(id: string, after: number, limit: number) {
      await findSession(sessions, id);
      const lines = await sessions.lines(id, after, limit);
      return { lines, next: lines.length > 0 ? lines[lines.length - 1]!.seq : after };
    },
    async lastLines(id: string, n: number) {
      await findSession(sessions, id);
      const lines = await sessions.lastLines(id, n);
      return { lines, next: lines.at(-1)?.seq ?? 0 };
    },

    // A terminal session's conversation, read from its agent's transcript (DESIGN §21); a headless
    // session's is its output.
    async transcript(id: string): Promise<TranscriptView> {
      const rec = await findSession(sessions, id);
      if (rec.interface !== 'terminal') throw new GroveError('NOT_A_TERMINAL', `session ${id} is headless: its conversation is its output (/api/sessions/${id}/output)`);
      const read = rec.agent !== null && agents.has(rec.agent) ? await transcriptLines(sessionFiles(deps.dataDir, id).transcript, agents.get(rec.agent)) : null;
      if (read === null) return { kind: null, lines: [], truncated: false };
      const at = rec.created_at;
      const lines = read.lines.map((text, i) => ({ seq: i + 1, stream: 'stdout' as const, text, at: timestampOf(text) ?? at }));
      return { kind: read.kind, lines, truncated: read.truncated };
    },

    create: starter.start,
    planFirst: starter.planFirst,

    // The first session of a task made with it (DESIGN §17): recorded `queued` at once, with the
    // tasks it waits for; the dependencies start it (startWaiting) or end it (failWaiting).
    async queueFirst(taskId: string, ask: Ask, after: string[]): Promise<Session> {
      const { resume: _, ...fields } = ask;
      const rec = await sessions.insert({ id: ask.conversation_id, task_id: taskId, command: [], ...fields, after }, 'queued');
      log.info({ session: rec.id, task: taskId, after }, 'session queued until its tasks merge');
      return publicSession(rec);
    },
    waitingForTasks: (hostId: string) => sessions.waitingForTasks(hostId),
    async startWaiting(rec: SessionRecord): Promise<void> {
      const { agent, mode, prompt, args, timeout_s, approval_timeout_s, conversation_id, parent_id, sandbox_setting } = rec;
      try {
        const at = await starter.place(rec.task_id);
        await starter.launch(rec.id, at, { agent, mode, prompt, args, timeout_s, approval_timeout_s, conversation_id, parent_id, sandbox_setting, resume: null, interface: rec.interface }, { queued: true });
      } catch (err) {
        if (!(err instanceof GroveError)) throw err;
        if (await starter.archiving(rec.task_id)) return conversations.fail(rec, `cancelled: ${err.detail}`, 'killed');
        return conversations.fail(rec, err.detail);
      }
    },
    failWaiting: (rec: SessionRecord, reason: string) => conversations.fail(rec, reason),
    send: conversations.send,
    takeover: interactive.takeover,
    endInteractive: interactive.end,
    startService: starter.startService,
    startShell: starter.startShell,

    services: listServices,

    // After a setup that succeeded: the services marked `autostart`; one that cannot start is logged.
    async autostart(taskId: string): Promise<void> {
      for (const svc of await listServices(taskId)) {
        if (!svc.autostart) continue;
        await starter.startService(taskId, svc.name).then(
          (s) => log.info({ task: taskId, service: svc.name, session: s.id }, 'service started (autostart)'),
          (err: unknown) => log.warn({ err, task: taskId, service: svc.name }, 'autostart of a service failed'),
        );
      }
    },
    kill: (id: string) => kill(id),
    killAllOfTask,
    // After a restart: this host's sessions still running are followed again, then its queued
    // follow-ups get their turn. Another host's stay as they are, whether it is online or not.
    async reattach(hostId: string): Promise<void> {
      await createReattach({ sessions, live, log, reopen: (id) => deps.sockets.open(id, sessionSocket(deps.dataDir, id).path) })(hostId);
      await interactive.reattach(hostId);
      await conversations.resumeAll(hostId);
    },
    close: once(async () => {
      closed = true;
      for (const stop of stops) stop();
      await conversations.close();
      await interactive.close();
      await live.close();
    }),
  };
}

// What the routes and the daemon hold.
export type SessionService = ReturnType<typeof createSessionService>;

// The time a transcript line says it was written (both agents write `timestamp`), if it does.
function timestampOf(line: string): string | null {
  try {
    const t = new Date((JSON.parse(line) as { timestamp?: unknown }).timestamp as string);
    return Number.isNaN(t.getTime()) ? null : t.toISOString();
  } catch {
    return null;
  }
}
