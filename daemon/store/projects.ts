import type { Project } from '../../schemas/project.ts';
import type { Db } from './db.ts';
import type { EventsTable } from './events.ts';

interface Row {
  id: string;
  name: string;
  path: string;
  created_at: Date;
  host_id: string;
  repository: string | null;
}

const COLUMNS = 'id, name, path, created_at, host_id, repository';

function toProject(r: Row): Project {
  return { id: r.id, name: r.name, path: r.path, created_at: r.created_at.toISOString(), host_id: r.host_id, repository: r.repository };
}

// The projects table and every query on it; every change is recorded as an event with it (DESIGN §11).
export function projectsTable(db: Db, events: EventsTable) {
  return {
    async list(): Promise<Project[]> {
      const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM projects ORDER BY created_at, id`);
      return rows.map(toProject);
    },
    async get(id: string): Promise<Project | null> {
      const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM projects WHERE id = $1`, [id]);
      return rows[0] ? toProject(rows[0]) : null;
    },
    // Names and paths are unique per host (migration 0016): another host's folders are on its disk.
    async findByPath(hostId: string, p: string): Promise<Project | null> {
      const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM projects WHERE host_id = $1 AND path = $2`, [hostId, p]);
      return rows[0] ? toProject(rows[0]) : null;
    },
    async namesLike(hostId: string, base: string): Promise<Set<string>> {
      const { rows } = await db.query<{ name: string }>(
        `SELECT name FROM projects WHERE host_id = $1 AND (name = $2 OR starts_with(name, $2 || '-'))`,
        [hostId, base],
      );
      return new Set(rows.map((r) => r.name));
    },
    async insert(p: Pick<Project, 'id' | 'name' | 'path' | 'host_id' | 'repository'>): Promise<Project> {
      return events.tx(async (tx, record) => {
        const { rows } = await tx.query<Row>(
          `INSERT INTO projects (id, name, path, host_id, repository) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
          [p.id, p.name, p.path, p.host_id, p.repository],
        );
        const project = toProject(rows[0]!);
        await record({ type: 'project.added', project_id: project.id, data: project });
        return project;
      });
    },
    async listOfHost(hostId: string): Promise<Project[]> {
      const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM projects WHERE host_id = $1 ORDER BY created_at, id`, [hostId]);
      return rows.map(toProject);
    },
    // The origin as it now is, read when the daemon starts. No event: DESIGN §11 has none for a
    // project's change, and the project's list and reads show it at once.
    async setRepository(id: string, repository: string | null): Promise<void> {
      await db.query('UPDATE projects SET repository = $2 WHERE id = $1', [id, repository]);
    },
    async remove(id: string): Promise<boolean> {
      return events.tx(async (tx, record) => {
        const { rows } = await tx.query<Row>(`DELETE FROM projects WHERE id = $1 RETURNING ${COLUMNS}`, [id]);
        if (rows[0]) await record({ type: 'project.removed', project_id: id, data: toProject(rows[0]) });
        return rows.length > 0;
      });
    },
  };
}

export type ProjectsTable = ReturnType<typeof projectsTable>;

// Postgres' unique_violation, raised when a concurrent add wins the race for a path or name.
export function isUniqueViolation(err: unknown): err is { constraint?: string } {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === '23505';
}
