import type { EventType } from '../../schemas/event.ts';
import type { OutputLine } from '../../schemas/output.ts';
import type { Mode, SandboxSetting } from '../../schemas/config.ts';
import { LIVE_STATUSES, type Session, type AgentResult, type Blocked, type SessionReading, type SessionSandbox, type SessionStatus, type TurnRef } from '../../schemas/session.ts';
import type { Db, Statement } from './db.ts';
import type { EventsTable, RecordEvent } from './events.ts';
import { iso, toLine, type LineRow } from './rows.ts';

interface Row {
  id: string;
  task_id: string;
  host_id: string;
  kind: Session['kind'];
  agent: string | null;
  interface: Session['interface'];
  command: string[];
  status: SessionStatus;
  pid: number | null;
  pid_start: string | null;
  exit_code: number | null;
  created_at: Date;
  ended_at: Date | null;
  stdout_offset: string | number;
  stderr_offset: string | number;
  next_seq: number;
  mode: Mode;
  prompt: string | null;
  conversation_id: string;
  parent_id: string | null;
  agent_session_id: string | null;
  result: (Omit<AgentResult, 'denials'> & Partial<Pick<AgentResult, 'denials'>>) | null;
  blocked: Blocked[] | null;
  limit_resets_at: Date | null;
  not_before: Date | null;
  args: string[];
  timeout_s: number | null;
  deadline: Date | null;
  timed_out: boolean;
  approval_timeout_s: number | null;
  waiting: 'approval' | null;
  turn: TurnRef | null;
  after_tasks: string[] | null;
  sandbox: SessionSandbox | null;
  sandbox_setting: SandboxSetting | null;
}

export interface SessionRecord extends Session {
  pid_start: string | null;
  stdout_offset: number;
  stderr_offset: number;
  next_seq: number;
  /** the request's args, for a queued session started later */
  args: string[];
  /** when a session with timeout_s is killed */
  deadline: string | null;
  /** the request's approval_timeout_s (DESIGN §15), or null: the project's or the user's applies */
  approval_timeout_s: number | null;
  /** the sandbox setting it was asked with (DESIGN §18), which its conversation's follow-ups keep; null: none given */
  sandbox_setting: SandboxSetting | null;
  /** what the agent reported, without what the sandbox refused (the dialects read and write it) */
  agent_result: AgentResult | null;
}

// A result with nothing the agent reported: a session whose agent said nothing of itself but
// was refused something by the sandbox.
const NO_REPORT: AgentResult = { text: null, is_error: null, cost_usd: null, input_tokens: null, output_tokens: null, denials: [] };

// What a session's row says of its sandbox before it has one: queued (decided when it starts), or
// stored before grove confined sessions.
function sandboxOf(r: Row): SessionSandbox {
  if (r.sandbox !== null) return r.sandbox;
  return { confined: false, reason: r.status === 'queued' ? 'queued: it is confined or not when it starts' : 'started before grove confined agent sessions' };
}

function toRecord(r: Row): SessionRecord {
  // A result stored before denials were read has none (jsonb keeps what was written).
  const agent = r.result && { ...r.result, denials: r.result.denials ?? [] };
  const blocked = r.blocked ?? [];
  return {
    id: r.id,
    task_id: r.task_id,
    host_id: r.host_id,
    kind: r.kind,
    agent: r.agent,
    interface: r.interface,
    command: r.command,
    status: r.status,
    pid: r.pid,
    created_at: r.created_at.toISOString(),
    exit_code: r.exit_code,
    ended_at: iso(r.ended_at),
    mode: r.mode,
    prompt: r.prompt,
    conversation_id: r.conversation_id,
    parent_id: r.parent_id,
    agent_session_id: r.agent_session_id,
    result: agent === null && blocked.length === 0 ? null : { ...(agent ?? NO_REPORT), blocked },
    agent_result: agent,
    limit_resets_at: iso(r.limit_resets_at),
    not_before: iso(r.not_before),
    timeout_s: r.timeout_s,
    timed_out: r.timed_out,
    waiting: r.waiting,
    turn: r.turn,
    pid_start: r.pid_start,
    stdout_offset: Number(r.stdout_offset),
    stderr_offset: Number(r.stderr_offset),
    next_seq: r.next_seq,
    args: r.args,
    deadline: iso(r.deadline),
    approval_timeout_s: r.approval_timeout_s,
    after: r.after_tasks,
    sandbox: sandboxOf(r),
    sandbox_setting: r.sandbox_setting,
  };
}

