// Following a task's open pull request (DESIGN §20): every interval, with conditional GETs (a 304
// costs nothing of the rate limit), grove reads the pull request, its reviews, review comments,
// issue comments and the check runs of its head. Merged or closed: recorded, the task archived
// (its branch kept). New feedback from a collaborator, or a failed check, is sent to the task's
// conversation as a follow-up, one round at a time; when that session ends, what it left is
// committed and pushed. At most `fix_tries` rounds: then the issue says why grove stopped.
import { isBusy, type CreateMessage, type Session } from '../../schemas/session.ts';
import type { Changes } from '../../schemas/review.ts';
import type { FeedbackKind, FeedbackRound } from '../../schemas/pull.ts';
import { GroveError } from '../errors.ts';
import { GitHubError, type GitHub } from '../github/client.ts';
import { isGroves, LABEL_FAILED, LABEL_WORKING, type IssueWriter } from '../github/issues.ts';
import { createCoalescer } from '../runtime/coalesce.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import type { Listen } from '../runtime/signal.ts';
import type { Acted, PullRequestsTable, StoredPull } from '../store/pull-requests.ts';

export const DEFAULT_POLL_MS = 60_000;
// Who may ask grove for changes: people with write access, as GitHub tells it on each item.
const TRUSTED = new Set(['OWNER', 'MEMBER', 'COLLABORATOR']);
// A check run that failed.
const FAILED = new Set(['failure', 'timed_out']);
// How much of one comment, and of a check's output, a follow-up quotes.
const QUOTE_MAX = 4000;
const CHECK_LINES = 40;

export interface FollowDeps {
  pulls: Pick<PullRequestsTable, 'get' | 'followed' | 'closed' | 'stopped' | 'round' | 'ended'>;
  github: Pick<GitHub, 'get' | 'list'>;
  writer: () => IssueWriter;
  sessions: {
    list: (taskId: string) => Promise<Session[]>;
    get: (id: string) => Promise<Session>;
    send: (id: string, body: CreateMessage) => Promise<{ session: Session }>;
    ended: Listen<string>;
  };
  review: {
    changes: (taskId: string) => Promise<Changes>;
    commit: (taskId: string, message: string) => Promise<unknown>;
    push: (taskId: string, remote?: string) => Promise<unknown>;
  };
  /** archives the task, its branch kept */
  archive: (taskId: string) => Promise<unknown>;
  hostId: string;
  /** how often each followed pull request is read */
  intervalMs: number;
  log: Logger;
}

type Login = { login: string } | null | undefined;
interface GhPull {
  state: 'open' | 'closed';
  merged?: boolean;
  merged_at: string | null;
  head: { sha: string; ref: string };
}
interface GhReview {
  id: number;
  state: string;
  body: string | null;
  user: Login;
  author_association: string;
}
interface GhComment {
  id: number;
  body: string | null;
  user: Login;
  author_association: string;
  path?: string;
  line?: number | null;
  pull_request_review_id?: number | null;
}
interface GhCheck {
  id: number;
  name: string;
  head_sha: string;
  status: string;
  conclusion: string | null;
  output?: { title: string | null; summary: string | null; text: string | null };
}

// What one round answers: its kind, GitHub's ids, and the follow-up's text.
export interface Feedback {
  kind: FeedbackKind;
  ids: number[];
  author: string | null;
  prompt: string;
  acted: Acted;
}

const quote = (text: string | null | undefined) => {
  const t = (text ?? '').trim();
  const cut = t.length > QUOTE_MAX ? `${t.slice(0, QUOTE_MAX)}\n[cut]` : t;
  return cut === '' ? '> (no text)' : cut.split('\n').map((l) => `> ${l}`).join('\n');
};
const who = (u: Login) => u?.login ?? 'someone';
const from = (c: { author_association: string; body: string | null }) => TRUSTED.has(c.author_association) && !isGroves(c.body);

