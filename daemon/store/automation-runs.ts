import type { AutomationRun, RunChanges, RunStatus, SkipReason } from '../../schemas/automation.ts';
import type { SessionResult } from '../../schemas/session.ts';
import { AUTOMATION_COLUMNS, publicAutomation, toStoredAutomation, type AutomationRow, type LastRunIn, type StoredAutomation } from './automations.ts';
import type { Db } from './db.ts';
import type { EventsTable, RecordEvent } from './events.ts';
import { iso } from './rows.ts';

interface Row {
  id: string;
  automation_id: string;
  project_id: string | null;
  scheduled_for: Date;
  trigger: 'schedule' | 'manual';
  status: RunStatus;
  reason: SkipReason | null;
  error: string | null;
  missed: number;
  precheck: AutomationRun['precheck'];
  precheck_pid: number | null;
  precheck_pid_start: string | null;
  task_id: string | null;
  session_id: string | null;
  result: SessionResult | null;
  changes: RunChanges | null;
  created_at: Date;
  started_at: Date | null;
  ended_at: Date | null;
}

// A run as stored: the API's shape and the process group of its precheck while one runs.
export type StoredRun = AutomationRun & { precheck_pid: number | null; precheck_pid_start: string | null };

const toRun = (r: Row): StoredRun => ({
  id: r.id,
  automation_id: r.automation_id,
  project_id: r.project_id,
  scheduled_for: r.scheduled_for.toISOString(),
  trigger: r.trigger,
  status: r.status,
  reason: r.reason,
  error: r.error,
  missed: r.missed,
  precheck: r.precheck,
  precheck_pid: r.precheck_pid,
  precheck_pid_start: r.precheck_pid_start,
  task_id: r.task_id,
  session_id: r.session_id,
  result: r.result,
  changes: r.changes,
  created_at: r.created_at.toISOString(),
  started_at: iso(r.started_at),
  ended_at: iso(r.ended_at),
});

export const publicRun = (r: StoredRun): AutomationRun => {
  const { precheck_pid: _pid, precheck_pid_start: _start, ...pub } = r;
  return pub;
};

const SELECT = `SELECT r.* FROM automation_runs r`;
const ACTIVE = `('pending', 'precheck', 'running')`;

// What the scheduler makes of an automation's due times (daemon/automations/plan.ts): the runs to
// claim, oldest first, and where the automation goes on from.
export interface Claims {
  claims: Array<{ scheduled_for: Date; missed: number; skipped: 'missed' | null }>;
  cursor: Date;
  next_run_at: Date | null;
}

// The fields a run's progress sets.
export type RunChange = Partial<Pick<Row, (typeof CHANGEABLE)[number]>>;
const CHANGEABLE = ['status', 'reason', 'error', 'precheck', 'precheck_pid', 'precheck_pid_start', 'task_id', 'session_id', 'result', 'changes', 'started_at', 'ended_at'] as const;
const JSON_COLUMNS = new Set(['precheck', 'result', 'changes']);

// An automation's newest run, for the automation's own events.
export const lastRunIn: LastRunIn = async (tx, automationId) => {
  const { rows } = await tx.query<Row>(`${SELECT} WHERE r.automation_id = $1 ORDER BY r.created_at DESC, r.scheduled_for DESC LIMIT 1`, [automationId]);
  return rows[0] ? publicRun(toRun(rows[0])) : null;
};

