import type { Approval, ApprovalKind, ApprovalListQuery, ApprovalStatus, ApprovalVerdict, RememberScope } from '../../schemas/approval.ts';
import type { Db } from './db.ts';
import type { EventsTable, RecordEvent } from './events.ts';
import { iso } from './rows.ts';
import { recordWaiting } from './sessions.ts';

interface Row {
  id: string;
  session_id: string;
  task_id: string;
  project_id: string;
  key: string;
  kind: ApprovalKind;
  tool: string;
  input: unknown;
  status: ApprovalStatus;
  reason: string | null;
  answer: string | null;
  remember: RememberScope | null;
  nonce: string;
  timeout_s: number | null;
  expires_at: Date | null;
  created_at: Date;
  decided_at: Date | null;
}

// An approval as stored, with its project (for events and rules) and the timeout it was given.
export type ApprovalRecord = Approval & { project_id: string; timeout_s: number | null };

// What the agent's bridge tells the agent, from how the approval ended. A denial without a
// message still says who refused; an expiry never says the person did.
function verdictOf(r: Row): ApprovalVerdict | null {
  switch (r.status) {
    case 'pending':
      return null;
    case 'allowed':
      return { behavior: 'allow', answer: r.answer };
    case 'denied':
      return { behavior: 'deny', message: r.reason ?? 'The user denied this.' };
    case 'expired':
      return { behavior: 'expired', message: r.reason ?? 'no decision was made' };
  }
}

function toRecord(r: Row): ApprovalRecord {
  return {
    id: r.id,
    session_id: r.session_id,
    task_id: r.task_id,
    project_id: r.project_id,
    timeout_s: r.timeout_s,
    key: r.key,
    kind: r.kind,
    tool: r.tool,
    input: r.input,
    status: r.status,
    reason: r.reason,
    answer: r.answer,
    remember: r.remember,
    nonce: r.nonce,
    expires_at: iso(r.expires_at),
    created_at: r.created_at.toISOString(),
    decided_at: iso(r.decided_at),
    verdict: verdictOf(r),
  };
}

// The API's view: the project is the event's, not the resource's.
export function publicApproval(a: ApprovalRecord): Approval {
  const { project_id: _p, timeout_s: _t, ...pub } = a;
  return pub;
}

// An approval as an agent asked it; status, times and the verdict come from the store.
export type NewApproval = Pick<Row, 'id' | 'session_id' | 'task_id' | 'project_id' | 'key' | 'kind' | 'tool' | 'input' | 'nonce' | 'timeout_s'> & {
  /** the rule that allows it without asking, or null: it waits for the person */
  allowedBy: string | null;
};

// How a decision ended: made, or why not.
export type DecideOutcome = { ok: true; approval: ApprovalRecord } | { ok: false; why: 'not_found' | 'decided' | 'stale' };

// A decision as written: allowed or denied, with the person's words and the rule to keep.
export interface Decision {
  status: 'allowed' | 'denied';
  reason: string | null;
  answer: string | null;
  remember: RememberScope | null;
  /** the rule `remember` keeps */
  rule: string | null;
}

