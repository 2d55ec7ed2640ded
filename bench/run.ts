// `npm run bench [-- --quick]`: grove against the raw limits on this machine, as ratios.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeMigratedStore } from './daemon.ts';
import { benchStart } from './start.ts';
import { benchTasks } from './tasks.ts';
import { benchPool } from './pool.ts';
import { benchOutput } from './output.ts';
import { benchApi } from './api.ts';
import { benchCli } from './cli.ts';
import { benchReview } from './review.ts';
import { benchTurns } from './turns.ts';
import { benchQueue } from './queue.ts';
import { benchDashboard } from './dashboard.ts';
import { approvalRows, benchApprovals } from './approvals.ts';
import { benchTeam, teamOptions, teamRows } from './team.ts';
import { benchMany, manyOptions, manyRows } from './many.ts';
import { automationRows, benchAutomations } from './automations.ts';
import { benchIntake, intakeRows } from './intake.ts';
import { benchSandbox, benchSandboxRss, sandboxRows, sandboxRssRows } from './sandbox.ts';
import { benchTerminal, terminalOptions, terminalRows } from './terminal.ts';
import { benchTerminalPage, terminalPageRows } from './terminal-page.ts';
import { judge, le, mb, printTable, targetText, type Row } from './table.ts';
import { round } from './stats.ts';

const quick = process.argv.includes('--quick');
const tplRoot = mkdtempSync(path.join(os.tmpdir(), 'grove-bench-tpl-'));
const template = path.join(tplRoot, 'pgdata');
await makeMigratedStore(template);

