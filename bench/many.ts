// Many agents printing at once (issue 40): 40 sessions on 4 tasks, each printing 500 lines paced
// 4 ms apart then 5,000 at once, while `GET /api/tasks/:id/sessions` is asked one request at a
// time; until all 40 have ended with every line stored. With GROVE_BENCH_BASE=<checkout> (a built
// checkout of an older commit, with its own node_modules) the same runs alternate with that
// checkout's daemon. Then a team: three daemons on one PostgreSQL with 20 sessions each printing
// 10 lines a second, the list of one task's sessions from one host beside the same SELECT through
// one node-postgres connection.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import { sse } from '../daemon/client/sse.ts';
import { freshDatabase } from '../test/helpers/postgres.ts';
import { call, FIXTURE_AGENT, ROOT, startBenchDaemon, type BenchDaemon } from './daemon.ts';
import { round, summarize } from './stats.ts';
import { judge, printTable, type Row } from './table.ts';

const TICKER = path.join(ROOT, 'test', 'fixtures', 'ticker.mjs');

export interface ManyOptions {
  tasks: number;
  sessionsPerTask: number;
  /** lines printed 4 ms apart, then `burst` at once */
  paced: number;
  burst: number;
  /** runs of each daemon, alternating */
  rounds: number;
  /** a built checkout to run beside this one, or null */
  base: string | null;
  team: { hosts: number; sessionsPerHost: number; steadyS: number };
}

// A project of one empty commit with `n` tasks.
async function tasksOn(api: Pool, root: string, n: number): Promise<string[]> {
  const repo = path.join(root, 'repo');
  mkdirSync(repo);
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  execFileSync('git', ['-C', repo, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-q', '--allow-empty', '-m', 'x']);
  const project = await call(api, 'POST', '/api/projects', { path: repo });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await call(api, 'POST', '/api/tasks', { project_id: project.id, name: `many-${i}` })).id);
  return ids;
}

