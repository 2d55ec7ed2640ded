import type { TeamHost as Host } from '../../schemas/host.ts';
import { LIVE_STATUSES } from '../../schemas/session.ts';
import type { Db } from './db.ts';
import type { EventsTable, RecordEvent } from './events.ts';

// A host is online while its heartbeat is fresher than this (DESIGN §14.2).
export const ONLINE_S = 15;

interface Row {
  id: string;
  name: string;
  version: string;
  started_at: Date;
  seen_at: Date;
  online: boolean;
  running: number;
  accept_remote: boolean;
}

// Online and running are read from the store's clock and rows, so every host answers alike. A
// heartbeat is not enough: a command to the host withdrawn untaken since its command loop last
// looked at its queue (`unresponsive`) says the host does not act, until the loop looks again.
const SELECT = `SELECT h.id, h.name, h.version, h.started_at, h.seen_at, h.accept_remote,
  (NOT h.stopped AND NOT h.unresponsive AND h.seen_at > now() - interval '${ONLINE_S} seconds') AS online,
  (SELECT count(*)::int FROM sessions s WHERE s.host_id = h.id AND s.status IN (${LIVE_STATUSES.map((s) => `'${s}'`).join(', ')})) AS running
  FROM hosts h`;

const toHost = (r: Row): Host => ({
  kind: 'team',
  id: r.id,
  name: r.name,
  version: r.version,
  online: r.online,
  started_at: r.started_at.toISOString(),
  seen_at: r.seen_at.toISOString(),
  running: r.running,
  accept_remote: r.accept_remote,
});

// The host as GET /api/hosts shows it, read inside a transaction, and the event that says so.
async function recordHost(tx: Db, record: RecordEvent, type: 'host.online' | 'host.offline', id: string): Promise<Host> {
  const { rows } = await tx.query<Row>(`${SELECT} WHERE h.id = $1`, [id]);
  const host = toHost(rows[0]!);
  await record({ type, project_id: null, data: host });
  return host;
}

// The hosts table (DESIGN §14.2) and the rows it makes this host's; every change of a host's
// online state is recorded as an event with it (DESIGN §11).
export function hostsTable(db: Db, events: EventsTable) {
  return {
    async list(): Promise<Host[]> {
      const { rows } = await db.query<Row>(`${SELECT} ORDER BY h.name, h.id`);
      return rows.map(toHost);
    },
    async get(id: string): Promise<Host | null> {
      const { rows } = await db.query<Row>(`${SELECT} WHERE h.id = $1`, [id]);
      return rows[0] ? toHost(rows[0]) : null;
    },
    // A daemon starting: its row made or renewed, host.online recorded, and the rows made before
    // hosts existed (their host_id null) become its own: they were on its disk.
    async start(h: Pick<Host, 'id' | 'name' | 'version'> & { accept_remote?: boolean }): Promise<Host> {
      return events.tx(async (tx, record) => {
        await tx.query(
          `INSERT INTO hosts (id, name, version, accept_remote) VALUES ($1, $2, $3, $4)
           ON CONFLICT (id) DO UPDATE SET name = $2, version = $3, accept_remote = $4, started_at = now(), seen_at = now(), stopped = false, unresponsive = false`,
          [h.id, h.name, h.version, h.accept_remote ?? true],
        );
        for (const table of ['projects', 'tasks', 'sessions']) {
          await tx.query(`UPDATE ${table} SET host_id = $1 WHERE host_id IS NULL`, [h.id]);
        }
        return recordHost(tx, record, 'host.online', h.id);
      });
    },
    // One heartbeat: this host seen now (online again, with its event, if another host had
    // recorded it offline), then, in a transaction of its own, every other host whose heartbeat
    // is stale recorded offline. A row another daemon holds is skipped (its owner refreshing it,
    // or another host recording it offline): each host.offline goes out once, and no two
    // heartbeats wait on each other.
    async beat(id: string): Promise<void> {
      await events.tx(async (tx, record) => {
        const { rows } = await tx.query<{ stopped: boolean; unresponsive: boolean }>('SELECT stopped, unresponsive FROM hosts WHERE id = $1 FOR UPDATE', [id]);
        await tx.query('UPDATE hosts SET seen_at = now(), stopped = false WHERE id = $1', [id]);
        if (rows[0]?.stopped && !rows[0].unresponsive) await recordHost(tx, record, 'host.online', id);
      });
      await events.tx(async (tx, record) => {
        const stale = await tx.query<{ id: string; unresponsive: boolean }>(
          `UPDATE hosts SET stopped = true WHERE id IN (
             SELECT id FROM hosts WHERE id <> $1 AND NOT stopped AND seen_at <= now() - interval '${ONLINE_S} seconds' FOR UPDATE SKIP LOCKED)
           RETURNING id, unresponsive`,
          [id],
        );
        for (const r of stale.rows) if (!r.unresponsive) await recordHost(tx, record, 'host.offline', r.id);
      });
    },
    // A command to the host was withdrawn untaken: offline (host.offline, once) until its
    // command loop looks at its queue again, whatever its heartbeat says.
    async unresponsive(id: string): Promise<void> {
      await events.tx(async (tx, record) => {
        const { rows } = await tx.query<{ stopped: boolean }>('UPDATE hosts SET unresponsive = true WHERE id = $1 AND NOT unresponsive RETURNING stopped', [id]);
        if (rows[0] && !rows[0].stopped) await recordHost(tx, record, 'host.offline', id);
      });
    },
    // This host's command loop looked at its queue: online again (host.online) if a withdrawn
    // command had taken it offline and its heartbeat is fresh.
    async polled(id: string): Promise<void> {
      await events.tx(async (tx, record) => {
        const { rows } = await tx.query<{ unresponsive: boolean; stopped: boolean }>('SELECT unresponsive, stopped FROM hosts WHERE id = $1 FOR UPDATE', [id]);
        await tx.query('UPDATE hosts SET polled_at = now(), unresponsive = false WHERE id = $1', [id]);
        if (rows[0]?.unresponsive && !rows[0].stopped) await recordHost(tx, record, 'host.online', id);
      });
    },
    // A clean stop: offline at once, rather than after the heartbeat goes stale.
    async stop(id: string): Promise<void> {
      await events.tx(async (tx, record) => {
        const res = await tx.query('UPDATE hosts SET stopped = true WHERE id = $1 AND NOT stopped', [id]);
        if ((res.affectedRows ?? 0) > 0) await recordHost(tx, record, 'host.offline', id);
      });
    },
  };
}

export type HostsTable = ReturnType<typeof hostsTable>;
