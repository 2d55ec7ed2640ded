import assert from 'node:assert/strict';
import { test } from 'node:test';
import { itemWords, pollWords, watchMark } from '../../ui/src/intake-words.ts';

// The dashboard's intake in words (DESIGN §20): how a watch stands and how loudly, a poll's
// outcome, and what became of an issue.
const at = '2026-05-01T09:00:00.000Z';
const poll = (outcome: any, until: string | null = null) => ({ at, outcome, error: null, until });
const time = (iso: string) => `<${iso}>`;

test('a watch: polling is quiet, a refused or missing token stops it (bad), a spent limit and GitHub erring pass (warn)', () => {
  assert.deepEqual(watchMark({ state: 'polling', last_poll: null }, time), { text: 'watching', tone: 'ok' });
  assert.deepEqual(watchMark({ state: 'unauthorized', last_poll: poll('unauthorized') }, time), { text: 'GitHub refused the token: not polling', tone: 'bad' });
  assert.deepEqual(watchMark({ state: 'unauthorized', last_poll: poll('no_token') }, time), { text: 'no GitHub token: not polling', tone: 'bad' });
  assert.deepEqual(watchMark({ state: 'rate_limited', last_poll: poll('rate_limited', at) }, time), { text: `rate limited until <${at}>`, tone: 'warn' });
  assert.deepEqual(watchMark({ state: 'rate_limited', last_poll: poll('rate_limited') }, time), { text: 'rate limited', tone: 'warn' });
  assert.deepEqual(watchMark({ state: 'failing', last_poll: poll('failed') }, time), { text: 'failing: GitHub errs or does not answer', tone: 'warn' });
});

test("a poll's outcome and an item's fate in words", () => {
  assert.equal(pollWords('not_modified'), 'nothing new');
  assert.equal(pollWords('not_found'), 'repository not found');
  assert.equal(itemWords({ outcome: 'taken', actor: 'maria', reason: null }), 'labelled by @maria');
  assert.equal(itemWords({ outcome: 'claimed', actor: null, reason: null }), 'being taken');
  assert.equal(itemWords({ outcome: 'refused', actor: 'rita', reason: '@rita, who added the label, has read permission' }), '@rita, who added the label, has read permission');
  assert.equal(itemWords({ outcome: 'failed', actor: 'maria', reason: null }), 'failed');
});
