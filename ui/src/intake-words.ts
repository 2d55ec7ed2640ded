// A project's intake in words (DESIGN §20): how its watch stands and how its last poll went, and
// what became of each issue. Pure: the Intake panel and its tests call it alike.
import type { Intake, IntakeItem, PollOutcome } from '../../schemas/intake.ts';

// How a watch stands, and how loudly to say it: `bad` stops the polls until someone acts (the
// token), `warn` passes by itself (a spent rate limit, GitHub erring).
export interface WatchMark {
  text: string;
  tone: 'ok' | 'warn' | 'bad';
}

export function watchMark(w: Pick<Intake, 'state' | 'last_poll'>, time: (iso: string) => string): WatchMark {
  switch (w.state) {
    case 'polling':
      return { text: 'watching', tone: 'ok' };
    case 'unauthorized':
      return { text: w.last_poll?.outcome === 'no_token' ? 'no GitHub token: not polling' : 'GitHub refused the token: not polling', tone: 'bad' };
    case 'rate_limited':
      return { text: w.last_poll?.until ? `rate limited until ${time(w.last_poll.until)}` : 'rate limited', tone: 'warn' };
    case 'failing':
      return { text: 'failing: GitHub errs or does not answer', tone: 'warn' };
  }
}

const OUTCOMES: Record<PollOutcome, string> = {
  changed: 'issues read',
  not_modified: 'nothing new',
  no_token: 'no token',
  unauthorized: 'token refused',
  rate_limited: 'rate limited',
  not_found: 'repository not found',
  failed: 'failed',
};

export const pollWords = (outcome: PollOutcome): string => OUTCOMES[outcome];

// What became of an issue's label event, after its outcome: who labelled it, and why it was
// refused or failed (a taken one links its task on the page).
export function itemWords(i: Pick<IntakeItem, 'outcome' | 'actor' | 'reason'>): string {
  const by = i.actor ? ` by @${i.actor}` : '';
  if (i.outcome === 'claimed') return `being taken${by}`;
  if (i.outcome === 'taken') return `labelled${by}`;
  return `${i.reason ?? i.outcome}`;
}
