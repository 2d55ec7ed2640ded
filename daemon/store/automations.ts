import type { Automation, AutomationRun } from '../../schemas/automation.ts';
import type { Db } from './db.ts';
import type { EventsTable } from './events.ts';
import { iso } from './rows.ts';
import { isUniqueViolation } from './projects.ts';

// What an automation is, as the API shows it (its defaults filled in), stored as one document.
export type AutomationSpec = Pick<Automation, 'schedule' | 'session' | 'task' | 'precheck' | 'land' | 'missed' | 'overlap'>;

export interface AutomationRow {
  id: string;
  project_id: string | null;
  repository: string | null;
  name: string;
  spec: AutomationSpec;
  enabled: boolean;
  source: 'api' | 'file';
  declared: unknown;
  cursor: Date;
  next_run_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

// An automation as stored: the API's shape (without its last run), the scheduler's cursor and,
// for one from .grove.json, its entry there as last applied.
export type StoredAutomation = Omit<Automation, 'last_run'> & { cursor: string; declared: unknown };

export const toStoredAutomation = (r: AutomationRow): StoredAutomation => ({
  id: r.id,
  project_id: r.project_id,
  repository: r.repository,
  name: r.name,
  ...r.spec,
  enabled: r.enabled,
  source: r.source,
  declared: r.declared,
  cursor: r.cursor.toISOString(),
  next_run_at: iso(r.next_run_at),
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

export const publicAutomation = (a: StoredAutomation, lastRun: AutomationRun | null): Automation => {
  const { cursor: _, declared: _d, ...pub } = a;
  return { ...pub, last_run: lastRun };
};

const specOf = (a: Pick<StoredAutomation, keyof AutomationSpec>): AutomationSpec => ({
  schedule: a.schedule,
  session: a.session,
  task: a.task,
  precheck: a.precheck,
  land: a.land,
  missed: a.missed,
  overlap: a.overlap,
});

export const AUTOMATION_COLUMNS = 'id, project_id, repository, name, spec, enabled, source, declared, cursor, next_run_at, created_at, updated_at';

// The projects an automation runs in: its own, or every one of its repository.
const THIS_HOSTS = '(p.id = a.project_id OR (a.project_id IS NULL AND p.repository = a.repository))';

export type NewAutomation = Pick<StoredAutomation, 'id' | 'project_id' | 'repository' | 'name' | 'enabled' | 'source' | 'declared' | 'cursor' | 'next_run_at'> & AutomationSpec;

// An automation's newest run, read in the transaction that records its event (automation-runs.ts).
export type LastRunIn = (tx: Db, automationId: string) => Promise<AutomationRun | null>;

// Automations (DESIGN §19), each change with its event (automation.created, automation.updated,
// automation.removed) in the same transaction, the automation as the API shows it.
export function automationsTable(db: Db, events: EventsTable, lastRun: LastRunIn) {
  const one = async (tx: Db, id: string): Promise<StoredAutomation | null> => {
    const { rows } = await tx.query<AutomationRow>(`SELECT ${AUTOMATION_COLUMNS} FROM automations WHERE id = $1`, [id]);
    return rows[0] ? toStoredAutomation(rows[0]) : null;
  };
  return {
    get: (id: string) => one(db, id),
    async list(projectId?: string): Promise<StoredAutomation[]> {
      const { rows } =
        projectId === undefined
          ? await db.query<AutomationRow>(`SELECT ${AUTOMATION_COLUMNS} FROM automations ORDER BY created_at, id`)
          : await db.query<AutomationRow>(
              `SELECT ${AUTOMATION_COLUMNS} FROM automations WHERE project_id = $1 OR repository = (SELECT repository FROM projects WHERE id = $1) ORDER BY created_at, id`,
              [projectId],
            );
      return rows.map(toStoredAutomation);
    },
    // The stored automation, or null when the project has one of that name already.
    async insert(a: NewAutomation): Promise<StoredAutomation | null> {
      try {
        return await events.tx(async (tx, record) => {
          const { rows } = await tx.query<AutomationRow>(
            `INSERT INTO automations (id, project_id, repository, name, spec, enabled, source, declared, cursor, next_run_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${AUTOMATION_COLUMNS}`,
            [a.id, a.project_id, a.repository, a.name, JSON.stringify(specOf(a)), a.enabled, a.source, a.declared === null ? null : JSON.stringify(a.declared), a.cursor, a.next_run_at],
          );
          const stored = toStoredAutomation(rows[0]!);
          await record({ type: 'automation.created', project_id: a.project_id, data: publicAutomation(stored, null) });
          return stored;
        });
      } catch (err) {
        if (isUniqueViolation(err)) return null;
        throw err;
      }
    },
    // Writes what `change` makes of the row (read under its lock); null when it is gone, 'exists'
    // when the new name is another automation's.
    async update(id: string, change: (a: StoredAutomation) => StoredAutomation): Promise<StoredAutomation | null | 'exists'> {
      try {
        return await events.tx(async (tx, record) => {
          const { rows } = await tx.query<AutomationRow>(`SELECT ${AUTOMATION_COLUMNS} FROM automations WHERE id = $1 FOR UPDATE`, [id]);
          if (!rows[0]) return null;
          const a = change(toStoredAutomation(rows[0]));
          const { rows: out } = await tx.query<AutomationRow>(
            `UPDATE automations SET name = $2, spec = $3, enabled = $4, source = $5, declared = $6, cursor = $7, next_run_at = $8, updated_at = now() WHERE id = $1 RETURNING ${AUTOMATION_COLUMNS}`,
            [id, a.name, JSON.stringify(specOf(a)), a.enabled, a.source, a.declared === null ? null : JSON.stringify(a.declared), a.cursor, a.next_run_at],
          );
          const stored = toStoredAutomation(out[0]!);
          await record({ type: 'automation.updated', project_id: stored.project_id, data: publicAutomation(stored, await lastRun(tx, id)) });
          return stored;
        });
      } catch (err) {
        if (isUniqueViolation(err)) return 'exists';
        throw err;
      }
    },
    async remove(id: string): Promise<boolean> {
      return events.tx(async (tx, record) => {
        const { rows } = await tx.query<AutomationRow>(`DELETE FROM automations WHERE id = $1 RETURNING ${AUTOMATION_COLUMNS}`, [id]);
        // Its runs went with it.
        if (rows[0]) await record({ type: 'automation.removed', project_id: rows[0].project_id, data: publicAutomation(toStoredAutomation(rows[0]), null) });
        return rows.length > 0;
      });
    },
    // The enabled automations whose next time has come that this host may run (its projects',
    // and those of a repository it has a project of), each with that project.
    async due(hostId: string, now: Date): Promise<Array<StoredAutomation & { local_project_id: string }>> {
      const { rows } = await db.query<AutomationRow & { local_project_id: string }>(
        `SELECT DISTINCT ON (a.next_run_at, a.id) ${AUTOMATION_COLUMNS.split(', ').map((c) => `a.${c}`).join(', ')}, p.id AS local_project_id
         FROM automations a JOIN projects p ON ${THIS_HOSTS}
         WHERE a.enabled AND a.next_run_at IS NOT NULL AND a.next_run_at <= $2 AND p.host_id = $1 ORDER BY a.next_run_at, a.id, p.id`,
        [hostId, now],
      );
      return rows.map((r) => ({ ...toStoredAutomation(r), local_project_id: r.local_project_id }));
    },
    // When the next automation this host may run is due, or null when none is.
    async nextDue(hostId: string): Promise<Date | null> {
      const { rows } = await db.query<{ at: Date | null }>(`SELECT min(a.next_run_at) AS at FROM automations a JOIN projects p ON ${THIS_HOSTS} WHERE a.enabled AND p.host_id = $1`, [hostId]);
      return rows[0]?.at ?? null;
    },
  };
}

export type AutomationsTable = ReturnType<typeof automationsTable>;
