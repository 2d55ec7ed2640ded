import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import test, { after } from 'node:test';
import { createBlockedReader } from '../../daemon/sessions/blocked.ts';
import { sessionFiles } from '../../daemon/sessions/wrapper.ts';
import { AGENT } from '../helpers/sessions.ts';
import { makeTempDir } from '../helpers/git.ts';
import { addTask, openTestStore, sessionService, until } from '../helpers/store.ts';

// What the sandbox refused a confined session (DESIGN §18), as the daemon reads it: the session's
// network proxy appends a JSON line per refused connection; the daemon counts them per target
// into `result.blocked` and says each target once as a `session.blocked` event.
// One store for the file (the second test's).
const s = await openTestStore(after);

const line = (target: string, kind = 'network') => `${JSON.stringify({ kind, target, at: new Date().toISOString() })}\n`;

test('the record is counted per target, read on from where it stopped; a partial line waits for its end; bad lines are skipped', (t) => {
  const file = path.join(makeTempDir(t), 'blocked');
  const r = createBlockedReader(file, []);
  assert.equal(r.read(), null, 'no file: nothing refused');
  appendFileSync(file, line('evil.example:443') + line('evil.example:443') + 'not json\n{"kind":"other","target":"x"}\n' + line('10.0.0.1:22').slice(0, 10));
  assert.deepEqual(r.read(), {
    all: [{ kind: 'network', target: 'evil.example:443', count: 2 }],
    fresh: [{ kind: 'network', target: 'evil.example:443', count: 1 }],
  });
  assert.equal(r.read(), null, 'nothing new');
  appendFileSync(file, line('10.0.0.1:22').slice(10) + line('evil.example:443'));
  assert.deepEqual(r.read(), {
    all: [
      { kind: 'network', target: 'evil.example:443', count: 3 },
      { kind: 'network', target: '10.0.0.1:22', count: 1 },
    ],
    fresh: [{ kind: 'network', target: '10.0.0.1:22', count: 1 }],
  });
  // A restarted daemon reads the file from its start: the counts again, no target new again.
  const again = createBlockedReader(file, [{ kind: 'network', target: 'evil.example:443' }, { kind: 'network', target: '10.0.0.1:22' }]);
  assert.deepEqual(again.read(), {
    all: [
      { kind: 'network', target: 'evil.example:443', count: 3 },
      { kind: 'network', target: '10.0.0.1:22', count: 1 },
    ],
    fresh: [],
  });
});

test('a running session: its record becomes result.blocked, one session.blocked event per target, also before the agent reports a result', async (t) => {
  const service = sessionService(t, s, { agents: { slow: { command: [AGENT, '{prompt}'] } } });
  const task = await addTask(t, s);
  const started = await service.create(task.id, { agent: 'slow', prompt: 'sleep:30' });
  const files = sessionFiles(s.dataDir, started.id);
  appendFileSync(files.blocked, line('evil.example:443') + line('evil.example:443') + line('127.0.0.1:5432'));
  const seen = await until(async () => {
    const rec = await service.get(started.id);
    return rec.result?.blocked.length === 2 ? rec : null;
  }, 'result.blocked');
  assert.deepEqual(seen.result!.blocked, [
    { kind: 'network', target: 'evil.example:443', count: 2 },
    { kind: 'network', target: '127.0.0.1:5432', count: 1 },
  ]);
  assert.equal(seen.result!.text, null, 'the agent reported nothing of itself');
  appendFileSync(files.blocked, line('evil.example:443'));
  await until(async () => (await service.get(started.id)).result?.blocked[0]?.count === 3, 'the count to grow');
  const events = (await s.events.page({ task_id: task.id }, 0, 1000)).filter((e) => e.type === 'session.blocked' && e.session_id === started.id);
  assert.deepEqual(
    events.map((e) => (e.data as any).blocked_target),
    [
      { kind: 'network', target: 'evil.example:443' },
      { kind: 'network', target: '127.0.0.1:5432' },
    ],
    'once per target, however often it was refused',
  );
  await service.kill(started.id);
  const ended = await service.get(started.id);
  assert.equal(ended.result!.blocked[0]!.count, 3, 'kept at the end');
});
