import type { FeedbackRound, PullRequest, PullState } from '../../schemas/pull.ts';
import type { Db } from './db.ts';
import type { EventsTable, RecordEvent } from './events.ts';
import { iso } from './rows.ts';

// What grove already acted on of a pull request's feedback, by GitHub's ids: none is answered twice.
// A check run is named with the head it ran on.
export interface Acted {
  reviews: number[];
  review_comments: number[];
  comments: number[];
  checks: Array<{ id: number; sha: string }>;
}

export const NOTHING_ACTED: Acted = { reviews: [], review_comments: [], comments: [], checks: [] };

// A pull request as stored: the API's shape, its project and host, and what was acted on.
export type StoredPull = PullRequest & { project_id: string; host_id: string; acted: Acted };

interface Row {
  task_id: string;
  project_id: string;
  host_id: string;
  repository: string;
  number: number;
  url: string;
  state: PullState;
  head: string;
  base: string;
  issue_number: number | null;
  fix_tries: number;
  acted: Acted;
  fix_session: string | null;
  rounds: FeedbackRound[];
  stopped_reason: string | null;
  opened_at: Date;
  closed_at: Date | null;
}

const toPull = (r: Row): StoredPull => ({
  task_id: r.task_id,
  project_id: r.project_id,
  host_id: r.host_id,
  repository: r.repository,
  number: r.number,
  url: r.url,
  state: r.state,
  head: r.head,
  base: r.base,
  issue_number: r.issue_number,
  fix_tries: r.fix_tries,
  fix_tries_used: r.rounds.length,
  following: r.state === 'open' && r.stopped_reason === null,
  stopped_reason: r.stopped_reason,
  fix_session: r.fix_session,
  rounds: r.rounds,
  acted: r.acted,
  opened_at: r.opened_at.toISOString(),
  closed_at: iso(r.closed_at),
});

export const publicPull = (p: StoredPull): PullRequest => {
  const { project_id: _p, host_id: _h, acted: _a, ...pub } = p;
  return pub;
};

export type NewPull = Pick<StoredPull, 'task_id' | 'project_id' | 'host_id' | 'repository' | 'number' | 'url' | 'head' | 'base' | 'issue_number' | 'fix_tries'>;

// Tasks' pull requests (DESIGN §20), each change with its pr.* event in the same transaction.
export function pullRequestsTable(db: Db, events: EventsTable) {
  const one = async (tx: Db, taskId: string): Promise<StoredPull | null> => {
    const { rows } = await tx.query<Row>('SELECT * FROM pull_requests WHERE task_id = $1', [taskId]);
    return rows[0] ? toPull(rows[0]) : null;
  };
  const recordPull = (record: RecordEvent, type: 'pr.opened' | 'pr.feedback' | 'pr.updated', p: StoredPull) =>
    record({ type, project_id: p.project_id, task_id: p.task_id, ...(p.fix_session ? { session_id: p.fix_session } : {}), data: publicPull(p) });

  // An update under the row's lock: `fn` says what changes (null: nothing), then the event.
  async function change(taskId: string, type: 'pr.feedback' | 'pr.updated', fn: (p: StoredPull) => Partial<Row> | null): Promise<StoredPull | null> {
    return events.tx(async (tx, record) => {
      const { rows } = await tx.query<Row>('SELECT * FROM pull_requests WHERE task_id = $1 FOR UPDATE', [taskId]);
      if (!rows[0]) return null;
      const set = fn(toPull(rows[0]));
      if (set === null) return null;
      const keys = Object.keys(set) as Array<keyof Row>;
      const values = keys.map((k) => (k === 'acted' || k === 'rounds' ? JSON.stringify(set[k]) : set[k]));
      await tx.query(`UPDATE pull_requests SET ${keys.map((k, i) => `${k} = $${i + 2}`).join(', ')} WHERE task_id = $1`, [taskId, ...values]);
      const after = (await one(tx, taskId))!;
      await recordPull(record, type, after);
      return after;
    });
  }

  return {
    get: (taskId: string) => one(db, taskId),
    // Records a pull request opened for the task, replacing one that merged or closed; null when
    // the task has one open already.
    async open(p: NewPull): Promise<StoredPull | null> {
      return events.tx(async (tx, record) => {
        const res = await tx.query(
          `INSERT INTO pull_requests (task_id, project_id, host_id, repository, number, url, state, head, base, issue_number, fix_tries, acted)
           VALUES ($1, $2, $3, $4, $5, $6, 'open', $7, $8, $9, $10, $11)
           ON CONFLICT (task_id) DO UPDATE SET project_id = EXCLUDED.project_id, host_id = EXCLUDED.host_id, repository = EXCLUDED.repository,
             number = EXCLUDED.number, url = EXCLUDED.url, state = 'open', head = EXCLUDED.head, base = EXCLUDED.base, issue_number = EXCLUDED.issue_number,
             fix_tries = EXCLUDED.fix_tries, acted = EXCLUDED.acted, fix_session = NULL, rounds = '[]', stopped_reason = NULL, opened_at = now(), closed_at = NULL
           WHERE pull_requests.state <> 'open'`,
          [p.task_id, p.project_id, p.host_id, p.repository, p.number, p.url, p.head, p.base, p.issue_number, p.fix_tries, JSON.stringify(NOTHING_ACTED)],
        );
        if ((res.affectedRows ?? 0) === 0) return null;
        const stored = (await one(tx, p.task_id))!;
        await recordPull(record, 'pr.opened', stored);
        return stored;
      });
    },
    // The open pull requests this host follows.
    async followed(hostId: string): Promise<StoredPull[]> {
      const { rows } = await db.query<Row>(`SELECT * FROM pull_requests WHERE host_id = $1 AND state = 'open' AND stopped_reason IS NULL ORDER BY opened_at`, [hostId]);
      return rows.map(toPull);
    },
    // Merged or closed on GitHub: no longer followed.
    closed: (taskId: string, state: 'merged' | 'closed') =>
      change(taskId, 'pr.updated', (p) => (p.state === 'open' ? { state, closed_at: new Date(), fix_session: null } : null)),
    // No longer followed, though open (its fix tries spent).
    stopped: (taskId: string, reason: string) => change(taskId, 'pr.updated', (p) => (p.state === 'open' && p.stopped_reason === null ? { stopped_reason: reason } : null)),
    // A feedback round sent as a follow-up: the session in flight, and what it answers acted on.
    // Null when another round is in flight or the pull request is not followed.
    round: (taskId: string, round: FeedbackRound, acted: Acted) =>
      change(taskId, 'pr.feedback', (p) => (p.state === 'open' && p.stopped_reason === null && p.fix_session === null ? { fix_session: round.session_id, rounds: [...p.rounds, round], acted } : null)),
    // The round of `sessionId` ended: pushed (with the branch's tip) or failed (why).
    ended: (taskId: string, sessionId: string, end: { pushed_commit: string | null; error: string | null }) =>
      change(taskId, 'pr.feedback', (p) => {
        if (p.fix_session !== sessionId) return null;
        const rounds = p.rounds.map((r) => (r.session_id === sessionId && r.outcome === 'pending' ? { ...r, pushed_commit: end.pushed_commit, error: end.error, outcome: end.error === null ? ('pushed' as const) : ('failed' as const) } : r));
        return { fix_session: null, rounds };
      }),
  };
}

export type PullRequestsTable = ReturnType<typeof pullRequestsTable>;