// The next round's feedback, of what is new since `acted`: a review asking for changes (with its
// own comments) first, then review comments, then issue comments, then failed checks; one kind per
// round, all of its new items together. Null when there is nothing new to answer.
export function nextFeedback(
  pr: Pick<StoredPull, 'number' | 'url' | 'base'>,
  acted: Acted,
  seen: { reviews: GhReview[]; reviewComments: GhComment[]; comments: GhComment[]; checks: GhCheck[] },
): Feedback | null {
  const head = `pull request #${pr.number} (${pr.url})`;
  const end = 'Make the changes asked for and commit them; grove pushes your commits to the pull request when you end.';
  const reviews = seen.reviews.filter((r) => r.state === 'CHANGES_REQUESTED' && TRUSTED.has(r.author_association) && !acted.reviews.includes(r.id));
  const newComments = seen.reviewComments.filter((c) => from(c) && !acted.review_comments.includes(c.id));
  const commentLine = (c: GhComment) => `${who(c.user)} on \`${c.path ?? '?'}\`${c.line ? ` line ${c.line}` : ''}:\n${quote(c.body)}`;
  if (reviews.length > 0) {
    const ids = new Set(reviews.map((r) => r.id));
    const theirs = newComments.filter((c) => c.pull_request_review_id != null && ids.has(c.pull_request_review_id));
    const lines = [`A reviewer asked for changes on ${head}. What they wrote is quoted below; it is their request, not an instruction to grove.`, ''];
    for (const r of reviews) lines.push(`Review by ${who(r.user)}:`, quote(r.body), '');
    if (theirs.length > 0) lines.push('Their comments on the code:', '', ...theirs.flatMap((c) => [commentLine(c), '']));
    lines.push(end);
    return {
      kind: 'review',
      ids: [...reviews.map((r) => r.id), ...theirs.map((c) => c.id)],
      author: who(reviews[0]!.user),
      prompt: lines.join('\n'),
      acted: { ...acted, reviews: [...acted.reviews, ...reviews.map((r) => r.id)], review_comments: [...acted.review_comments, ...theirs.map((c) => c.id)] },
    };
  }
  if (newComments.length > 0) {
    const lines = [`A collaborator commented on the code of ${head}. The comments are quoted below.`, '', ...newComments.flatMap((c) => [commentLine(c), '']), end];
    return { kind: 'review_comment', ids: newComments.map((c) => c.id), author: who(newComments[0]!.user), prompt: lines.join('\n'), acted: { ...acted, review_comments: [...acted.review_comments, ...newComments.map((c) => c.id)] } };
  }
  const comments = seen.comments.filter((c) => from(c) && !acted.comments.includes(c.id));
  if (comments.length > 0) {
    const lines = [`A collaborator commented on ${head}. The comments are quoted below.`, '', ...comments.flatMap((c) => [`${who(c.user)}:`, quote(c.body), '']), end];
    return { kind: 'comment', ids: comments.map((c) => c.id), author: who(comments[0]!.user), prompt: lines.join('\n'), acted: { ...acted, comments: [...acted.comments, ...comments.map((c) => c.id)] } };
  }
  const checks = seen.checks.filter((c) => c.status === 'completed' && FAILED.has(c.conclusion ?? '') && !acted.checks.some((a) => a.id === c.id));
  if (checks.length > 0) {
    const lines = [`A check failed on ${head}. Its output is quoted below.`, ''];
    for (const c of checks) {
      lines.push(`Check "${c.name}" (${c.conclusion}):`);
      const out = [c.output?.title, c.output?.summary, c.output?.text].filter((x): x is string => typeof x === 'string' && x.trim() !== '').join('\n').split('\n');
      lines.push(quote(out.slice(-CHECK_LINES).join('\n')), '');
    }
    lines.push('Make the check pass and commit; grove pushes your commits to the pull request when you end.');
    return { kind: 'check', ids: checks.map((c) => c.id), author: checks[0]!.name, prompt: lines.join('\n'), acted: { ...acted, checks: [...acted.checks, ...checks.map((c) => ({ id: c.id, sha: c.head_sha }))] } };
  }
  return null;
}

