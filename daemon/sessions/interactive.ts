import { randomUUID } from 'node:crypto';
import { isBusy, isLive, type EndBody, type Session, type Takeover, type TakeoverBody } from '../../schemas/session.ts';
import { buildCommand, type Agents } from '../agents/agents.ts';
import { GroveError } from '../errors.ts';
import { processStartTime } from '../proc/stat.ts';
import { GRACE_MS, terminateProcess } from '../proc/terminate.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import { publicSession, type SessionRecord, type SessionsTable } from '../store/sessions.ts';
import { retryWhenUnreachable } from '../store/store.ts';
import { taskEnv } from '../tasks/env.ts';
import { resumeId } from './conversation.ts';
import type { Live } from './live.ts';
import { findSession, stillRuns } from './record.ts';
import type { Starter } from './start.ts';

// The client is not our child: nothing tells us when it dies, so look every second.
const LIVENESS_MS = 1000;

// Take-over (DESIGN §15): the conversation's agent resumed in the person's own terminal by
// `grove takeover`. grove runs nothing itself: it records a session of kind `interactive` whose
// process is the client's, hands the client the command, the worktree and the task's variables,
// and ends the session when the client reports the exit code, or as `lost` once the client's
// process is gone without reporting (a closed terminal, a kill). No output is captured.
export function createInteractive(deps: {
  sessions: SessionsTable;
  agents: Agents;
  starter: Starter;
  live: Pick<Live, 'ended'>;
  /** runs `fn` in the conversation's turn, where follow-ups decide too */
  turn: <T>(conversationId: string, fn: () => Promise<T>) => Promise<T>;
  log: Logger;
}) {
  const { sessions, agents, starter, live, log } = deps;
  const watched = new Map<string, NodeJS.Timeout>();
  let closed = false;
  // Sessions a DELETE is stopping: their client's own report must not record the end first.
  const killing = new Set<string>();

  function unwatch(id: string): void {
    clearInterval(watched.get(id));
    watched.delete(id);
  }

  // Records the end once (a second end changes nothing) and wakes the conversation and streams.
  async function finish(id: string, status: Session['status'], exitCode: number | null): Promise<void> {
    unwatch(id);
    if (await sessions.end(id, status, exitCode)) {
      log.info({ session: id, status, exit_code: exitCode }, 'interactive session ended');
      live.ended(id);
    }
  }

  function watch(rec: SessionRecord): void {
    if (watched.has(rec.id)) return;
    const timer = setInterval(() => {
      if (stillRuns(rec) || killing.has(rec.id)) return;
      log.warn({ session: rec.id, pid: rec.pid }, 'the client of an interactive session is gone without reporting its end');
      finish(rec.id, 'lost', null).catch((err: unknown) => {
        log.error({ err, session: rec.id }, 'recording the end of an interactive session failed');
        // Watched again: the next look records the end once the store is back.
        retryWhenUnreachable(err, () => void (closed || watch(rec)));
      });
    }, LIVENESS_MS);
    timer.unref();
    watched.set(rec.id, timer);
  }

  // POST /api/sessions/:id/takeover: a new interactive session in the conversation of `id`,
  // running as long as the client's process `pid` does.
  async function takeover(id: string, body: TakeoverBody): Promise<Takeover> {
    const parent = await findSession(sessions, id);
    if (parent.kind === 'service') throw new GroveError('TAKEOVER_UNSUPPORTED', `session ${id} runs the service ${parent.agent}, which has no conversation to take over`);
    if (parent.agent === null) throw new GroveError('TAKEOVER_UNSUPPORTED', `session ${id} is a task's shell, which has no conversation to take over`);
    const agent = parent.agent;
    const def = agents.get(agent);
    if (!def.interactive) {
      throw new GroveError('TAKEOVER_UNSUPPORTED', `agent ${parent.agent} has no interactive resume ("interactive" in its definition), so its conversation cannot be taken over in a terminal`);
    }
    const at = await starter.place(parent.task_id);
    const pidStart = processStartTime(body.pid);
    if (pidStart === null) {
      throw new GroveError('VALIDATION_FAILED', `no process ${body.pid} runs: the pid is the takeover client's own`, { errors: [{ path: '/pid', message: 'is not a running process' }] });
    }
    return deps.turn(parent.conversation_id, async () => {
      const conversation = await sessions.listConversation(parent.conversation_id);
      const busy = conversation.find((s) => isBusy(s.status));
      if (busy) {
        throw new GroveError('SESSION_RUNNING', `session ${busy.id} of this conversation is ${busy.status}; take over once it has ended, or stop it first (DELETE /api/sessions/${busy.id})`);
      }
      const resume = resumeId(conversation);
      if (resume === null) {
        throw new GroveError('RESUME_UNAVAILABLE', `no session of this conversation printed its agent's session id, so ${parent.agent} cannot be told which conversation to resume`);
      }
      const command = buildCommand(def.interactive!, { before: body.args ?? [], session: resume });
      const newId = randomUUID();
      // The task's own variables only: the client sets them over its own environment (the
      // person's terminal, TERM and all), where a session's go over the daemon's.
      const env: Record<string, string> = { ...taskEnv(at.project, at.task, at.config, {}), ...(def.env ?? {}), GROVE_AGENT: agent, GROVE_SESSION_ID: newId };
      const last = conversation.at(-1)!;
      const rec = await starter.admit(parent.task_id, () =>
        sessions.insert(
          {
            id: newId,
            task_id: parent.task_id,
            kind: 'interactive',
            agent: parent.agent,
            command,
            mode: last.mode,
            prompt: null,
            conversation_id: parent.conversation_id,
            parent_id: last.id,
            pid: body.pid,
            pid_start: pidStart,
            agent_session_id: resume,
            // The person's own terminal runs it: not confined (docs/decisions/sandbox.md).
            sandbox: { confined: false, reason: "taken over in the person's terminal: not confined" },
            sandbox_setting: parent.sandbox_setting,
          },
          'running',
        ),
      );
      watch(rec);
      log.info({ session: newId, conversation: parent.conversation_id, pid: body.pid }, 'interactive session started (take-over)');
      return { session: publicSession(rec), command, cwd: env.GROVE_WORKTREE!, env };
    });
  }

  // POST /api/sessions/:id/end: the client's report of the exit code.
  async function end(id: string, body: EndBody): Promise<Session> {
    const rec = await findSession(sessions, id);
    if (rec.kind !== 'interactive') throw new GroveError('TAKEOVER_UNSUPPORTED', `session ${id} is not interactive: grove records its end itself`);
    if (!isLive(rec.status)) throw new GroveError('SESSION_NOT_RUNNING', `session ${id} has already ended (${rec.status})`);
    // A DELETE under way records `killed` itself once the client is gone.
    if (killing.has(id)) throw new GroveError('SESSION_NOT_RUNNING', `session ${id} is being stopped (DELETE); it ends killed`);
    await finish(id, body.exit_code === 0 ? 'exited' : 'failed', body.exit_code);
    return publicSession(await findSession(sessions, id));
  }

  // DELETE of an interactive session: TERM to the client (it passes it on to the agent in its
  // terminal), KILL after the grace time; then recorded as `killed`.
  async function kill(rec: SessionRecord, timedOut: boolean): Promise<void> {
    killing.add(rec.id);
    try {
      if (stillRuns(rec)) await terminateProcess({ pid: rec.pid!, start: rec.pid_start! }, { graceMs: GRACE_MS.session });
      unwatch(rec.id);
      if (await sessions.end(rec.id, 'killed', null, { timedOut })) live.ended(rec.id);
    } finally {
      killing.delete(rec.id);
    }
  }

  // After a restart: the interactive sessions still recorded as running are watched again; one
  // whose client is gone ended while the daemon was down, with no code to recover.
  async function reattach(hostId: string): Promise<void> {
    for (const rec of await sessions.listLive(hostId)) {
      if (rec.kind !== 'interactive') continue;
      if (stillRuns(rec)) watch(rec);
      else await finish(rec.id, 'lost', null);
    }
  }

  return {
    takeover,
    end,
    kill,
    reattach,
    close: once(async () => {
      closed = true;
      for (const id of [...watched.keys()]) unwatch(id);
    }),
  };
}

export type Interactive = ReturnType<typeof createInteractive>;
