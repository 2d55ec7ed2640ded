import type { MergeStrategy } from '../../schemas/review.ts';
import type { QueueEntry, QueueState } from '../../schemas/queue.ts';
import type { Db } from './db.ts';
import type { EventsTable } from './events.ts';

interface Row {
  task_id: string;
  project_id: string;
  base: string;
  pos: string | number;
  position?: string | number;
  strategy: MergeStrategy;
  fix: boolean;
  tries: number;
  state: QueueState;
  reason: string | null;
  files: string[] | null;
  output: string[] | null;
  fix_session: string | null;
  added_at: Date;
}

const toEntry = (r: Row): QueueEntry => ({
  task_id: r.task_id,
  project_id: r.project_id,
  base: r.base,
  position: Number(r.position ?? 1),
  strategy: r.strategy,
  fix: r.fix,
  tries: r.tries,
  state: r.state,
  reason: r.reason,
  files: r.files,
  output: r.output,
  fix_session: r.fix_session,
  added_at: r.added_at.toISOString(),
});

// An entry's place among those of its queue (its project and base branch).
const WITH_POSITION = `SELECT q.*, (SELECT count(*) FROM queue_entries o WHERE o.project_id = q.project_id AND o.base = q.base AND o.pos <= q.pos) AS position FROM queue_entries q`;

// Why a landing failed, as its event and the entry say it.
export interface Failure {
  reason: string;
  files?: string[] | undefined;
  output?: string[] | undefined;
}

