// A host gone (DESIGN §14.2 "Faults"): another host shows it offline after 15 s, and its session
// keeps its last status (no other host marks it killed or lost, not even one restarting); back,
// the host finds its session as it is and follows it to its real end.
import assert from 'node:assert/strict';
import test from 'node:test';
import { readSse, AGENT, gate, waitSessionEnd, allLines } from '../helpers/sessions.ts';
import { until } from '../helpers/store.ts';
import { startTeam } from '../helpers/team.ts';

test('a host killed with a session running: shown offline after 15 s, its session still running; restarted, it follows the session to its end', async (t) => {
  const team = await startTeam(t, { hosts: ['alpha', 'beta'], config: () => ({ agents: { fixture: { command: [AGENT, '{prompt}'] } } }) });
  let [a, b] = team.hosts as [any, any];
  const beta = (await a.daemon.socket('GET', '/api/hosts')).json.find((h: any) => h.name === 'beta');
  assert.equal(beta.online, true);

  const task = await b.daemon.socket('POST', '/api/tasks', { body: { project_id: b.project.id, name: 'gone' } });
  assert.equal(task.status, 201, task.text);
  const g = gate(t);
  const s = await b.daemon.socket('POST', `/api/tasks/${task.json.id}/sessions`, { body: { agent: 'fixture', prompt: 'exit:4', args: ['echo:started', `wait:${g.path}`, 'print:20'] } });
  assert.equal(s.status, 201, s.text);
  const id = s.json.id;
  await b.daemon.waitForLog((l: any) => l.msg === 'session running' && l.session === id);
  await until(async () => (await allLines(a.daemon, id)).length === 1, 'the first line, read on alpha');

  // Followed on alpha from now: the offline event of beta.
  const from = (await a.daemon.socket('GET', '/api/events?limit=1000')).json.next;
  const offline = readSse('http://localhost/api/events', {
    socketPath: a.daemon.socketPath,
    headers: { 'last-event-id': String(from) },
    until: (evs) => evs.some((e) => e.event === 'host.offline' && (e.data as any).data.id === beta.id),
  });
  b.daemon.proc.kill('SIGKILL');
  await b.daemon.exited;
  const killedAt = Date.now();
  const event = (await offline).find((e) => e.event === 'host.offline')!;
  assert.ok(Date.now() - killedAt >= 10_000 - 1000, 'not offline before its heartbeat went stale');
  assert.equal((event.data as any).data.online, false);
  const hosts = (await a.daemon.socket('GET', '/api/hosts')).json;
  assert.equal(hosts.find((h: any) => h.id === beta.id).online, false);
  assert.equal(hosts.find((h: any) => h.id === beta.id).running, 1);
  assert.equal((await a.daemon.socket('GET', `/api/sessions/${id}`)).json.status, 'running', 'its session keeps its status');

  // Alpha restarting while beta is away leaves beta's session (and task) alone.
  await a.daemon.stop();
  a = await team.start('alpha');
  assert.equal((await a.daemon.socket('GET', `/api/sessions/${id}`)).json.status, 'running', "alpha's restart does not end beta's session");
  assert.equal((await a.daemon.socket('GET', `/api/tasks/${task.json.id}`)).json.status, 'ready');
  assert.ok(!a.daemon.logs.some((l: any) => l.session === id), "alpha does not follow beta's session");

  // Beta back: online again, its session as it is, then followed to its real end.
  b = await team.start('beta');
  await until(async () => (await a.daemon.socket('GET', '/api/hosts')).json.find((h: any) => h.id === beta.id)?.online, 'beta online again');
  await b.daemon.waitForLog((l: any) => l.msg === 're-attached to running session' && l.session === id);
  assert.equal((await a.daemon.socket('GET', `/api/sessions/${id}`)).json.status, 'running');
  g.release();
  const end = await waitSessionEnd(b.daemon, id);
  assert.equal(end.status, 'failed');
  assert.equal(end.exit_code, 4);
  const seen = (await a.daemon.socket('GET', `/api/sessions/${id}`)).json;
  assert.equal(seen.status, 'failed');
  assert.equal(seen.exit_code, 4);
  assert.deepEqual(
    (await allLines(a.daemon, id)).map((l) => l.text.trim()),
    ['started', ...Array.from({ length: 20 }, (_, i) => `line ${i + 1}`)],
  );
});
