import assert from 'node:assert/strict';
import test from 'node:test';
import { duration, localTime, shortId, table } from '../../daemon/cli/format.ts';

test('cli format: a table with upper-case headers, columns as wide as their widest cell, no trailing spaces', () => {
  const rows = [
    { id: 'a1', name: 'fix login', ports: { 3000: 20001, 5432: 20002 }, branch: null },
    { id: 'b22', name: 'x', ports: {}, branch: 'grove/x' },
  ];
  assert.equal(
    table(rows, ['id', 'name', 'ports', 'branch']),
    ['ID   NAME       PORTS                  BRANCH', 'a1   fix login  3000:20001,5432:20002  -', 'b22  x          -                      grove/x'].join('\n'),
  );
  assert.equal(table([], ['id']), '(none)');
  assert.equal(shortId('0123456789abcdef'), '01234567');
});

test('cli format: a duration in days, hours, minutes and seconds, leaving out the zero parts; never negative', () => {
  const now = Date.parse('2026-01-02T03:04:05Z');
  assert.equal(duration('2026-01-02T03:04:05Z', now), '0s');
  assert.equal(duration('2026-01-02T03:03:00Z', now), '1m 5s');
  assert.equal(duration('2026-01-01T00:04:05Z', now), '1d 3h 0s');
  assert.equal(duration('2026-01-02T03:04:06Z', now), '0s', 'a start in the future');
});

test('cli format: a time in this machine\'s zone, its seconds only where there are some', (t) => {
  const zone = process.env.TZ;
  t.after(() => (zone === undefined ? delete process.env.TZ : (process.env.TZ = zone)));
  process.env.TZ = 'Asia/Tokyo';
  assert.equal(localTime('2026-01-02T00:00:00Z'), '2026-01-02 09:00');
  assert.equal(localTime('2026-12-31T15:04:05.000Z'), '2027-01-01 00:04:05');
});
