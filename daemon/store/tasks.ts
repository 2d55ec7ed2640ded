import type { EventType } from '../../schemas/event.ts';
import type { Task, TaskStatus } from '../../schemas/task.ts';
import type { Db } from './db.ts';
import type { EventsTable, RecordEvent } from './events.ts';
import { iso } from './rows.ts';

interface Row {
  id: string;
  project_id: string;
  host_id: string;
  name: string;
  branch: string;
  worktree_path: string;
  base: string;
  base_commit: string;
  status: TaskStatus;
  created_at: Date;
  archived_at: Date | null;
  ports: { [declared: string]: number } | null;
  merged_at: Date | null;
  merged_commit: string | null;
  pooled: boolean;
  issue: Task['issue'];
}

// A slot of the warm pool (DESIGN §16), as GET /api/projects/:id/pool and the refiller see it.
export interface SlotRow {
  id: string;
  project_id: string;
  branch: string;
  worktree_path: string;
  base: string;
  base_commit: string;
  status: Exclude<TaskStatus, 'archived'>;
  slot: 'free' | 'claimed';
  slot_config: string | null;
  /** a claim's task name and branch, stored before its rename (null until then) */
  claim_name: string | null;
  claim_branch: string | null;
  created_at: Date;
}

const SLOT_COLUMNS = 'id, project_id, branch, worktree_path, base, base_commit, status, slot, slot_config, claim_name, claim_branch, created_at';
// Slots are not tasks (DESIGN §16): every read of tasks and every task event leaves them out.
const TASKS_ONLY = 't.slot IS NULL';
// Ports come from the live leases, so an archived task shows none.
const PORTS = '(SELECT jsonb_object_agg(l.declared::text, l.port) FROM port_leases l WHERE l.task_id = t.id) AS ports';
const SELECT = `SELECT t.*, ${PORTS} FROM tasks t`;
// The same with the project's path, for the task's view inside a transaction.
const SELECT_WITH_PROJECT = `SELECT t.*, ${PORTS}, p.path AS project_path FROM tasks t JOIN projects p ON p.id = t.project_id`;

// A task as stored; whether its folder still exists is the service's to say.
export type StoredTask = Omit<Task, 'worktree_missing'>;

// The API's view of a stored task in its project's folder (tasks/read.ts looks at the folder):
// the store only reads and writes rows, and records that view with each task event.
export type TaskView = (t: StoredTask, projectPath: string) => Task;

function toTask(r: Row): StoredTask {
  return {
    id: r.id,
    name: r.name,
    branch: r.branch,
    worktree_path: r.worktree_path,
    status: r.status,
    project_id: r.project_id,
    host_id: r.host_id,
    base: r.base,
    base_commit: r.base_commit,
    ports: r.ports ?? {},
    created_at: r.created_at.toISOString(),
    archived_at: iso(r.archived_at),
    merged_at: iso(r.merged_at),
    merged_commit: r.merged_commit,
    pooled: r.pooled,
    issue: r.issue ?? null,
  };
}

// A task as inserted: its ports come as leases, its timestamps from the store.
export type NewTask = Omit<Task, 'host_id' | 'ports' | 'created_at' | 'archived_at' | 'worktree_missing' | 'merged_at' | 'merged_commit' | 'pooled' | 'issue'> & { issue?: Task['issue'] };

// The task as the API shows it, read inside a transaction, and the event that says it changed.
async function recordTask(tx: Db, record: RecordEvent, view: TaskView, type: Extract<EventType, `task.${string}`>, id: string, extra: object = {}): Promise<void> {
  const { rows } = await tx.query<Row & { project_path: string }>(
    `${SELECT_WITH_PROJECT} WHERE t.id = $1 AND ${TASKS_ONLY}`,
    [id],
  );
  const row = rows[0];
  if (!row) return;
  await record({ type, project_id: row.project_id, task_id: id, data: { ...view(toTask(row), row.project_path), ...extra } });
}