// Automation runs (DESIGN §19), each change with its automation.run event in the same transaction.
export function automationRunsTable(db: Db, events: EventsTable) {
  const one = async (tx: Db, id: string): Promise<StoredRun | null> => {
    const { rows } = await tx.query<Row>(`${SELECT} WHERE r.id = $1`, [id]);
    return rows[0] ? toRun(rows[0]) : null;
  };
  const recordRun = (record: RecordEvent, run: StoredRun) =>
    record({ type: 'automation.run', project_id: run.project_id, task_id: run.task_id, session_id: run.session_id, data: publicRun(run) });

  // Inserts a run, `pending` unless it is skipped, or one skipped for overlap when the automation
  // has a run going and skips overlaps. A scheduled time already claimed inserts nothing (null).
  async function insert(
    tx: Db,
    record: RecordEvent,
    a: StoredAutomation,
    run: { id: string; project_id: string | null; scheduled_for: Date; trigger: 'schedule' | 'manual'; missed: number; skipped: SkipReason | null },
  ): Promise<StoredRun | null> {
    let reason = run.skipped;
    if (reason === null && a.overlap === 'skip') {
      const { rows } = await tx.query(`SELECT 1 FROM automation_runs WHERE automation_id = $1 AND status IN ${ACTIVE} LIMIT 1`, [a.id]);
      if (rows.length > 0) reason = 'overlap';
    }
    const status: RunStatus = reason === null ? 'pending' : 'skipped';
    const res = await tx.query(
      `INSERT INTO automation_runs (id, automation_id, project_id, scheduled_for, trigger, status, reason, missed, ended_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, CASE WHEN $6 = 'skipped' THEN now() END)
       ON CONFLICT (automation_id, scheduled_for) WHERE trigger = 'schedule' DO NOTHING`,
      [run.id, a.id, run.project_id, run.scheduled_for, run.trigger, status, reason, run.missed],
    );
    if ((res.affectedRows ?? 0) === 0) return null;
    const stored = (await one(tx, run.id))!;
    await recordRun(record, stored);
    return stored;
  }

  return {
    get: (id: string) => one(db, id),
    // Newest first.
    async list(automationId: string, limit = 100): Promise<StoredRun[]> {
      const { rows } = await db.query<Row>(`${SELECT} WHERE r.automation_id = $1 ORDER BY r.created_at DESC, r.scheduled_for DESC LIMIT $2`, [automationId, limit]);
      return rows.map(toRun);
    },
    // The newest run of each automation given.
    async latest(automationIds: string[]): Promise<Map<string, StoredRun>> {
      if (automationIds.length === 0) return new Map();
      const { rows } = await db.query<Row>(
        `SELECT DISTINCT ON (r.automation_id) r.* FROM automation_runs r
         WHERE r.automation_id = ANY($1::uuid[]) ORDER BY r.automation_id, r.created_at DESC, r.scheduled_for DESC`,
        [automationIds],
      );
      return new Map(rows.map((r) => [r.automation_id, toRun(r)]));
    },
    // An automation's runs not ended, oldest first.
    async active(automationId: string): Promise<StoredRun[]> {
      const { rows } = await db.query<Row>(`${SELECT} WHERE r.automation_id = $1 AND r.status IN ${ACTIVE} ORDER BY r.created_at, r.scheduled_for`, [automationId]);
      return rows.map(toRun);
    },
    // The automations of this host's projects with runs not ended: at start, they go on.
    async automationsWithActive(hostId: string): Promise<string[]> {
      const { rows } = await db.query<{ automation_id: string }>(
        `SELECT DISTINCT r.automation_id FROM automation_runs r JOIN projects p ON p.id = r.project_id
         WHERE r.status IN ${ACTIVE} AND p.host_id = $1`,
        [hostId],
      );
      return rows.map((r) => r.automation_id);
    },
    // Claims an automation's due times under its row's lock (another host holding it is passed
    // over: it is claiming them): `decide` says what they come to, or null to leave them for a
    // later tick. The runs inserted, oldest first.
    async claimDue(automationId: string, projectId: string, now: Date, decide: (a: StoredAutomation) => Claims | null, newId: () => string): Promise<StoredRun[]> {
      return events.tx(async (tx, record) => {
        const { rows } = await tx.query<AutomationRow>(
          `SELECT ${AUTOMATION_COLUMNS} FROM automations WHERE id = $1 AND enabled AND next_run_at <= $2 FOR UPDATE SKIP LOCKED`,
          [automationId, now],
        );
        if (!rows[0]) return [];
        const a = toStoredAutomation(rows[0]);
        const plan = decide(a);
        if (plan === null) return [];
        const out: StoredRun[] = [];
        for (const c of plan.claims) {
          const run = await insert(tx, record, a, { id: newId(), project_id: projectId, scheduled_for: c.scheduled_for, trigger: 'schedule', missed: c.missed, skipped: c.skipped });
          if (run) out.push(run);
        }
        const { rows: moved } = await tx.query<AutomationRow>(
          `UPDATE automations SET cursor = greatest(cursor, $2), next_run_at = $3 WHERE id = $1 RETURNING ${AUTOMATION_COLUMNS}`,
          [automationId, plan.cursor, plan.next_run_at],
        );
        // Its next time moved: boards that show it follow.
        const after = toStoredAutomation(moved[0]!);
        if (after.next_run_at !== a.next_run_at) await record({ type: 'automation.updated', project_id: after.project_id, data: publicAutomation(after, await lastRunIn(tx, automationId)) });
        return out;
      });
    },
    // A run now (POST …/runs) in the project given, paused or not; null when the automation is gone.
    async runNow(automationId: string, projectId: string, id: string, now: Date): Promise<StoredRun | null> {
      return events.tx(async (tx, record) => {
        const { rows } = await tx.query<AutomationRow>(`SELECT ${AUTOMATION_COLUMNS} FROM automations WHERE id = $1 FOR UPDATE`, [automationId]);
        if (!rows[0]) return null;
        const a = toStoredAutomation(rows[0]);
        return insert(tx, record, a, { id, project_id: projectId, scheduled_for: now, trigger: 'manual', missed: 0, skipped: null });
      });
    },
    // Sets what a run's progress changed, if it is still in one of `from`; null otherwise (gone,
    // or moved on: another step got there first). A change of no field the API shows (the
    // precheck's process) records no event.
    async change(id: string, from: readonly RunStatus[], change: RunChange): Promise<StoredRun | null> {
      return events.tx(async (tx, record) => {
        const keys = CHANGEABLE.filter((k) => change[k] !== undefined);
        const sets = keys.map((k, i) => `${k} = $${i + 3}`);
        const values = keys.map((k) => (JSON_COLUMNS.has(k) && change[k] !== null ? JSON.stringify(change[k]) : change[k]));
        const res = await tx.query(`UPDATE automation_runs SET ${sets.join(', ')} WHERE id = $1 AND status = ANY($2::text[])`, [id, [...from], ...values]);
        if ((res.affectedRows ?? 0) === 0) return null;
        const run = (await one(tx, id))!;
        if (keys.some((k) => k !== 'precheck_pid' && k !== 'precheck_pid_start')) await recordRun(record, run);
        return run;
      });
    },
  };
}

export type AutomationRunsTable = ReturnType<typeof automationRunsTable>;
