import assert from 'node:assert/strict';
import { test } from 'node:test';
import { outcomeWords, pullMark, roundWords, triesWords } from '../../ui/src/pull-words.ts';

// The dashboard's pull request in words (DESIGN §20): how it stands and how loudly, its fix
// tries, and each feedback round's ask and end.

test('a pull request: open and followed, open but no longer followed (warn), merged, closed', () => {
  assert.deepEqual(pullMark({ state: 'open', following: true, stopped_reason: null }), { text: 'open', tone: 'ok' });
  assert.deepEqual(pullMark({ state: 'open', following: false, stopped_reason: 'its fix tries are spent' }), { text: 'open, not followed', tone: 'warn' });
  assert.deepEqual(pullMark({ state: 'merged', following: false, stopped_reason: null }), { text: 'merged', tone: 'ok' });
  assert.deepEqual(pullMark({ state: 'closed', following: false, stopped_reason: null }), { text: 'closed', tone: 'done' });
  // Merged after grove stopped following it: merged says it all.
  assert.deepEqual(pullMark({ state: 'merged', following: false, stopped_reason: 'its fix tries are spent' }), { text: 'merged', tone: 'ok' });
});

test('fix tries used of the max', () => {
  assert.equal(triesWords({ fix_tries: 3, fix_tries_used: 1 }), '1 of 3 fix tries used');
  assert.equal(triesWords({ fix_tries: 1, fix_tries_used: 0 }), '0 of 1 fix try used');
  assert.equal(triesWords({ fix_tries: 0, fix_tries_used: 0 }), '0 of 0 fix tries used');
});

test("a round: what asked and who, and how its follow-up ended", () => {
  assert.equal(roundWords({ kind: 'review', author: 'bob' }), 'review asking changes by @bob');
  assert.equal(roundWords({ kind: 'review_comment', author: 'bob' }), 'review comment by @bob');
  assert.equal(roundWords({ kind: 'comment', author: null }), 'comment');
  assert.equal(roundWords({ kind: 'check', author: 'ci' }), 'failed check ci');
  assert.equal(outcomeWords({ outcome: 'pending', pushed_commit: null, error: null }), 'being answered');
  assert.equal(outcomeWords({ outcome: 'pushed', pushed_commit: '0123456789abcdef0123', error: null }), 'pushed 0123456789ab');
  assert.equal(outcomeWords({ outcome: 'pushed', pushed_commit: null, error: null }), 'nothing to push');
  assert.equal(outcomeWords({ outcome: 'failed', pushed_commit: null, error: 'the push was refused' }), 'failed: the push was refused');
  assert.equal(outcomeWords({ outcome: 'failed', pushed_commit: null, error: null }), 'failed');
});
