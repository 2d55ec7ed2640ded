import type { OutputLine } from '../../schemas/output.ts';
import type { SetupCommand } from '../../schemas/task.ts';
import type { Db } from './db.ts';
import { iso, toLine, type LineRow } from './rows.ts';

export type LineInput = Omit<OutputLine, 'seq'>;

// What a log belongs to: the task's setup, or the teardown of its archive (DESIGN §10).
export type Phase = 'setup' | 'teardown';

// The tasks whose log of `phase` a stopped daemon may have left unfinished.
const UNFINISHED: Record<Phase, string> = {
  setup: `t.status = 'setting_up'`,
  teardown: `t.archiving_since IS NOT NULL AND t.status <> 'archived'`,
};

// The setup_commands and setup_lines tables: what a task's setup (or teardown) ran and printed.
export function setupLogTable(db: Db, phase: Phase = 'setup') {
  return {
    phase,
    async commandStarted(taskId: string, idx: number, command: string, startedAt: string): Promise<void> {
      await db.query('INSERT INTO setup_commands (task_id, idx, command, started_at, phase) VALUES ($1, $2, $3, $4, $5)', [
        taskId,
        idx,
        command,
        startedAt,
        phase,
      ]);
    },
    async commandSpawned(taskId: string, idx: number, pid: number, pidStart: string | null): Promise<void> {
      await db.query('UPDATE setup_commands SET pid = $3, pid_start = $4 WHERE task_id = $1 AND idx = $2 AND phase = $5', [taskId, idx, pid, pidStart, phase]);
    },
    // Commands of setups (or teardowns) a stopped daemon left unfinished: ended now, their
    // processes returned so the caller can stop whatever of them still runs.
    // A host's own commands: another host's pids are not this machine's.
    async endInterrupted(hostId: string): Promise<Array<{ task_id: string; pid: number | null; pid_start: string | null }>> {
      return db.transaction(async (tx) => {
        const { rows } = await tx.query<{ task_id: string; pid: number | null; pid_start: string | null }>(
          `UPDATE setup_commands c SET ended_at = now(), interrupted = true
           FROM tasks t WHERE t.id = c.task_id AND ${UNFINISHED[phase]} AND t.host_id = $2 AND c.ended_at IS NULL AND c.phase = $1
           RETURNING c.task_id, c.pid, c.pid_start`,
          [phase, hostId],
        );
        // The log says why the command has no exit code.
        await tx.query(
          `INSERT INTO setup_lines (task_id, seq, stream, text, at, idx, phase)
           SELECT t.id, coalesce((SELECT max(seq) FROM setup_lines l WHERE l.task_id = t.id AND l.phase = $1), 0) + 1, 'stderr',
                  'grove: ' || $1 || ' interrupted: the daemon stopped while it ran', now(),
                  (SELECT max(idx) FROM setup_commands c WHERE c.task_id = t.id AND c.phase = $1), $1
           FROM tasks t WHERE ${UNFINISHED[phase]} AND t.host_id = $2`,
          [phase, hostId],
        );
        return rows;
      });
    },
    async commandEnded(
      taskId: string,
      idx: number,
      r: { exit_code: number | null; signal: string | null; timed_out: boolean; ended_at: string },
    ): Promise<void> {
      await db.query(
        'UPDATE setup_commands SET exit_code = $3, signal = $4, timed_out = $5, ended_at = $6 WHERE task_id = $1 AND idx = $2 AND phase = $7',
        [taskId, idx, r.exit_code, r.signal, r.timed_out, r.ended_at, phase],
      );
    },
    // Appends lines with contiguous seq numbers, in one statement (`idx` -1: before every
    // command, such as the report of copied files).
    async appendLines(taskId: string, firstSeq: number, lines: LineInput[], idx: number): Promise<void> {
      if (lines.length === 0) return;
      await db.query(
        `INSERT INTO setup_lines (task_id, seq, stream, text, at, idx, phase)
         SELECT $1, $2 + o - 1, s, t, a::timestamptz, $6, $7
         FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(s, t, a, o)`,
        [taskId, firstSeq, lines.map((l) => l.stream), lines.map((l) => l.text), lines.map((l) => l.at), idx, phase],
      );
    },
    // The last seq of the log, 0 when it has no line.
    async lastSeq(taskId: string): Promise<number> {
      const { rows } = await db.query<{ n: number }>('SELECT coalesce(max(seq), 0)::int AS n FROM setup_lines WHERE task_id = $1 AND phase = $2', [taskId, phase]);
      return rows[0]?.n ?? 0;
    },
    // Lines with the index of the command that printed them (null for lines stored before 0004).
    async linesWithCommand(taskId: string, after: number): Promise<Array<{ line: OutputLine; idx: number | null }>> {
      const { rows } = await db.query<LineRow & { idx: number | null }>(
        'SELECT seq, stream, text, at, idx FROM setup_lines WHERE task_id = $1 AND seq > $2 AND phase = $3 ORDER BY seq',
        [taskId, after, phase],
      );
      return rows.map((r) => ({ line: toLine(r), idx: r.idx }));
    },
    async commands(taskId: string): Promise<SetupCommand[]> {
      const { rows } = await db.query<{
        command: string;
        exit_code: number | null;
        signal: string | null;
        timed_out: boolean;
        interrupted: boolean;
        started_at: Date;
        ended_at: Date | null;
      }>('SELECT command, exit_code, signal, timed_out, interrupted, started_at, ended_at FROM setup_commands WHERE task_id = $1 AND phase = $2 ORDER BY idx', [taskId, phase]);
      return rows.map((r) => ({
        command: r.command,
        exit_code: r.exit_code,
        signal: r.signal,
        timed_out: r.timed_out,
        interrupted: r.interrupted,
        started_at: r.started_at.toISOString(),
        ended_at: iso(r.ended_at),
      }));
    },
    async lines(taskId: string, after = 0): Promise<OutputLine[]> {
      const { rows } = await db.query<LineRow>(
        'SELECT seq, stream, text, at FROM setup_lines WHERE task_id = $1 AND seq > $2 AND phase = $3 ORDER BY seq',
        [taskId, after, phase],
      );
      return rows.map(toLine);
    },
  };
}

export type SetupLogTable = ReturnType<typeof setupLogTable>;