// One run on a new daemon of `checkout` (this one when undefined); `unconfined`: every session
// with `sandbox: false` (the sandbox's own cost, beside the confined run).
async function oneRun(opts: ManyOptions, template: string | null, checkout?: string, unconfined = false) {
  const home = mkdtempSync(path.join(tmpdir(), 'grove-bench-many-'));
  const root = mkdtempSync(path.join(tmpdir(), 'grove-bench-many-repo-'));
  writeFileSync(path.join(home, 'config.json'), JSON.stringify({ ...(unconfined ? { sandbox: false } : {}), agents: { ticker: { command: [TICKER] } } }));
  const d = await startBenchDaemon({ template: checkout ? null : template, home, ...(checkout ? { checkout } : {}) });
  try {
    const tasks = await tasksOn(d.api, root, opts.tasks);
    const lines = opts.paced + opts.burst;
    // The lists, one request at a time on a connection of its own, round the tasks; they also
    // tell when every session has ended.
    const lister = new Pool('http://localhost', { socketPath: d.socketPath, connections: 1 });
    const listMs: number[] = [];
    const ended = new Map<string, number>();
    let started = false;
    const t0 = performance.now();
    const listing = (async () => {
      for (let i = 0; ; i++) {
        const task = tasks[i % tasks.length]!;
        const s = performance.now();
        const list = await call(lister, 'GET', `/api/tasks/${task}/sessions`);
        listMs.push(performance.now() - s);
        ended.set(task, list.filter((x: { ended_at: string | null }) => x.ended_at !== null).length);
        if (started && [...ended.values()].reduce((a, b) => a + b, 0) === opts.tasks * opts.sessionsPerTask) return performance.now() - t0;
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const ids = await Promise.all(
      tasks.flatMap((task) =>
        Array.from({ length: opts.sessionsPerTask }, async () => (await call(d.api, 'POST', `/api/tasks/${task}/sessions`, { agent: 'ticker', args: [String(opts.paced), '250', String(opts.burst)] })).id as string),
      ),
    );
    started = true;
    // Each session's last line stored: its output stream, followed from just before that line,
    // sends it once it is (and ends only with the session).
    const storedAt = await Promise.all(
      ids.map(async (id) => {
        const res = await d.api.request({ method: 'GET', path: `/api/sessions/${id}/output`, headers: { accept: 'text/event-stream', 'last-event-id': String(lines - 1) } });
        for await (const _ of sse(res.body)) break;
        const at = performance.now() - t0;
        res.body.destroy();
        return at;
      }),
    );
    const allEndedMs = await listing;
    await lister.close();
    let stored = 0;
    for (const id of ids) {
      const page = await call(d.api, 'GET', `/api/sessions/${id}/output?after=${lines - 1}&limit=10`);
      if (page.lines.length === 1 && page.lines[0].seq === lines) stored++;
    }
    return { listMs, allEndedMs, allStoredMs: Math.max(...storedAt), stored };
  } finally {
    await d.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

export async function benchMany(opts: ManyOptions & { template: string }) {
  const runs: Record<'grove' | 'unconfined' | 'base', Array<Awaited<ReturnType<typeof oneRun>>>> = { grove: [], unconfined: [], base: [] };
  const sessions = opts.tasks * opts.sessionsPerTask;
  for (let i = 0; i < opts.rounds; i++) {
    runs.grove.push(await oneRun(opts, opts.template));
    runs.unconfined.push(await oneRun(opts, opts.template, undefined, true));
    if (opts.base) runs.base.push(await oneRun(opts, null, opts.base));
  }
  const sum = (rs: typeof runs.grove) => {
    const l = summarize(rs.flatMap((r) => r.listMs));
    return {
      list_ms: { p50: round(l.median), p99: round(l.p99), n: l.n },
      all_stored_ms: round(summarize(rs.map((r) => r.allStoredMs)).median, 0),
      all_ended_ms: round(summarize(rs.map((r) => r.allEndedMs)).median, 0),
      rounds_ms: rs.map((r) => ({ stored: round(r.allStoredMs, 0), ended: round(r.allEndedMs, 0) })),
      sessions_stored: Math.min(...rs.map((r) => r.stored)),
    };
  };
  return {
    sessions,
    lines_each: opts.paced + opts.burst,
    rounds: opts.rounds,
    grove: runs.grove.length ? sum(runs.grove) : null,
    unconfined: runs.unconfined.length ? sum(runs.unconfined) : null,
    base: opts.base && runs.base.length ? { checkout: path.basename(opts.base), ...sum(runs.base) } : null,
    team: opts.team.hosts > 0 ? await benchManyTeam(opts) : null,
  };
}

// The team: every host with its own task of sessions printing 10 lines a second; the first
// host's task's list beside the same SELECT, alternating, while they print.
async function benchManyTeam(opts: ManyOptions) {
  const url = await freshDatabase();
  const root = mkdtempSync(path.join(tmpdir(), 'grove-bench-many-team-'));
  const hosts: Array<{ d: BenchDaemon; task: string }> = [];
  const bare = new pg.Client({ connectionString: url });
  const { hosts: n, sessionsPerHost, steadyS } = opts.team;
  try {
    for (let i = 1; i <= n; i++) {
      const home = mkdtempSync(path.join(tmpdir(), 'grove-bench-many-team-'));
      writeFileSync(path.join(home, 'config.json'), JSON.stringify({ host_name: `many-${i}`, agents: { fixture: { command: [FIXTURE_AGENT, '{prompt}'] } } }));
      const d = await startBenchDaemon({ template: null, home, env: { GROVE_DATABASE_URL: url } });
      const dir = path.join(root, `h${i}`);
      mkdirSync(dir);
      hosts.push({ d, task: (await tasksOn(d.api, dir, 1))[0]! });
    }
    await bare.connect();
    const ids: Array<{ d: BenchDaemon; id: string }> = [];
    const t0 = performance.now();
    for (const h of hosts) {
      const started = await Promise.all(Array.from({ length: sessionsPerHost }, () => call(h.d.api, 'POST', `/api/tasks/${h.task}/sessions`, { agent: 'fixture', prompt: `steady:${steadyS}` })));
      ids.push(...started.map((s) => ({ d: h.d, id: s.id as string })));
    }
    // Measured while all of them print: from the last start to 1 s before the first can end.
    const until = t0 + steadyS * 1000 - 1000;
    if (performance.now() > until - 5000) throw new Error(`the sessions took ${round((performance.now() - t0) / 1000, 1)} s to start: more than their ${steadyS} s of printing allows`);
    const { d, task } = hosts[0]!;
    const lister = new Pool('http://localhost', { socketPath: d.socketPath, connections: 1 });
    const groveMs: number[] = [];
    const bareMs: number[] = [];
    // The list's own query (daemon/store/sessions.ts listOfTask).
    const sql = `SELECT s.*, t.id AS task_exists FROM tasks t LEFT JOIN sessions s ON s.task_id = t.id AND ($2::uuid IS NULL OR s.conversation_id = $2)
      WHERE t.id = $1 ORDER BY s.created_at, s.id`;
    while (performance.now() < until) {
      let s = performance.now();
      await call(lister, 'GET', `/api/tasks/${task}/sessions`);
      groveMs.push(performance.now() - s);
      s = performance.now();
      await bare.query(sql, [task, null]);
      bareMs.push(performance.now() - s);
      await new Promise((r) => setTimeout(r, 10));
    }
    await lister.close();
    // Every line stored once they have ended: the output stream ends with the session.
    let stored = 0;
    for (const s of ids) {
      const res = await s.d.api.request({ method: 'GET', path: `/api/sessions/${s.id}/output`, headers: { accept: 'text/event-stream', 'last-event-id': String(steadyS * 10 - 1) } });
      await res.body.text();
      const page = await call(s.d.api, 'GET', `/api/sessions/${s.id}/output?after=${steadyS * 10 - 1}`);
      if (page.lines.length === 1 && page.lines[0].seq === steadyS * 10) stored++;
    }
    const g = summarize(groveMs);
    const b = summarize(bareMs);
    return {
      hosts: n,
      sessions: n * sessionsPerHost,
      sessions_stored: stored,
      list_ms: { p50: round(g.median), p99: round(g.p99), n: g.n },
      bare_select_ms: { p50: round(b.median), p99: round(b.p99), n: b.n },
    };
  } finally {
    await bare.end().catch(() => {});
    for (const h of hosts.reverse()) await h.d.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

export function manyRows(m: Awaited<ReturnType<typeof benchMany>>): Row[] {
  const { grove: g, unconfined: u, base: b } = m;
  const rows: Row[] = [];
  const all = `${m.sessions} sessions printing ${m.lines_each} lines`;
  if (g) {
    const ok = g.sessions_stored === m.sessions;
    const vs = b ? ` vs ${b.checkout}` : ' (baseline: its p50)';
    const stored = `${g.sessions_stored}/${m.sessions}${b ? ` vs ${b.sessions_stored}/${m.sessions}` : ''}`;
    const ratio = (x: number, y: number | undefined) => (y ? round(x / y) : NaN);
    rows.push(
      {
        what: `${all}: GET /api/tasks/:id/sessions meanwhile${vs} (ms, p99; p50 ${g.list_ms.p50}${b ? ` vs ${b.list_ms.p50}` : ''})`,
        grove: g.list_ms.p99,
        base: b ? b.list_ms.p99 : g.list_ms.p50,
        ratio: ratio(g.list_ms.p99, b ? b.list_ms.p99 : g.list_ms.p50),
        target: { op: '≤', limit: 100, of: 'ms', ok },
      },
      {
        what: `${all}: until every line is stored (${stored})${b ? vs : ''} (ms, median of ${m.rounds})`,
        grove: g.all_stored_ms,
        base: b?.all_stored_ms ?? NaN,
        ratio: ratio(g.all_stored_ms, b?.all_stored_ms),
        ...(b ? { target: { op: '≤', limit: 1, of: 'ratio', ok } as const } : {}),
      },
      { what: `${all}: until all have ended (each agent's end records its turn)${b ? vs : ''} (ms, median of ${m.rounds})`, grove: g.all_ended_ms, base: b?.all_ended_ms ?? NaN, ratio: ratio(g.all_ended_ms, b?.all_ended_ms) },
    );
    if (u) {
      rows.push(
        { what: `${all}, unconfined (sandbox: false): GET /api/tasks/:id/sessions meanwhile${vs} (ms, p99; p50 ${u.list_ms.p50})`, grove: u.list_ms.p99, base: b ? b.list_ms.p99 : NaN, ratio: ratio(u.list_ms.p99, b?.list_ms.p99) },
        { what: `${all}, unconfined: until every line is stored (${u.sessions_stored}/${m.sessions})${b ? vs : ''} (ms, median of ${m.rounds})`, grove: u.all_stored_ms, base: b?.all_stored_ms ?? NaN, ratio: ratio(u.all_stored_ms, b?.all_stored_ms) },
        { what: `${all}, unconfined: until all have ended${b ? vs : ''} (ms, median of ${m.rounds})`, grove: u.all_ended_ms, base: b?.all_ended_ms ?? NaN, ratio: ratio(u.all_ended_ms, b?.all_ended_ms) },
      );
    }
  }
  const t = m.team;
  if (t) {
    rows.push({
      what: `team: GET /api/tasks/:id/sessions on one of ${t.hosts} hosts while ${t.sessions} sessions print 10 lines/s (every line stored ${t.sessions_stored}/${t.sessions}) vs the same SELECT bare (ms, p99; p50 ${t.list_ms.p50} vs ${t.bare_select_ms.p50})`,
      grove: t.list_ms.p99,
      base: t.bare_select_ms.p99,
      ratio: round(t.list_ms.p99 / t.bare_select_ms.p99),
      target: { op: '≤', limit: 150, of: 'ms', ok: t.sessions_stored === t.sessions },
    });
  }
  return rows;
}

export const manyOptions = (quick: boolean): ManyOptions => ({
  tasks: 4,
  sessionsPerTask: 10,
  paced: 500,
  burst: 5000,
  rounds: quick ? 1 : 3,
  base: process.env.GROVE_BENCH_BASE ?? null,
  team: { hosts: 3, sessionsPerHost: 20, steadyS: quick ? 60 : 90 },
});

// `npm run build && GROVE_BENCH_BASE=<checkout> node --import tsx bench/many.ts [--quick]`: this part alone.
if (process.argv[1] && path.resolve(process.argv[1]) === path.join(ROOT, 'bench', 'many.ts')) {
  const { makeMigratedStore } = await import('./daemon.ts');
  const tplRoot = mkdtempSync(path.join(tmpdir(), 'grove-bench-tpl-'));
  const template = path.join(tplRoot, 'pgdata');
  try {
    await makeMigratedStore(template);
    const opts = manyOptions(process.argv.includes('--quick'));
    // Either half alone: --no-team, --team-only.
    if (process.argv.includes('--no-team')) opts.team.hosts = 0;
    if (process.argv.includes('--team-only')) opts.rounds = 0;
    const result = await benchMany({ ...opts, template });
    console.log(JSON.stringify(result, null, 2));
    printTable(judge(manyRows(result)));
  } finally {
    rmSync(tplRoot, { recursive: true, force: true });
  }
  process.exit(0); // the test helper's PostgreSQL stops at exit
}