try {
  // How long each part took, printed with the table and kept in results.json.
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
    pool: await timed('pool', () => benchPool({ template, files: 5000, setupS: 10, pooledRuns: quick ? 3 : 8, coldRuns: quick ? 1 : 3, busyRuns: quick ? 5 : 10 })),
    api: await timed('api', () => benchApi({ template, requests: quick ? 1000 : 3000, rounds: quick ? 2 : 5, sessionStarts: quick ? 10 : 20 })),
    output: await timed('output', () => benchOutput({ template, lines: quick ? 200_000 : 1_000_000, linesEach: quick ? 20_000 : 100_000, rounds: quick ? 2 : 3 })),
    cli: await timed('cli', () => benchCli({ template, runs: 20 })),
    review: await timed('review', () => benchReview({ template, files: 5000, modified: 1000, tasks: 20, rounds: quick ? 3 : 7 })),
    turns: await timed('turns', () => benchTurns({ files: 5000, changed: 1000, rounds: quick ? 3 : 7 })),
    queue: await timed('queue', () => benchQueue({ template, files: 5000, tasks: 10, rounds: quick ? 2 : 5 })),
    start: await timed('start', () => benchStart(quick ? { template, runs: 3, newStoreRuns: 1 } : { template, runs: 10, newStoreRuns: 3 })),
    dashboard: await timed('dashboard', () => benchDashboard({ template, tasks: 50, lines: 100_000, rounds: quick ? 2 : 5 })),
    approvals: await timed('approvals', () => benchApprovals({ template, rounds: quick ? 30 : 200 })),
    team: await timed('team', () => benchTeam(teamOptions(quick))),
    many: await timed('many', () => benchMany({ ...manyOptions(quick), template })),
    sandbox: await timed('sandbox', () => benchSandbox({ starts: quick ? 10 : 20, downloads: quick ? 3 : 7 })),
    sandbox_rss: await timed('sandbox rss', () => benchSandboxRss({ template, sessions: 20, rounds: quick ? 1 : 3 })),
    automations: await timed('automations', () => benchAutomations({ template, runs: quick ? 15 : 60, automations: 1000, ticks: quick ? 20 : 50 })),
    terminal: await timed('terminal', () => benchTerminal(terminalOptions(template, quick))),
    terminal_page: await timed('terminal page', () => benchTerminalPage({ template, lines: 100_000, keys: quick ? 20 : 60 })),
    intake: await timed('intake', () => benchIntake({ template, issues: quick ? 5 : 20, interval_s: 2, repos: 50, watch_s: quick ? 65 : 125 })),
    elapsed_s,
  };

  const { tasks, pool, start, output, api, cli, review, turns, queue, dashboard: ui, approvals, team, many, sandbox, sandbox_rss, automations, intake, terminal, terminal_page } = results;
  const a = api as any;
  const endpoints = [
    ['projects_c1', 'GET projects, concurrency 1'],
    ['projects_c32', 'GET projects, concurrency 32'],
    ['session_c1', 'GET session, concurrency 1'],
    ['session_c32', 'GET session, concurrency 32'],
  ] as const;
  const rows: Row[] = [
    { what: 'task creation, 5,000 files, vs raw git worktree add (ms, p50)', grove: tasks.create_ms.grove.median, base: tasks.create_ms.raw.median, ratio: tasks.create_ms.ratio_median, target: le(1.3) },
    { what: 'task creation, 5,000 files, vs raw git worktree add (ms, p99)', grove: tasks.create_ms.grove.p99, base: tasks.create_ms.raw.p99, ratio: tasks.create_ms.ratio_p99 },
    {
      what: `${tasks.concurrent.n} concurrent creations, wall (ms) vs sequential raw (${tasks.concurrent.succeeded}/${tasks.concurrent.n} ok)`,
      grove: tasks.concurrent.grove_wall_ms,
      base: tasks.concurrent.raw_sequential_ms,
      ratio: tasks.concurrent.ratio,
      target: le(1.3, tasks.concurrent.succeeded === tasks.concurrent.n),
    },
    {
      what: `pooled task creation, 5,000 files, setup ${pool.setup_s} s, vs raw git worktree add (ms, p50; all pooled: ${pool.pooled_ms.all_pooled})`,
      grove: pool.pooled_ms.median,
      base: pool.raw_add_ms.median,
      ratio: pool.pooled_vs_raw,
      target: { op: '≤', limit: 300, of: 'ms', ok: pool.pooled_ms.all_pooled },
    },
    { what: `pooled vs cold task creation, same repository and ${pool.setup_s} s setup (ms, p50)`, grove: pool.pooled_ms.median, base: pool.cold_ms.median, ratio: pool.pooled_vs_cold },
    {
      what: `cold task creation while the pool refills (its setup busy on the CPU) vs with no pool (ms, p50 of ${pool.refilling.cold_during_n})`,
      grove: pool.refilling.cold_during_ms.median,
      base: pool.refilling.cold_alone_ms.median,
      ratio: pool.refilling.ratio,
      target: le(1.3),
    },
    { what: 'session start: 201 vs raw spawn through the same wrapper (ms, p50)', grove: a.session_start_ms.grove.median, base: a.session_start_ms.raw_spawn.median, ratio: a.session_start_ms.ratio_p50, target: le(3) },
    {
      what: `output ingestion: ${output.lines} lines until the last is readable vs a bare PGlite insert (ms, median of ${output.rounds}; ratio = rate; all stored: ${output.all_stored})`,
      grove: output.grove_ms,
      base: output.bare_pglite_insert_ms,
      ratio: output.rate_vs_bare_pglite,
      target: { op: '≥', limit: 0.8, of: 'ratio', ok: output.all_stored },
    },
    ...endpoints.flatMap(([k, name]): Row[] => [
      { what: `TCP front vs bare undici forwarder, ${name} (p50 ms)`, grove: a[k].tcp_front.p50_ms, base: a[k].bare_forwarder.p50_ms, ratio: a[k].tcp_p50_vs_forwarder, target: le(1.2) },
      { what: `TCP front vs bare undici forwarder, ${name} (req/s; ratio = forwarder's / front's)`, grove: a[k].tcp_front.rps, base: a[k].bare_forwarder.rps, ratio: a[k].tcp_rps_vs_forwarder, target: le(1.2) },
    ]),
    { what: `changes of a task that modified ${review.modified} of ${review.files} files vs raw git diff --numstat (ms, median)`, grove: review.changes_ms.grove, base: review.changes_ms.raw_numstat, ratio: review.changes_ms.ratio, target: le(2) },
    { what: `diff of the same vs raw git diff --binary (ms, median)`, grove: review.diff_ms.grove, base: review.diff_ms.raw_diff, ratio: review.diff_ms.ratio, target: le(2) },
    {
      what: `checkpoint (a turn) of a task that changed ${turns.changed} of ${turns.files} files vs git add -A && git write-tree on a copy of its index (ms, median)`,
      grove: turns.checkpoint_ms.grove,
      base: turns.checkpoint_ms.raw_add_write_tree,
      ratio: turns.checkpoint_ms.ratio,
      target: le(2),
    },
    {
      what: `conflicts of ${review.conflicts_ms.tasks} tasks vs the ${review.conflicts_ms.pairs + review.conflicts_ms.tasks} merge-tree calls run one after another (ms, median; grove's own figure must be ≤ 2,000 ms)`,
      grove: review.conflicts_ms.grove,
      base: review.conflicts_ms.raw_sequential,
      ratio: review.conflicts_ms.ratio,
      target: le(1.5, review.conflicts_ms.grove <= 2000),
    },
    {
      what: `the merge queue landing ${queue.tasks} tasks of a ${queue.files}-file repository, empty check, vs the same rebases and fast-forwards by hand with git in a loop (ms, median)`,
      grove: queue.grove_ms,
      base: queue.raw_ms,
      ratio: queue.ratio,
      // A landing keeps its refusals (a person's uncommitted work is worth more than its scans):
      // the queue is held to its landings' own git commands, and to the bare loop with room for them.
      target: le(2.5),
    },
    { what: `the same queue vs POST rebase and POST merge of each task in turn by the API (ms, median)`, grove: queue.grove_ms, base: queue.review_api_ms, ratio: queue.ratio_review_api },
    { what: `the same queue vs the git commands of its landings (their refusals' scans included) by hand in a loop (ms, median)`, grove: queue.grove_ms, base: queue.landing_git_ms, ratio: queue.ratio_landing_git, target: le(1.3) },
    { what: `those git commands by hand vs the plain rebases and fast-forwards by hand (ms, median)`, grove: queue.landing_git_ms, base: queue.raw_ms, ratio: queue.landing_git_vs_raw },
    { what: `grove status vs node -e 0 (ms, p50 of ${cli.grove_status_ms.n})`, grove: cli.grove_status_ms.median, base: cli.node_e0_ms.median, ratio: cli.ratio_p50, target: le(2) },
    ...cli.old.map((o) => ({ what: `grove status of ${o.checkout} (GROVE_BENCH_OLD) vs node -e 0, same rounds (ms, p50 of ${o.status_ms.n})`, grove: o.status_ms.median, base: cli.node_e0_ms.median, ratio: o.ratio_p50 })),
    {
      what: `grove --host X status over a warm ssh master (loopback sshd) vs local grove status (ms, p50 of ${cli.host_status_ms.n}; ssh X true over the master alone: ${round(cli.ssh_true_ms.median)} ms)`,
      grove: cli.host_status_ms.median,
      base: cli.grove_status_ms.median,
      ratio: cli.host_ratio_p50,
    },
    ...approvalRows(approvals),
    ...teamRows(team),
    ...manyRows(many),
    ...sandboxRows(sandbox),
    ...sandboxRssRows(sandbox_rss),
    ...automationRows(automations),
    ...intakeRows(intake),
    ...terminalRows(terminal),
    ...terminalPageRows(terminal_page),
    { what: 'idle RSS vs a bare PGlite open (MB, median)', grove: start.idle_rss_mb.grove.median, base: start.idle_rss_mb.baseline.median, ratio: start.idle_rss_mb.ratio, target: mb(200) },
    { what: 'peak RSS while 10 sessions print vs idle (MB)', grove: output.mem_mb.peak, base: output.mem_mb.idle, ratio: round(output.mem_mb.peak / output.mem_mb.idle), target: mb(350) },
    // For information: no target.
    ...endpoints.flatMap(([k, name]): Row[] => [
      { what: `${name}: socket vs bare node:http (req/s)`, grove: a[k].socket.rps, base: a[k].bare_node_http.rps, ratio: a[k].throughput_vs_bare },
      { what: `${name}: TCP front vs socket (p50 ms)`, grove: a[k].tcp_front.p50_ms, base: a[k].socket.p50_ms, ratio: a[k].tcp_p50_vs_socket },
    ]),
    { what: 'GET projects on a new connection each: TCP front vs socket (p50 ms)', grove: a.new_connection_ms.tcp_front.median, base: a.new_connection_ms.socket.median, ratio: a.new_connection_ms.ratio_p50 },
    {
      what: 'GET projects over the socket while another client opens a TCP connection per request vs alone (p50 ms)',
      grove: a.socket_while_tcp_connections_churn_ms.churned.p50_ms,
      base: a.socket_while_tcp_connections_churn_ms.quiet.p50_ms,
      ratio: a.socket_while_tcp_connections_churn_ms.ratio_p50,
    },
    { what: 'output ingestion, the same, against the agent writing to /dev/null (ms)', grove: output.grove_ms, base: output.agent_to_devnull_ms, ratio: round(output.grove_ms / output.agent_to_devnull_ms) },
    {
      what: `GET /api/health p99 while 10 sessions print ${output.ten_sessions.lines_each} lines each vs idle (ms; all stored: ${output.ten_sessions.all_stored})`,
      grove: output.health_ms.under_output.p99,
      base: output.health_ms.idle.p99,
      ratio: output.health_ms.p99_ratio,
    },
    { what: 'start, existing store, vs a bare PGlite open (ms, median)', grove: start.start_existing_store_ms.grove.median, base: start.start_existing_store_ms.baseline.median, ratio: start.start_existing_store_ms.ratio },
    {
      what: 'first start on a new store (the prepared store copied) vs a start on an existing store (ms, median)',
      grove: start.start_new_store_ms.grove.median,
      base: start.start_existing_store_ms.grove.median,
      ratio: round(start.start_new_store_ms.grove.median / start.start_existing_store_ms.grove.median),
      target: { op: '≤', limit: 2000, of: 'ms' },
    },
    { what: 'first start on a new store vs a bare PGlite open of a new folder (its initdb) (ms, median)', grove: start.start_new_store_ms.grove.median, base: start.start_new_store_ms.baseline.median, ratio: start.start_new_store_ms.ratio },
    { what: `dashboard: the board's first paint with ${ui.tasks} tasks vs the browser showing GET /api/tasks (ms, median)`, grove: ui.board_first_paint_ms.grove, base: ui.board_first_paint_ms.raw_json, ratio: ui.board_first_paint_ms.ratio },
    { what: `dashboard: ${ui.lines} lines of one session shown vs a bare EventSource reading them (ms, median)`, grove: ui.lines_shown_ms.grove, base: ui.lines_shown_ms.bare_eventsource, ratio: ui.lines_shown_ms.ratio },
    { what: `dashboard: a jump to the middle of those lines vs one frame (ms, median)`, grove: ui.jump_to_middle_ms.grove, base: ui.jump_to_middle_ms.one_frame, ratio: ui.jump_to_middle_ms.ratio },
    {
      what: `RSS after ${tasks.rss_mb_after_tasks.tasks} tasks vs idle (MB)`,
      grove: tasks.rss_mb_after_tasks.rss_mb,
      base: start.idle_rss_mb.grove.median,
      ratio: round(tasks.rss_mb_after_tasks.rss_mb / start.idle_rss_mb.grove.median),
    },
  ];
  const judged = judge(rows);
  writeFileSync(
    path.join(import.meta.dirname, 'results.json'),
    JSON.stringify({ ...results, targets: judged.filter((r) => r.target).map((r) => ({ row: r.what, ratio: r.ratio, value: round(r.grove), target: targetText(r.target!), met: r.met })) }, null, 2) + '\n',
  );
  console.log(JSON.stringify(results, null, 2));

  printTable(judged);
  console.log(`seconds per part: ${Object.entries(elapsed_s).map(([k, v]) => `${k} ${v}`).join(', ')}`);
} finally {
  rmSync(tplRoot, { recursive: true, force: true });
}
