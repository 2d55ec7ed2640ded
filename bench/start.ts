// Start-up time and idle memory: the daemon against a bare node + PGlite open of the same store.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGLITE_CONF } from '../daemon/store/driver/pglite-options.ts';
import { call, rssMb, spawnUntil, startBenchDaemon, stopProcess } from './daemon.ts';
import { round, summarize } from './stats.ts';

// From the spawn of the process to its first answer. The store is copied into the new home
// before that (startMs starts at the spawn), as the baseline's copy is made before its spawn.
async function daemonStart(template: string | null) {
  const d = await startBenchDaemon({ template });
  try {
    const t0 = performance.now();
    await call(d.api, 'GET', '/api/health');
    const ms = d.startMs + (performance.now() - t0);
    await new Promise((r) => setTimeout(r, 1500)); // let start-up garbage settle before reading RSS
    return { ms, rss: rssMb(d.pid) };
  } finally {
    await d.stop();
  }
}

async function bareStart(template: string | null) {
  const dir = mkdtempSync(path.join(tmpdir(), 'grove-bench-pg-'));
  try {
    const pgdata = path.join(dir, 'pgdata');
    if (template) cpSync(template, pgdata, { recursive: true });
    const { ms, proc } = await spawnUntil(['bench/pglite-open.mjs', pgdata, JSON.stringify(PGLITE_CONF)], process.env, (l) => l === 'ready');
    await new Promise((r) => setTimeout(r, 1500));
    const rss = rssMb(proc.pid!);
    await stopProcess(proc, 'stdin');
    return { ms, rss };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function bareNode() {
  const t0 = performance.now();
  await spawnUntil(['-e', 'console.log("ready")'], process.env, (l) => l === 'ready').catch(() => {});
  return performance.now() - t0;
}

// Runs `runs` alternating rounds after one warm-up of each, so both sides see the same machine state.
export async function benchStart(opts: { template: string; runs: number; newStoreRuns: number }) {
  const { template } = opts;
  {
    await daemonStart(template);
    await bareStart(template);
    const d: { ms: number; rss: number }[] = [];
    const b: { ms: number; rss: number }[] = [];
    const n: number[] = [];
    for (let i = 0; i < opts.runs; i++) {
      d.push(await daemonStart(template));
      b.push(await bareStart(template));
      n.push(await bareNode());
    }
    const dn: number[] = [];
    const bn: number[] = [];
    for (let i = 0; i < opts.newStoreRuns; i++) {
      dn.push((await daemonStart(null)).ms);
      bn.push((await bareStart(null)).ms);
    }
    const existing = { grove: summarize(d.map((x) => x.ms)), baseline: summarize(b.map((x) => x.ms)) };
    const fresh = { grove: summarize(dn), baseline: summarize(bn) };
    const rss = { grove: summarize(d.map((x) => x.rss)), baseline: summarize(b.map((x) => x.rss)) };
    return {
      start_existing_store_ms: { ...existing, ratio: round(existing.grove.median / existing.baseline.median) },
      start_new_store_ms: { ...fresh, ratio: round(fresh.grove.median / fresh.baseline.median) },
      bare_node_start_ms: summarize(n),
      idle_rss_mb: { ...rss, ratio: round(rss.grove.median / rss.baseline.median) },
    };
  }
}
