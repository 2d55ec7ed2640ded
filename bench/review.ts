// Review and landing (DESIGN §9) against the raw git commands they stand for, on a 5,000-file
// repository: `changes` and `diff` of a task that modified 1,000 files (half of them committed)
// against `git diff --numstat` / `git diff` of the same; `conflicts` of 20 tasks against the
// merge-tree calls it makes, run one after another.
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { call, startBenchDaemon } from './daemon.ts';
import { round, summarize } from './stats.ts';
import { GIT_ENV, makeBigRepo, repoRoot } from './tasks.ts';

const git = (cwd: string, args: string[]) => execFileSync('git', ['-C', cwd, ...args], { env: GIT_ENV, encoding: 'utf8', maxBuffer: 1 << 30 }).trim();

// Milliseconds `fn` takes.
async function time(fn: () => unknown): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export async function benchReview(opts: { template: string; files: number; modified: number; tasks: number; rounds: number }) {
  const root = repoRoot();
  const d = await startBenchDaemon({ template: opts.template, env: { GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@grove.invalid', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@grove.invalid' } });
  try {
    const repo = makeBigRepo(root, opts.files);
    const project = await call(d.api, 'POST', '/api/projects', { path: repo });
    const newTask = async (name: string) => {
      const t = await call(d.api, 'POST', '/api/tasks', { project_id: project.id, name });
      return { ...t, wt: path.join(repo, t.worktree_path) };
    };
    const fileOf = (i: number) => path.join(`dir${i % 50}`, `file${i}.txt`);

    // One task that changed `modified` files: the first half committed, the rest not.
    const big = await newTask('big change');
    for (let i = 0; i < opts.modified; i++) {
      appendFileSync(path.join(big.wt, fileOf(i)), `changed ${i}\n`);
      if (i === opts.modified / 2 - 1) {
        git(big.wt, ['add', '-A']);
        git(big.wt, ['commit', '-q', '-m', 'half']);
      }
    }
    const mb = big.base_commit;
    const changes = { grove: [] as number[], raw: [] as number[] };
    const diff = { grove: [] as number[], raw: [] as number[] };
    let files = 0;
    const bytes = { grove: 0, raw: 0 };
    for (let r = 0; r < opts.rounds + 1; r++) {
      const g1 = await time(async () => (files = (await call(d.api, 'GET', `/api/tasks/${big.id}/changes`)).files.length));
      const r1 = await time(() => spawnSync('git', ['-C', big.wt, 'diff', '--numstat', mb], { env: GIT_ENV, maxBuffer: 1 << 30 }));
      const g2 = await time(async () => {
        const res = await d.api.request({ method: 'GET', path: `/api/tasks/${big.id}/diff` });
        bytes.grove = (await res.body.arrayBuffer()).byteLength;
      });
      const r2 = await time(() => (bytes.raw = spawnSync('git', ['-C', big.wt, 'diff', '--binary', mb], { env: GIT_ENV, maxBuffer: 1 << 30 }).stdout.length));
      if (r === 0) continue; // warm-up
      changes.grove.push(g1);
      changes.raw.push(r1);
      diff.grove.push(g2);
      diff.raw.push(r2);
    }

    // `tasks` tasks, each with one commit of 5 files, neighbours sharing one: some pairs conflict.
    const heads: string[] = [];
    const live = [big];
    git(big.wt, ['add', '-A']);
    git(big.wt, ['commit', '-q', '-m', 'rest']);
    heads.push(git(big.wt, ['rev-parse', 'HEAD']));
    for (let k = 1; k < opts.tasks; k++) {
      const t = await newTask(`radar ${k}`);
      for (let j = 0; j < 5; j++) appendFileSync(path.join(t.wt, fileOf(2000 + k * 4 + j)), `task ${k}\n`);
      git(t.wt, ['commit', '-q', '-am', `task ${k}`]);
      heads.push(git(t.wt, ['rev-parse', 'HEAD']));
      live.push(t);
    }
    const base = git(repo, ['rev-parse', 'main']);
    const conflicts = { grove: [] as number[], raw: [] as number[] };
    let found = 0;
    for (let r = 0; r < opts.rounds + 1; r++) {
      const g = await time(async () => (found = (await call(d.api, 'GET', `/api/projects/${project.id}/conflicts`)).length));
      const raw = await time(() => {
        for (let i = 0; i < heads.length; i++) {
          spawnSync('git', ['-C', repo, 'merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', heads[i]!, base], { env: GIT_ENV });
          for (let j = i + 1; j < heads.length; j++) spawnSync('git', ['-C', repo, 'merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', heads[i]!, heads[j]!], { env: GIT_ENV });
        }
      });
      if (r === 0) continue;
      conflicts.grove.push(g);
      conflicts.raw.push(raw);
    }
    const ratio = (x: { grove: number[]; raw: number[] }) => round(summarize(x.grove).median / summarize(x.raw).median);
    const ms = (x: number[]) => round(summarize(x).median, 1);
    return {
      files: opts.files,
      modified: opts.modified,
      changes_ms: { grove: ms(changes.grove), raw_numstat: ms(changes.raw), ratio: ratio(changes), files_reported: files },
      diff_ms: { grove: ms(diff.grove), raw_diff: ms(diff.raw), ratio: ratio(diff), bytes },
      conflicts_ms: { tasks: opts.tasks, pairs: (opts.tasks * (opts.tasks - 1)) / 2, grove: ms(conflicts.grove), raw_sequential: ms(conflicts.raw), ratio: ratio(conflicts), conflicts_found: found },
    };
  } finally {
    await d.stop();
    rmSync(root, { recursive: true, force: true });
  }
}
