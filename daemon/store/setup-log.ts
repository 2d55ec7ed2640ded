import type { OutputLine } from '../../schemas/output.ts';
import type { SetupCommand } from '../../schemas/task.ts';
import type { Db } from './db.ts';

export interface LineInput {
  stream: 'stdout' | 'stderr';
  text: string;
  at: string;
}

// The setup_commands and setup_lines tables: what a task's setup ran and printed.
export function setupLogTable(db: Db) {
  return {
    async commandStarted(taskId: string, idx: number, command: string, startedAt: string): Promise<void> {
      await db.query('INSERT INTO setup_commands (task_id, idx, command, started_at) VALUES ($1, $2, $3, $4)', [
        taskId,
        idx,
        command,
        startedAt,
      ]);
    },
    async commandEnded(
      taskId: string,
      idx: number,
      r: { exit_code: number | null; signal: string | null; timed_out: boolean; ended_at: string },
    ): Promise<void> {
      await db.query(
        'UPDATE setup_commands SET exit_code = $3, signal = $4, timed_out = $5, ended_at = $6 WHERE task_id = $1 AND idx = $2',
        [taskId, idx, r.exit_code, r.signal, r.timed_out, r.ended_at],
      );
    },
    // Appends lines with contiguous seq numbers, in one statement.
    async appendLines(taskId: string, firstSeq: number, lines: LineInput[]): Promise<void> {
      if (lines.length === 0) return;
      await db.query(
        `INSERT INTO setup_lines (task_id, seq, stream, text, at)
         SELECT $1, $2 + o - 1, s, t, a::timestamptz
         FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(s, t, a, o)`,
        [taskId, firstSeq, lines.map((l) => l.stream), lines.map((l) => l.text), lines.map((l) => l.at)],
      );
    },
    async commands(taskId: string): Promise<SetupCommand[]> {
      const { rows } = await db.query<{
        command: string;
        exit_code: number | null;
        signal: string | null;
        timed_out: boolean;
        started_at: Date;
        ended_at: Date | null;
      }>('SELECT command, exit_code, signal, timed_out, started_at, ended_at FROM setup_commands WHERE task_id = $1 ORDER BY idx', [taskId]);
      return rows.map((r) => ({
        command: r.command,
        exit_code: r.exit_code,
        signal: r.signal,
        timed_out: r.timed_out,
        started_at: r.started_at.toISOString(),
        ended_at: r.ended_at ? r.ended_at.toISOString() : null,
      }));
    },
    async lines(taskId: string, after = 0): Promise<OutputLine[]> {
      const { rows } = await db.query<{ seq: number; stream: 'stdout' | 'stderr'; text: string; at: Date }>(
        'SELECT seq, stream, text, at FROM setup_lines WHERE task_id = $1 AND seq > $2 ORDER BY seq',
        [taskId, after],
      );
      return rows.map((r) => ({ seq: r.seq, stream: r.stream, text: r.text, at: r.at.toISOString() }));
    },
  };
}

export type SetupLogTable = ReturnType<typeof setupLogTable>;
