import { randomUUID } from 'node:crypto';
import { isBusy, isLive, type CreateMessage, type Session } from '../../schemas/session.ts';
import { GroveError } from '../errors.ts';
import { parseInstant } from '../runtime/instant.ts';
import { createKeyedMutex } from '../runtime/keyed-mutex.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import { publicSession, type SessionRecord, type SessionsTable } from '../store/sessions.ts';
import { retryWhenUnreachable } from '../store/store.ts';
import type { Live } from './live.ts';
import { findSession } from './record.ts';
import type { Ask, Starter } from './start.ts';
import { typeInto } from './type.ts';
import { sessionFiles } from './wrapper.ts';

// setTimeout's longest delay; a later `not_before` is waited for in steps.
const MAX_DELAY_MS = 2 ** 31 - 1;

// The agent session id a follow-up continues: the newest one its conversation captured before it.
export function resumeId(conversation: SessionRecord[], before?: SessionRecord): string | null {
  const upTo = before ? conversation.slice(0, conversation.indexOf(before)) : conversation;
  return upTo.findLast((s) => s.agent_session_id !== null)?.agent_session_id ?? null;
}

// Follow-ups in a conversation (DESIGN §8): one session of a conversation runs at a time; the
// others wait `queued`, in order, each no earlier than its `not_before`, also across restarts.
export function createConversations(deps: { sessions: SessionsTable; live: Live; starter: Starter; log: Logger; dataDir: string }) {
  const { sessions, live, starter, log } = deps;
  // One decision at a time per conversation: a follow-up and the end of the session before it race.
  const turns = createKeyedMutex();
  const timers = new Map<string, NodeJS.Timeout>();
  let closed = false;

  // Ends a queued session that cannot start, with the reason as its one output line: `failed`,
  // or `killed` (cancelled, as an archive cancels the queued sessions of its task).
  async function fail(rec: SessionRecord, reason: string, status: 'failed' | 'killed' = 'failed'): Promise<void> {
    log.warn({ session: rec.id, reason }, 'queued session cannot start');
    await sessions.appendLines(rec.id, 1, { streams: ['stderr'], texts: [`grove: ${reason}`], at: new Date().toISOString() }, { stdout: 0, stderr: 0 });
    if (await sessions.endQueued(rec.id, status)) live.ended(rec.id);
  }

  // Starts the conversation's next queued session when nothing of it runs and its time has come.
  function next(conversationId: string): Promise<void> {
    return turns.run(conversationId, async () => {
      clearTimeout(timers.get(conversationId));
      timers.delete(conversationId);
      if (closed) return;
      const conversation = await sessions.listConversation(conversationId);
      if (conversation.some((s) => isLive(s.status))) return;
      const head = conversation.find((s) => s.status === 'queued');
      // A first session that waits for tasks to merge is started by the dependencies (DESIGN §17).
      if (!head || head.after !== null) return;
      const wait = head.not_before !== null ? Date.parse(head.not_before) - Date.now() : 0;
      if (wait > 0) {
        const timer = setTimeout(() => void next(conversationId), Math.min(wait, MAX_DELAY_MS));
        timer.unref();
        timers.set(conversationId, timer);
        return;
      }
      const resume = resumeId(conversation, head);
      if (resume === null) return fail(head, 'cannot continue the conversation: its agent printed no session id');
      try {
        const at = await starter.place(head.task_id);
        const { agent, mode, prompt, args, timeout_s, approval_timeout_s, parent_id, sandbox_setting } = head;
        const ask: Ask = { agent, mode, prompt, args, timeout_s, approval_timeout_s, conversation_id: conversationId, parent_id, sandbox_setting, resume, interface: head.interface };
        await starter.launch(head.id, at, ask, { queued: true });
      } catch (err) {
        if (err instanceof GroveError) {
          if (await starter.archiving(head.task_id)) return fail(head, `cancelled: ${err.detail}`, 'killed');
          return fail(head, err.detail);
        }
        throw err;
      }
    }).catch((err: unknown) => {
      log.error({ err, conversation: conversationId }, 'starting a queued session failed; it stays queued');
      retryWhenUnreachable(err, () => void (closed || next(conversationId)));
    });
  }

  // POST /api/sessions/:id/messages: a new session in the conversation of `id`, started now (201)
  // or queued behind the conversation's running or queued sessions (202). It continues with the
  // mode and time limit of the session it follows unless told otherwise. To a running terminal
  // session (DESIGN §21) it is typed into that session's terminal instead (200, that session).
  async function send(id: string, body: CreateMessage): Promise<{ status: 200 | 201 | 202; session: Session }> {
    const notBefore = body.at === undefined ? null : parseInstant(body.at);
    if (body.at !== undefined && (notBefore === null || notBefore <= Date.now())) {
      const why = notBefore === null ? 'is not an ISO 8601 time with its offset (e.g. 2026-12-01T09:00:00Z)' : `is in the past (now is ${new Date().toISOString()})`;
      throw new GroveError('SCHEDULE_INVALID', `at ${why}`, { errors: [{ path: '/at', message: why }] });
    }
    const parent = await findSession(sessions, id);
    if (parent.kind === 'service') throw new GroveError('RESUME_UNSUPPORTED', `session ${id} runs the service ${parent.agent}, which has no conversation`);
    if (parent.agent === null) throw new GroveError('RESUME_UNSUPPORTED', `session ${id} is a task's shell, which has no conversation; type into its terminal`);
    const agent = parent.agent;
    const at = await starter.place(parent.task_id);
    const mode = body.mode ?? parent.mode;
    const args = body.args ?? [];
    // Checked now, with a stand-in id: an agent that cannot resume, a mode it lacks, a CLI gone.
    starter.commandOf({ agent, mode, prompt: body.prompt, args, resume: 'x', interface: body.interface ?? parent.interface });
    return turns.run(parent.conversation_id, async () => {
      const conversation = await sessions.listConversation(parent.conversation_id);
      const last = conversation.at(-1)!;
      const iface = body.interface ?? last.interface;
      const running = conversation.find((s) => isLive(s.status));
      if (running && running.interface === 'terminal' && iface === 'terminal' && notBefore === null) {
        await typeInto(sessionFiles(deps.dataDir, running.id).pty, running.id, body.prompt);
        log.info({ session: running.id, conversation: parent.conversation_id }, 'follow-up typed into the running terminal session');
        return { status: 200 as const, session: publicSession(running) };
      }
      const ask: Ask = {
        interface: iface,
        agent,
        mode,
        prompt: body.prompt,
        args,
        timeout_s: body.timeout_s ?? parent.timeout_s,
        approval_timeout_s: body.approval_timeout_s ?? parent.approval_timeout_s,
        conversation_id: parent.conversation_id,
        parent_id: last.id,
        // A follow-up keeps the sandbox setting its conversation was asked with (DESIGN §18).
        sandbox_setting: parent.sandbox_setting,
        resume: null,
      };
      const newId = randomUUID();
      if (notBefore !== null || conversation.some((s) => isBusy(s.status))) {
        const { resume: _, ...fields } = ask;
        const not_before = notBefore === null ? null : new Date(notBefore).toISOString();
        // In the task's turn, as a start: a row queued after the archive killed would be left waiting.
        const rec = await starter.admit(parent.task_id, () => sessions.insert({ id: newId, task_id: parent.task_id, command: [], ...fields, not_before }, 'queued'));
        log.info({ session: newId, conversation: parent.conversation_id, not_before }, 'follow-up queued');
        // A scheduled one gets its timer now, if nothing of the conversation runs.
        if (notBefore !== null) void next(parent.conversation_id);
        return { status: 202 as const, session: publicSession(rec) };
      }
      const resume = resumeId(conversation);
      if (resume === null) {
        throw new GroveError('RESUME_UNAVAILABLE', `no session of this conversation printed its agent's session id, so ${parent.agent} cannot be told which conversation to continue`);
      }
      const rec = await starter.launch(newId, at, { ...ask, resume }, { queued: false });
      return { status: 201 as const, session: publicSession(rec!) };
    });
  }

  // After a restart: every conversation with a queued session gets its turn (or its timer).
  async function resumeAll(hostId: string): Promise<void> {
    for (const id of await sessions.queuedConversations(hostId)) await next(id);
  }

  return {
    send,
    next,
    fail,
    // Runs `fn` in the conversation's turn: decisions that look at its busy sessions (a take-over).
    turn: <T>(conversationId: string, fn: () => Promise<T>) => turns.run(conversationId, fn),
    resumeAll,
    close: once(async () => {
      closed = true;
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
    }),
  };
}