// The API's view of a session: the bookkeeping columns stay inside.
export function publicSession(s: SessionRecord): Session {
  const { pid_start: _a, stdout_offset: _b, stderr_offset: _c, next_seq: _d, args: _e, deadline: _f, approval_timeout_s: _g, sandbox_setting: _h, agent_result: _i, ...pub } = s;
  return pub;
}

// The live statuses as an SQL list; the same text as the sessions_live index's predicate.
const LIVE_SQL = LIVE_STATUSES.map((s) => `'${s}'`).join(', ');

// A session as inserted: its status, timestamps and offsets come from the store. Without a pid it
// is `queued` (it has no process yet), with one `starting`.
export type NewSession = Pick<Session, 'id' | 'task_id' | 'agent' | 'command' | 'mode' | 'prompt' | 'conversation_id' | 'parent_id'> & {
  /** default `agent` */
  kind?: Session['kind'];
  /** default `headless` */
  interface?: Session['interface'];
  pid?: number;
  pid_start?: string | null;
  agent_session_id?: string | null;
  args?: string[];
  timeout_s?: number | null;
  deadline?: string | null;
  not_before?: string | null;
  approval_timeout_s?: number | null;
  /** queued until these tasks have merged (DESIGN §17) */
  after?: string[];
  /** whether it runs confined; a queued row is decided at its launch */
  sandbox?: SessionSandbox;
  sandbox_setting?: SandboxSetting | null;
};

// What a launched queued session gets: its command and process.
export type Launch = Pick<SessionRecord, 'command' | 'agent_session_id' | 'deadline' | 'sandbox'> & { pid: number | null; pid_start: string | null };

// A changed row as it now is, with its task's project: what its event carries.
const RETURNING = 'RETURNING *, (SELECT t.project_id FROM tasks t WHERE t.id = sessions.task_id) AS project_id';

const INSERT = `INSERT INTO sessions (id, task_id, agent, command, mode, prompt, status, pid, pid_start, conversation_id, parent_id,
  agent_session_id, args, timeout_s, deadline, not_before, kind, approval_timeout_s, after_tasks, sandbox, sandbox_setting, interface, host_id)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
    (SELECT host_id FROM tasks WHERE id = $2)) ${RETURNING}`;

type Changed = Row & { project_id: string };

// A session's change as an event carrying the session as GET /api/sessions/:id returns it.
function recordSession(record: RecordEvent, type: Extract<EventType, `session.${string}`>, row: Changed): Promise<void> {
  return record({ type, project_id: row.project_id, task_id: row.task_id, session_id: row.id, data: publicSession(toRecord(row)) });
}

// A session's `waiting` (DESIGN §15) made what its approvals say, inside their change's
// transaction; when it changed, a session.waiting event carries the session as it now is.
export async function recordWaiting(tx: Db, record: RecordEvent, sessionId: string): Promise<void> {
  const { rows } = await tx.query<Changed>(
    `UPDATE sessions SET waiting = w.value
     FROM (SELECT CASE WHEN EXISTS (SELECT 1 FROM approvals a WHERE a.session_id = $1 AND a.status = 'pending') THEN 'approval' END AS value) w
     WHERE id = $1 AND waiting IS DISTINCT FROM w.value ${RETURNING}`,
    [sessionId],
  );
  if (rows[0]) await recordSession(record, 'session.waiting', rows[0]);
}

// What a round of output changed of what the agent said about itself (see dialects.ts).
export type ReadingChange = Extract<EventType, 'session.result' | 'session.limit'>;

function insertParams(s: NewSession, status: SessionStatus): unknown[] {
  return [s.id, s.task_id, s.agent, JSON.stringify(s.command), s.mode, s.prompt, status, s.pid ?? null, s.pid_start ?? null, s.conversation_id,
    s.parent_id, s.agent_session_id ?? null, JSON.stringify(s.args ?? []), s.timeout_s ?? null, s.deadline ?? null, s.not_before ?? null, s.kind ?? 'agent',
    s.approval_timeout_s ?? null, s.after === undefined ? null : JSON.stringify(s.after), s.sandbox === undefined ? null : JSON.stringify(s.sandbox),
    s.sandbox_setting === undefined || s.sandbox_setting === null ? null : JSON.stringify(s.sandbox_setting), s.interface ?? 'headless'];
}

