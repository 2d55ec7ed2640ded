import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cronWords, scheduleWords } from '../../ui/src/schedule-words.ts';

// The dashboard's schedules in words (DESIGN §19): the common shapes in English, anything else as
// the pattern itself.
test('common 5- and 6-field crons in words', () => {
  const cases: Array<[string, string]> = [
    ['* * * * *', 'every minute'],
    ['*/5 * * * *', 'every 5 minutes'],
    ['0 * * * *', 'every hour'],
    ['15 * * * *', 'every hour at :15'],
    ['0 */2 * * *', 'every 2 hours'],
    ['30 */6 * * *', 'every 6 hours at :30'],
    ['0 9 * * *', 'every day at 09:00'],
    ['5 0 * * *', 'every day at 00:05'],
    ['0 9,17 * * *', 'every day at 09:00 and 17:00'],
    ['0 9 * * 1-5', 'weekdays at 09:00'],
    ['0 9 * * MON-FRI', 'weekdays at 09:00'],
    ['0 10 * * 0,6', 'weekends at 10:00'],
    ['0 10 * * 6,7', 'weekends at 10:00'],
    ['0 9 * * 1', 'every Monday at 09:00'],
    ['0 9 * * 5,1,3', 'every Monday, Wednesday and Friday at 09:00'],
    ['0 9 * * 0', 'every Sunday at 09:00'],
    ['0 9 * * 0-6', 'every day at 09:00'],
    ['0 6 1 * *', 'on the 1st of every month at 06:00'],
    ['0 6 1,15 * *', 'on the 1st and 15th of every month at 06:00'],
    ['0 6 22 * *', 'on the 22nd of every month at 06:00'],
    ['0 6 13 * *', 'on the 13th of every month at 06:00'],
    ['0 0 1 1 *', 'every year on 1 January at 00:00'],
    ['0 0 25 dec *', 'every year on 25 December at 00:00'],
    ['*/15 * * * 1-5', 'every 15 minutes on weekdays'],
    ['0 * * * 6', 'every hour on Saturdays'],
    ['  0   9 * *   *  ', 'every day at 09:00'],
    // Six fields: seconds first.
    ['* * * * * *', 'every second'],
    ['*/2 * * * * *', 'every 2 seconds'],
    ['0 * * * * *', 'every minute'],
    ['0 */10 * * * *', 'every 10 minutes'],
    ['0 0 9 * * *', 'every day at 09:00'],
    ['30 0 9 * * 1-5', 'weekdays at 09:00:30'],
  ];
  for (const [cron, words] of cases) assert.equal(cronWords(cron), words, cron);
});

test('anything else is the pattern itself', () => {
  for (const cron of [
    '*/7 * * * *', // uneven: a gap of 4 minutes at each hour
    '0 */5 * * *',
    '0,30 * * * *',
    '*/15 9-17 * * 1-5',
    '0 9-17 * * *',
    '0 9 1 * 1', // a day of the month or of the week: cron runs on either
    '0 9 * 1 *',
    '0 9 L * *',
    '0 9 * * 5#3',
    '0 9 ? * MON',
    '30 * * * * *',
    '*/5 9 * * * *',
    '0 25 * * *',
    '0 9 * * 1-',
    '0 9 * * 5-1',
    '@daily',
    '0 9 * *',
    '0 0 9 * * * 2030',
  ]) {
    assert.equal(cronWords(cron), cron, cron);
  }
});

test('a schedule: the cron in words with its zone; a one-time run at the local time', () => {
  assert.equal(scheduleWords({ cron: '0 9 * * 1-5', timezone: 'Europe/Paris' }), 'weekdays at 09:00 (Europe/Paris)');
  assert.equal(scheduleWords({ cron: '0 9 1 * 1', timezone: 'UTC' }), '0 9 1 * 1 (UTC)');
  assert.equal(scheduleWords({ cron: '*/5 * * * *' }), 'every 5 minutes');
  const at = '2030-06-01T07:30:00.000Z';
  assert.equal(scheduleWords({ at }), `once, at ${new Date(at).toLocaleString()}`);
});
