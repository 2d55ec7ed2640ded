// CLI latency: `grove status` (node bin/grove.js status) against a running daemon, beside a bare
// `node -e 0`, alternating, after a warm-up of each.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT, startBenchDaemon } from './daemon.ts';
import { round, summarize } from './stats.ts';

// From the spawn of `node args…` to its exit, which must be 0.
function timeRun(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
    p.once('error', reject);
    p.once('exit', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`node ${args.join(' ')} exited ${code}`))));
  });
}

export async function benchCli(opts: { template: string; runs: number }) {
  const d = await startBenchDaemon({ template: opts.template });
  try {
    const env = { ...process.env, GROVE_HOME: d.home };
    const status = [path.join(ROOT, 'bin', 'grove.js'), 'status'];
    const bare = ['-e', '0'];
    await timeRun(status, env);
    await timeRun(bare, env);
    const grove: number[] = [];
    const node: number[] = [];
    for (let i = 0; i < opts.runs; i++) {
      grove.push(await timeRun(status, env));
      node.push(await timeRun(bare, env));
    }
    const g = summarize(grove);
    const n = summarize(node);
    return { grove_status_ms: g, node_e0_ms: n, ratio_p50: round(g.median / n.median) };
  } finally {
    await d.stop();
  }
}
