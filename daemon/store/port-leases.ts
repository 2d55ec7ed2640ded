import type { Db } from './db.ts';

// The port_leases table: which host ports live tasks hold.
export function portLeasesTable(db: Db) {
  return {
    async held(): Promise<Set<number>> {
      const { rows } = await db.query<{ port: number }>('SELECT port FROM port_leases');
      return new Set(rows.map((r) => r.port));
    },
  };
}

export type PortLeasesTable = ReturnType<typeof portLeasesTable>;
