// The rows of `grove host ls` (daemon/cli/render.ts) for both kinds of host GET /api/hosts lists.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { table } from '../../daemon/cli/format.ts';
import { HOST_COLS, hostRow, SSH_HOST_COLS } from '../../daemon/cli/render.ts';

test('a team host: online, version, running, seen; an SSH host: url, reachable, version (none when unreachable)', () => {
  const now = Date.parse('2026-01-01T00:01:05Z');
  const team = hostRow(
    { kind: 'team', id: '0190a0a0-0000-7000-8000-000000000001', name: 'solo', version: '0.1.0', online: true, started_at: '2026-01-01T00:00:00Z', seen_at: '2026-01-01T00:00:00Z', running: 2, accept_remote: false },
    now,
  );
  assert.equal(table([team], HOST_COLS), 'NAME  ONLINE  VERSION  RUNNING  SEEN\nsolo  yes     0.1.0    2        1m 5s ago');
  const ssh = [hostRow({ kind: 'ssh', name: 'box', url: 'ssh://me@box', reachable: true, version: '0.1.0' }), hostRow({ kind: 'ssh', name: 'vm', url: 'ssh://vm:2222', reachable: false, version: null })];
  assert.equal(table(ssh, SSH_HOST_COLS), 'NAME  URL            REACHABLE  VERSION\nbox   ssh://me@box   yes        0.1.0\nvm    ssh://vm:2222  no         -');
});
