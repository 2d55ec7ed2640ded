// The one paging loop (daemon/client/calls.ts readPages): every page read until a short one, each
// item handed on in order, and the `next` of the last page answered.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readPages } from '../../daemon/client/calls.ts';

// Items 1..total in pages of `limit` after a seq, as the events and output pages answer them.
const pages = (total: number, limit: number, asked: number[]) => async (after: number) => {
  asked.push(after);
  const items = Array.from({ length: Math.max(0, Math.min(limit, total - after)) }, (_, i) => after + i + 1);
  return { items, next: items.at(-1) ?? after };
};

test('readPages: reads on while pages are full, stops at the first short one', async () => {
  for (const [total, limit, from, calls] of [
    [0, 5, 0, [0]],
    [3, 5, 0, [0]],
    [5, 5, 0, [0, 5]], // a full last page: one more (empty) page says it was the end
    [12, 5, 0, [0, 5, 10]],
    [12, 5, 7, [7, 12]],
  ] as const) {
    const asked: number[] = [];
    const seen: number[] = [];
    const next = await readPages(from, limit, pages(total, limit, asked), (x) => seen.push(x));
    assert.deepEqual(seen, Array.from({ length: total - from }, (_, i) => from + i + 1), `${total}/${limit} from ${from}`);
    assert.deepEqual(asked, calls);
    assert.equal(next, Math.max(total, from));
  }
});
