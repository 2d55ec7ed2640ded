import type { LandingJournal } from '../journal/landing.ts';
import { createLandings } from './landings.ts';
import { createReview, type ReviewDeps } from './review.ts';

// Landing as the routes and the daemon use it: a task's work read and landed (changes, diff,
// turns, commit, rebase, merge, push, restore), over landings that a stop cannot leave half done.
export function createLanding(deps: Omit<ReviewDeps, 'landings' | 'landingJournal'> & { landingJournal: LandingJournal }) {
  const landings = createLandings({ journal: deps.landingJournal, pool: deps.pool, tasks: deps.tasks, log: deps.log, gitTimeoutS: deps.gitTimeoutS });
  const review = createReview({ ...deps, landings });
  return {
    review,
    // Finishes or undoes the rebases and merges a stop cut short (their intents).
    recover: () => landings.recoverAll(),
  };
}

export type Landing = ReturnType<typeof createLanding>;
