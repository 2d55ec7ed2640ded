// Task creation (no setup) against a raw `git worktree add --no-track -b` on the same
// 5,000-file repository, alternating, after a warm-up of each.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { call, rssMb, startBenchDaemon } from './daemon.ts';
import { round, summarize } from './stats.ts';

export const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@grove.invalid',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@grove.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

// A repository with `files` small files in 50 folders, one commit.
export function makeBigRepo(root: string, files: number): string {
  const repo = path.join(root, 'repo');
  mkdirSync(repo, { recursive: true });
  execFileSync('git', ['init', '-q', '-b', 'main', repo], { env: GIT_ENV });
  for (let i = 0; i < files; i++) {
    const dir = path.join(repo, `dir${i % 50}`);
    if (i < 50) mkdirSync(dir);
    writeFileSync(path.join(dir, `file${i}.txt`), `line ${i}\n`.repeat(20));
  }
  execFileSync('git', ['-C', repo, 'add', '-A'], { env: GIT_ENV });
  execFileSync('git', ['-C', repo, 'commit', '-q', '-m', 'files'], { env: GIT_ENV });
  return repo;
}

export function rawAdd(repo: string, i: number): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const p = spawn('git', ['-C', repo, 'worktree', 'add', '-q', '--no-track', '-b', `raw-${i}`, '--', path.join(repo, '.raw', `${i}`), 'main'], {
      env: GIT_ENV,
      stdio: 'ignore',
    });
    p.once('exit', (c) => (c === 0 ? resolve(performance.now() - t0) : reject(new Error(`git worktree add exited ${c}`))));
  });
}

// Repositories live on tmpfs where there is one: on a virtual disk the system time of a large
// checkout varies at random, which would swamp what is measured.
export function repoRoot(): string {
  const base = process.env.GROVE_BENCH_TMP ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir());
  return mkdtempSync(path.join(base, 'grove-bench-repo-'));
}

export async function benchTasks(opts: { template: string; runs: number; files: number; concurrent: number }) {
  const root = repoRoot();
  const d = await startBenchDaemon({ template: opts.template });
  try {
    const repo = makeBigRepo(root, opts.files);
    const project = await call(d.api, 'POST', '/api/projects', { path: repo });
    const post = async (name: string) => {
      const t0 = performance.now();
      const task = await call(d.api, 'POST', '/api/tasks', { project_id: project.id, name });
      if (task.status !== 'ready') throw new Error(`task ${name} is ${task.status}`);
      return performance.now() - t0;
    };
    // Warm-up: page cache, worker threads, prepared code paths.
    await rawAdd(repo, 0);
    await post('warm');
    const grove: number[] = [];
    const raw: number[] = [];
    for (let i = 1; i <= opts.runs; i++) {
      raw.push(await rawAdd(repo, i));
      grove.push(await post(`task ${i}`));
    }

    // 20 concurrent creations on one project vs 20 sequential raw adds, each on a fresh
    // repository of its own (git worktree add slows as a repository's worktrees pile up).
    const rawRepo = makeBigRepo(path.join(root, 'raw'), opts.files);
    const repo2 = makeBigRepo(path.join(root, 'second'), opts.files);
    const project2 = await call(d.api, 'POST', '/api/projects', { path: repo2 });
    let t0 = performance.now();
    for (let i = 0; i < opts.concurrent; i++) await rawAdd(rawRepo, 1000 + i);
    const rawSequential = performance.now() - t0;
    t0 = performance.now();
    const results = await Promise.allSettled(
      Array.from({ length: opts.concurrent }, (_, i) => call(d.api, 'POST', '/api/tasks', { project_id: project2.id, name: `c${i}` })),
    );
    const groveConcurrent = performance.now() - t0;
    const ok = results.filter((r) => r.status === 'fulfilled' && r.value.status === 'ready').length;

    // Memory after 100 tasks: the rest are made on a small repository, as fast as they come.
    const smallRepo = makeBigRepo(path.join(root, 'small'), 10);
    const project3 = await call(d.api, 'POST', '/api/projects', { path: smallRepo });
    const made = (await call(d.api, 'GET', '/api/tasks')).length as number;
    for (let i = made; i < 100; i++) await call(d.api, 'POST', '/api/tasks', { project_id: project3.id, name: `m${i}` });
    const tasksNow = (await call(d.api, 'GET', '/api/tasks')).length as number;
    await new Promise((r) => setTimeout(r, 1500)); // as for idle: let garbage settle
    const memAfter100 = rssMb(d.pid);

    const g = summarize(grove);
    const r = summarize(raw);
    return {
      files: opts.files,
      repos_on: path.dirname(root),
      create_ms: { grove: g, raw: r, ratio_median: round(g.median / r.median), ratio_p99: round(g.p99 / r.p99) },
      concurrent: {
        n: opts.concurrent,
        succeeded: ok,
        grove_wall_ms: round(groveConcurrent, 0),
        raw_sequential_ms: round(rawSequential, 0),
        ratio: round(groveConcurrent / rawSequential),
      },
      rss_mb_after_tasks: { tasks: tasksNow, rss_mb: round(memAfter100, 0) },
    };
  } finally {
    await d.stop();
    rmSync(root, { recursive: true, force: true });
  }
}
