// An automation's schedule in words (DESIGN §19): the common cron shapes in English ("every day at
// 09:00", "weekdays at 09:00", "every 5 minutes"), and the pattern itself for anything else, so that
// what the dashboard says is never a guess. Pure: the page and its tests call it alike.
import type { Schedule } from '../../schemas/automation.ts';

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAY_NAMES = DAYS.map((d) => d.slice(0, 3).toLowerCase());
const MONTH_NAMES = MONTHS.map((m) => m.slice(0, 3).toLowerCase());
// The order days are named in: the week from Monday.
const WEEK = [1, 2, 3, 4, 5, 6, 0];

const pad = (n: number) => String(n).padStart(2, '0');

// "a", "a and b", "a, b and c".
function list(items: string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

// One value of a field: a number within [lo, hi] or a name of `names` (whose first is worth `lo`).
function value(text: string, lo: number, hi: number, names: string[]): number | null {
  const named = names.indexOf(text.toLowerCase());
  const n = named >= 0 ? lo + named : /^\d+$/.test(text) ? Number(text) : NaN;
  return n >= lo && n <= hi ? n : null;
}

// A field's values when it is a plain list of values and ranges; null for anything else (`*`,
// steps, L, W, #, ?), which the caller reads itself or leaves as the pattern.
function values(field: string, lo: number, hi: number, names: string[] = []): number[] | null {
  const out = new Set<number>();
  for (const part of field.split(',')) {
    const ends = part.split('-').map((x) => value(x, lo, hi, names));
    if (ends.length > 2 || ends.some((x) => x === null)) return null;
    const [a, b = a] = ends as number[];
    if (a! > b!) return null;
    for (let n = a!; n <= b!; n++) out.add(n);
  }
  return [...out].sort((x, y) => x - y);
}

// The single number a field holds, or null.
function single(field: string, lo: number, hi: number): number | null {
  return /^\d+$/.test(field) ? value(field, lo, hi, []) : null;
}

// The step of `*` (1) or `*/N`, only when N divides the field's period: `*/7` minutes has a gap
// of 4 at each hour, which "every 7 minutes" would hide.
function step(field: string, period: number): number | null {
  if (field === '*') return 1;
  const n = /^\*\/(\d+)$/.exec(field)?.[1];
  return n !== undefined && Number(n) > 0 && period % Number(n) === 0 ? Number(n) : null;
}

const every = (n: number, unit: string) => (n === 1 ? `every ${unit}` : `every ${n} ${unit}s`);

// The part of a schedule that repeats within a day, when it is an even interval.
function interval(sec: string, min: string, hour: string): string | null {
  const s = step(sec, 60);
  if (s !== null) return min === '*' && hour === '*' ? every(s, 'second') : null;
  if (single(sec, 0, 59) !== 0) return null;
  const m = step(min, 60);
  if (m !== null) return hour === '*' ? every(m, 'minute') : null;
  const minute = single(min, 0, 59);
  const h = step(hour, 24);
  if (minute === null || h === null) return null;
  return every(h, 'hour') + (minute === 0 ? '' : ` at :${pad(minute)}`);
}

// The times of day of a schedule that runs at fixed times: one minute (and second) of the hours listed.
function times(sec: string, min: string, hour: string): string | null {
  const s = single(sec, 0, 59);
  const m = single(min, 0, 59);
  if (s === null || m === null || !/^\d+(,\d+)*$/.test(hour)) return null;
  const hours = values(hour, 0, 23);
  return hours && list(hours.map((h) => `${pad(h)}:${pad(m)}${s === 0 ? '' : `:${pad(s)}`}`));
}

// Which days: `lead` begins a phrase of times ("weekdays" at 09:00), `tail` ends one of an
// interval (every 5 minutes " on weekdays").
function days(dom: string, mon: string, dow: string): { lead: string; tail: string } | null {
  if (dom === '*' && mon === '*') {
    if (dow === '*') return { lead: 'every day', tail: '' };
    const week = values(dow, 0, 7, DAY_NAMES);
    if (week === null) return null;
    const set = new Set(week.map((d) => d % 7));
    if (set.size === 7) return { lead: 'every day', tail: '' };
    const named = WEEK.filter((d) => set.has(d));
    if (named.join() === '1,2,3,4,5') return { lead: 'weekdays', tail: ' on weekdays' };
    if (named.join() === '6,0') return { lead: 'weekends', tail: ' on weekends' };
    return { lead: `every ${list(named.map((d) => DAYS[d]!))}`, tail: ` on ${list(named.map((d) => `${DAYS[d]}s`))}` };
  }
  // Both days of the month and of the week restricted: cron runs on either, which no short phrase says.
  if (dow !== '*') return null;
  const dates = values(dom, 1, 31);
  if (dates === null) return null;
  if (mon === '*') {
    const which = `the ${list(dates.map(ordinal))}`;
    return { lead: `on ${which} of every month`, tail: ` on ${which} of the month` };
  }
  const month = values(mon, 1, 12, MONTH_NAMES);
  if (month === null || month.length !== 1 || dates.length !== 1) return null;
  const date = `${dates[0]} ${MONTHS[month[0]! - 1]}`;
  return { lead: `every year on ${date}`, tail: ` on ${date}` };
}

// A cron pattern (5 fields, or 6 with seconds first) in words, or the pattern itself.
export function cronWords(cron: string): string {
  const text = cron.trim().replace(/\s+/g, ' ');
  const fields = text.split(' ');
  if (fields.length !== 5 && fields.length !== 6) return text;
  const [sec, min, hour, dom, mon, dow] = (fields.length === 6 ? fields : ['0', ...fields]) as [string, string, string, string, string, string];
  const d = days(dom, mon, dow);
  if (d === null) return text;
  const repeat = interval(sec, min, hour);
  if (repeat !== null) return repeat + d.tail;
  const at = times(sec, min, hour);
  return at === null ? text : `${d.lead} at ${at}`;
}

// A schedule as the dashboard shows it: a cron in words with its zone, or the one time in the
// reader's own zone.
export function scheduleWords(s: Schedule): string {
  if ('at' in s) return `once, at ${new Date(s.at).toLocaleString()}`;
  return s.timezone ? `${cronWords(s.cron)} (${s.timezone})` : cronWords(s.cron);
}