// The tasks table and every query on it; every change is recorded as an event with it (DESIGN §11).
export function tasksTable(db: Db, events: EventsTable, view: TaskView) {
  return {
    async list(projectId?: string): Promise<StoredTask[]> {
      const { rows } = projectId
        ? await db.query<Row>(`${SELECT} WHERE t.project_id = $1 AND ${TASKS_ONLY} ORDER BY t.created_at, t.id`, [projectId])
        : await db.query<Row>(`${SELECT} WHERE ${TASKS_ONLY} ORDER BY t.created_at, t.id`);
      return rows.map(toTask);
    },
    async get(id: string): Promise<StoredTask | null> {
      const { rows } = await db.query<Row>(`${SELECT} WHERE t.id = $1 AND ${TASKS_ONLY}`, [id]);
      return rows[0] ? toTask(rows[0]) : null;
    },
    // A task or a slot: setup runs on both, and a slot becomes the task it is claimed for.
    async getAny(id: string): Promise<StoredTask | null> {
      const { rows } = await db.query<Row>(`${SELECT} WHERE t.id = $1`, [id]);
      return rows[0] ? toTask(rows[0]) : null;
    },
    async liveWorktreePaths(projectId: string): Promise<string[]> {
      const { rows } = await db.query<{ worktree_path: string }>(
        `SELECT worktree_path FROM tasks WHERE project_id = $1 AND status <> 'archived'`,
        [projectId],
      );
      return rows.map((r) => r.worktree_path);
    },
    // An archive under way (its teardown running), or no longer (it failed before the end).
    async setArchiving(id: string, on: boolean): Promise<void> {
      await db.query(`UPDATE tasks SET archiving_since = ${on ? 'now()' : 'NULL'} WHERE id = $1`, [id]);
    },
    // Archives a stopped daemon left under way.
    // The recovery reads and writes that follow take a host's own tasks only (DESIGN §14.2).
    async listArchiving(hostId: string): Promise<string[]> {
      const { rows } = await db.query<{ id: string }>(`SELECT id FROM tasks WHERE archiving_since IS NOT NULL AND status <> 'archived' AND host_id = $1`, [hostId]);
      return rows.map((r) => r.id);
    },
    async markMerged(id: string, commit: string): Promise<void> {
      await events.tx(async (tx, record) => {
        await tx.query('UPDATE tasks SET merged_at = now(), merged_commit = $2 WHERE id = $1', [id, commit]);
        await recordTask(tx, record, view, 'task.merged', id);
      });
    },
    // A restore rewrote the task's worktree (DESIGN §17): the task as it is, as a task.status
    // event, so that what shows its changes reads them again.
    async recordRestored(id: string): Promise<void> {
      await events.tx((tx, record) => recordTask(tx, record, view, 'task.status', id));
    },
    // Tasks of this host stacked on a task that has merged since they were made (DESIGN §17): their
    // base is its branch. One made on a task that had merged already was stacked there on purpose.
    async stackedOnMerged(hostId: string): Promise<{ id: string; parent: string; parent_branch: string; parent_base: string; merged_commit: string }[]> {
      const { rows } = await db.query<{ id: string; parent: string; parent_branch: string; parent_base: string; merged_commit: string }>(
        `SELECT s.id, p.id AS parent, p.branch AS parent_branch, p.base AS parent_base, p.merged_commit
         FROM tasks s JOIN tasks p ON p.project_id = s.project_id AND p.id <> s.id AND p.slot IS NULL
           AND (s.base = p.branch OR s.base = 'refs/heads/' || p.branch)
         WHERE s.host_id = $1 AND s.status IN ('ready', 'setup_failed') AND s.slot IS NULL AND p.merged_commit IS NOT NULL
           AND p.merged_at > s.created_at
         ORDER BY s.created_at, s.id`,
        [hostId],
      );
      return rows;
    },
    // A restack (DESIGN §17) moved the task onto its parent's base: the task's base is that base now.
    // Only while its base still names the parent's branch `from`, so that a restack is recorded
    // once, by its answer or by the recovery of one a stop cut short; false when it was not.
    async restacked(id: string, from: string, base: string, baseCommit: string, extra: object): Promise<boolean> {
      return events.tx(async (tx, record) => {
        const res = await tx.query(
          `UPDATE tasks SET base = $2, base_commit = $3 WHERE id = $1 AND status <> 'archived' AND (base = $4 OR base = 'refs/heads/' || $4)`,
          [id, base, baseCommit, from],
        );
        if ((res.affectedRows ?? 0) === 0) return false;
        await recordTask(tx, record, view, 'task.status', id, extra);
        return true;
      });
    },
    // A restack that could not be done (a conflict): the task as it is, with what stopped it.
    async recordRestackFailed(id: string, extra: object): Promise<void> {
      await events.tx((tx, record) => recordTask(tx, record, view, 'task.status', id, extra));
    },
    async countLive(projectId: string): Promise<number> {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM tasks t WHERE project_id = $1 AND status <> 'archived' AND ${TASKS_ONLY}`,
        [projectId],
      );
      return rows[0]?.n ?? 0;
    },
    // The task row and its port leases, together or not at all. A slot (`slotConfig`, the
    // .grove.json it is made with) is stored 'free' and records no event.
    async insert(t: NewTask, ports: { [declared: number]: number }, slotConfig?: string): Promise<void> {
      await events.tx(async (tx, record) => {
        await tx.query(
          // Its host is its project's: the worktree is on the disk that holds the repository.
          `INSERT INTO tasks (id, project_id, name, branch, worktree_path, base, base_commit, status, host_id, slot, slot_config, issue)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, (SELECT host_id FROM projects WHERE id = $2), $9, $10, $11)`,
          [t.id, t.project_id, t.name, t.branch, t.worktree_path, t.base, t.base_commit, t.status, slotConfig === undefined ? null : 'free', slotConfig ?? null, t.issue ? JSON.stringify(t.issue) : null],
        );
        for (const [declared, port] of Object.entries(ports)) {
          await tx.query('INSERT INTO port_leases (port, task_id, declared) VALUES ($1, $2, $3)', [port, t.id, Number(declared)]);
        }
        await recordTask(tx, record, view, 'task.created', t.id);
      });
    },
    async setStatus(id: string, status: TaskStatus, from?: TaskStatus): Promise<boolean> {
      return events.tx(async (tx, record) => {
        const res = await (
          from
            ? tx.query('UPDATE tasks SET status = $2 WHERE id = $1 AND status = $3', [id, status, from])
            : tx.query('UPDATE tasks SET status = $2 WHERE id = $1', [id, status])
        );
        const changed = (res.affectedRows ?? 0) > 0;
        if (changed) await recordTask(tx, record, view, 'task.status', id);
        return changed;
      });
    },
    // Archiving releases the task's ports in the same transaction.
    async archive(id: string): Promise<void> {
      await events.tx(async (tx, record) => {
        await tx.query(`UPDATE tasks SET status = 'archived', archived_at = now() WHERE id = $1`, [id]);
        await tx.query('DELETE FROM port_leases WHERE task_id = $1', [id]);
        await recordTask(tx, record, view, 'task.archived', id);
      });
    },
    async remove(id: string): Promise<void> {
      await db.query('DELETE FROM tasks WHERE id = $1', [id]);
    },
    async slots(projectId: string): Promise<SlotRow[]> {
      const { rows } = await db.query<SlotRow>(
        `SELECT ${SLOT_COLUMNS} FROM tasks WHERE project_id = $1 AND slot IS NOT NULL ORDER BY created_at, id`,
        [projectId],
      );
      return rows;
    },
    // Takes the oldest ready slot of the project, once: concurrent claims skip a row another
    // holds, and the `slot = 'free'` test makes the UPDATE itself the one claim.
    async claimSlot(projectId: string): Promise<SlotRow | null> {
      const { rows } = await db.query<SlotRow>(
        `UPDATE tasks SET slot = 'claimed' WHERE id = (
           SELECT id FROM tasks WHERE project_id = $1 AND slot = 'free' AND status = 'ready'
           ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
         ) AND slot = 'free'
         RETURNING ${SLOT_COLUMNS}`,
        [projectId],
      );
      return rows[0] ?? null;
    },
    // Takes a free slot to remove it; false when a claim (or another removal) has it.
    async takeSlot(id: string): Promise<boolean> {
      const res = await db.query(`UPDATE tasks SET slot = 'claimed' WHERE id = $1 AND slot = 'free'`, [id]);
      return (res.affectedRows ?? 0) > 0;
    },
    // What a claim is about to rename the slot to: stored before the rename, so that a start
    // after a stop in between knows which branch to look for.
    async recordClaim(id: string, name: string, branch: string): Promise<void> {
      await db.query(`UPDATE tasks SET claim_name = $2, claim_branch = $3 WHERE id = $1 AND slot = 'claimed'`, [id, name, branch]);
    },
    // A claim that could not rename the branch (or whose rename was undone) gives the slot back.
    async releaseSlot(id: string): Promise<void> {
      await db.query(`UPDATE tasks SET slot = 'free', claim_name = NULL, claim_branch = NULL WHERE id = $1 AND slot = 'claimed'`, [id]);
    },
    // The claimed slot becomes the task: its name and branch, and from here its events.
    async becomeTask(id: string, name: string, branch: string, issue: Task['issue'] = null): Promise<void> {
      await events.tx(async (tx, record) => {
        await tx.query(`UPDATE tasks SET slot = NULL, slot_config = NULL, claim_name = NULL, claim_branch = NULL, pooled = true, name = $2, branch = $3, issue = $4, created_at = now() WHERE id = $1 AND slot = 'claimed'`, [id, name, branch, issue ? JSON.stringify(issue) : null]);
        await recordTask(tx, record, view, 'task.created', id);
      });
    },
    // Setup that a stopped daemon left running can no longer finish.
    // True when a setup was running as the daemon stopped: start-up recovery has work then.
    async anySettingUp(hostId: string): Promise<boolean> {
      const { rows } = await db.query<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM tasks WHERE status = 'setting_up' AND host_id = $1) AS any`, [hostId]);
      return rows[0]?.any === true;
    },

    async failInterruptedSetups(hostId: string): Promise<string[]> {
      return events.tx(async (tx, record) => {
        const { rows } = await tx.query<{ id: string }>(`UPDATE tasks SET status = 'setup_failed' WHERE status = 'setting_up' AND host_id = $1 RETURNING id`, [hostId]);
        for (const r of rows) await recordTask(tx, record, view, 'task.status', r.id);
        return rows.map((r) => r.id);
      });
    },
  };
}

export type TasksTable = ReturnType<typeof tasksTable>;
