// A team on one PostgreSQL (DESIGN §14.2): three daemons on one database, each with 30 sessions
// printing 10 lines a second, as in a team's day; afterwards every line must be stored. Measured: the team's lists (every daemon answers for all 90
// sessions) beside the same SELECT made bare; how soon an event of one host reaches another
// host's SSE beside the same event on its own host's SSE; output ingestion beside a bare batched
// insert into the same PostgreSQL (bench/pg-insert.mjs).
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { request } from 'undici';
import { withCalls } from '../daemon/client/calls.ts';
import { createTransport } from '../daemon/client/transport.ts';
import { freshDatabase } from '../test/helpers/postgres.ts';
import { call, FIXTURE_AGENT, ROOT, startBenchDaemon, type BenchDaemon } from './daemon.ts';
import { round, summarize } from './stats.ts';
import { judge, printTable, type Row } from './table.ts';

const execFileP = promisify(execFile);

export interface TeamOptions {
  hosts: number;
  sessionsPerHost: number;
  listRequests: number;
  eventRounds: number;
  lines: number;
  /** how long each of the sessions prints its 10 lines a second */
  steadyS: number;
}

// A daemon of the team: its own home, host name and repository (a project named after it).
async function startHost(url: string, i: number, root: string): Promise<{ d: BenchDaemon; project: any; task: any }> {
  const home = mkdtempSync(path.join(tmpdir(), 'grove-bench-team-'));
  writeFileSync(path.join(home, 'config.json'), JSON.stringify({ host_name: `bench-${i}`, agents: { fixture: { command: [FIXTURE_AGENT, '{prompt}'] } } }));
  const d = await startBenchDaemon({ template: null, home, env: { GROVE_DATABASE_URL: url } });
  const repo = path.join(root, `repo-${i}`);
  mkdirSync(repo);
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  execFileSync('git', ['-C', repo, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-q', '--allow-empty', '-m', 'x']);
  const project = await call(d.api, 'POST', '/api/projects', { path: repo });
  const task = await call(d.api, 'POST', '/api/tasks', { project_id: project.id, name: 'team' });
  return { d, project, task };
}

async function latencies(n: number, once: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await once();
    out.push(performance.now() - t0);
  }
  return out;
}

export async function benchTeam(opts: TeamOptions) {
  const url = await freshDatabase();
  const root = mkdtempSync(path.join(tmpdir(), 'grove-bench-team-repos-'));
  const hosts: Array<Awaited<ReturnType<typeof startHost>>> = [];
  const sessions: Array<{ d: BenchDaemon; id: string }> = [];
  const bare = new pg.Client({ connectionString: url });
  try {
    for (let i = 0; i < opts.hosts; i++) hosts.push(await startHost(url, i + 1, root));
    // Sessions printing 10 lines a second while everything below is measured.
    for (const h of hosts) {
      for (let j = 0; j < opts.sessionsPerHost; j++) {
        const s = await call(h.d.api, 'POST', `/api/tasks/${h.task.id}/sessions`, { agent: 'fixture', prompt: `steady:${opts.steadyS}` });
        sessions.push({ d: h.d, id: s.id });
      }
    }
    const total = opts.hosts * opts.sessionsPerHost;

    // (1) Lists: every daemon's GET /api/sessions holds the whole team's; the bare SELECT reads
    // the same rows through one connection of the bench's own.
    await bare.connect();
    const listed = (await call(hosts[0]!.d.api, 'GET', '/api/sessions')).length;
    const groveList: number[] = [];
    for (const h of hosts) groveList.push(...(await latencies(Math.ceil(opts.listRequests / hosts.length), () => call(h.d.api, 'GET', '/api/sessions'))));
    const bareList = await latencies(opts.listRequests, () => bare.query('SELECT * FROM sessions ORDER BY created_at DESC'));
    const tasksList: number[] = [];
    for (const h of hosts) tasksList.push(...(await latencies(Math.ceil(opts.listRequests / hosts.length), () => call(h.d.api, 'GET', '/api/tasks'))));

    // (2) Events: a task made on the last host; from the request to its task.created on the first
    // host's SSE (another host) and on its own host's SSE (the baseline), in the same rounds.
    const maker = hosts[hosts.length - 1]!;
    const watcher = hosts[0]!;
    // The time each task.created arrives on a daemon's SSE, and a wait for one by task id.
    const follow = async (d: BenchDaemon) => {
      const from = (await call(d.api, 'GET', '/api/health')).last_event_seq;
      const { body, events } = await withCalls(createTransport(d.socketPath)).events(from);
      const arrived = new Map<string, number>();
      const waiting = new Map<string, (at: number) => void>();
      void (async () => {
        for await (const { event, data } of events) {
          if (event !== 'task.created') continue;
          const at = performance.now();
          arrived.set(data.task_id, at);
          waiting.get(data.task_id)?.(at);
        }
      })().catch(() => {});
      const when = (id: string, ms: number) =>
        new Promise<number | null>((resolve) => {
          const timer = setTimeout(() => resolve(null), ms);
          const done = (at: number) => (clearTimeout(timer), resolve(at));
          const at = arrived.get(id);
          if (at !== undefined) done(at);
          else waiting.set(id, done);
        });
      return { when, close: () => body.destroy() };
    };
    const remote = await follow(watcher.d);
    const local = await follow(maker.d);
    const remoteMs: number[] = [];
    const localMs: number[] = [];
    let missed = 0;
    try {
      for (let i = 0; i < opts.eventRounds; i++) {
        const t0 = performance.now();
        const task = await call(maker.d.api, 'POST', '/api/tasks', { project_id: maker.project.id, name: `ev-${i}` });
        const [r, l] = await Promise.all([remote.when(task.id, 5000), local.when(task.id, 5000)]);
        if (r === null || l === null) {
          missed++;
          continue;
        }
        remoteMs.push(r - t0);
        localMs.push(l - t0);
      }
    } finally {
      remote.close();
      local.close();
    }

    // Every line of every printing session stored, once each have ended (read through the API).
    let stored = 0;
    for (const s of sessions) {
      const res = await request(`http://localhost/api/sessions/${s.id}/output`, { dispatcher: s.d.api, headers: { accept: 'text/event-stream', 'last-event-id': String(opts.steadyS * 10 - 1) } });
      await res.body.text();
      const last = await call(s.d.api, 'GET', `/api/sessions/${s.id}/output?after=${opts.steadyS * 10 - 1}`);
      if (last.lines.length === 1 && last.lines[0].seq === opts.steadyS * 10) stored++;
    }

    // (3) Ingestion: one session printing `lines` lines until the last is readable through the
    // API, beside a bare batched insert of the same rows into the same PostgreSQL.
    const h0 = hosts[0]!;
    const t1 = performance.now();
    const printer = await call(h0.d.api, 'POST', `/api/tasks/${h0.task.id}/sessions`, { agent: 'fixture', prompt: `print:${opts.lines}` });
    const res = await request(`http://localhost/api/sessions/${printer.id}/output`, {
      dispatcher: h0.d.api,
      headers: { accept: 'text/event-stream', 'last-event-id': String(opts.lines - 1) },
    });
    await res.body.text();
    const last = await call(h0.d.api, 'GET', `/api/sessions/${printer.id}/output?after=${opts.lines - 1}`);
    const allStored = (last.lines[0]?.seq ?? 0) === opts.lines;
    const groveIngest = performance.now() - t1;
    const { stdout } = await execFileP(process.execPath, ['bench/pg-insert.mjs', url, String(opts.lines), String(Math.floor((512 * 1024) / 80))], { cwd: ROOT });
    const bareIngest = Number(stdout.trim());

    const gl = summarize(groveList);
    const tl = summarize(tasksList);
    const bl = summarize(bareList);
    const rm = summarize(remoteMs.length ? remoteMs : [NaN]);
    const lm = summarize(localMs.length ? localMs : [NaN]);
    return {
      hosts: opts.hosts,
      sessions: total,
      steady: { seconds: opts.steadyS, lines_each: opts.steadyS * 10, sessions_all_stored: stored },
      sessions_listed: listed,
      list_ms: {
        sessions: { p50: round(gl.median), p99: round(gl.p99), n: gl.n },
        tasks: { p50: round(tl.median), p99: round(tl.p99), n: tl.n },
        bare_select: { p50: round(bl.median), p99: round(bl.p99), n: bl.n },
      },
      event_ms: { other_host: { p50: round(rm.median), p99: round(rm.p99), n: rm.n }, own_host: { p50: round(lm.median), p99: round(lm.p99), n: lm.n }, missed },
      ingestion: { lines: opts.lines, all_stored: allStored, grove_ms: round(groveIngest, 0), bare_pg_insert_ms: round(bareIngest, 0), rate_vs_bare: round(bareIngest / groveIngest) },
    };
  } finally {
    await bare.end().catch(() => {});
    await Promise.all(sessions.map((s) => call(s.d.api, 'DELETE', `/api/sessions/${s.id}`).catch(() => {})));
    for (const h of hosts.reverse()) await h.d.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

export function teamRows(t: Awaited<ReturnType<typeof benchTeam>>): Row[] {
  return [
    {
      what: `team: GET /api/sessions of ${t.sessions} sessions printing 10 lines/s on ${t.hosts} hosts (${t.sessions_listed} listed; every line stored: ${t.steady.sessions_all_stored}/${t.sessions}) vs the bare SELECT (ms, p99)`,
      grove: t.list_ms.sessions.p99,
      base: t.list_ms.bare_select.p99,
      ratio: round(t.list_ms.sessions.p99 / t.list_ms.bare_select.p99),
      target: { op: '≤', limit: 150, of: 'ms', ok: t.sessions_listed >= t.sessions && t.steady.sessions_all_stored === t.sessions },
    },
    { what: `team: GET /api/tasks on the same hosts vs the bare SELECT of sessions (ms, p99)`, grove: t.list_ms.tasks.p99, base: t.list_ms.bare_select.p99, ratio: round(t.list_ms.tasks.p99 / t.list_ms.bare_select.p99), target: { op: '≤', limit: 150, of: 'ms' } },
    {
      what: `team: an event on another host's SSE vs on its own host's (ms, p99 of ${t.event_ms.other_host.n}; missed ${t.event_ms.missed})`,
      grove: t.event_ms.other_host.p99,
      base: t.event_ms.own_host.p99,
      ratio: round(t.event_ms.other_host.p99 / t.event_ms.own_host.p99),
      target: { op: '≤', limit: 1000, of: 'ms', ok: t.event_ms.missed === 0 },
    },
    {
      what: `team: output ingestion, ${t.ingestion.lines} lines until readable vs a bare batched insert into the same PostgreSQL (ms; ratio = rate; all stored: ${t.ingestion.all_stored})`,
      grove: t.ingestion.grove_ms,
      base: t.ingestion.bare_pg_insert_ms,
      ratio: t.ingestion.rate_vs_bare,
      target: { op: '≥', limit: 0.8, of: 'ratio', ok: t.ingestion.all_stored },
    },
  ];
}

export const teamOptions = (quick: boolean): TeamOptions => ({ hosts: 3, sessionsPerHost: 30, listRequests: quick ? 150 : 600, eventRounds: quick ? 20 : 100, lines: quick ? 100_000 : 500_000, steadyS: quick ? 40 : 60 });

// `npm run build && node --import tsx bench/team.ts [--quick]`: this part alone, as in the full run.
if (process.argv[1] && path.resolve(process.argv[1]) === path.join(ROOT, 'bench', 'team.ts')) {
  const result = await benchTeam(teamOptions(process.argv.includes('--quick')));
  console.log(JSON.stringify(result, null, 2));
  printTable(judge(teamRows(result)));
  process.exit(0); // the test helper's PostgreSQL stops at exit
}
