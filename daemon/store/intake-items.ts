import type { IntakeItem } from '../../schemas/intake.ts';
import type { Db } from './db.ts';
import type { EventsTable } from './events.ts';

// An issue's label event as intake dealt with it (DESIGN §20): claimed once by its unique key.
export type StoredItem = IntakeItem & { id: string; project_id: string; reported: 'working' | 'landing' | 'done' | 'failed' | null; host_id: string };

interface Row extends Omit<StoredItem, 'created_at'> {
  created_at: Date;
}
const toItem = (r: Row): StoredItem => ({ ...r, created_at: r.created_at.toISOString() });
export const publicItem = (i: StoredItem): IntakeItem => {
  const { id: _id, project_id: _p, reported: _r, host_id: _h, ...pub } = i;
  return pub;
};

export type NewItem = Pick<StoredItem, 'id' | 'project_id' | 'repository' | 'number' | 'label_event' | 'title' | 'url' | 'actor' | 'host_id'>;

// How many of a project's items its intake shows.
const SHOWN = 100;

export function intakeItemsTable(db: Db, events: EventsTable) {
  return {
    // The item of an issue's label event, if it was dealt with.
    async find(repository: string, number: number, labelEvent: string): Promise<StoredItem | null> {
      const { rows } = await db.query<Row>('SELECT * FROM intake_items WHERE repository = $1 AND number = $2 AND label_event = $3', [repository, number, labelEvent]);
      return rows[0] ? toItem(rows[0]) : null;
    },
    // Claims the label event to take it: the item, or null when it was already dealt with (here
    // or by another daemon of the store).
    async claim(i: NewItem): Promise<StoredItem | null> {
      const { rows } = await db.query<Row>(
        `INSERT INTO intake_items (id, project_id, repository, number, label_event, title, url, actor, outcome, host_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'claimed', $9)
         ON CONFLICT (repository, number, label_event) DO NOTHING RETURNING *`,
        [i.id, i.project_id, i.repository, i.number, i.label_event, i.title, i.url, i.actor, i.host_id],
      );
      return rows[0] ? toItem(rows[0]) : null;
    },
    // A refusal, recorded once with its event: false when the label event was dealt with already.
    async refuse(i: NewItem, reason: string): Promise<boolean> {
      return events.tx(async (tx, record) => {
        const { rows } = await tx.query<Row>(
          `INSERT INTO intake_items (id, project_id, repository, number, label_event, title, url, actor, outcome, reason, host_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'refused', $9, $10)
           ON CONFLICT (repository, number, label_event) DO NOTHING RETURNING *`,
          [i.id, i.project_id, i.repository, i.number, i.label_event, i.title, i.url, i.actor, reason, i.host_id],
        );
        if (!rows[0]) return false;
        await record({ type: 'intake.refused', project_id: i.project_id, data: publicItem(toItem(rows[0])) });
        return true;
      });
    },
    // The claimed item's task made: taken, with its event.
    async taken(id: string, taskId: string, sessionId: string | null): Promise<StoredItem | null> {
      return events.tx(async (tx, record) => {
        const { rows } = await tx.query<Row>(`UPDATE intake_items SET outcome = 'taken', task_id = $2, session_id = $3 WHERE id = $1 AND outcome = 'claimed' RETURNING *`, [id, taskId, sessionId]);
        if (!rows[0]) return null;
        const item = toItem(rows[0]);
        await record({ type: 'intake.taken', project_id: item.project_id, task_id: taskId, ...(sessionId ? { session_id: sessionId } : {}), data: publicItem(item) });
        return item;
      });
    },
    async fail(id: string, reason: string): Promise<void> {
      await db.query(`UPDATE intake_items SET outcome = 'failed', reason = $2 WHERE id = $1 AND outcome = 'claimed'`, [id, reason]);
    },
    // Where the write-back is; true when this call moved it (from one of `from`).
    async report(id: string, reported: NonNullable<StoredItem['reported']>, from: Array<StoredItem['reported']>): Promise<boolean> {
      const nulls = from.includes(null);
      const named = from.filter((x) => x !== null);
      const res = await db.query(`UPDATE intake_items SET reported = $2 WHERE id = $1 AND (${nulls ? 'reported IS NULL OR ' : ''}reported = ANY($3::text[]))`, [id, reported, named]);
      return (res.affectedRows ?? 0) > 0;
    },
    async ofTask(taskId: string): Promise<StoredItem | null> {
      const { rows } = await db.query<Row>('SELECT * FROM intake_items WHERE task_id = $1 ORDER BY created_at DESC LIMIT 1', [taskId]);
      return rows[0] ? toItem(rows[0]) : null;
    },
    // Items of this host whose work is still followed: claimed (a stop cut the task's making
    // short) or taken and not yet reported done or failed.
    async open(hostId: string): Promise<StoredItem[]> {
      const { rows } = await db.query<Row>(
        `SELECT * FROM intake_items WHERE host_id = $1 AND (outcome = 'claimed' OR (outcome = 'taken' AND (reported IS NULL OR reported IN ('working', 'landing')))) ORDER BY created_at`,
        [hostId],
      );
      return rows.map(toItem);
    },
    async list(projectId: string): Promise<StoredItem[]> {
      const { rows } = await db.query<Row>(`SELECT * FROM intake_items WHERE project_id = $1 ORDER BY created_at DESC, id LIMIT ${SHOWN}`, [projectId]);
      return rows.map(toItem);
    },
  };
}

export type IntakeItemsTable = ReturnType<typeof intakeItemsTable>;