// The approvals and approval_rules tables (DESIGN §15); every change of an approval is recorded as
// an event carrying it as GET /api/approvals/:id returns it, and sets its session's `waiting`
// (with a session.waiting event when that changed).
export function approvalsTable(db: Db, events: EventsTable) {
  const recordApproval = async (tx: Db, record: RecordEvent, type: 'approval.requested' | 'approval.decided', r: Row) => {
    const a = toRecord(r);
    await record({ type, project_id: a.project_id, task_id: a.task_id, session_id: a.session_id, data: publicApproval(a) });
    await recordWaiting(tx, record, r.session_id);
  };

  return {
    // Records what an agent asked, once per (session, key): asking again finds the first
    // (`created` false). One a rule allows is recorded allowed at once, with the rule as its reason.
    async ask(a: NewApproval): Promise<{ approval: ApprovalRecord; created: boolean }> {
      return events.tx(async (tx, record) => {
        const status: ApprovalStatus = a.allowedBy === null ? 'pending' : 'allowed';
        const { rows } = await tx.query<Row>(
          `INSERT INTO approvals (id, session_id, task_id, project_id, key, kind, tool, input, status, reason, nonce, timeout_s, expires_at, decided_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::double precision,
             CASE WHEN $9 = 'pending' AND $12::double precision IS NOT NULL THEN now() + make_interval(secs => $12::double precision) END,
             CASE WHEN $9 = 'pending' THEN NULL ELSE now() END)
           ON CONFLICT (session_id, key) DO NOTHING RETURNING *`,
          [a.id, a.session_id, a.task_id, a.project_id, a.key, a.kind, a.tool, JSON.stringify(a.input ?? null), status,
            a.allowedBy === null ? null : `allowed by the rule ${a.allowedBy}`, a.nonce, a.timeout_s],
        );
        if (rows[0]) {
          await recordApproval(tx, record, status === 'pending' ? 'approval.requested' : 'approval.decided', rows[0]);
          return { approval: toRecord(rows[0]), created: true };
        }
        const found = await tx.query<Row>('SELECT * FROM approvals WHERE session_id = $1 AND key = $2', [a.session_id, a.key]);
        return { approval: toRecord(found.rows[0]!), created: false };
      });
    },

    // Answers a pending approval once: one conditional UPDATE, so of two answers at once one
    // wins. A miss is told apart: no such approval, already decided, or a nonce not its own.
    async decide(id: string, nonce: string, d: Decision): Promise<DecideOutcome> {
      return events.tx(async (tx, record) => {
        const { rows } = await tx.query<Row>(
          `UPDATE approvals SET status = $3, reason = $4, answer = $5, remember = $6, decided_at = now()
           WHERE id = $1 AND status = 'pending' AND nonce = $2 RETURNING *`,
          [id, nonce, d.status, d.reason, d.answer, d.remember],
        );
        const row = rows[0];
        if (!row) {
          const { rows: found } = await tx.query<{ status: ApprovalStatus }>('SELECT status FROM approvals WHERE id = $1', [id]);
          if (!found[0]) return { ok: false, why: 'not_found' };
          return { ok: false, why: found[0].status === 'pending' ? 'stale' : 'decided' };
        }
        if (d.remember !== null && d.rule !== null) {
          await tx.query(
            `INSERT INTO approval_rules (project_id, session_id, rule) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
            [row.project_id, d.remember === 'session' ? row.session_id : null, d.rule],
          );
        }
        await recordApproval(tx, record, 'approval.decided', row);
        return { ok: true, approval: toRecord(row) };
      });
    },

    // Ends pending approvals without a decision (their time ran out, or their session ended):
    // one by id, or all of a session's. Those already decided keep their decision.
    async expire(by: { id: string } | { session_id: string }, reason: (a: ApprovalRecord) => string): Promise<ApprovalRecord[]> {
      return events.tx(async (tx, record) => {
        const { rows: pending } = await tx.query<Row>(
          'id' in by
            ? `SELECT * FROM approvals WHERE id = $1 AND status = 'pending' FOR UPDATE`
            : `SELECT * FROM approvals WHERE session_id = $1 AND status = 'pending' ORDER BY created_at FOR UPDATE`,
          ['id' in by ? by.id : by.session_id],
        );
        const out: ApprovalRecord[] = [];
        for (const p of pending) {
          const { rows } = await tx.query<Row>(
            `UPDATE approvals SET status = 'expired', reason = $2, decided_at = now() WHERE id = $1 AND status = 'pending' RETURNING *`,
            [p.id, reason(toRecord(p))],
          );
          if (!rows[0]) continue;
          await recordApproval(tx, record, 'approval.decided', rows[0]);
          out.push(toRecord(rows[0]));
        }
        return out;
      });
    },

    async get(id: string): Promise<ApprovalRecord | null> {
      const { rows } = await db.query<Row>('SELECT * FROM approvals WHERE id = $1', [id]);
      return rows[0] ? toRecord(rows[0]) : null;
    },

    // What a session's bridge asked under this key before, if it did.
    async byKey(sessionId: string, key: string): Promise<ApprovalRecord | null> {
      const { rows } = await db.query<Row>('SELECT * FROM approvals WHERE session_id = $1 AND key = $2', [sessionId, key]);
      return rows[0] ? toRecord(rows[0]) : null;
    },

    async list(q: ApprovalListQuery): Promise<ApprovalRecord[]> {
      const { rows } = await db.query<Row>(
        `SELECT * FROM approvals WHERE ($1::text IS NULL OR status = $1) AND ($2::uuid IS NULL OR task_id = $2) AND ($3::uuid IS NULL OR session_id = $3)
         ORDER BY created_at, id`,
        [q.status ?? null, q.task_id ?? null, q.session_id ?? null],
      );
      return rows.map(toRecord);
    },

    // What a starting daemon looks at: every pending approval (deadlines to arm, sessions gone).
    // The pending approvals of a host's sessions.
    async pending(hostId: string): Promise<ApprovalRecord[]> {
      const { rows } = await db.query<Row>(
        `SELECT a.* FROM approvals a JOIN sessions s ON s.id = a.session_id WHERE a.status = 'pending' AND s.host_id = $1 ORDER BY a.created_at`,
        [hostId],
      );
      return rows.map(toRecord);
    },

    // The rules `remember` kept that apply to a session: its project's, and those of any session of
    // its conversation, since "for this session" is the agent's session, which its follow-ups resume.
    async rules(projectId: string, sessionId: string): Promise<string[]> {
      const { rows } = await db.query<{ rule: string }>(
        `SELECT rule FROM approval_rules WHERE project_id = $1 AND (session_id IS NULL OR session_id IN (
           SELECT id FROM sessions WHERE conversation_id = (SELECT conversation_id FROM sessions WHERE id = $2))) ORDER BY created_at`,
        [projectId, sessionId],
      );
      return rows.map((r) => r.rule);
    },
  };
}

export type ApprovalsTable = ReturnType<typeof approvalsTable>;