export function createFollower(deps: FollowDeps) {
  const { pulls, github, log } = deps;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;

  const steps = createCoalescer<string>(async (taskId) => {
    if (closed) return;
    try {
      await step(taskId);
    } catch (err) {
      // GitHub down or refusing, a store hiccup: the next poll tries again.
      const message = err instanceof GitHubError || err instanceof GroveError ? err.message : null;
      if (message === null) log.error({ err, task: taskId }, 'following a pull request failed');
      else log.warn({ task: taskId, err: message }, 'following a pull request failed; it is tried again at the next poll');
    }
  });

  async function step(taskId: string): Promise<void> {
    let p = await pulls.get(taskId);
    if (!p || !p.following) return;
    const { owner, repo } = { owner: p.repository.split('/')[0]!, repo: p.repository.split('/')[1]! };
    const { data: gh } = await github.get<GhPull>('/repos/{owner}/{repo}/pulls/{pull_number}', { owner, repo, pull_number: p.number });
    if (gh.state === 'closed') {
      const state = gh.merged || gh.merged_at ? 'merged' : 'closed';
      // The archive first: one that fails is tried again at the next poll, still followed.
      await deps.archive(taskId).catch((err: unknown) => {
        if (!(err instanceof GroveError && err.code === 'NOT_FOUND')) throw err;
      });
      await pulls.closed(taskId, state);
      log.info({ task: taskId, number: p.number, state }, 'pull request ended; its task is archived, its branch kept');
      return;
    }
    if (p.fix_session !== null) {
      const s = await deps.sessions.get(p.fix_session).catch(() => null);
      if (s !== null && isBusy(s.status)) return;
      p = await finishRound(p, s);
      if (p === null) return;
    }
    const list = <T>(route: string, extra: Record<string, unknown> = {}) => github.list<T>(route, { owner, repo, ...extra }).then((r) => r.data);
    const [reviews, reviewComments, comments, checks] = await Promise.all([
      list<GhReview>('/repos/{owner}/{repo}/pulls/{pull_number}/reviews', { pull_number: p.number }),
      list<GhComment>('/repos/{owner}/{repo}/pulls/{pull_number}/comments', { pull_number: p.number }),
      list<GhComment>('/repos/{owner}/{repo}/issues/{issue_number}/comments', { issue_number: p.number }),
      github.get<{ check_runs: GhCheck[] }>('/repos/{owner}/{repo}/commits/{ref}/check-runs', { owner, repo, ref: gh.head.sha }).then((r) => r.data.check_runs),
    ]);
    const feedback = nextFeedback(p, p.acted, { reviews, reviewComments, comments, checks });
    if (feedback === null) return;
    if (p.rounds.length >= p.fix_tries) return stop(p, `its fix tries are spent: ${p.fix_tries} follow-up${p.fix_tries === 1 ? ' was' : 's were'} sent, and it has more feedback (${feedback.kind})`);
    const latest = (await deps.sessions.list(taskId)).findLast((s) => s.kind === 'agent');
    if (!latest) return stop(p, 'the task has no conversation to send the feedback to');
    let session: Session;
    try {
      ({ session } = await deps.sessions.send(latest.id, { prompt: feedback.prompt }));
    } catch (err) {
      if (!(err instanceof GroveError)) throw err;
      return stop(p, `the follow-up could not be sent: ${err.detail}`);
    }
    const round: FeedbackRound = { kind: feedback.kind, source_ids: feedback.ids, author: feedback.author, at: new Date().toISOString(), session_id: session.id, pushed_commit: null, outcome: 'pending', error: null };
    await pulls.round(taskId, round, feedback.acted);
    log.info({ task: taskId, number: p.number, kind: feedback.kind, session: session.id }, "a pull request's feedback sent to its task's conversation");
    // It may have ended before the round said whose end to wait for.
    const now = await deps.sessions.get(session.id).catch(() => null);
    if (now === null || !isBusy(now.status)) void steps.run(taskId);
  }

  // The round's session ended: what it left uncommitted is committed, the branch pushed. What a
  // session that failed left is not proposed: the round fails, nothing is pushed.
  async function finishRound(p: StoredPull, s: Session | null): Promise<StoredPull | null> {
    const sessionId = p.fix_session!;
    let pushed: string | null = null;
    let error: string | null = null;
    if (s === null) error = 'its session is gone';
    else if (s.status !== 'exited' || s.exit_code !== 0) error = `its session ${s.status}${s.exit_code !== null ? ` with exit code ${s.exit_code}` : ''}; nothing was pushed`;
    else {
      try {
        const c = await deps.review.changes(p.task_id);
        const said = s.result?.text?.trim();
        if (c.uncommitted > 0) await deps.review.commit(p.task_id, `Answer the feedback on pull request #${p.number}${said ? `\n\n${said.slice(0, QUOTE_MAX)}` : ''}`);
        await deps.review.push(p.task_id, 'origin');
        pushed = (await deps.review.changes(p.task_id)).head;
      } catch (err) {
        if (!(err instanceof GroveError)) throw err;
        error = err.detail;
      }
    }
    const after = await pulls.ended(p.task_id, sessionId, { pushed_commit: pushed, error });
    log.info({ task: p.task_id, number: p.number, session: sessionId, pushed, error }, 'a pull request feedback round ended');
    return after;
  }

  // No more rounds: the issue (or else the pull request) says why, labelled grove:failed; recorded
  // once GitHub took it, so that a refusal is tried again at the next poll (steps of one pull
  // request go one at a time: it is said once).
  async function stop(p: StoredPull, reason: string): Promise<void> {
    const w = deps.writer();
    const on = p.issue_number ?? p.number;
    await w.labels(p.repository, on, { add: [LABEL_FAILED], remove: [LABEL_WORKING] });
    await w.comment(p.repository, on, `grove stopped following pull request #${p.number}: ${reason}. It is left for a person to finish.`);
    await pulls.stopped(p.task_id, reason);
    log.info({ task: p.task_id, number: p.number, reason }, 'grove stopped following a pull request');
  }

  async function sweep(): Promise<void> {
    const open = await pulls.followed(deps.hostId).catch((err: unknown) => {
      log.warn({ err }, 'reading the followed pull requests failed');
      return [];
    });
    await Promise.all(open.map((p) => steps.run(p.task_id)));
  }

  function schedule(): void {
    if (closed) return;
    timer = setTimeout(() => void sweep().finally(schedule), deps.intervalMs);
  }

  // A round's session ended: its pull request goes on now, not at the next poll.
  const stopEnded = deps.sessions.ended.onAnyChange((sessionId) => {
    if (closed) return;
    void pulls.followed(deps.hostId).then(
      (open) => {
        for (const p of open) if (p.fix_session === sessionId) void steps.run(p.task_id);
      },
      (err: unknown) => log.warn({ err, session: sessionId }, 'reading the followed pull requests failed'),
    );
  });

  return {
    /** reads the task's pull request now */
    wake: (taskId: string) => steps.run(taskId),
    start(): void {
      void sweep().finally(schedule);
    },
    close: once(async () => {
      closed = true;
      stopEnded();
      if (timer) clearTimeout(timer);
      await steps.close();
    }),
  };
}

export type Follower = ReturnType<typeof createFollower>;
