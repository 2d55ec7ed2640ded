import type { DeclaredIntake, IntakeSession } from '../../schemas/intake.ts';
import type { Land } from '../../schemas/automation.ts';
import type { Static } from '@sinclair/typebox';
import type { Db } from './db.ts';

// A project's watch of a repository's labelled issues (DESIGN §20), one per project.
export interface StoredIntake {
  project_id: string;
  provider: 'github';
  repository: string;
  label: string;
  session: IntakeSession;
  land: Static<typeof Land>;
  interval_s: number;
  source: 'api' | 'file';
  /** with source file: the .grove.json entry as last applied */
  declared: DeclaredIntake | null;
  created_at: string;
}

interface Row {
  project_id: string;
  provider: 'github';
  repository: string;
  label: string;
  spec: { session: IntakeSession; land: Static<typeof Land>; interval_s: number };
  source: 'api' | 'file';
  declared: DeclaredIntake | null;
  created_at: Date;
}

const toIntake = (r: Row): StoredIntake => ({
  project_id: r.project_id,
  provider: r.provider,
  repository: r.repository,
  label: r.label,
  session: r.spec.session,
  land: r.spec.land,
  interval_s: r.spec.interval_s,
  source: r.source,
  declared: r.declared,
  created_at: r.created_at.toISOString(),
});

export function intakesTable(db: Db) {
  return {
    async get(projectId: string): Promise<StoredIntake | null> {
      const { rows } = await db.query<Row>('SELECT * FROM intakes WHERE project_id = $1', [projectId]);
      return rows[0] ? toIntake(rows[0]) : null;
    },
    // The watches of this host's projects.
    async ofHost(hostId: string): Promise<StoredIntake[]> {
      const { rows } = await db.query<Row>('SELECT i.* FROM intakes i JOIN projects p ON p.id = i.project_id WHERE p.host_id = $1 ORDER BY i.created_at', [hostId]);
      return rows.map(toIntake);
    },
    // Made, or replaced as a whole (its items stay: what was taken is not taken again).
    async put(i: Omit<StoredIntake, 'created_at'>): Promise<StoredIntake> {
      const { rows } = await db.query<Row>(
        `INSERT INTO intakes (project_id, provider, repository, label, spec, source, declared) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (project_id) DO UPDATE SET provider = EXCLUDED.provider, repository = EXCLUDED.repository, label = EXCLUDED.label,
           spec = EXCLUDED.spec, source = EXCLUDED.source, declared = EXCLUDED.declared
         RETURNING *`,
        [i.project_id, i.provider, i.repository, i.label, JSON.stringify({ session: i.session, land: i.land, interval_s: i.interval_s }), i.source, i.declared === null ? null : JSON.stringify(i.declared)],
      );
      return toIntake(rows[0]!);
    },
    async remove(projectId: string): Promise<boolean> {
      const res = await db.query('DELETE FROM intakes WHERE project_id = $1', [projectId]);
      return (res.affectedRows ?? 0) > 0;
    },
  };
}

export type IntakesTable = ReturnType<typeof intakesTable>;
