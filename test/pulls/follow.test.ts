// What grove answers of a pull request's feedback (daemon/pulls/follow.ts nextFeedback) and what
// its body says (daemon/pulls/open.ts pullBody), alone: one kind per round, only collaborators,
// never grove's own words, each item once, a failed check's output cut to its last lines.
import assert from 'node:assert/strict';
import test from 'node:test';
import { MARKER } from '../../daemon/github/issues.ts';
import { nextFeedback } from '../../daemon/pulls/follow.ts';
import { pullBody } from '../../daemon/pulls/open.ts';
import { NOTHING_ACTED } from '../../daemon/store/pull-requests.ts';
import type { Task } from '../../schemas/task.ts';

const PR = { number: 4, url: 'https://github.com/acme/widgets/pull/4', base: 'main' };
const user = (login: string) => ({ login });
const review = (id: number, state: string, login = 'bob', assoc = 'COLLABORATOR') => ({ id, state, body: `review ${id}`, user: user(login), author_association: assoc });
const comment = (id: number, body: string, login = 'bob', assoc = 'COLLABORATOR', more: object = {}) => ({ id, body, user: user(login), author_association: assoc, ...more });
const check = (id: number, conclusion: string, text = '') => ({ id, name: `check ${id}`, head_sha: 'abc', status: 'completed', conclusion, output: { title: 'failed', summary: null, text } });
const none = { reviews: [], reviewComments: [], comments: [], checks: [] };

test('a review asking for changes comes first, with its own comments; approvals and outsiders are not feedback', () => {
  const f = nextFeedback(PR, NOTHING_ACTED, {
    ...none,
    reviews: [review(1, 'APPROVED'), review(2, 'CHANGES_REQUESTED'), review(3, 'CHANGES_REQUESTED', 'mallory', 'NONE')],
    reviewComments: [comment(10, 'rename this', 'bob', 'COLLABORATOR', { path: 'a.ts', line: 3, pull_request_review_id: 2 }), comment(11, 'and this', 'carol', 'MEMBER', { path: 'b.ts', line: 1, pull_request_review_id: 99 })],
    comments: [comment(20, 'a plain comment')],
    checks: [check(30, 'failure')],
  })!;
  assert.equal(f.kind, 'review');
  assert.deepEqual(f.ids, [2, 10]);
  assert.deepEqual([f.acted.reviews, f.acted.review_comments], [[2], [10]]);
  assert.match(f.prompt, /> review 2/);
  assert.match(f.prompt, /bob on `a\.ts` line 3:\n> rename this/);
  assert.doesNotMatch(f.prompt, /review 3|and this|a plain comment/);
  // Answered: the next round is the other review comment, then the issue comment, then the check.
  const seen = { ...none, reviews: [review(2, 'CHANGES_REQUESTED')], reviewComments: [comment(10, 'x', 'bob', 'COLLABORATOR', { pull_request_review_id: 2 }), comment(11, 'and this', 'carol', 'MEMBER', { path: 'b.ts' })], comments: [comment(20, 'a plain comment')], checks: [check(30, 'failure')] };
  const g = nextFeedback(PR, f.acted, seen)!;
  assert.deepEqual([g.kind, g.ids, g.author], ['review_comment', [11], 'carol']);
  const h = nextFeedback(PR, g.acted, seen)!;
  assert.deepEqual([h.kind, h.ids], ['comment', [20]]);
  const i = nextFeedback(PR, h.acted, seen)!;
  assert.deepEqual([i.kind, i.ids, i.acted.checks], ['check', [30], [{ id: 30, sha: 'abc' }]]);
  assert.equal(nextFeedback(PR, i.acted, seen), null, 'nothing is answered twice');
});

test("grove's own comments, outsiders' and passing or unfinished checks are not feedback; a failed check's output is cut to its last lines", () => {
  assert.equal(nextFeedback(PR, NOTHING_ACTED, { ...none, comments: [comment(1, `grove opened this\n\n${MARKER}`), comment(2, 'please', 'mallory', 'NONE')], checks: [check(3, 'success'), { ...check(4, 'failure'), status: 'in_progress' }] }), null);
  const long = Array.from({ length: 100 }, (_, n) => `line ${n}`).join('\n');
  const f = nextFeedback(PR, NOTHING_ACTED, { ...none, checks: [check(5, 'timed_out', long)] })!;
  assert.equal(f.kind, 'check');
  assert.match(f.prompt, /Check "check 5" \(timed_out\):/);
  assert.match(f.prompt, /> line 99/);
  assert.doesNotMatch(f.prompt, /> line 59\n/);
});

test("the body: the agent's last words, the files changed, and Fixes #N for an issue of the same repository", () => {
  const task = { id: 't1', name: 'job', branch: 'grove/1-job', issue: { provider: 'github', repository: 'acme/widgets', number: 1, url: 'u', title: 'Job' } } as Task;
  const changes = { base: 'main', merge_base: 'x', head: 'y', ahead: 1, behind: 0, uncommitted: 0, files: [{ path: 'a.ts', status: 'modified', additions: 2, deletions: 1, binary: false }] } as const;
  const body = pullBody(task, 'Did the job.', { ...changes, files: [...changes.files] }, 'acme/widgets');
  assert.match(body, /^Did the job\./);
  assert.match(body, /- `a\.ts` \(\+2 −1\)/);
  assert.match(body, /^Fixes #1$/m);
  assert.match(pullBody(task, null, { ...changes, files: [] }, 'acme/other'), /^Fixes acme\/widgets#1$/m);
  assert.doesNotMatch(pullBody({ ...task, issue: null }, null, { ...changes, files: [] }, 'acme/widgets'), /Fixes/);
});
