import type { Project } from '../../schemas/project.ts';
import type { Db } from './db.ts';

interface Row {
  id: string;
  name: string;
  path: string;
  created_at: Date;
}

const COLUMNS = 'id, name, path, created_at';

function toProject(r: Row): Project {
  return { id: r.id, name: r.name, path: r.path, created_at: r.created_at.toISOString() };
}

// The projects table and every query on it.
export function projectsTable(db: Db) {
  return {
    async list(): Promise<Project[]> {
      const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM projects ORDER BY created_at, id`);
      return rows.map(toProject);
    },
    async get(id: string): Promise<Project | null> {
      const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM projects WHERE id = $1`, [id]);
      return rows[0] ? toProject(rows[0]) : null;
    },
    async findByPath(p: string): Promise<Project | null> {
      const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM projects WHERE path = $1`, [p]);
      return rows[0] ? toProject(rows[0]) : null;
    },
    async namesLike(base: string): Promise<Set<string>> {
      const { rows } = await db.query<{ name: string }>(
        `SELECT name FROM projects WHERE name = $1 OR starts_with(name, $1 || '-')`,
        [base],
      );
      return new Set(rows.map((r) => r.name));
    },
    async insert(p: { id: string; name: string; path: string }): Promise<Project> {
      const { rows } = await db.query<Row>(
        `INSERT INTO projects (id, name, path) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
        [p.id, p.name, p.path],
      );
      return toProject(rows[0]!);
    },
    async remove(id: string): Promise<boolean> {
      const res = await db.query('DELETE FROM projects WHERE id = $1', [id]);
      return (res.affectedRows ?? 0) > 0;
    },
  };
}

export type ProjectsTable = ReturnType<typeof projectsTable>;

// Postgres' unique_violation, raised when a concurrent add wins the race for a path or name.
export function isUniqueViolation(err: unknown): err is { constraint?: string } {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === '23505';
}
