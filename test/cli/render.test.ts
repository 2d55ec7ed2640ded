// The rows of `grove host ls` (daemon/cli/render.ts) for both kinds of host GET /api/hosts lists.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { table } from '../../daemon/cli/format.ts';
import { APPROVAL_COLS, approvalLine, approvalRow, describeEvent, HOST_COLS, hostRow, SSH_HOST_COLS } from '../../daemon/cli/render.ts';

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

test('a queue.failed event in one line: why, being fixed or out, and why no follow-up was sent', () => {
  const entry = { task_id: '0190a0a0-0000-7000-8000-00000000000a', project_id: '0190a0a0-0000-7000-8000-00000000000b', base: 'main', position: 1, strategy: 'merge', fix: true, tries: 4, fix_session: null, added_at: '2026-01-01T00:00:00Z' };
  const at = { seq: 7, at: '2026-01-01T00:00:01Z', project_id: entry.project_id, task_id: entry.task_id, session_id: null, host_id: null };
  const conflict = { ...at, type: 'queue.failed' as const, data: { ...entry, state: 'out', reason: 'rebasing onto main conflicts in a.txt', files: ['a.txt'], output: null } };
  assert.equal(describeEvent(conflict as never), '2026-01-01T00:00:01Z 7 queue.failed task 0190a0a0 failed to land on main: rebasing onto main conflicts in a.txt; out of the queue');
  const spent = { ...at, type: 'queue.failed' as const, data: { ...entry, state: 'out', reason: 'the check "npm test" exited with 1', files: null, output: ['x', '2 failed'], note: 'tries are spent: 3 follow-ups were sent' } };
  assert.equal(describeEvent(spent as never), '2026-01-01T00:00:01Z 7 queue.failed task 0190a0a0 failed to land on main: the check "npm test" exited with 1 (last line: 2 failed); out of the queue: tries are spent: 3 follow-ups were sent');
});

test('a network approval (DESIGN §18) in `grove approvals` and a follower\'s line: the host and port it would connect to', () => {
  const a = {
    id: '0190a0a0-0000-7000-8000-00000000000c', session_id: '0190a0a0-0000-7000-8000-00000000000d', task_id: '0190a0a0-0000-7000-8000-00000000000e', key: 'k', kind: 'network' as const, tool: 'Network',
    input: { host: 'Registry.npmjs.org', port: 443 }, status: 'pending' as const, reason: null, answer: null, remember: null, nonce: 'n', expires_at: null, created_at: '2026-01-01T00:00:00Z', decided_at: null, verdict: null,
  };
  assert.equal(table([approvalRow(a)], APPROVAL_COLS), 'ID        SESSION   STATUS   TOOL     ASKS                    CREATED_AT\n0190a0a0  0190a0a0  pending  Network  registry.npmjs.org:443  2026-01-01T00:00:00Z');
  assert.equal(approvalLine({ ...a, input: { host: '::1', port: 8080 } }), 'waiting for approval 0190a0a0: Network [::1]:8080 — grove approve 0190a0a0');
});
