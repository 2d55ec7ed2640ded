import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { NetworkTarget, type Approval, type ApprovalAsk, type ApprovalDecision, type ApprovalListQuery } from '../../schemas/approval.ts';
import { NETWORK_TOOL } from '../../schemas/denials.ts';
import type { ProjectConfig } from '../../schemas/project-config.ts';
import type { Project } from '../../schemas/project.ts';
import type { GroveEvent } from '../../schemas/event.ts';
import { isLive, type Session } from '../../schemas/session.ts';
import type { Task } from '../../schemas/task.ts';
import { GroveError } from '../errors.ts';
import type { ProjectConfigs } from '../projects/config.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import { compile, createAjv } from '../runtime/validation.ts';
import { createSignal, type Listen } from '../runtime/signal.ts';
import { waitFor } from '../runtime/wait.ts';
import { publicApproval, type ApprovalRecord, type ApprovalsTable } from '../store/approvals.ts';
import type { SessionRecord } from '../store/sessions.ts';
import { retryWhenUnreachable } from '../store/store.ts';
import { firstMatch, ruleFor } from './rules.ts';

export interface ApprovalServiceDeps {
  approvals: ApprovalsTable;
  getSession: (id: string) => Promise<SessionRecord | null>;
  getTask: (id: string) => Promise<Task>;
  getProject: (id: string) => Promise<Project>;
  configs: ProjectConfigs;
  /** the user config's `allow` and `approval_timeout_s` */
  userAllow: readonly string[];
  userTimeoutS: number | undefined;
  /** every committed event (every host's on a shared store): a decision wakes its waiters, a session's end expires its approvals */
  committed: Listen<GroveEvent>;
  /** this daemon's host: only the owner of a session expires its approvals */
  hostId: string;
  log: Logger;
}

const invalid = (at: string, message: string) => new GroveError('VALIDATION_FAILED', 'the request body is invalid', { errors: [{ path: at, message }] });

// What an expired approval tells the agent: time ran out, never that the person refused.
export const noDecisionWithin = (s: number) => `no decision within ${s} s`;
const sessionEnded = (status: string) => `no decision: the session ended (${status}) while it waited`;

