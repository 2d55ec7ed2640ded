import type { EventQuery, EventType, GroveEvent } from '../../schemas/event.ts';
import type { Db } from './db.ts';

// An event as recorded: its seq and time come from the store.
export type NewEvent = Pick<GroveEvent, 'type' | 'project_id' | 'data'> & Partial<Pick<GroveEvent, 'task_id' | 'session_id'>>;

// Records `e` inside the caller's transaction.
export type RecordEvent = (e: NewEvent) => Promise<void>;

// Which events a reader follows: the event query's filters (schemas/event.ts).
export type EventFilter = Pick<EventQuery, 'project_id' | 'task_id'>;

interface Row {
  seq: string | number;
  type: EventType;
  at: Date;
  project_id: string | null;
  task_id: string | null;
  session_id: string | null;
  host_id: string | null;
  data: unknown;
}

const toEvent = (r: Row): GroveEvent => ({
  seq: Number(r.seq),
  type: r.type,
  at: r.at.toISOString(),
  project_id: r.project_id,
  task_id: r.task_id,
  session_id: r.session_id,
  host_id: r.host_id,
  data: r.data,
});

// Whether an event passes a filter (the store's query and the live tail use the same rule).
export function matches(e: GroveEvent, f: EventFilter): boolean {
  return (f.project_id === undefined || e.project_id === f.project_id) && (f.task_id === undefined || e.task_id === f.task_id);
}

// Who records: this daemon's host (each event says where it happened), and whether other daemons
// share the store.
export interface Recorder {
  hostId: string | null;
  shared: boolean;
}

// The key of the advisory lock that recording transactions take in turn on a shared store.
const EVENTS_LOCK = 0x67726f7665;

// The events table (DESIGN §11): `tx` runs a change and the events describing it in one
// transaction, and hands the events to `published` once it has committed (and waits for it);
// a change without its event, or an event without its change, cannot happen.
export function eventsTable(db: Db, published: (events: GroveEvent[]) => void | Promise<void>, by: Recorder = { hostId: null, shared: false }) {
  return {
    async tx<T>(fn: (tx: Db, record: RecordEvent) => Promise<T>): Promise<T> {
      const recorded: GroveEvent[] = [];
      const out = await db.transaction(async (tx) => {
        // Commit order is seq order: two daemons' transactions could otherwise commit out of seq
        // order, and a reader of `seq > last` would skip forever the one that commits later. The
        // lock is taken first, before any row lock, so that recording transactions never
        // deadlock on each other. PGlite has one writer: no need.
        if (by.shared) await tx.query('SELECT pg_advisory_xact_lock($1)', [EVENTS_LOCK]);
        return fn(tx, async (e) => {
          const { rows } = await tx.query<Row>(
            `INSERT INTO events (type, project_id, task_id, session_id, host_id, data) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
            [e.type, e.project_id, e.task_id ?? null, e.session_id ?? null, by.hostId, JSON.stringify(e.data)],
          );
          recorded.push(toEvent(rows[0]!));
        });
      });
      if (recorded.length > 0) await published(recorded);
      return out;
    },
    async lastSeq(): Promise<number> {
      const { rows } = await db.query<{ n: string | number | null }>('SELECT max(seq) AS n FROM events');
      return Number(rows[0]?.n ?? 0);
    },
    async page(filter: EventFilter, after: number, limit: number): Promise<GroveEvent[]> {
      const { rows } = await db.query<Row>(
        `SELECT * FROM events WHERE seq > $1 AND ($2::uuid IS NULL OR project_id = $2) AND ($3::uuid IS NULL OR task_id = $3)
         ORDER BY seq LIMIT $4`,
        [after, filter.project_id ?? null, filter.task_id ?? null, limit],
      );
      return rows.map(toEvent);
    },
    // Deletes the oldest events beyond the newest `keep`, at most `batch` of them: short
    // statements, so writes wait for none of it long.
    async prune(keep: number, batch: number): Promise<number> {
      const res = await db.query(
        `DELETE FROM events WHERE seq IN (
           SELECT seq FROM events WHERE seq <= (SELECT seq FROM events ORDER BY seq DESC OFFSET $1 LIMIT 1) ORDER BY seq LIMIT $2)`,
        [keep, batch],
      );
      return res.affectedRows ?? 0;
    },
  };
}

export type EventsTable = ReturnType<typeof eventsTable>;
