import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { pino } from 'pino';
import { laterLogger } from '../daemon/log-later.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { lines, log: pino({ level: 'debug', base: null, timestamp: false }, stream) };
}

test('lines logged before pino is there are written, in order and with their bindings, once it is', async () => {
  const { lines, log } = capture();
  const later = laterLogger();
  const store = later.log.child({ module: 'store' });
  store.info({ migration: '0001' }, 'migration applied');
  later.log.child({ module: 'spawner' }).warn('the session spawner exited');
  store.debug('below the level? no: debug is on');
  await new Promise((r) => setImmediate(r));
  assert.equal(lines.length, 0, 'nothing can be written before bind');

  later.bind(log);
  store.error({ err: 'x' }, 'after bind');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(
    lines.map((l) => [l.module, l.msg, l.level]),
    [
      ['store', 'migration applied', 30],
      ['spawner', 'the session spawner exited', 40],
      ['store', 'below the level? no: debug is on', 20],
      ['store', 'after bind', 50],
    ],
  );
  assert.equal(lines[0]!.migration, '0001');
});

test('the real logger level applies to lines that waited', async () => {
  const { lines, log } = capture();
  const later = laterLogger();
  later.log.child({ module: 'store' }).debug('dropped at info');
  later.log.info('kept');
  log.level = 'info';
  later.bind(log);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(lines.map((l) => l.msg), ['kept']);
});
