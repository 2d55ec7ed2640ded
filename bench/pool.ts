// The warm pool (DESIGN §16) on a 5,000-file repository whose setup takes `setupS` seconds:
// a pooled POST /api/tasks beside a cold one with the same setup and a raw `git worktree add`;
// and cold creations while the pool refills (its setup busy on the CPU) beside the same with
// no pool.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { call, startBenchDaemon, type BenchDaemon } from './daemon.ts';
import { round, summarize } from './stats.ts';
import { GIT_ENV, makeBigRepo, rawAdd, repoRoot } from './tasks.ts';

// A 5,000-file repository with `config` as its committed .grove.json, added as a project.
async function project(d: BenchDaemon, root: string, name: string, files: number, config: object): Promise<{ id: string; repo: string }> {
  const repo = makeBigRepo(path.join(root, name), files);
  writeFileSync(path.join(repo, '.grove.json'), JSON.stringify(config));
  execFileSync('git', ['-C', repo, 'add', '.grove.json'], { env: GIT_ENV });
  execFileSync('git', ['-C', repo, 'commit', '-q', '-m', 'config'], { env: GIT_ENV });
  const p = await call(d.api, 'POST', '/api/projects', { path: repo });
  return { id: p.id, repo };
}

// Waits (polling: the pool has no event) until the project has `n` ready slots.
async function readySlots(d: BenchDaemon, projectId: string, n: number, ms: number): Promise<void> {
  for (const deadline = Date.now() + ms; ; await delay(50)) {
    const { slots } = await call(d.api, 'GET', `/api/projects/${projectId}/pool`);
    if (slots.filter((s: any) => s.status === 'ready').length >= n) return;
    if (Date.now() > deadline) throw new Error(`the pool did not fill in ${ms} ms`);
  }
}

async function timedPost(d: BenchDaemon, projectId: string, name: string): Promise<{ ms: number; pooled: boolean }> {
  const t0 = performance.now();
  const task = await call(d.api, 'POST', '/api/tasks', { project_id: projectId, name });
  if (task.status !== 'ready') throw new Error(`task ${name} is ${task.status}`);
  return { ms: performance.now() - t0, pooled: task.pooled };
}

export async function benchPool(opts: { template: string; files: number; setupS: number; pooledRuns: number; coldRuns: number; busyRuns: number }) {
  const root = repoRoot();
  const d = await startBenchDaemon({ template: opts.template });
  try {
    const sleep = { setup: [`sleep ${opts.setupS}`] };
    const warm = await project(d, root, 'warm', opts.files, { ...sleep, pool: { size: Math.min(8, opts.pooledRuns) } });
    const cold = await project(d, root, 'cold', opts.files, sleep);
    const raw = makeBigRepo(path.join(root, 'raw'), opts.files);
    // Warm-up of each: page cache, worker threads.
    await rawAdd(raw, 0);
    const rawMs: number[] = [];
    for (let i = 1; i <= opts.pooledRuns; i++) rawMs.push(await rawAdd(raw, i));
    const coldMs: number[] = [];
    for (let i = 0; i < opts.coldRuns; i++) coldMs.push((await timedPost(d, cold.id, `cold ${i}`)).ms);
    await readySlots(d, warm.id, Math.min(8, opts.pooledRuns), (opts.pooledRuns + 2) * (opts.setupS + 30) * 1000);
    const pooled = [];
    for (let i = 0; i < opts.pooledRuns; i++) pooled.push(await timedPost(d, warm.id, `pooled ${i}`));

    // Slots busy on the CPU for their whole setup; the tasks themselves set up nothing.
    const busy = (pool?: object) => ({ setup: [`case "$GROVE_TASK_NAME" in pool-*) timeout ${opts.setupS} sh -c 'while :; do :; done' || true;; esac`], ...(pool ? { pool } : {}) });
    const refilling = await project(d, root, 'refilling', opts.files, busy({ size: 1 }));
    const alone = await project(d, root, 'alone', opts.files, busy());
    await readySlots(d, refilling.id, 1, (opts.setupS + 60) * 1000);
    await timedPost(d, alone.id, 'warm-up');
    const aloneMs: number[] = [];
    for (let i = 0; i < opts.busyRuns; i++) aloneMs.push((await timedPost(d, alone.id, `alone ${i}`)).ms);
    // The claim starts the refill; the creations after it are cold while it runs.
    await timedPost(d, refilling.id, 'claim');
    const during = [];
    for (let i = 0; i < opts.busyRuns; i++) during.push(await timedPost(d, refilling.id, `during ${i}`));
    const duringMs = during.filter((x) => !x.pooled).map((x) => x.ms);

    const p = summarize(pooled.map((x) => x.ms));
    const c = summarize(coldMs);
    const r = summarize(rawMs);
    const dd = summarize(duringMs);
    const a = summarize(aloneMs);
    return {
      files: opts.files,
      setup_s: opts.setupS,
      pooled_ms: { ...p, all_pooled: pooled.every((x) => x.pooled) },
      cold_ms: c,
      raw_add_ms: r,
      pooled_vs_raw: round(p.median / r.median),
      pooled_vs_cold: round(p.median / c.median, 3),
      refilling: { cold_during_ms: dd, cold_alone_ms: a, ratio: round(dd.median / a.median), cold_during_n: duringMs.length },
    };
  } finally {
    await d.stop();
    rmSync(root, { recursive: true, force: true });
  }
}
