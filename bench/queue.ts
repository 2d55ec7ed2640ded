// The merge queue (DESIGN §17) landing `tasks` tasks with an empty check, against the same
// rebases and merges done by hand with git in a loop (rebase each branch onto main in its
// worktree, then fast-forward the checked-out main), and against POST rebase and POST merge of
// each task in turn (the review's landings the queue runs), and against the git commands a landing
// runs, by hand in a loop (what the queue adds to git, apart from what its refusals cost), on
// copies of one repository.
import { execFileSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sse } from '../daemon/client/sse.ts';
import { call, ROOT, startBenchDaemon } from './daemon.ts';
import { round, summarize } from './stats.ts';
import { GIT_ENV, makeBigRepo, repoRoot } from './tasks.ts';

const git = (cwd: string, args: string[]) => execFileSync('git', ['-C', cwd, ...args], { env: GIT_ENV, encoding: 'utf8' }).trim();

export async function benchQueue(opts: { template: string; files: number; tasks: number; rounds: number }) {
  const root = repoRoot();
  const d = await startBenchDaemon({ template: opts.template, env: { GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@grove.invalid', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@grove.invalid' } });
  const grove: number[] = [];
  const raw: number[] = [];
  const api: number[] = [];
  const scans: number[] = [];
  try {
    const pristine = makeBigRepo(root, opts.files);
    const fileOf = (k: number, r: number) => {
      const i = k + r * opts.tasks;
      return path.join(`dir${i % 50}`, `file${i}.txt`);
    };
    for (let r = 0; r < opts.rounds + 1; r++) {
      // grove: tasks each with one commit that touches its own file, queued, until all have landed.
      const made = async (name: string) => {
        const repo = path.join(root, `${name}-${r}`);
        // Not cpSync: a copy that blocks for seconds keeps the client from seeing the daemon close
        // its idle connections, and the next request is written to a closed socket (EPIPE).
        await cp(pristine, repo, { recursive: true });
        const project = await call(d.api, 'POST', '/api/projects', { path: repo });
        const tasks = [];
        for (let k = 0; k < opts.tasks; k++) {
          const t = await call(d.api, 'POST', '/api/tasks', { project_id: project.id, name: `q${k}` });
          const wt = path.join(repo, t.worktree_path);
          appendFileSync(path.join(wt, fileOf(k, r)), `task ${k}\n`);
          git(wt, ['commit', '-q', '-am', `task ${k}`]);
          tasks.push(t);
        }
        return { project, tasks };
      };
      const { project, tasks } = await made('grove');
      // The project's events, followed from before the first entry: polling the list instead
      // would keep the daemon's store busy answering it while the queue needs it.
      const stream = await d.api.request({ method: 'GET', path: `/api/events?project_id=${project.id}`, headers: { accept: 'text/event-stream' } });
      const ended = (async () => {
        let n = 0;
        for await (const { data } of sse(stream.body)) if ((data.type === 'queue.landed' || data.type === 'queue.failed') && ++n === opts.tasks) return;
      })();
      const t0 = performance.now();
      for (const t of tasks) await call(d.api, 'POST', `/api/projects/${project.id}/queue`, { task_id: t.id });
      await ended;
      const g = performance.now() - t0;
      stream.body.destroy();
      if ((await call(d.api, 'GET', `/api/projects/${project.id}/queue`)).length > 0) throw new Error('the queue is not empty once every task has left it');
      const landed = (await call(d.api, 'GET', `/api/tasks?project_id=${project.id}`)).filter((t: any) => t.merged_at !== null).length;
      if (landed !== opts.tasks) throw new Error(`the queue landed ${landed} of ${opts.tasks} tasks`);

      // The review API by hand: POST rebase then POST merge of each task in turn (what the queue runs).
      const byApi = await made('api');
      const ta = performance.now();
      for (const t of byApi.tasks) {
        await call(d.api, 'POST', `/api/tasks/${t.id}/rebase`);
        await call(d.api, 'POST', `/api/tasks/${t.id}/merge`, {});
      }
      const a = performance.now() - ta;

      // By hand: the same worktrees and commits, then rebase and merge each in turn.
      const byHand = (name: string) => {
        const hand = path.join(root, `${name}-${r}`);
        cpSync(pristine, hand, { recursive: true });
        const wts = [];
        for (let k = 0; k < opts.tasks; k++) {
          const wt = path.join(hand, '.wt', `${k}`);
          git(hand, ['worktree', 'add', '-q', '-b', `hand-${k}`, wt, 'main']);
          appendFileSync(path.join(wt, fileOf(k, r)), `task ${k}\n`);
          git(wt, ['commit', '-q', '-am', `task ${k}`]);
          wts.push(wt);
        }
        return { hand, wts };
      };
      const plain = byHand('hand');
      const t1 = performance.now();
      for (const [k, wt] of plain.wts.entries()) {
        git(wt, ['rebase', '--quiet', 'main']);
        git(plain.hand, ['merge', '--quiet', '--ff-only', `hand-${k}`]);
      }
      const h = performance.now() - t1;

      // By hand again, with the git commands a landing runs (workers/review/rebase.ts, merge.ts),
      // one after another: its refusals' scans (WORKTREE_DIRTY, BASE_CHECKOUT_DIRTY) included.
      const same = byHand('scans');
      const t2 = performance.now();
      for (const [k, wt] of same.wts.entries()) {
        git(wt, ['status', '--porcelain=v1', '-z', '--untracked-files=all']);
        const tip = git(wt, ['rev-parse', 'refs/heads/main^{commit}', 'HEAD', '--symbolic-full-name', 'HEAD']).split('\n')[0]!;
        git(wt, ['rebase', '--quiet', '--no-autostash', tip]);
        git(wt, ['rev-parse', 'HEAD']);
        git(wt, ['status', '--porcelain=v1', '-z', '--untracked-files=all']);
        const [old, next] = git(same.hand, ['rev-parse', 'refs/heads/main^{commit}', `refs/heads/hand-${k}^{commit}`]).split('\n') as [string, string];
        git(same.hand, ['worktree', 'list', '--porcelain', '-z']);
        git(same.hand, ['merge-base', old, next]);
        git(same.hand, ['status', '--porcelain=v1', '-z', '--untracked-files=no']);
        git(same.hand, ['read-tree', '-m', '-u', old, next]);
        git(same.hand, ['update-ref', 'refs/heads/main', next, old]);
      }
      const sc = performance.now() - t2;
      if (r === 0) continue; // warm-up
      grove.push(g);
      raw.push(h);
      api.push(a);
      scans.push(sc);
    }
    const ms = (x: number[]) => round(summarize(x).median, 1);
    const ratio = (x: number[]) => round(summarize(grove).median / summarize(x).median);
    return { tasks: opts.tasks, files: opts.files, grove_ms: ms(grove), raw_ms: ms(raw), ratio: ratio(raw), review_api_ms: ms(api), ratio_review_api: ratio(api), landing_git_ms: ms(scans), ratio_landing_git: ratio(scans), landing_git_vs_raw: round(summarize(scans).median / summarize(raw).median) };
  } finally {
    await d.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

// `npm run build && node --import tsx bench/queue.ts [--quick] [--tasks N] [--files N]`: this part alone, as in the full run.
if (process.argv[1] && path.resolve(process.argv[1]) === path.join(ROOT, 'bench', 'queue.ts')) {
  const { makeMigratedStore } = await import('./daemon.ts');
  const arg = (name: string, dflt: number) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? Number(process.argv[i + 1]) : dflt;
  };
  const tpl = mkdtempSync(path.join(tmpdir(), 'grove-bench-tpl-'));
  try {
    await makeMigratedStore(path.join(tpl, 'pgdata'));
    const result = await benchQueue({ template: path.join(tpl, 'pgdata'), files: arg('--files', 5000), tasks: arg('--tasks', 10), rounds: process.argv.includes('--quick') ? 2 : arg('--rounds', 5) });
    console.log(JSON.stringify(result, null, 2));
  } finally {
    rmSync(tpl, { recursive: true, force: true });
  }
}
