// A task's pull request in words (DESIGN §20): how it stands, its fix tries, and each feedback
// round (what asked, who, and how its follow-up ended). Pure: the task page and its tests call it alike.
import type { FeedbackKind, FeedbackRound, PullRequest } from '../../schemas/pull.ts';

// How a pull request stands, and how loudly to say it: `warn` when grove stopped following an
// open one (its fix tries spent): a person takes it from there.
export interface PullMark {
  text: string;
  tone: 'ok' | 'warn' | 'done';
}

export function pullMark(p: Pick<PullRequest, 'state' | 'following' | 'stopped_reason'>): PullMark {
  if (p.state === 'merged') return { text: 'merged', tone: 'ok' };
  if (p.state === 'closed') return { text: 'closed', tone: 'done' };
  if (!p.following || p.stopped_reason !== null) return { text: 'open, not followed', tone: 'warn' };
  return { text: 'open', tone: 'ok' };
}

export const triesWords = (p: Pick<PullRequest, 'fix_tries' | 'fix_tries_used'>): string => `${p.fix_tries_used} of ${p.fix_tries} fix ${p.fix_tries === 1 ? 'try' : 'tries'} used`;

const KINDS: Record<FeedbackKind, string> = {
  review: 'review asking changes',
  review_comment: 'review comment',
  comment: 'comment',
  check: 'failed check',
};

// What a round answered and who asked: a person by @name, a check by its name.
export function roundWords(r: Pick<FeedbackRound, 'kind' | 'author'>): string {
  if (r.author === null) return KINDS[r.kind];
  return r.kind === 'check' ? `${KINDS[r.kind]} ${r.author}` : `${KINDS[r.kind]} by @${r.author}`;
}

// How its follow-up ended: running, its commits pushed (the tip, short), or failed and why.
export function outcomeWords(r: Pick<FeedbackRound, 'outcome' | 'pushed_commit' | 'error'>): string {
  if (r.outcome === 'pending') return 'being answered';
  if (r.outcome === 'failed') return r.error ? `failed: ${r.error}` : 'failed';
  return r.pushed_commit ? `pushed ${r.pushed_commit.slice(0, 12)}` : 'nothing to push';
}
