import type { OutputLine } from '../../schemas/output.ts';
import type { Mode } from '../../schemas/config.ts';
import type { Session, SessionStatus } from '../../schemas/session.ts';
import type { Db } from './db.ts';

interface Row {
  id: string;
  task_id: string;
  agent: string;
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
}

export interface SessionRecord extends Session {
  pid_start: string | null;
  stdout_offset: number;
  stderr_offset: number;
  next_seq: number;
}

function toRecord(r: Row): SessionRecord {
  return {
    id: r.id,
    task_id: r.task_id,
    agent: r.agent,
    command: r.command,
    status: r.status,
    pid: r.pid,
    created_at: r.created_at.toISOString(),
    exit_code: r.exit_code,
    ended_at: r.ended_at ? r.ended_at.toISOString() : null,
    mode: r.mode,
    prompt: r.prompt,
    pid_start: r.pid_start,
    stdout_offset: Number(r.stdout_offset),
    stderr_offset: Number(r.stderr_offset),
    next_seq: r.next_seq,
  };
}

// The API's view of a session: the bookkeeping columns stay inside.
export function publicSession(s: SessionRecord): Session {
  const { pid_start: _a, stdout_offset: _b, stderr_offset: _c, next_seq: _d, ...pub } = s;
  return pub;
}

export const LIVE: SessionStatus[] = ['starting', 'running'];

// A session as inserted: its status, timestamps and offsets come from the store.
export type NewSession = Pick<Session, 'id' | 'task_id' | 'agent' | 'command' | 'mode' | 'prompt'> & { pid?: number; pid_start?: string | null };

// The sessions and session_lines tables and every query on them.
export function sessionsTable(db: Db) {
  return {
    async insert(s: NewSession): Promise<SessionRecord> {
      const { rows } = await db.query<Row>(
        `INSERT INTO sessions (id, task_id, agent, command, mode, prompt, status, pid, pid_start)
         VALUES ($1, $2, $3, $4, $5, $6, 'starting', $7, $8) RETURNING *`,
        [s.id, s.task_id, s.agent, JSON.stringify(s.command), s.mode, s.prompt, s.pid ?? null, s.pid_start ?? null],
      );
      return toRecord(rows[0]!);
    },
    async get(id: string): Promise<SessionRecord | null> {
      const { rows } = await db.query<Row>('SELECT * FROM sessions WHERE id = $1', [id]);
      return rows[0] ? toRecord(rows[0]) : null;
    },
    async listByTask(taskId: string): Promise<SessionRecord[]> {
      const { rows } = await db.query<Row>('SELECT * FROM sessions WHERE task_id = $1 ORDER BY created_at, id', [taskId]);
      return rows.map(toRecord);
    },
    async listLive(): Promise<SessionRecord[]> {
      const { rows } = await db.query<Row>(`SELECT * FROM sessions WHERE status IN ('starting', 'running') ORDER BY created_at`);
      return rows.map(toRecord);
    },
    async markRunning(id: string): Promise<boolean> {
      const res = await db.query(`UPDATE sessions SET status = 'running' WHERE id = $1 AND status = 'starting'`, [id]);
      return (res.affectedRows ?? 0) > 0;
    },
    // The final status, once: a session that already ended keeps its first ending.
    async end(id: string, status: SessionStatus, exitCode: number | null): Promise<boolean> {
      const res = await (
        db.query(`UPDATE sessions SET status = $2, exit_code = $3, ended_at = now() WHERE id = $1 AND status IN ('starting', 'running')`, [
          id,
          status,
          exitCode,
        ])
      );
      return (res.affectedRows ?? 0) > 0;
    },
    // Lines and the file offsets they came from, in one transaction: a restart resumes exactly
    // there. A batch is what one read round found, so its lines share one timestamp.
    async appendLines(
      id: string,
      firstSeq: number,
      batch: { streams: Array<'stdout' | 'stderr'>; texts: string[]; at: string },
      offsets: { stdout: number; stderr: number },
    ): Promise<void> {
      await db.transaction(async (tx) => {
        if (batch.texts.length > 0) {
          await tx.query(
            `INSERT INTO session_lines (session_id, seq, stream, text, at)
             SELECT $1, $2 + o - 1, s, t, $5::timestamptz
             FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS u(s, t, o)`,
            [id, firstSeq, batch.streams, batch.texts, batch.at],
          );
        }
        await tx.query('UPDATE sessions SET stdout_offset = $2, stderr_offset = $3, next_seq = $4 WHERE id = $1', [
          id,
          offsets.stdout,
          offsets.stderr,
          firstSeq + batch.texts.length,
        ]);
      });
    },
    async lines(id: string, after: number, limit: number): Promise<OutputLine[]> {
      const { rows } = await db.query<{ seq: number; stream: 'stdout' | 'stderr'; text: string; at: Date }>(
        'SELECT seq, stream, text, at FROM session_lines WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
        [id, after, limit],
      );
      return rows.map((r) => ({ seq: r.seq, stream: r.stream, text: r.text, at: r.at.toISOString() }));
    },
  };
}

export type SessionsTable = ReturnType<typeof sessionsTable>;
