import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import test from 'node:test';
import type { StreamEvent } from '../../daemon/runtime/follow.ts';
import { createLimiter } from '../../daemon/runtime/limiter.ts';
import { sessionOutput } from '../../daemon/sessions/output-stream.ts';
import { AGENT, gate, liveGroupMembers } from '../helpers/sessions.ts';
import { addTask, openTestStore, sessionService } from '../helpers/store.ts';

const agents = { fixture: { command: [AGENT, '{prompt}'] } };

// A session's output as a followed source, alone: a real store and session service, no HTTP.
test('sessions/output-stream: lines in pages as they are stored, then end with the session; a 404 before any source; an abort ends it', async (t) => {
  const s = await openTestStore(t.after.bind(t));
  const service = sessionService(t, s, { agents });
  const task = await addTask(t, s);
  const streamReads = createLimiter(1);

  await assert.rejects(sessionOutput({ id: randomUUID(), after: 0, sessions: service, streamReads }), (err: any) => err.code === 'NOT_FOUND');

  const g = gate(t);
  const started = await service.create(task.id, { agent: 'fixture', args: ['echo:before', `wait:${g.path}`, 'echo:after', 'exit:2'] });
  t.after(() => liveGroupMembers(started.pid!).forEach((pid) => process.kill(pid, 'SIGKILL')));
  const source = await sessionOutput({ id: started.id, after: 0, sessions: service, streamReads });

  // A follower from the start sees every line once and the end; it releases the agent once it saw the first line.
  const got: StreamEvent[] = [];
  for await (const item of source(new AbortController().signal)) {
    got.push(...(Array.isArray(item) ? item : [item as StreamEvent]));
    if (got.length === 1) g.release();
  }
  assert.deepEqual(got.filter((e) => e.event === 'line').map((e) => [e.id, (e.data as any).text]), [[1, 'before'], [2, 'after']]);
  const end = got.at(-1)!;
  assert.equal(end.event, 'end');
  assert.deepEqual([(end.data as any).status, (end.data as any).exit_code], ['failed', 2]);
  assert.equal(service.output.listenerCount(), 0);
  assert.equal(service.ended.listenerCount(started.id), 0);

  // One resuming after a seq gets the rest only.
  const rest: StreamEvent[] = [];
  for await (const item of await sessionOutput({ id: started.id, after: 1, sessions: service, streamReads }).then((src) => src(new AbortController().signal))) {
    rest.push(...(Array.isArray(item) ? item : [item as StreamEvent]));
  }
  assert.deepEqual(rest.map((e) => e.event), ['line', 'end']);

  // A follower of a session that waits: its reader goes, the source ends without an end event.
  const g2 = gate(t);
  const held = await service.create(task.id, { agent: 'fixture', args: ['echo:held', `wait:${g2.path}`] });
  t.after(() => liveGroupMembers(held.pid!).forEach((pid) => process.kill(pid, 'SIGKILL')));
  const abort = new AbortController();
  const it = (await sessionOutput({ id: held.id, after: 0, sessions: service, streamReads }))(abort.signal)[Symbol.asyncIterator]();
  const firstPage = (await it.next()).value as StreamEvent[];
  assert.deepEqual(firstPage.map((e) => (e.data as any).text), ['held']);
  const waiting = it.next();
  assert.equal(service.ended.listenerCount(held.id), 1, 'it waits on the session’s end (and output)');
  abort.abort();
  assert.equal((await waiting).done, true);
  assert.equal(service.output.listenerCount(held.id), 0);
  assert.equal(service.ended.listenerCount(held.id), 0);
  g2.release();
});
