import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
import { Kind } from '@sinclair/typebox';
import { ROOT } from '../../daemon/runtime/root.ts';

// The daemon's Ajv skips the meta-schema check at start (daemon/validation.ts); this is that check,
// for every schema in schemas/, so a malformed keyword fails here instead.
test('every schema in schemas/ is a valid JSON Schema (draft-07 meta-schema)', async () => {
  const ajv = new Ajv({ strict: true, allowUnionTypes: true, unicodeRegExp: true });
  let checked = 0;
  for (const file of readdirSync(path.join(ROOT, 'schemas')).filter((f) => f.endsWith('.ts')).sort()) {
    const mod = (await import(pathToFileURL(path.join(ROOT, 'schemas', file)).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(mod)) {
      if (typeof value !== 'object' || value === null || !(Kind in value)) continue;
      assert.equal(ajv.validateSchema(value), true, `${file} ${name}: ${ajv.errorsText(ajv.errors)}`);
      checked++;
    }
  }
  assert.ok(checked >= 20, `only ${checked} schemas found`);
  // The check itself rejects what it is there to catch.
  assert.equal(ajv.validateSchema({ type: 'string', minLength: 'three' }), false);
});

// A merge answers the strategy it was asked for (DESIGN §9): the answer's schema takes exactly
// the strategies the body does, and the type the worker returns is that schema's.
test('MergeResult.strategy is one of the strategies MergeBody takes, and nothing else', async () => {
  const { MergeBody, MergeResult } = await import('../../schemas/review.ts');
  const ajv = new Ajv({ strict: true, allowUnionTypes: true });
  const body = ajv.compile(MergeBody);
  const result = ajv.compile(MergeResult);
  for (const strategy of ['merge', 'squash', 'ff', 'rebase', 'octopus', '']) {
    assert.equal(result({ base: 'main', commit: 'abc', strategy }), body({ strategy }), `strategy ${JSON.stringify(strategy)}`);
  }
  assert.equal(result({ base: 'main', commit: 'abc', strategy: 'squash' }), true);
});

// Live: a process, or about to have one. Busy: what a follow-up queues behind (DESIGN §8).
test('the session status groups: live is starting|running, busy adds queued; both are statuses of the schema', async () => {
  const { SessionStatus, LIVE_STATUSES, BUSY_STATUSES, isLive, isBusy } = await import('../../schemas/session.ts');
  const all = SessionStatus.anyOf.map((s) => s.const);
  assert.deepEqual(all, ['queued', 'starting', 'running', 'exited', 'failed', 'killed', 'lost']);
  const expected: Record<string, [live: boolean, busy: boolean]> = {
    queued: [false, true],
    starting: [true, true],
    running: [true, true],
    exited: [false, false],
    failed: [false, false],
    killed: [false, false],
    lost: [false, false],
  };
  for (const s of all) assert.deepEqual([isLive(s), isBusy(s)], expected[s], s);
  assert.deepEqual([...LIVE_STATUSES], ['starting', 'running']);
  assert.deepEqual([...BUSY_STATUSES], ['queued', 'starting', 'running']);
});

// The dashboard's mode picker offers MODES: the list the schema is built from.
test('the session modes: the schema takes exactly MODES, in the order the picker shows them', async () => {
  const { Mode } = await import('../../schemas/config.ts');
  const { MODES } = await import('../../schemas/modes.ts');
  assert.deepEqual(Mode.anyOf.map((s) => s.const), ['read', 'edit', 'full']);
  assert.deepEqual([...MODES], ['read', 'edit', 'full']);
});

// The page limits are the schemas' own: a client that pages by them is never refused.
test('output and event pages: the schema takes a page of OUTPUT_PAGE_MAX / EVENT_PAGE_MAX and refuses one more', async () => {
  const { OutputQuery, OUTPUT_PAGE_MAX } = await import('../../schemas/session.ts');
  const { EventQuery, EVENT_PAGE_MAX } = await import('../../schemas/event.ts');
  const ajv = new Ajv({ strict: true, allowUnionTypes: true });
  const output = ajv.compile(OutputQuery);
  const events = ajv.compile(EventQuery);
  // DESIGN §4: `limit` ≤ 5000.
  assert.equal(OUTPUT_PAGE_MAX, 5000);
  assert.equal(EVENT_PAGE_MAX, 5000);
  assert.equal(output({ limit: OUTPUT_PAGE_MAX }), true);
  assert.equal(output({ last: OUTPUT_PAGE_MAX }), true);
  assert.equal(output({ limit: OUTPUT_PAGE_MAX + 1 }), false);
  assert.equal(output({ last: OUTPUT_PAGE_MAX + 1 }), false);
  assert.equal(events({ limit: EVENT_PAGE_MAX }), true);
  assert.equal(events({ limit: EVENT_PAGE_MAX + 1 }), false);
});
