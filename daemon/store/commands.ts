import type { Db } from './db.ts';
import type { CommandAnswer, CommandRequest } from '../../schemas/host.ts';

// How often a waiting requester and the owner's loop read the commands when no notification came.
export const COMMAND_POLL_MS = 1000;

// A command waits this long to be taken (DESIGN §14.2): the requester withdraws it after, and
// the owner takes only younger ones, both by the store's clock, so one withdrawn is never run.
export const TAKE_WITHIN_S = 10;

// Where commands are announced: the target host's id on CHANNEL, a command's id on ANSWERED.
export const COMMANDS_CHANNEL = 'grove_commands';
export const ANSWERED_CHANNEL = 'grove_command_answers';

// Commands are kept this long after they were made (an answer may hold a diff of megabytes);
// those still taken are kept until answered or abandoned.
export const KEEP_H = 1;

export type CommandStatus = 'pending' | 'taken' | 'done' | 'withdrawn' | 'abandoned';

// What a command asks and what its owner answers (schemas/host.ts).
export type { CommandAnswer, CommandRequest };

export interface Command extends CommandRequest {
  id: string;
  host_id: string;
  from_host_id: string;
  status: CommandStatus;
  created_at: Date;
  answer: CommandAnswer | null;
}

interface Row {
  id: string;
  host_id: string;
  from_host_id: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | null;
  status: CommandStatus;
  created_at: Date;
  answer_status: number | null;
  answer_headers: Record<string, string> | null;
  answer_body: string | null;
}

const toCommand = (r: Row): Command => ({
  id: r.id,
  host_id: r.host_id,
  from_host_id: r.from_host_id,
  method: r.method,
  path: r.path,
  headers: r.headers,
  body: r.body,
  status: r.status,
  created_at: r.created_at,
  answer:
    r.answer_status === null ? null : { status: r.answer_status, headers: r.answer_headers ?? {}, body: Buffer.from(r.answer_body ?? '', 'base64') },
});

const COLUMNS = 'id, host_id, from_host_id, method, path, headers, body, status, created_at, answer_status, answer_headers, answer_body';

// The commands table (DESIGN §14.2): every change of a command's status is one conditional
// UPDATE, so of a take and a withdrawal only one ever wins.
export function commandsTable(db: Db) {
  return {
    async insert(c: CommandRequest & { id: string; host_id: string; from_host_id: string }): Promise<Command> {
      const { rows } = await db.query<Row>(
        `INSERT INTO commands (id, host_id, from_host_id, method, path, headers, body) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
        [c.id, c.host_id, c.from_host_id, c.method, c.path, JSON.stringify(c.headers), c.body],
      );
      return toCommand(rows[0]!);
    },
    // The host holding a row of `kind` (DESIGN §14.2), null when there is no such row.
    async ownerOf(kind: 'task' | 'session' | 'project' | 'approval', id: string): Promise<string | null> {
      const sql =
        kind === 'approval'
          ? 'SELECT s.host_id FROM approvals a JOIN sessions s ON s.id = a.session_id WHERE a.id = $1'
          : `SELECT host_id FROM ${kind}s WHERE id = $1`;
      const { rows } = await db.query<{ host_id: string | null }>(sql, [id]);
      return rows[0]?.host_id ?? null;
    },
    async get(id: string): Promise<Command | null> {
      const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM commands WHERE id = $1`, [id]);
      return rows[0] ? toCommand(rows[0]) : null;
    },
    // The host's oldest command still pending and young enough, now taken; null when there is none.
    async take(hostId: string): Promise<Command | null> {
      const { rows } = await db.query<Row>(
        `UPDATE commands SET status = 'taken', taken_at = now() WHERE id = (
           SELECT id FROM commands WHERE host_id = $1 AND status = 'pending' AND created_at > now() - interval '${TAKE_WITHIN_S} seconds'
           ORDER BY created_at, id FOR UPDATE SKIP LOCKED LIMIT 1)
         RETURNING ${COLUMNS}`,
        [hostId],
      );
      return rows[0] ? toCommand(rows[0]) : null;
    },

    // The owner's answer to a command it took; false when the command is no longer taken (a
    // restart marked it abandoned).
    async answer(id: string, a: CommandAnswer): Promise<boolean> {
      const res = await db.query(
        `UPDATE commands SET status = 'done', ended_at = now(), answer_status = $2, answer_headers = $3, answer_body = $4
         WHERE id = $1 AND status = 'taken'`,
        [id, a.status, JSON.stringify(a.headers), Buffer.from(a.body.buffer, a.body.byteOffset, a.body.byteLength).toString('base64')],
      );
      return (res.affectedRows ?? 0) > 0;
    },
    // The requester gives up on a command nobody took in time; false when it was taken (or is
    // not yet old enough: the owner may still take it).
    async withdraw(id: string): Promise<boolean> {
      const res = await db.query(
        `UPDATE commands SET status = 'withdrawn', ended_at = now()
         WHERE id = $1 AND status = 'pending' AND created_at <= now() - interval '${TAKE_WITHIN_S} seconds'`,
        [id],
      );
      return (res.affectedRows ?? 0) > 0;
    },
    // A host starting: the commands it had taken and not answered died with its last run; they
    // may have run in part, so they are never run again. Returns how many.
    async abandonTaken(hostId: string): Promise<number> {
      const res = await db.query(`UPDATE commands SET status = 'abandoned', ended_at = now() WHERE host_id = $1 AND status = 'taken'`, [hostId]);
      return res.affectedRows ?? 0;
    },
    // The host's commands older than KEEP_H, except those it is running; pruned by the owner.
    async prune(hostId: string): Promise<number> {
      const res = await db.query(
        `DELETE FROM commands WHERE host_id = $1 AND status <> 'taken' AND created_at < now() - interval '${KEEP_H} hours'`,
        [hostId],
      );
      return res.affectedRows ?? 0;
    },
  };
}

export type CommandsTable = ReturnType<typeof commandsTable>;
