// Output ingestion: an agent printing N lines of 80 bytes, from start until the last line is
// readable through the API; beside the same agent writing to /dev/null and a bare PGlite bulk
// insert of the same rows. Then 10 sessions printing as fast as they can at once: GET
// /api/health latency against idle, and the daemon's memory at its peak.
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { sseEnd } from '../daemon/client/sse.ts';
import { PGLITE_CONF } from '../daemon/store/driver/pglite-options.ts';
import { call, FIXTURE_AGENT, fixtureHome, readyTask, ROOT, rssMb, startBenchDaemon } from './daemon.ts';
import { round, summarize } from './stats.ts';

const AGENT = FIXTURE_AGENT;
const execFileP = promisify(execFile);

async function healthLatencies(api: Parameters<typeof call>[0], stop: () => boolean, max = 100_000): Promise<number[]> {
  const out: number[] = [];
  while (!stop() && out.length < max) {
    const t0 = performance.now();
    await call(api, 'GET', '/api/health');
    out.push(performance.now() - t0);
  }
  return out;
}

// The bare insert, in a process of its own (bench/pglite-insert.mjs), on a copy of the store.
async function barePglite(template: string, lines: number, batch: number): Promise<number> {
  const dir = mkdtempSync(path.join(tmpdir(), 'grove-bench-pg-'));
  try {
    cpSync(template, path.join(dir, 'pgdata'), { recursive: true });
    const args = ['bench/pglite-insert.mjs', path.join(dir, 'pgdata'), JSON.stringify(PGLITE_CONF), String(lines), String(batch)];
    const { stdout } = await execFileP(process.execPath, args, { cwd: ROOT });
    return Number(stdout.trim());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchOutput(opts: { template: string; lines: number; linesEach: number; rounds: number }) {
  // The agent alone, writing to /dev/null.
  let t0 = performance.now();
  spawnSync(AGENT, [`print:${opts.lines}`], { stdio: ['ignore', 'ignore', 'inherit'] });
  const devnullMs = performance.now() - t0;

  const home = fixtureHome(opts.template);
  const root = mkdtempSync(path.join(tmpdir(), 'grove-bench-out-'));
  try {
    const d2 = await startBenchDaemon({ template: null, home });
    const { task } = await readyTask(d2.api, root, 'output');

    // Follow from just before the last line: the stream answers once it is stored, then ends.
    const untilStored = async (id: string, lines: number) => {
      const res = await request(`http://localhost/api/sessions/${id}/output`, {
        dispatcher: d2.api,
        headers: { accept: 'text/event-stream', 'last-event-id': String(lines - 1) },
      });
      if ((await sseEnd(res.body)) === null) throw new Error('the stream did not end');
      const last = await call(d2.api, 'GET', `/api/sessions/${id}/output?after=${lines - 1}`);
      return (last.lines[0]?.seq ?? 0) === lines;
    };
    // (6) and (7): GET /api/health and memory while 10 sessions print as fast as they can.
    const idle = await healthLatencies(d2.api, () => false, 300);
    const memIdle = rssMb(d2.pid);
    let peak = memIdle;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(d2.pid))), 100);
    let done = false;
    const t1 = performance.now();
    const ten = await Promise.all(
      Array.from({ length: 10 }, () => call(d2.api, 'POST', `/api/tasks/${task.id}/sessions`, { agent: 'fixture', prompt: `print:${opts.linesEach}` })),
    );
    const underLoad = healthLatencies(d2.api, () => done);
    const tenStored = (await Promise.all(ten.map((x) => untilStored(x.id, opts.linesEach)))).every(Boolean);
    const tenMs = performance.now() - t1;
    done = true;
    clearInterval(sampler);
    const busy = await underLoad;

    // The rate: one session printing opts.lines lines, in rounds that alternate with the bare
    // insert, as a single pair of runs swings the ratio.
    const groveRounds: number[] = [];
    const bareRounds: number[] = [];
    let allStored = true;
    for (let i = 0; i < opts.rounds; i++) {
      bareRounds.push(await barePglite(opts.template, opts.lines, Math.floor((512 * 1024) / 80)));
      t0 = performance.now();
      const session = await call(d2.api, 'POST', `/api/tasks/${task.id}/sessions`, { agent: 'fixture', prompt: `print:${opts.lines}` });
      allStored &&= await untilStored(session.id, opts.lines);
      groveRounds.push(performance.now() - t0);
    }
    if (!allStored) throw new Error(`not all of ${opts.lines} lines were stored`);
    const groveMs = summarize(groveRounds).median;
    const pgMs = summarize(bareRounds).median;

    await d2.stop();
    if (!tenStored) throw new Error(`not all of 10 × ${opts.linesEach} lines were stored`);

    const idleS = summarize(idle);
    const busyS = summarize(busy);
    return {
      lines: opts.lines,
      all_stored: allStored,
      rounds: opts.rounds,
      // medians over the rounds, then each round
      grove_ms: round(groveMs, 0),
      agent_to_devnull_ms: round(devnullMs, 0),
      bare_pglite_insert_ms: round(pgMs, 0),
      grove_rounds_ms: groveRounds.map((x) => round(x, 0)),
      bare_pglite_rounds_ms: bareRounds.map((x) => round(x, 0)),
      rate_vs_bare_pglite: round(pgMs / groveMs),
      ten_sessions: { lines_each: opts.linesEach, all_stored: tenStored, ms: round(tenMs, 0) },
      mem_mb: { idle: round(memIdle, 0), peak: round(peak, 0) },
      health_ms: {
        idle: { p50: round(idleS.median), p99: round(idleS.p99) },
        under_output: { p50: round(busyS.median), p99: round(busyS.p99), n: busyS.n },
        p99_ratio: round(busyS.p99 / idleS.p99),
      },
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}
