// `npm run bench:scale`: 100 sessions printing 10 lines a second for a minute, and 10 printing as
// fast as they can, on one daemon (DESIGN §11, issue 19). Meanwhile: GET /api/tasks/:id/sessions
// and GET /api/health latency, how long a committed event takes to reach an SSE follower, and the
// daemon's memory. At the end every line must be stored.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { sse } from '../daemon/client/sse.ts';
import { isLive, type Session } from '../schemas/session.ts';
import { call, FIXTURE_AGENT, makeMigratedStore, readyTask, ROOT, rssMb, startBenchDaemon } from './daemon.ts';
import { round, summarize } from './stats.ts';

const TICKER = path.join(ROOT, 'test', 'fixtures', 'ticker.mjs');
const quick = process.argv.includes('--quick');
const SLOW = 100;
const FAST = 10;
const SECONDS = quick ? 15 : 60;
const RATE = 10;
const FAST_LINES = quick ? 100_000 : 300_000;

const tplRoot = mkdtempSync(path.join(tmpdir(), 'grove-bench-tpl-'));
const template = path.join(tplRoot, 'pgdata');
await makeMigratedStore(template);
const root = mkdtempSync(path.join(tmpdir(), 'grove-bench-scale-'));
const home = mkdtempSync(path.join(tmpdir(), 'grove-bench-'));
try {
  cpSync(template, path.join(home, 'data', 'pgdata'), { recursive: true });
  writeFileSync(path.join(home, 'config.json'), JSON.stringify({ agents: { ticker: { command: [TICKER] }, fixture: { command: [FIXTURE_AGENT, '{prompt}'] } } }));
  const d = await startBenchDaemon({ template: null, home });
  const { task } = await readyTask(d.api, root, 'scale');

  // Latency samplers, each on a connection of its own, one request at a time.
  const sample = (urlPath: string) => {
    const pool = new Pool('http://localhost', { socketPath: d.socketPath, connections: 1 });
    const ms: number[] = [];
    const at: number[] = [];
    let on = true;
    const done = (async () => {
      while (on) {
        const t0 = performance.now();
        await call(pool, 'GET', urlPath);
        ms.push(performance.now() - t0);
        at.push(t0);
        await new Promise((r) => setTimeout(r, 50));
      }
      await pool.close();
    })();
    // The latencies of requests sent after `from` (performance.now()).
    const after = (from: number) => ms.filter((_, i) => at[i]! >= from);
    return { ms, after, stop: async () => ((on = false), await done) };
  };
  // Event delivery: from the commit (the event's `at`) to its arrival on a stream.
  const delivery: number[] = [];
  const events = new Pool('http://localhost', { socketPath: d.socketPath, connections: 1 });
  const es = await events.request({ method: 'GET', path: '/api/events?after=0', headers: { accept: 'text/event-stream' } });
  void (async () => {
    for await (const { data } of sse(es.body)) delivery.push(Date.now() - Date.parse(data.at));
  })().catch(() => {}); // destroyed at the end

  const idle = { list: sample(`/api/tasks/${task.id}/sessions`), health: sample('/api/health') };
  await new Promise((r) => setTimeout(r, 3000));
  await idle.list.stop();
  await idle.health.stop();
  delivery.length = 0;

  const loaded = { list: sample(`/api/tasks/${task.id}/sessions`), health: sample('/api/health') };
  let peak = 0;
  const rssTimer = setInterval(() => (peak = Math.max(peak, rssMb(d.pid))), 250);
  const t0 = performance.now();
  const ids: Array<{ id: string; lines: number }> = [];
  for (let i = 0; i < SLOW; i++) {
    const s = await call(d.api, 'POST', `/api/tasks/${task.id}/sessions`, { agent: 'ticker', args: [String(SECONDS * RATE), String(RATE)] });
    ids.push({ id: s.id, lines: SECONDS * RATE });
  }
  for (let i = 0; i < FAST; i++) {
    const s = await call(d.api, 'POST', `/api/tasks/${task.id}/sessions`, { agent: 'fixture', prompt: `print:${FAST_LINES}` });
    ids.push({ id: s.id, lines: FAST_LINES });
  }
  const allStarted = performance.now();
  // Until every session has ended and its lines are stored.
  for (;;) {
    const list = await call(d.api, 'GET', `/api/tasks/${task.id}/sessions`);
    if (list.every((s: Session) => !isLive(s.status))) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const wallS = (performance.now() - t0) / 1000;
  clearInterval(rssTimer);
  await loaded.list.stop();
  await loaded.health.stop();
  let stored = 0;
  let expected = 0;
  for (const { id, lines } of ids) {
    const page = await call(d.api, 'GET', `/api/sessions/${id}/output?after=${lines - 1}&limit=10`);
    stored += page.lines.length === 1 && page.lines[0].seq === lines ? lines : 0;
    expected += lines;
  }
  es.body.destroy();
  await events.close();
  const p = (xs: number[]) => ({ p50: round(summarize(xs).median), p99: round(summarize(xs).p99), n: xs.length });
  const result = {
    sessions: { slow: SLOW, fast: FAST, seconds: SECONDS, rate: RATE, fast_lines: FAST_LINES, wall_s: round(wallS, 1) },
    all_stored: stored === expected,
    lines: { stored, expected },
    list_ms: { idle: p(idle.list.ms), loaded: p(loaded.list.ms), once_all_started: p(loaded.list.after(allStarted)) },
    health_ms: { idle: p(idle.health.ms), loaded: p(loaded.health.ms), once_all_started: p(loaded.health.after(allStarted)) },
    starts_s: round((allStarted - t0) / 1000, 1),
    event_delivery_ms: p(delivery),
    rss_mb: { peak: round(peak, 0) },
  };
  console.log(JSON.stringify(result, null, 2));
  await d.stop();
} finally {
  rmSync(root, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
  rmSync(tplRoot, { recursive: true, force: true });
}
