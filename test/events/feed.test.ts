import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import test from 'node:test';
import { pino } from 'pino';
import { createEventFeed } from '../../daemon/events/feed.ts';
import { createLimiter } from '../../daemon/runtime/limiter.ts';
import { projectsTable } from '../../daemon/store/projects.ts';
import { makeTempDir } from '../helpers/git.ts';
import { openTestStore, TEST_HOST_ID } from '../helpers/store.ts';

// The event feed's followed source, alone: a real store and bus, no daemon, no HTTP.
test('events/feed follow(): the events after `from` that match, then each new one as it is published; an abort ends it', async (t) => {
  const s = await openTestStore(t.after.bind(t));
  const feed = createEventFeed({ bus: s.bus, events: s.events, streamReads: createLimiter(1), log: pino({ level: 'silent' }) });
  t.after(() => feed.close());
  const projects = projectsTable(s.store.db, s.events);
  const add = (name: string) => projects.insert({ id: randomUUID(), name, path: makeTempDir(t), host_id: TEST_HOST_ID, repository: null });
  const one = await add('one');
  const two = await add('two');
  const listeners = s.bus.published.listenerCount();

  const abort = new AbortController();
  const it = feed.follow({}, 0, abort.signal)[Symbol.asyncIterator]();
  const first = (await it.next()).value!;
  const second = (await it.next()).value!;
  assert.deepEqual([first.event, (first.data as any).project_id], ['project.added', one.id]);
  assert.deepEqual([second.event, (second.data as any).project_id, second.id], ['project.added', two.id, first.id! + 1]);

  // Nothing more yet: the next item waits for a publish.
  const waiting = it.next();
  const three = await add('three');
  const third = (await waiting).value!;
  assert.equal((third.data as any).project_id, three.id);
  assert.equal(s.bus.published.listenerCount(), listeners + 1, 'the follower listens while it follows');

  const last = it.next();
  abort.abort();
  assert.equal((await last).done, true, 'the reader went: the source ends though nothing was published');
  assert.equal(s.bus.published.listenerCount(), listeners, 'and lets go of the bus');

  // A filter and a resume point.
  const only = new AbortController();
  const two2 = feed.follow({ project_id: two.id }, 0, only.signal)[Symbol.asyncIterator]();
  assert.equal(((await two2.next()).value!.data as any).project_id, two.id);
  const next = two2.next();
  await add('four'); // another project's event does not reach it
  only.abort();
  assert.equal((await next).done, true);

  // Too slow a reader is told where to resume: after the last event written, else where it began.
  assert.deepEqual(feed.stall(7).last(undefined).data, { reason: 'too_slow', detail: 'the client took nothing for 30 s; resume with Last-Event-ID', after: 7 });
  assert.equal((feed.stall(7).last(12).data as any).after, 12);
});
