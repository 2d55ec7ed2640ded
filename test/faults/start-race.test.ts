import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test, { type TestContext } from 'node:test';
import { Pool } from 'undici';
import { makeHome, spawnDaemon, stopProcess } from '../helpers/daemon.ts';
import { storeUrlFor } from '../helpers/postgres.ts';
import { seedStore } from '../helpers/template.ts';

const EXIT_ALREADY_RUNNING = 75;

// Starts `n` daemons on one home at the same moment; resolves with who got ready and who exited.
async function race(t: TestContext, home: string, n: number) {
  // The home's database under test:postgres: the lock decides there too, before the store opens.
  const env = { GROVE_DATABASE_URL: (await storeUrlFor(home)) ?? undefined };
  const all = Array.from({ length: n }, () => spawnDaemon(home, env));
  for (const d of all) t.after(() => stopProcess(d.proc, d.exited));
  const outcomes = await Promise.all(
    all.map((d) => Promise.race([d.ready.then(() => 'ready' as const), d.exited.then((code) => code)])),
  );
  const winners = all.filter((_, i) => outcomes[i] === 'ready');
  const losers = all.filter((_, i) => outcomes[i] !== 'ready');
  return { all, outcomes, winners, losers };
}

async function assertOneServes(home: string, r: Awaited<ReturnType<typeof race>>) {
  assert.equal(r.winners.length, 1, `outcomes: ${JSON.stringify(r.outcomes)}`);
  const winner = r.winners[0]!;
  for (const l of r.losers) {
    assert.equal(await l.exited, EXIT_ALREADY_RUNNING);
    assert.match(l.stderr(), /another grove daemon/);
  }
  const socketPath = (await winner.ready).socket;
  const client = new Pool('http://localhost', { socketPath });
  try {
    const h = await client.request({ method: 'GET', path: '/api/health' });
    assert.equal(((await h.body.json()) as any).pid, winner.proc.pid, 'the socket is the winner\'s');
    const p = await client.request({ method: 'GET', path: '/api/projects' });
    assert.equal(p.statusCode, 200, 'the store opened once and answers');
    await p.body.dump();
  } finally {
    await client.close();
  }
  assert.equal(await stopProcess(winner.proc, winner.exited), 0);
}

test('three daemons racing to start on one home: one serves, the others exit 75', async (t) => {
  const home = makeHome(t);
  await seedStore(path.join(home, 'data'));
  await assertOneServes(home, await race(t, home, 3));
});

test('three daemons racing over a stale lock of a dead daemon: one takes it over, the others exit 75', async (t) => {
  const home = makeHome(t);
  await seedStore(path.join(home, 'data'));
  // pid 2^22-1 is above the usual pid_max: no such process runs.
  writeFileSync(path.join(home, 'data', 'grove.lock'), JSON.stringify({ pid: 4194303, start_time: '1' }) + '\n');
  await assertOneServes(home, await race(t, home, 3));
});

test('two daemons racing on a brand-new home: one initialises the store, the other exits 75', async (t) => {
  const home = makeHome(t);
  await assertOneServes(home, await race(t, home, 2));
});
