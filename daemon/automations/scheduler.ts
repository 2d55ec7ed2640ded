// The clock of automations (DESIGN §19). It reads the wall clock every second rather than setting
// one long timer (a sleeping machine stops monotonic timers), and claims what is due through the
// store: the claim, not this loop, makes each scheduled time run once. The store is asked only
// when something may be due: at the next due time it last read, after a poke (an automation made
// or changed here), after a wake, and at least every FALLBACK_MS (another daemon of a team changed
// one), so that an idle daemon leaves its store idle.
import { randomUUID } from 'node:crypto';
import type { Missed } from '../../schemas/automation.ts';
import type { Logger } from '../runtime/log.ts';
import { once } from '../runtime/once.ts';
import type { AutomationRunsTable } from '../store/automation-runs.ts';
import type { AutomationsTable } from '../store/automations.ts';
import { plan } from './plan.ts';
import type { StoredSchedule } from './schedule.ts';

// The wall clock moving this much further than the monotonic one between ticks is a wake (or a
// clock set forward): missed times then wait until the machine has been awake SETTLE_MS.
const JUMP_MS = 5_000;
export const SETTLE_MS = 30_000;
const MAX_SLEEP_MS = 1_000;
export const FALLBACK_MS = 10_000;

export interface Clock {
  /** the wall clock, ms since the epoch */
  now(): number;
  /** a monotonic clock, ms */
  monotonic(): number;
}
const systemClock: Clock = { now: () => Date.now(), monotonic: () => performance.now() };

export interface SchedulerDeps {
  automations: Pick<AutomationsTable, 'due' | 'nextDue'>;
  runs: Pick<AutomationRunsTable, 'claimDue'>;
  /** a claimed run to start */
  started: (automationId: string) => void;
  hostId: string;
  clock?: Clock;
  log: Logger;
}

export function createScheduler(deps: SchedulerDeps) {
  const { automations, runs, hostId, log } = deps;
  const clock = deps.clock ?? systemClock;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  let ticking: Promise<void> = Promise.resolve();
  let last: { wall: number; mono: number } | null = null;
  let awakeSince = -Infinity;
  // What the last tick read: the next due time (ms) and when it read it; null: ask the store.
  let known: { next: number | null; at: number } | null = null;
  // Pokes so far: a tick that a poke overtook does not keep what it read.
  let pokes = 0;

  // Reads the clocks: a wall clock that moved further than the monotonic one is a wake. True then.
  function observe(): { wall: number; woke: boolean } {
    const wall = clock.now();
    const mono = clock.monotonic();
    const woke = last !== null && wall - last.wall - (mono - last.mono) > JUMP_MS;
    if (woke) {
      awakeSince = wall;
      log.info({ jump_ms: Math.round(wall - last!.wall - (mono - last!.mono)) }, 'the wall clock jumped (a wake): missed automation runs wait until the machine has settled');
    }
    last = { wall, mono };
    return { wall, woke };
  }

  // One tick: what is due now is claimed. Returns when the next one is due, if any, and the time
  // the tick read.
  async function tick(): Promise<{ next: Date | null; at: number }> {
    const { wall } = observe();
    known = null;
    const seen = pokes;
    const now = new Date(wall);
    const settled = wall - awakeSince >= SETTLE_MS;
    for (const a of await automations.due(hostId, now)) {
      const claimed = await runs.claimDue(
        a.id,
        a.local_project_id,
        now,
        (row) => plan({ schedule: row.schedule as StoredSchedule, missed: row.missed as Missed, cursor: new Date(row.cursor), now, settled }),
        randomUUID,
      );
      if (claimed.length > 0) log.info({ automation: a.id, runs: claimed.map((r) => ({ id: r.id, status: r.status, scheduled_for: r.scheduled_for, missed: r.missed })) }, 'automation times claimed');
      if (claimed.some((r) => r.status === 'pending')) deps.started(a.id);
    }
    const next = await automations.nextDue(hostId);
    if (seen === pokes) known = { next: next?.getTime() ?? null, at: wall };
    return { next, at: wall };
  }

  function schedule(t: { next: Date | null; at: number } | null): void {
    if (closed) return;
    // A next time the tick saw due is one this host could not claim yet (waiting for a wake to
    // settle, or another host holds it): the next tick is soon enough for it.
    const next = t?.next?.getTime() ?? null;
    const wait = next === null || next <= t!.at ? MAX_SLEEP_MS : Math.min(MAX_SLEEP_MS, Math.max(0, next - clock.now()));
    if (timer) clearTimeout(timer);
    timer = setTimeout(run, wait);
  }

  function run(): void {
    timer = null;
    if (known !== null) {
      const { wall, woke } = observe();
      if (!woke && (known.next === null || known.next > wall) && wall - known.at < FALLBACK_MS) {
        schedule({ next: known.next === null ? null : new Date(known.next), at: wall });
        return;
      }
    }
    ticking = tick().then(schedule, (err: unknown) => {
      log.error({ err }, 'an automation tick failed');
      schedule(null);
    });
  }

  return {
    start(): void {
      run();
    },
    // An automation was made or changed: the timer follows its next time at once.
    poke(): void {
      if (closed) return;
      known = null;
      pokes++;
      if (timer === null) return;
      clearTimeout(timer);
      run();
    },
    // For tests and the bench: one tick now, after the one going.
    async tickNow(): Promise<void> {
      await ticking;
      await tick();
    },
    close: once(async () => {
      closed = true;
      if (timer) clearTimeout(timer);
      await ticking.catch(() => {});
    }),
  };
}

export type Scheduler = ReturnType<typeof createScheduler>;
