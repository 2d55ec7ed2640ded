// Automations (DESIGN §19, issue 43). How late a run's session is: a seconds cron (every 2 s) on a
// bench daemon, from each run's scheduled time to its session's `created_at`, beside a timer of
// the bench's own that spawns `sh -c true` at times in between (the floor of "start something at
// time T" on this machine, in the same seconds). And the scheduler's tick with 1,000 automations
// on a store of their own (PGlite in its process, as the daemon has it), beside one `SELECT 1`
// round trip to the same store.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { createScheduler } from '../daemon/automations/scheduler.ts';
import { createEventBus } from '../daemon/events/bus.ts';
import { openStore } from '../daemon/store/db.ts';
import { automationRunsTable, lastRunIn } from '../daemon/store/automation-runs.ts';
import { automationsTable } from '../daemon/store/automations.ts';
import { eventsTable } from '../daemon/store/events.ts';
import { projectsTable } from '../daemon/store/projects.ts';
import { call, FIXTURE_AGENT, readyTask, startBenchDaemon } from './daemon.ts';
import { round, summarize } from './stats.ts';
import type { Row } from './table.ts';

export interface AutomationOptions {
  template: string;
  /** scheduled runs measured, one a second */
  runs: number;
  /** automations on the store the tick is measured with */
  automations: number;
  ticks: number;
}

// Spawns `sh -c true` at each of `marks` (ms since the epoch): how late each spawn was.
async function rawLateness(marks: number[]): Promise<number[]> {
  const out: number[] = [];
  for (const m of marks) {
    await new Promise((r) => setTimeout(r, Math.max(0, m - Date.now())));
    await new Promise<void>((resolve) => spawn('sh', ['-c', 'true']).once('spawn', () => (out.push(Date.now() - m), resolve())));
  }
  return out;
}

async function delays(opts: AutomationOptions) {
  const home = mkdtempSync(path.join(tmpdir(), 'grove-bench-auto-'));
  const root = mkdtempSync(path.join(tmpdir(), 'grove-bench-auto-repo-'));
  cpSync(opts.template, path.join(home, 'data', 'pgdata'), { recursive: true });
  writeFileSync(path.join(home, 'config.json'), JSON.stringify({ agents: { fixture: { command: [FIXTURE_AGENT, '{prompt}'] } } }));
  const d = await startBenchDaemon({ template: null, home });
  try {
    const { task } = await readyTask(d.api, root, 'warm-up');
    const a = await call(d.api, 'POST', '/api/automations', {
      project_id: task.project_id,
      name: 'every 2 s',
      // Every 2 s, overlap skipped: a run (task, session, its end, the archive of a task that
      // changed nothing) takes about a second, and queued runs would measure the queue.
      schedule: { cron: '*/2 * * * * *', timezone: 'UTC' },
      session: { prompt: 'echo:ran', agent: 'fixture' },
    });
    const first = Date.parse(a.next_run_at);
    // The bench's own timer aims at the same seconds, a second apart from grove's.
    const raw = rawLateness(Array.from({ length: opts.runs }, (_, i) => first + i * 2000 + 1000));
    let runs: any[] = [];
    for (;;) {
      await new Promise((r) => setTimeout(r, 1000));
      runs = (await call(d.api, 'GET', `/api/automations/${a.id}/runs`)).filter((r: any) => r.trigger === 'schedule');
      if (runs.filter((r) => r.session_id !== null).length >= opts.runs) break;
    }
    await call(d.api, 'PATCH', `/api/automations/${a.id}`, { enabled: false });
    const late: number[] = [];
    for (const r of runs.filter((x) => x.session_id !== null).slice(-opts.runs)) {
      const s = await call(d.api, 'GET', `/api/sessions/${r.session_id}`);
      late.push(Date.parse(s.created_at) - Date.parse(r.scheduled_for));
    }
    return { grove: summarize(late), raw: summarize(await raw), skipped: runs.filter((r) => r.status === 'skipped').length };
  } finally {
    await d.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

async function ticks(opts: AutomationOptions) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'grove-bench-auto-store-'));
  cpSync(opts.template, path.join(dataDir, 'pgdata'), { recursive: true });
  const store = await openStore({ dataDir, log: pino({ level: 'silent' }) });
  try {
    const hostId = randomUUID();
    const bus = createEventBus();
    const events = eventsTable(store.db, bus.publish, { hostId, shared: store.shared });
    bus.begin(await events.lastSeq());
    const project = await projectsTable(store.db, events).insert({ id: randomUUID(), name: 'bench', path: dataDir, host_id: hostId, repository: null });
    const automations = automationsTable(store.db, events, lastRunIn);
    const runs = automationRunsTable(store.db, events);
    const now = new Date();
    for (let i = 0; i < opts.automations; i++) {
      // Daily, at times spread over the day: none is due while the ticks are measured.
      const at = new Date(now.getTime() + 3_600_000 + i * 60_000);
      await automations.insert({
        id: randomUUID(),
        project_id: project.id,
        repository: null,
        name: `a${i}`,
        enabled: true,
        source: 'api',
        declared: null,
        cursor: now.toISOString(),
        next_run_at: at.toISOString(),
        schedule: { cron: `${at.getUTCMinutes()} ${at.getUTCHours()} * * *`, timezone: 'UTC' },
        session: { prompt: 'hi' },
        task: {},
        precheck: null,
        land: 'none',
        missed: { policy: 'latest', grace_s: 43200 },
        overlap: 'skip',
      });
    }
    const scheduler = createScheduler({ automations, runs, started: () => {}, hostId, log: pino({ level: 'silent' }) });
    const tick: number[] = [];
    const select: number[] = [];
    for (let i = 0; i < opts.ticks + 5; i++) {
      const t0 = performance.now();
      await scheduler.tickNow();
      const t1 = performance.now();
      await store.db.query('SELECT 1');
      const t2 = performance.now();
      if (i >= 5) tick.push(t1 - t0), select.push(t2 - t1);
    }
    await scheduler.close();
    return { tick: summarize(tick), select: summarize(select) };
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function benchAutomations(opts: AutomationOptions) {
  return { runs: opts.runs, automations: opts.automations, delay_ms: await delays(opts), tick_ms: await ticks(opts) };
}

export function automationRows(r: Awaited<ReturnType<typeof benchAutomations>>): Row[] {
  const { delay_ms: d, tick_ms: t } = r;
  return [
    {
      what: `automations: a seconds cron's run, scheduled time to its session's created_at, vs a timer of the bench's spawning sh in the same seconds (ms, p99 of ${r.runs}; p50 ${round(d.grove.median)} vs ${round(d.raw.median)}; ${d.skipped} skipped)`,
      grove: round(d.grove.p99),
      base: round(d.raw.p99),
      ratio: round(d.grove.p99 / Math.max(d.raw.p99, 1)),
      target: { op: '≤', limit: 1000, of: 'ms' },
    },
    {
      what: `automations: the scheduler's tick with ${r.automations} automations, none due, vs SELECT 1 on the same store (ms, p99; p50 ${round(t.tick.median)} vs ${round(t.select.median)})`,
      grove: round(t.tick.p99),
      base: round(t.select.p99),
      ratio: round(t.tick.p99 / t.select.p99),
      target: { op: '≤', limit: 10, of: 'ms' },
    },
  ];
}

