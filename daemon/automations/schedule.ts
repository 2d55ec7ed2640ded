// An automation's schedule (DESIGN §19): checked once when it is given, then asked for its
// times. Cron patterns and zones are croner's, which follows a zone's daylight-saving shifts as
// the zone defines them (docs/decisions/automations.md).
import { Cron } from 'croner';
import type { Schedule } from '../../schemas/automation.ts';
import { GroveError } from '../errors.ts';
import { parseInstant } from '../runtime/instant.ts';

// A stored schedule: a cron always carries its zone (the machine's when none was given).
export type StoredSchedule = { cron: string; timezone: string } | { at: string };

// The zone of this machine, as Intl reads it (TZ, then /etc/localtime).
export function machineZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

function invalid(path: string, message: string): GroveError {
  return new GroveError('SCHEDULE_INVALID', `schedule${path.replaceAll('/', '.')} ${message}`, { errors: [{ path: `/schedule${path}`, message }] });
}

function cronOf(s: { cron: string; timezone: string }): Cron {
  return new Cron(s.cron, { timezone: s.timezone, mode: '5-or-6-parts', paused: true });
}

// Checks a schedule as given and fills in what is left out; throws SCHEDULE_INVALID naming the
// field and why. `now` is when it is given: an `at` must be after it.
export function checkSchedule(s: Schedule, now: Date): StoredSchedule {
  if ('at' in s) {
    const at = parseInstant(s.at);
    if (at === null) throw invalid('/at', 'is not an ISO 8601 time with its offset (e.g. 2026-12-01T09:00:00Z)');
    if (at <= now.getTime()) throw invalid('/at', `is in the past (now is ${now.toISOString()})`);
    return { at: new Date(at).toISOString() };
  }
  const timezone = s.timezone ?? machineZone();
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw invalid('/timezone', `is not an IANA time zone: ${JSON.stringify(timezone)}`);
  }
  const cron = s.cron.trim().replace(/\s+/g, ' ');
  const fields = cron.split(' ').length;
  if (cron.startsWith('@') || (fields !== 5 && fields !== 6)) {
    throw invalid('/cron', `has ${cron.startsWith('@') ? 'a nickname' : `${fields} field(s)`}: give 5 (minute hour day month weekday) or 6 (seconds first)`);
  }
  let next: Date | null;
  try {
    next = cronOf({ cron, timezone }).nextRun(now);
  } catch (err) {
    throw invalid('/cron', String((err as Error).message).replace(/^CronPattern: /, ''));
  }
  if (next === null) throw invalid('/cron', 'never comes (no date matches it)');
  return { cron, timezone };
}

// The first scheduled time strictly after `after`, or null (an `at` passed, a cron with none left).
export function nextTime(s: StoredSchedule, after: Date): Date | null {
  if ('at' in s) return Date.parse(s.at) > after.getTime() ? new Date(s.at) : null;
  return cronOf(s).nextRun(after);
}

// The scheduled times in (after, upTo]: the latest, and how many, counted up to `cap` (a daemon
// down for a week under a seconds cron has more times than anyone needs counted one by one).
export function dueIn(s: StoredSchedule, after: Date, upTo: Date, cap = 1000): { latest: Date | null; count: number; capped: boolean } {
  if (upTo.getTime() <= after.getTime()) return { latest: null, count: 0, capped: false };
  if ('at' in s) {
    const at = Date.parse(s.at);
    const inside = at > after.getTime() && at <= upTo.getTime();
    return { latest: inside ? new Date(at) : null, count: inside ? 1 : 0, capped: false };
  }
  const cron = cronOf(s);
  const [latest] = cron.previousRuns(1, new Date(upTo.getTime() + 1));
  if (latest === undefined || latest.getTime() <= after.getTime()) return { latest: null, count: 0, capped: false };
  let count = 0;
  for (let t = cron.nextRun(after); t !== null && t.getTime() <= upTo.getTime(); t = cron.nextRun(t)) {
    if (++count === cap) return { latest, count, capped: true };
  }
  return { latest, count, capped: false };
}

// The date of a time in the schedule's zone, YYYY-MM-DD: `{date}` in a prompt or a task's name.
export function dateIn(s: StoredSchedule, t: Date): string {
  const timeZone = 'timezone' in s ? s.timezone : 'UTC';
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(t);
}
