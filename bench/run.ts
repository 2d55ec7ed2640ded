// `npm run bench [-- --quick]`: grove against the raw limits on this machine, as ratios.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeMigratedStore } from './daemon.ts';
import { benchStart } from './start.ts';
import { benchTasks } from './tasks.ts';
import { benchOutput } from './output.ts';
import { benchApi } from './api.ts';
import { round } from './stats.ts';

const quick = process.argv.includes('--quick');
const tplRoot = mkdtempSync(path.join(os.tmpdir(), 'grove-bench-tpl-'));
const template = path.join(tplRoot, 'pgdata');
await makeMigratedStore(template);

try {
  // How long each part took, so that the full run's 10 minutes and --quick's 2 can be checked.
  const elapsed_s: Record<string, number> = {};
  const timed = async <T>(name: string, part: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await part();
    } finally {
      elapsed_s[name] = round((performance.now() - t0) / 1000, 1);
    }
  };
  const results = {
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, mem_gb: round(os.totalmem() / 2 ** 30, 1), node: process.version },
    quick,
    at: new Date().toISOString(),
    tasks: await timed('tasks', () => benchTasks({ template, runs: quick ? 5 : 20, files: 5000, concurrent: 20 })),
    api: await timed('api', () => benchApi({ template, requests: quick ? 1000 : 3000, rounds: quick ? 2 : 5, sessionStarts: quick ? 10 : 20 })),
    output: await timed('output', () => benchOutput({ template, lines: quick ? 200_000 : 1_000_000, linesEach: quick ? 20_000 : 100_000, rounds: quick ? 2 : 3 })),
    start: await timed('start', () => benchStart(quick ? { template, runs: 3, newStoreRuns: 1 } : { template, runs: 10, newStoreRuns: 3 })),
    elapsed_s,
  };

  writeFileSync(path.join(import.meta.dirname, 'results.json'), JSON.stringify(results, null, 2) + '\n');
  console.log(JSON.stringify(results, null, 2));

  const { tasks, start, output, api } = results;
  const a = api as any;
  const rows: Array<[string, number, number, number]> = [
    ['task creation, 5,000 files (ms, median)', tasks.create_ms.grove.median, tasks.create_ms.raw.median, tasks.create_ms.ratio_median],
    ['task creation, 5,000 files (ms, p99)', tasks.create_ms.grove.p99, tasks.create_ms.raw.p99, tasks.create_ms.ratio_p99],
    [`${tasks.concurrent.n} concurrent creations, wall (ms) vs sequential raw (${tasks.concurrent.succeeded}/${tasks.concurrent.n} ok)`, tasks.concurrent.grove_wall_ms, tasks.concurrent.raw_sequential_ms, tasks.concurrent.ratio],
    ['session start: 201 vs raw spawn through the same wrapper (ms, p50)', a.session_start_ms.grove.median, a.session_start_ms.raw_spawn.median, a.session_start_ms.ratio_p50],
    ...(['projects_c1', 'projects_c32', 'session_c1', 'session_c32'] as const).flatMap((k): Array<[string, number, number, number]> => [
      [`GET ${k.replace('_c', ', concurrency ')}: socket vs bare node:http (req/s)`, a[k].socket.rps, a[k].bare_node_http.rps, a[k].throughput_vs_bare],
      [`GET ${k.replace('_c', ', concurrency ')}: TCP front vs socket (p50 ms)`, a[k].tcp_front.p50_ms, a[k].socket.p50_ms, a[k].tcp_p50_vs_socket],
      [`GET ${k.replace('_c', ', concurrency ')}: bare undici forwarder vs bare node:http (p50 ms)`, a[k].bare_forwarder.p50_ms, a[k].bare_node_http.p50_ms, a[k].bare_forwarder_p50_vs_bare],
    ]),
    ['GET projects on a new connection each: TCP front vs socket (p50 ms)', a.new_connection_ms.tcp_front.median, a.new_connection_ms.socket.median, a.new_connection_ms.ratio_p50],
    ['GET projects over the socket while another client opens a TCP connection per request vs alone (p50 ms)', a.socket_while_tcp_connections_churn_ms.churned.p50_ms, a.socket_while_tcp_connections_churn_ms.quiet.p50_ms, a.socket_while_tcp_connections_churn_ms.ratio_p50],
    [`${output.lines} lines of output until the last is readable (ms, median of ${output.rounds}) vs a bare PGlite insert; ratio = rate (all stored: ${output.all_stored})`, output.grove_ms, output.bare_pglite_insert_ms, output.rate_vs_bare_pglite],
    ['the same, against the agent writing to /dev/null (ms)', output.grove_ms, output.agent_to_devnull_ms, round(output.grove_ms / output.agent_to_devnull_ms)],
    [`GET /api/health p99 while 10 sessions print ${output.ten_sessions.lines_each} lines each vs idle (ms; all stored: ${output.ten_sessions.all_stored})`, output.health_ms.under_output.p99, output.health_ms.idle.p99, output.health_ms.p99_ratio],
    ['daemon memory peak while 10 sessions print vs idle (MB)', output.mem_mb.peak, output.mem_mb.idle, round(output.mem_mb.peak / output.mem_mb.idle)],
    ['start, existing store (ms, median)', start.start_existing_store_ms.grove.median, start.start_existing_store_ms.baseline.median, start.start_existing_store_ms.ratio],
    ['start, new store (ms, median)', start.start_new_store_ms.grove.median, start.start_new_store_ms.baseline.median, start.start_new_store_ms.ratio],
    ['idle RSS (MB, median)', start.idle_rss_mb.grove.median, start.idle_rss_mb.baseline.median, start.idle_rss_mb.ratio],
    [`RSS after ${tasks.rss_mb_after_tasks.tasks} tasks vs idle (MB)`, tasks.rss_mb_after_tasks.rss_mb, start.idle_rss_mb.grove.median, round(tasks.rss_mb_after_tasks.rss_mb / start.idle_rss_mb.grove.median)],
  ];
  console.log('\n| measure | grove | raw baseline | ratio |\n|---|---|---|---|');
  for (const [what, g, b, r] of rows) console.log(`| ${what} | ${fmt(g)} | ${fmt(b)} | ${r.toFixed(2)} |`);
  console.log(`\nseconds per part: ${Object.entries(elapsed_s).map(([k, v]) => `${k} ${v}`).join(", ")}`);
} finally {
  rmSync(tplRoot, { recursive: true, force: true });
}

function fmt(n: number): string {
  return String(round(n, n < 10 ? 2 : 0));
}