// The sessions and session_lines tables and every query on them; every change of a session is
// recorded as an event with it (DESIGN §11).
export function sessionsTable(db: Db, events: EventsTable) {
  // One UPDATE … RETURNING and its event; null when no row matched.
  const change = (type: 'session.status', sql: string, params: unknown[]) =>
    events.tx(async (tx, record) => {
      const { rows } = await tx.query<Changed>(`${sql} ${RETURNING}`, params);
      if (rows[0]) await recordSession(record, type, rows[0]);
      return rows[0] ? toRecord(rows[0]) : null;
    });
  return {
    // `running` is an interactive session's (its client runs already, DESIGN §15).
    async insert(s: NewSession, status: 'starting' | 'queued' | 'running' = 'starting'): Promise<SessionRecord> {
      return events.tx(async (tx, record) => {
        const { rows } = await tx.query<Changed>(INSERT, insertParams(s, status));
        await recordSession(record, 'session.created', rows[0]!);
        return toRecord(rows[0]!);
      });
    },
    // A queued session gets its process: null when it was cancelled meanwhile.
    launch(id: string, l: Launch): Promise<SessionRecord | null> {
      return change(
        'session.status',
        `UPDATE sessions SET status = 'starting', command = $2, pid = $3, pid_start = $4, agent_session_id = $5, deadline = $6, sandbox = $7
         WHERE id = $1 AND status = 'queued'`,
        [id, JSON.stringify(l.command), l.pid, l.pid_start, l.agent_session_id, l.deadline, JSON.stringify(l.sandbox)],
      );
    },
    // A queued session that will never run: cancelled (`killed`) or unable to start (`failed`).
    async endQueued(id: string, status: 'killed' | 'failed'): Promise<boolean> {
      return (await change('session.status', `UPDATE sessions SET status = $2, ended_at = now() WHERE id = $1 AND status = 'queued'`, [id, status])) !== null;
    },
    async listConversation(conversationId: string): Promise<SessionRecord[]> {
      const { rows } = await db.query<Row>('SELECT * FROM sessions WHERE conversation_id = $1 ORDER BY created_at, id', [conversationId]);
      return rows.map(toRecord);
    },
    // A host's conversations with a session waiting its turn: what the queue looks at after a restart.
    async queuedConversations(hostId: string): Promise<string[]> {
      const { rows } = await db.query<{ conversation_id: string }>(`SELECT DISTINCT conversation_id FROM sessions WHERE status = 'queued' AND host_id = $1`, [hostId]);
      return rows.map((r) => r.conversation_id);
    },
    // A host's first sessions that wait for tasks to merge (DESIGN §17), oldest first.
    async waitingForTasks(hostId: string): Promise<SessionRecord[]> {
      const { rows } = await db.query<Row>(`SELECT * FROM sessions WHERE status = 'queued' AND after_tasks IS NOT NULL AND host_id = $1 ORDER BY created_at, id`, [hostId]);
      return rows.map(toRecord);
    },
    async get(id: string): Promise<SessionRecord | null> {
      const { rows } = await db.query<Row>('SELECT * FROM sessions WHERE id = $1', [id]);
      return rows[0] ? toRecord(rows[0]) : null;
    },
    // A task's sessions (or one conversation's) in one query; null when there is no such task.
    async listOfTask(taskId: string, conversationId?: string): Promise<SessionRecord[] | null> {
      const { rows } = await db.query<Row & { task_exists: string }>(
        `SELECT s.*, t.id AS task_exists FROM tasks t
         LEFT JOIN sessions s ON s.task_id = t.id AND ($2::uuid IS NULL OR s.conversation_id = $2)
         WHERE t.id = $1 ORDER BY s.created_at, s.id`,
        [taskId, conversationId ?? null],
      );
      if (rows.length === 0) return null;
      return rows.filter((r) => r.id !== null).map(toRecord);
    },
    // Every session (or those of one project's tasks) in one query.
    async listAll(projectId?: string): Promise<SessionRecord[]> {
      const { rows } = projectId
        ? await db.query<Row>('SELECT s.* FROM sessions s JOIN tasks t ON t.id = s.task_id WHERE t.project_id = $1 ORDER BY s.created_at, s.id', [projectId])
        : await db.query<Row>('SELECT * FROM sessions ORDER BY created_at, id');
      return rows.map(toRecord);
    },
    // A host's own: another host's sessions are its to follow and end (DESIGN §14.2).
    async listLive(hostId: string): Promise<SessionRecord[]> {
      const { rows } = await db.query<Row>(`SELECT * FROM sessions WHERE status IN (${LIVE_SQL}) AND host_id = $1 ORDER BY created_at`, [hostId]);
      return rows.map(toRecord);
    },
    async markRunning(id: string): Promise<boolean> {
      return (await change('session.status', `UPDATE sessions SET status = 'running' WHERE id = $1 AND status = 'starting'`, [id])) !== null;
    },
    // The final status, once: a session that already ended keeps its first ending. With a
    // follow-up (a usage limit's, DESIGN §8) that is queued in the same transaction, and the
    // conversation's other queued sessions wait as long as it does.
    async end(id: string, status: SessionStatus, exitCode: number | null, opts: { timedOut?: boolean; followUp?: NewSession; turn?: TurnRef | null } = {}): Promise<boolean> {
      return events.tx(async (tx, record) => {
        const { rows } = await tx.query<Changed>(
          `UPDATE sessions SET status = $2, exit_code = $3, ended_at = now(), timed_out = $4, turn = $5::jsonb WHERE id = $1 AND status IN (${LIVE_SQL}) ${RETURNING}`,
          [id, status, exitCode, opts.timedOut === true, opts.turn ? JSON.stringify(opts.turn) : null],
        );
        if (!rows[0]) return false;
        await recordSession(record, 'session.status', rows[0]);
        const f = opts.followUp;
        if (f) {
          const queued = await tx.query(`UPDATE sessions SET not_before = GREATEST(not_before, $2::timestamptz) WHERE conversation_id = $1 AND status = 'queued'`, [
            f.conversation_id,
            f.not_before,
          ]);
          if ((queued.affectedRows ?? 0) === 0) {
            const added = await tx.query<Changed>(INSERT, insertParams(f, 'queued'));
            await recordSession(record, 'session.created', added.rows[0]!);
          }
        }
        return true;
      });
    },
    // What the sandbox refused the session so far (DESIGN §18), each target with its count; a
    // session.blocked event for each target in `fresh` (refused for the first time).
    async setBlocked(id: string, blocked: Blocked[], fresh: Blocked[]): Promise<void> {
      await events.tx(async (tx, record) => {
        const { rows } = await tx.query<Changed>(`UPDATE sessions SET blocked = $2 WHERE id = $1 ${RETURNING}`, [id, JSON.stringify(blocked)]);
        const row = rows[0];
        if (!row) return;
        // The session as it now is, with the target this event is about (`blocked_target`).
        for (const b of fresh) {
          await record({ type: 'session.blocked', project_id: row.project_id, task_id: row.task_id, session_id: row.id, data: { ...publicSession(toRecord(row)), blocked_target: { kind: b.kind, target: b.target } } });
        }
      });
    },
    // Lines and the file offsets they came from, in one transaction: a restart resumes exactly
    // there. A batch is what one read round found, so its lines share one timestamp. A round that
    // records no event (most of them) is a plain transaction: on a team's store it does not take
    // its turn in the team's event order (events.ts), so rounds of every host do not run one after
    // another.
    async appendLines(
      id: string,
      firstSeq: number,
      batch: { streams: Array<OutputLine['stream']>; texts: string[]; at: string },
      offsets: { stdout: number; stderr: number },
      reading?: { value: SessionReading; changes: ReadingChange[] },
    ): Promise<void> {
      const statements: Statement[] = [];
      if (batch.texts.length > 0) {
        statements.push({
          sql: `INSERT INTO session_lines (session_id, seq, stream, text, at)
             SELECT $1, $2 + o - 1, s, t, $5::timestamptz
             FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS u(s, t, o)`,
          params: [id, firstSeq, batch.streams, batch.texts, batch.at],
        });
      }
      statements.push({
        sql: 'UPDATE sessions SET stdout_offset = $2, stderr_offset = $3, next_seq = $4 WHERE id = $1',
        params: [id, offsets.stdout, offsets.stderr, firstSeq + batch.texts.length],
      });
      // What the agent said about itself, with the lines it came from (see dialects.ts).
      if (!reading) return db.batch(statements);
      await events.tx(async (tx, record) => {
        await tx.batch(statements);
        const r = reading.value;
        const { rows } = await tx.query<Changed>(`UPDATE sessions SET agent_session_id = $2, result = $3, limit_resets_at = $4 WHERE id = $1 ${RETURNING}`, [
          id,
          r.agent_session_id,
          r.result === null ? null : JSON.stringify(r.result),
          r.limit_resets_at,
        ]);
        for (const type of reading.changes) await recordSession(record, type, rows[0]!);
      });
    },
    async lines(id: string, after: number, limit: number): Promise<OutputLine[]> {
      const { rows } = await db.query<LineRow>(
        'SELECT seq, stream, text, at FROM session_lines WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
        [id, after, limit],
      );
      return rows.map(toLine);
    },
    // The last `n` lines, oldest first: read from the end, however long the session is.
    async lastLines(id: string, n: number): Promise<OutputLine[]> {
      const { rows } = await db.query<LineRow>(
        'SELECT * FROM (SELECT seq, stream, text, at FROM session_lines WHERE session_id = $1 ORDER BY seq DESC LIMIT $2) last ORDER BY seq',
        [id, n],
      );
      return rows.map(toLine);
    },
  };
}

export type SessionsTable = ReturnType<typeof sessionsTable>;
