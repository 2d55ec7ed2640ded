// What due times come to (daemon/automations/plan.ts): one run on time; missed times folded into
// one run within the grace and the older ones one skipped run; policy skip; nothing while the
// machine settles after a wake; the next time always moves on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ON_TIME_MS, plan } from '../../daemon/automations/plan.ts';
import type { StoredSchedule } from '../../daemon/automations/schedule.ts';

const everyMinute: StoredSchedule = { cron: '* * * * *', timezone: 'UTC' };
const T = (s: string) => new Date(`2026-03-07T${s}.000Z`);
const claims = (p: ReturnType<typeof plan>) => p?.claims.map((c) => [c.scheduled_for.toISOString().slice(11, 19), c.missed, c.skipped]);
const latest12h = { policy: 'latest', grace_s: 43200 } as const;

test('one time noticed on time: one run, nothing missed', () => {
  const p = plan({ schedule: everyMinute, missed: latest12h, cursor: T('12:00:00'), now: new Date(T('12:01:00').getTime() + ON_TIME_MS), settled: false });
  assert.deepEqual(claims(p), [['12:01:00', 0, null]], 'on time runs even before the machine settled');
  assert.equal(p!.cursor.toISOString(), T('12:01:00').toISOString());
  assert.equal(p!.next_run_at!.toISOString(), T('12:02:00').toISOString());
});

test('missed times within the grace: the latest runs, counting the others folded into it; older ones are one skipped run', () => {
  const p = plan({ schedule: everyMinute, missed: { policy: 'latest', grace_s: 300 }, cursor: T('12:00:00'), now: T('12:10:30'), settled: true });
  // 12:01 … 12:05 are older than 5 minutes (before 12:05:30); 12:06 … 12:10 are within.
  assert.deepEqual(claims(p), [['12:05:00', 5, 'missed'], ['12:10:00', 4, null]]);
  assert.equal(p!.cursor.toISOString(), T('12:10:00').toISOString());
  assert.equal(p!.next_run_at!.toISOString(), T('12:11:00').toISOString());
  const late = plan({ schedule: everyMinute, missed: latest12h, cursor: T('12:00:00'), now: T('12:01:30'), settled: true });
  assert.deepEqual(claims(late), [['12:01:00', 0, null]], 'one time noticed late runs, with none folded');
});

test('policy skip: every missed time is one skipped run; an on-time latest still runs', () => {
  const skip = { policy: 'skip', grace_s: 43200 } as const;
  const p = plan({ schedule: everyMinute, missed: skip, cursor: T('12:00:00'), now: T('12:10:30'), settled: true });
  assert.deepEqual(claims(p), [['12:10:00', 10, 'missed']]);
  const onTime = plan({ schedule: everyMinute, missed: skip, cursor: T('12:00:00'), now: T('12:10:02'), settled: false });
  assert.deepEqual(claims(onTime), [['12:09:00', 9, 'missed'], ['12:10:00', 0, null]], 'not held by the settling: a run goes anyway');
});

test('missed times wait while the machine settles after a wake, unless the latest is on time; nothing due still moves the next time on', () => {
  assert.equal(plan({ schedule: everyMinute, missed: latest12h, cursor: T('12:00:00'), now: T('12:10:30'), settled: false }), null);
  assert.deepEqual(claims(plan({ schedule: everyMinute, missed: latest12h, cursor: T('12:00:00'), now: T('12:10:05'), settled: false })), [['12:10:00', 9, null]]);
  const none = plan({ schedule: everyMinute, missed: latest12h, cursor: T('12:10:00'), now: T('12:10:30'), settled: true });
  assert.deepEqual([none!.claims, none!.cursor.toISOString(), none!.next_run_at!.toISOString()], [[], T('12:10:00').toISOString(), T('12:11:00').toISOString()]);
  const at: StoredSchedule = { at: T('12:05:00').toISOString() };
  const once = plan({ schedule: at, missed: latest12h, cursor: T('12:00:00'), now: T('12:05:01'), settled: false });
  assert.deepEqual([claims(once), once!.next_run_at], [[['12:05:00', 0, null]], null], 'an `at` runs once, then has no next time');
});