// The merge queue (DESIGN §17): every change is recorded with its event (queue.added,
// queue.landing, queue.landed, queue.failed, queue.removed) in the same transaction.
export function queueTable(db: Db, events: EventsTable) {
  async function entry(tx: Db, taskId: string): Promise<QueueEntry | null> {
    const { rows } = await tx.query<Row>(`${WITH_POSITION} WHERE q.task_id = $1`, [taskId]);
    return rows[0] ? toEntry(rows[0]) : null;
  }

  return {
    get: (taskId: string) => entry(db, taskId),
    async list(projectId: string): Promise<QueueEntry[]> {
      const { rows } = await db.query<Row>(`${WITH_POSITION} WHERE q.project_id = $1 ORDER BY q.base, q.pos`, [projectId]);
      return rows.map(toEntry);
    },
    // The entry, or null when the task is queued already (the key says so, whatever races).
    async add(e: { task_id: string; project_id: string; base: string; strategy: MergeStrategy; fix: boolean }): Promise<QueueEntry | null> {
      return events.tx(async (tx, record) => {
        const res = await tx.query(
          `INSERT INTO queue_entries (task_id, project_id, base, strategy, fix) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (task_id) DO NOTHING`,
          [e.task_id, e.project_id, e.base, e.strategy, e.fix],
        );
        if ((res.affectedRows ?? 0) === 0) return null;
        const added = (await entry(tx, e.task_id))!;
        await record({ type: 'queue.added', project_id: e.project_id, task_id: e.task_id, data: added });
        return added;
      });
    },
    // Takes the entry out unless it is landing: 'removed', 'landing', or null when not queued.
    // Its event (queue.removed, with the entry as it was) lets the boards that show it drop it.
    async remove(taskId: string): Promise<'removed' | 'landing' | null> {
      return events.tx(async (tx, record) => {
        const { rows } = await tx.query<{ state: QueueState }>('SELECT state FROM queue_entries WHERE task_id = $1 FOR UPDATE', [taskId]);
        if (!rows[0]) return null;
        if (rows[0].state === 'landing') return 'landing';
        const e = (await entry(tx, taskId))!;
        await tx.query('DELETE FROM queue_entries WHERE task_id = $1', [taskId]);
        await record({ type: 'queue.removed', project_id: e.project_id, task_id: taskId, data: { ...e, state: 'removed' } });
        return 'removed';
      });
    },
    // The bases of a project with entries waiting: each is a queue to run.
    async waitingBases(projectId: string): Promise<string[]> {
      const { rows } = await db.query<{ base: string }>(`SELECT DISTINCT base FROM queue_entries WHERE project_id = $1 AND state = 'waiting'`, [projectId]);
      return rows.map((r) => r.base);
    },
    // The projects with entries waiting, of those given (this host's).
    async projectsWaiting(projectIds: string[]): Promise<string[]> {
      const { rows } = await db.query<{ project_id: string }>(`SELECT DISTINCT project_id FROM queue_entries WHERE state = 'waiting' AND project_id = ANY($1::uuid[])`, [projectIds]);
      return rows.map((r) => r.project_id);
    },
    // The first waiting entry of a queue, now `landing`, its tries counted (queue.landing); null
    // when none waits. The row lock makes the claim one even if two landers asked at once.
    async claim(projectId: string, base: string): Promise<QueueEntry | null> {
      return events.tx(async (tx, record) => {
        const { rows } = await tx.query<{ task_id: string }>(
          `UPDATE queue_entries SET state = 'landing', tries = tries + 1 WHERE task_id = (
             SELECT task_id FROM queue_entries WHERE project_id = $1 AND base = $2 AND state = 'waiting'
             ORDER BY pos LIMIT 1 FOR UPDATE SKIP LOCKED
           ) AND state = 'waiting' RETURNING task_id`,
          [projectId, base],
        );
        if (!rows[0]) return null;
        const claimed = (await entry(tx, rows[0].task_id))!;
        await record({ type: 'queue.landing', project_id: projectId, task_id: claimed.task_id, data: claimed });
        return claimed;
      });
    },
    async landed(e: QueueEntry, result: { commit: string; strategy: MergeStrategy }): Promise<void> {
      await events.tx(async (tx, record) => {
        await tx.query('DELETE FROM queue_entries WHERE task_id = $1', [e.task_id]);
        await record({ type: 'queue.landed', project_id: e.project_id, task_id: e.task_id, data: { ...e, state: 'landed', ...result } });
      });
    },
    // A failed landing: out of the queue, or (`fixSession`) waiting for that session to end.
    async failed(e: QueueEntry, why: Failure, fixSession: string | null, note?: string): Promise<void> {
      await events.tx(async (tx, record) => {
        const files = why.files ?? null;
        const output = why.output ?? null;
        if (fixSession) {
          await tx.query(`UPDATE queue_entries SET state = 'fixing', reason = $2, files = $3, output = $4, fix_session = $5 WHERE task_id = $1`, [
            e.task_id,
            why.reason,
            files === null ? null : JSON.stringify(files),
            output === null ? null : JSON.stringify(output),
            fixSession,
          ]);
        } else {
          await tx.query('DELETE FROM queue_entries WHERE task_id = $1', [e.task_id]);
        }
        const data = { ...e, state: fixSession ? 'fixing' : 'out', reason: why.reason, files, output, fix_session: fixSession, ...(note ? { note } : {}) };
        await record({ type: 'queue.failed', project_id: e.project_id, task_id: e.task_id, data });
      });
    },
    // A fix session ended: the entry goes to the back of its queue, and is announced again.
    async requeue(taskId: string, fixSession: string): Promise<QueueEntry | null> {
      return events.tx(async (tx, record) => {
        const res = await tx.query(
          `UPDATE queue_entries SET state = 'waiting', fix_session = NULL, pos = nextval(pg_get_serial_sequence('queue_entries', 'pos'))
           WHERE task_id = $1 AND state = 'fixing' AND fix_session = $2`,
          [taskId, fixSession],
        );
        if ((res.affectedRows ?? 0) === 0) return null;
        const e = (await entry(tx, taskId))!;
        await record({ type: 'queue.added', project_id: e.project_id, task_id: taskId, data: e });
        return e;
      });
    },
    // The check that runs now for the entry: its process group, or none.
    async setCheckPid(taskId: string, pid: number | null, pidStart: string | null): Promise<void> {
      await db.query('UPDATE queue_entries SET check_pid = $2, check_pid_start = $3 WHERE task_id = $1', [taskId, pid, pidStart]);
    },
    // At start: landings a stopped daemon cut short wait their turn again (first in their queue:
    // their place is kept), once the landing journal has put their git right; the checks they
    // were running are returned, to be stopped.
    async resetLanding(projectIds: string[]): Promise<Array<{ pid: number | null; pid_start: string | null }>> {
      const { rows } = await db.query<{ pid: number | null; pid_start: string | null }>(
        `UPDATE queue_entries q SET state = 'waiting', check_pid = NULL, check_pid_start = NULL
         FROM (SELECT task_id, check_pid, check_pid_start FROM queue_entries WHERE state = 'landing' AND project_id = ANY($1::uuid[]) FOR UPDATE) old
         WHERE q.task_id = old.task_id RETURNING old.check_pid AS pid, old.check_pid_start AS pid_start`,
        [projectIds],
      );
      return rows;
    },
    async fixing(projectIds: string[]): Promise<Array<{ task_id: string; fix_session: string }>> {
      const { rows } = await db.query<{ task_id: string; fix_session: string }>(
        `SELECT task_id, fix_session FROM queue_entries WHERE state = 'fixing' AND fix_session IS NOT NULL AND project_id = ANY($1::uuid[])`,
        [projectIds],
      );
      return rows;
    },
  };
}

export type QueueTable = ReturnType<typeof queueTable>;
