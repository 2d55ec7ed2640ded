// An automation's schedule alone (daemon/automations/schedule.ts): what is refused and why, the
// next time in a zone (across its daylight-saving shifts), the times due in a window, a date in a zone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkSchedule, dateIn, dueIn, nextTime, type StoredSchedule } from '../../daemon/automations/schedule.ts';
import { GroveError } from '../../daemon/errors.ts';

const NOW = new Date('2026-03-07T12:00:00.000Z');

function refused(s: object, path: string, why: RegExp) {
  assert.throws(
    () => checkSchedule(s as never, NOW),
    (err: unknown) => err instanceof GroveError && err.code === 'SCHEDULE_INVALID' && err.errors?.[0]?.path === path && why.test(err.errors[0].message),
    JSON.stringify(s),
  );
}

test('refused: a field out of range, a wrong field count, a nickname, an unknown zone, a date that never comes, a bad or past `at`', () => {
  refused({ cron: '61 * * * *' }, '/schedule/cron', /minute/);
  refused({ cron: '* * * * * * *' }, '/schedule/cron', /7 field/);
  refused({ cron: '* * * *' }, '/schedule/cron', /4 field/);
  refused({ cron: '@daily' }, '/schedule/cron', /nickname/);
  refused({ cron: '0 9 * * 8' }, '/schedule/cron', /weekday|day/i);
  refused({ cron: '0 9 * * *', timezone: 'Mars/Olympus' }, '/schedule/timezone', /IANA/);
  refused({ cron: '0 0 30 2 *' }, '/schedule/cron', /never/);
  refused({ at: 'tomorrow' }, '/schedule/at', /ISO 8601/);
  refused({ at: '2026-03-08T09:00:00' }, '/schedule/at', /offset/);
  refused({ at: '2026-03-07T11:59:59Z' }, '/schedule/at', /past/);
});

test('kept: the zone filled in (the machine\'s by default), spaces folded, an `at` in UTC', () => {
  assert.deepEqual(checkSchedule({ cron: ' 0  9 * * 1-5 ', timezone: 'Asia/Tokyo' }, NOW), { cron: '0 9 * * 1-5', timezone: 'Asia/Tokyo' });
  const local = checkSchedule({ cron: '*/5 * * * * *' }, NOW) as { timezone: string };
  assert.equal(local.timezone, Intl.DateTimeFormat().resolvedOptions().timeZone);
  assert.deepEqual(checkSchedule({ at: '2026-03-08T09:00:00+09:00' }, NOW), { at: '2026-03-08T00:00:00.000Z' });
});

test('the next time follows the zone, across its daylight-saving shift', () => {
  const ny: StoredSchedule = { cron: '0 9 * * *', timezone: 'America/New_York' };
  // 2026-03-08 is the US shift to daylight time: 9:00 is 14:00Z before it and 13:00Z after.
  assert.equal(nextTime(ny, NOW)?.toISOString(), '2026-03-07T14:00:00.000Z');
  assert.equal(nextTime(ny, new Date('2026-03-07T14:00:00.000Z'))?.toISOString(), '2026-03-08T13:00:00.000Z');
  assert.equal(nextTime({ cron: '0 9 * * *', timezone: 'Asia/Tokyo' }, NOW)?.toISOString(), '2026-03-08T00:00:00.000Z');
  // 2:30 does not exist on the shift's night in New York: a fixed time runs once, after the gap.
  assert.equal(nextTime({ cron: '30 2 * * *', timezone: 'America/New_York' }, new Date('2026-03-08T05:00:00.000Z'))?.toISOString(), '2026-03-08T07:00:00.000Z');
  const at: StoredSchedule = { at: '2026-03-08T00:00:00.000Z' };
  assert.equal(nextTime(at, NOW)?.toISOString(), at.at);
  assert.equal(nextTime(at, new Date(at.at)), null, 'an `at` comes once');
});

test('the times due in a window: the latest and how many, counted up to a cap', () => {
  const every5s: StoredSchedule = { cron: '*/5 * * * * *', timezone: 'UTC' };
  const from = new Date('2026-03-07T12:00:00.000Z');
  assert.deepEqual(dueIn(every5s, from, new Date('2026-03-07T12:00:04.999Z')), { latest: null, count: 0, capped: false });
  const half = dueIn(every5s, from, new Date('2026-03-07T12:00:30.000Z'));
  assert.deepEqual([half.latest?.toISOString(), half.count, half.capped], ['2026-03-07T12:00:30.000Z', 6, false], 'the window is (from, to]');
  const week = dueIn(every5s, from, new Date('2026-03-14T12:00:00.000Z'), 50);
  assert.deepEqual([week.latest?.toISOString(), week.count, week.capped], ['2026-03-14T12:00:00.000Z', 50, true]);
  const at: StoredSchedule = { at: '2026-03-07T12:00:10.000Z' };
  assert.equal(dueIn(at, from, new Date('2026-03-07T12:00:09.000Z')).count, 0);
  assert.equal(dueIn(at, from, new Date('2026-03-07T12:00:10.000Z')).count, 1);
});

test('a date in the schedule\'s zone: the day there, not in UTC', () => {
  const t = new Date('2026-03-07T23:30:00.000Z');
  assert.equal(dateIn({ cron: '* * * * *', timezone: 'Asia/Tokyo' }, t), '2026-03-08');
  assert.equal(dateIn({ cron: '* * * * *', timezone: 'America/New_York' }, t), '2026-03-07');
  assert.equal(dateIn({ at: t.toISOString() }, t), '2026-03-07');
});
