// Turns (DESIGN §17): the checkpoint a session end records, on a task that changed 1,000 files of
// a 5,000-file repository (half committed, the rest uncommitted, a tenth of those untracked),
// against what it stands for: `git add -A && git write-tree` on a copy of the worktree's index.
// The checkpoint is the worker function the review pool runs (recordTurn), called in-process:
// what is measured is its git, not the thread hop.
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { recordTurn } from '../workers/review/turn.ts';
import { round, summarize } from './stats.ts';
import { GIT_ENV, makeBigRepo, repoRoot } from './tasks.ts';

const git = (cwd: string, args: string[]) => execFileSync('git', ['-C', cwd, ...args], { env: GIT_ENV, encoding: 'utf8', maxBuffer: 1 << 30 }).trim();

export async function benchTurns(opts: { files: number; changed: number; rounds: number }) {
  const root = repoRoot();
  try {
    const repo = makeBigRepo(root, opts.files);
    const wt = path.join(root, 'wt');
    git(repo, ['worktree', 'add', '-q', '-b', 'grove/turns', wt]);
    const fileOf = (i: number) => path.join(wt, `dir${i % 50}`, `file${i}.txt`);
    const untracked = opts.changed / 10;
    for (let i = 0; i < opts.changed - untracked; i++) {
      appendFileSync(fileOf(i), `changed ${i}\n`);
      if (i === opts.changed / 2 - 1) git(wt, ['commit', '-q', '-am', 'half']);
    }
    for (let i = 0; i < untracked; i++) writeFileSync(path.join(wt, `dir${i % 50}`, `new${i}.txt`), `new ${i}\n`);
    const index = git(wt, ['rev-parse', '--path-format=absolute', '--git-path', 'index']);
    const scratch = mkdtempSync(path.join(root, 'scratch-'));
    const task = randomUUID();
    const grove: number[] = [];
    const raw: number[] = [];
    let n = 0;
    for (let r = 0; r < opts.rounds + 1; r++) {
      const t0 = performance.now();
      const res = await recordTurn({ worktree: wt, task, scratch, session_id: randomUUID() });
      const t1 = performance.now();
      if (!res.ok) throw new Error(`checkpoint failed: ${res.message}`);
      n = res.turn.n;
      const copy = path.join(scratch, 'raw-index');
      const t2 = performance.now();
      copyFileSync(index, copy);
      const env = { ...GIT_ENV, GIT_INDEX_FILE: copy };
      spawnSync('git', ['-C', wt, 'add', '-A'], { env });
      spawnSync('git', ['-C', wt, 'write-tree'], { env });
      const t3 = performance.now();
      if (r === 0) continue; // warm-up
      grove.push(t1 - t0);
      raw.push(t3 - t2);
    }
    const g = summarize(grove).median;
    const b = summarize(raw).median;
    return { files: opts.files, changed: opts.changed, turns: n, checkpoint_ms: { grove: round(g, 1), raw_add_write_tree: round(b, 1), ratio: round(g / b) } };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
