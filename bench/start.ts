// Start-up time and idle memory: the daemon against a bare node + PGlite open of the same store.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from 'undici';
import { initStoreDir } from '../daemon/store/db.ts';
import { round, summarize } from './stats.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const TSX = ['--import', 'tsx'];

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

// Spawns a process and resolves when a stdout line matches; returns the elapsed ms and the process.
function spawnUntil(args: string[], env: NodeJS.ProcessEnv, match: (line: string) => boolean) {
  const t0 = performance.now();
  const proc = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise<{ ms: number; line: string; proc: typeof proc }>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      if (match(line)) resolve({ ms: performance.now() - t0, line, proc });
    });
    proc.once('exit', (c) => reject(new Error(`exited ${c} before ready: ${args.join(' ')}`)));
  });
}

function stop(proc: ReturnType<typeof spawn>, how: 'signal' | 'stdin'): Promise<void> {
  return new Promise((resolve) => {
    proc.removeAllListeners('exit');
    proc.once('exit', () => resolve());
    if (how === 'signal') proc.kill('SIGTERM');
    else proc.stdin!.end();
  });
}

async function daemonStart(template: string | null) {
  const home = mkdtempSync(path.join(tmpdir(), 'grove-bench-'));
  try {
    if (template) cpSync(template, path.join(home, 'data', 'pgdata'), { recursive: true });
    const env = { ...process.env, GROVE_HOME: home, GROVE_PORT: 'off', GROVE_LOG_LEVEL: 'info' };
    const t0 = performance.now();
    const { line, proc } = await spawnUntil([...TSX, 'daemon/main.ts'], env, (l) => l.includes('grove daemon ready'));
    const client = new Client('http://localhost', { socketPath: JSON.parse(line).socket });
    const res = await client.request({ path: '/api/health', method: 'GET' });
    await res.body.text();
    const ms = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 1500)); // let start-up garbage settle before reading RSS
    const rss = rssMb(proc.pid!);
    await client.close();
    await stop(proc, 'signal');
    return { ms, rss };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

async function bareStart(template: string | null) {
  const dir = mkdtempSync(path.join(tmpdir(), 'grove-bench-pg-'));
  try {
    const pgdata = path.join(dir, 'pgdata');
    if (template) cpSync(template, pgdata, { recursive: true });
    const { ms, proc } = await spawnUntil([...TSX, 'bench/pglite-open.ts', pgdata], process.env, (l) => l === 'ready');
    await new Promise((r) => setTimeout(r, 1500));
    const rss = rssMb(proc.pid!);
    await stop(proc, 'stdin');
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
export async function benchStart(opts: { runs: number; newStoreRuns: number }) {
  const tplRoot = mkdtempSync(path.join(tmpdir(), 'grove-bench-tpl-'));
  const template = path.join(tplRoot, 'pgdata');
  await initStoreDir(template);
  try {
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
  } finally {
    rmSync(tplRoot, { recursive: true, force: true });
  }
}