// The approvals of DESIGN §15: asked by agents' bridges, decided by the person (or a rule), each
// answered once; expired by their deadline or their session's end, also across daemon restarts.
export function createApprovalService(deps: ApprovalServiceDeps) {
  const { approvals, log } = deps;
  const networkInput = compile(createAjv(), NetworkTarget);
  // Fired with an approval's id once its decision is stored: waiters read it then.
  const decided = createSignal<string>();
  const timers = new Map<string, NodeJS.Timeout>();
  // The long polls held now, woken all at once when the service closes.
  const waiters = new Set<() => void>();
  let closed = false;

  const find = async (id: string): Promise<ApprovalRecord> => {
    const a = await approvals.get(id);
    if (!a) throw new GroveError('NOT_FOUND', `no approval with id ${id}`);
    return a;
  };

  function expireOne(id: string, timeoutS: number): void {
    approvals.expire({ id }, () => noDecisionWithin(timeoutS)).catch((err: unknown) => {
      log.error({ err, approval: id }, 'expiring an approval failed');
      retryWhenUnreachable(err, () => void (closed || expireOne(id, timeoutS)));
    });
  }

  // The deadline is stored, not the delay: a restarted daemon arms it again.
  function arm(a: ApprovalRecord): void {
    if (closed || a.status !== 'pending' || a.expires_at === null || a.timeout_s === null || timers.has(a.id)) return;
    const timeoutS = a.timeout_s;
    const timer = setTimeout(() => {
      timers.delete(a.id);
      expireOne(a.id, timeoutS);
    }, Math.max(0, Date.parse(a.expires_at) - Date.now()));
    timer.unref();
    timers.set(a.id, timer);
  }

  function expireOfSession(sessionId: string, status: string): void {
    approvals.expire({ session_id: sessionId }, () => sessionEnded(status)).catch((err: unknown) => log.error({ err, session: sessionId }, 'expiring the approvals of an ended session failed'));
  }

  // A decision wakes waiters whichever host recorded it (waking only reads). A session's end
  // expires its approvals on the host that recorded the end, its owner: one writer, not one per host.
  const stop = deps.committed.onAnyChange((e) => {
    if (e.type === 'approval.decided') {
      const a = e.data as Approval;
      const timer = timers.get(a.id);
      if (timer) clearTimeout(timer);
      timers.delete(a.id);
      decided.changed(a.id);
    } else if (e.type === 'session.status' && e.session_id !== null && e.host_id === deps.hostId) {
      const s = e.data as Session;
      if (!isLive(s.status) && s.status !== 'queued' && s.waiting !== null) expireOfSession(s.id, s.status);
    }
  });

  // The project's config for rules and timeouts; an invalid one adds nothing (its error is the sessions' to report).
  const configOf = (project: Project): ProjectConfig => deps.configs.loadOrNone(project.path, 'its allow rules and approval timeouts do not apply');

  return {
    // A bridge asks for its agent (POST /api/sessions/:id/approvals): recorded once per
    // (session, key); a rule that allows it decides it at once, visibly.
    async ask(sessionId: string, body: ApprovalAsk): Promise<{ created: boolean; approval: Approval }> {
      const kind = body.kind ?? 'tool';
      // A connection is asked as `Network` with its target, and only so: its rules match no tool.
      if ((kind === 'network') !== (body.tool === NETWORK_TOOL)) {
        throw invalid('/tool', kind === 'network' ? `a network approval's tool is ${NETWORK_TOOL}` : `${NETWORK_TOOL} is asked with kind "network"`);
      }
      if (kind === 'network' && !networkInput(body.input)) {
        const errors = networkInput.issues().map((i) => ({ path: `/input${i.path === '/' ? '' : i.path}`, message: i.message }));
        throw new GroveError('VALIDATION_FAILED', 'the request body is invalid', { errors });
      }
      const session = await deps.getSession(sessionId);
      if (!session) throw new GroveError('NOT_FOUND', `no session with id ${sessionId}`);
      const again = await approvals.byKey(sessionId, body.key);
      if (again) return { created: false, approval: publicApproval(again) };
      if (!isLive(session.status)) throw new GroveError('SESSION_NOT_RUNNING', `session ${sessionId} is ${session.status}; only a running session asks`);
      const task = await deps.getTask(session.task_id);
      const project = await deps.getProject(task.project_id);
      const config = configOf(project);
      const call = { tool: body.tool, input: body.input };
      const rules = [...(config.allow ?? []), ...deps.userAllow, ...(await approvals.rules(project.id, sessionId))];
      // A question is for the person: no rule answers it.
      const allowedBy = kind === 'question' ? null : firstMatch(rules, call, path.join(project.path, task.worktree_path));
      const { approval, created } = await approvals.ask({
        id: randomUUID(),
        session_id: sessionId,
        task_id: task.id,
        project_id: project.id,
        key: body.key,
        kind,
        tool: body.tool,
        input: body.input ?? null,
        nonce: randomBytes(16).toString('hex'),
        timeout_s: session.approval_timeout_s ?? config.approval_timeout_s ?? deps.userTimeoutS ?? null,
        allowedBy,
      });
      if (created && approval.status === 'pending') {
        arm(approval);
        // The session may have ended between the check and the insert: its end then found nothing to expire.
        const now = await deps.getSession(sessionId);
        if (now && !isLive(now.status)) expireOfSession(sessionId, now.status);
        log.info({ approval: approval.id, session: sessionId, tool: body.tool }, 'approval requested');
      }
      return { created, approval: publicApproval(approval) };
    },

    // The approval; with `waitS`, held while it is pending, up to that long (a bridge's long poll).
    async get(id: string, waitS = 0, abort?: AbortSignal): Promise<Approval> {
      if (waitS <= 0 || closed) return publicApproval(await find(id));
      // Waiting before the read: a decision between the two is not missed.
      const waiting = waitFor(
        (wake) => {
          waiters.add(wake);
          return [decided.onChange(id, wake), () => waiters.delete(wake)];
        },
        { ms: waitS * 1000, signal: abort },
      );
      try {
        const a = await find(id);
        if (a.status !== 'pending') return publicApproval(a);
        await waiting.done;
        return publicApproval(await find(id));
      } finally {
        waiting.stop();
      }
    },

    async list(q: ApprovalListQuery): Promise<Approval[]> {
      return (await approvals.list(q)).map(publicApproval);
    },

    // The person's decision: once. `remember` keeps a rule for the session or the project.
    async decide(id: string, body: ApprovalDecision): Promise<Approval> {
      const a = await find(id);
      if (body.remember !== undefined && body.decision !== 'allow') throw invalid('/remember', 'only an allow is remembered');
      if (body.remember !== undefined && a.kind === 'question') throw invalid('/remember', 'a question is answered each time');
      if (body.answer !== undefined && a.kind !== 'question') throw invalid('/answer', 'only a question takes an answer');
      if (a.kind === 'question' && body.decision === 'allow' && body.answer === undefined) throw invalid('/answer', 'a question is answered with text');
      const out = await approvals.decide(id, body.nonce, {
        status: body.decision === 'allow' ? 'allowed' : 'denied',
        reason: body.message ?? null,
        answer: body.answer ?? null,
        remember: body.remember ?? null,
        rule: body.remember !== undefined ? ruleFor({ tool: a.tool, input: a.input }) : null,
      });
      if (out.ok) return publicApproval(out.approval);
      if (out.why === 'not_found') throw new GroveError('NOT_FOUND', `no approval with id ${id}`);
      if (out.why === 'decided') throw new GroveError('APPROVAL_DECIDED', `approval ${id} was already decided`);
      throw new GroveError('APPROVAL_STALE', `the nonce is not approval ${id}'s; read it again (GET /api/approvals/${id})`);
    },

    // After a restart (once sessions are re-attached): deadlines armed again, and the approvals
    // of sessions that ended meanwhile expired; this host's only, as its sessions are.
    async recover(): Promise<void> {
      for (const a of await approvals.pending(deps.hostId)) {
        const s = await deps.getSession(a.session_id);
        // Another host's are its own to expire (a shared store holds the team's).
        if (s && s.host_id !== deps.hostId) continue;
        if (!s || !isLive(s.status)) expireOfSession(a.session_id, s?.status ?? 'lost');
        else arm(a);
      }
    },

    close: once(async () => {
      closed = true;
      stop();
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
      for (const w of [...waiters]) w();
    }),
  };
}

export type ApprovalService = ReturnType<typeof createApprovalService>;
