import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT, startDaemon } from '../helpers/daemon.ts';
import { machineAddress, pathWithoutBwrap } from '../helpers/sandbox.ts';
import { until } from '../helpers/store.ts';
import { agentHome, allEvents, allLines, readSse, readyTaskOn, waitSessionEnd } from '../helpers/sessions.ts';

const PROBE = path.join(ROOT, 'test', 'fixtures', 'socket-probe.mjs');

// DESIGN §18's setting as the API takes it: `sandbox` in the session body, .grove.json and the user
// config; every session says whether it is confined. (What a confined session can do is
// test/sessions/confine.test.ts; the policy and bwrap's argv, test/sandbox/.)

test('on a machine without bubblewrap: sandbox true is 422 SANDBOX_UNAVAILABLE naming it and nothing starts; auto runs visibly unconfined, said once at start', async (t) => {
  const d = await startDaemon(t, { home: agentHome(t), env: { PATH: pathWithoutBwrap(t) } });
  const warned = await d.waitForLog((l) => l.level === 40 && /agent sessions will run unconfined/.test(l.msg));
  assert.match(warned.msg, /bubblewrap/);
  const { task } = await readyTaskOn(d, t);
  const refused = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'exit:0', sandbox: true } });
  assert.equal(refused.status, 422, refused.text);
  assert.equal(refused.headers['content-type'], 'application/problem+json');
  assert.equal(refused.json.code, 'SANDBOX_UNAVAILABLE');
  assert.match(refused.json.detail, /install bubblewrap/);
  assert.deepEqual((await d.socket('GET', `/api/tasks/${task.id}/sessions`)).json, [], 'no session row');
  assert.equal(existsSync(path.join(d.home, 'data', 'sessions')), false, 'no session folder');

  const auto = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'exit:0' } });
  assert.equal(auto.status, 201, auto.text);
  assert.equal(auto.json.sandbox.confined, false);
  assert.match(auto.json.sandbox.reason, /cannot confine.*bubblewrap/);
  assert.equal((await waitSessionEnd(d, auto.json.id)).status, 'exited');
  assert.equal(d.logs.filter((l) => /agent sessions will run unconfined/.test(l.msg ?? '')).length, 1, 'said once');
});

test('with bubblewrap, auto confines an agent session; the user config and .grove.json set it; bad settings are refused before anything starts', async (t) => {
  const d = await startDaemon(t, { home: agentHome(t, { sandbox: false }) });
  const { task, repo } = await readyTaskOn(d, t);
  const byUser = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'exit:0' } });
  assert.deepEqual(byUser.json.sandbox, { confined: false, reason: 'sandbox is false (by the user config)' });
  const asked = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'exit:0', sandbox: 'auto' } });
  assert.deepEqual(asked.json.sandbox, { confined: true });
  const listed = (await d.socket('GET', `/api/sessions/${asked.json.id}`)).json;
  assert.deepEqual(listed.sandbox, { confined: true });
  for (const id of [byUser.json.id, asked.json.id]) assert.equal((await waitSessionEnd(d, id)).status, 'exited');

  const wrongType = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'exit:0', sandbox: 'yes' } });
  assert.equal(wrongType.status, 400, wrongType.text);
  assert.equal(wrongType.json.code, 'VALIDATION_FAILED');

  const bad: Array<[object, string]> = [
    [{ sandbox: { enabled: true, paths: [] } }, '/sandbox'],
    [{ sandbox: { write: ['/etc'] } }, '/sandbox/write/0'],
    [{ sandbox: { write: ['../elsewhere'] } }, '/sandbox/write/0'],
    [{ sandbox: { network: ['not a host'] } }, '/sandbox/network/0'],
    [{ sandbox: 'sometimes' }, '/sandbox'],
  ];
  for (const [grove, where] of bad) {
    writeFileSync(path.join(repo, '.grove.json'), JSON.stringify({ agent: 'fixture', ...grove }));
    const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'exit:0' } });
    assert.equal(r.status, 422, `${JSON.stringify(grove)}: ${r.text}`);
    assert.equal(r.json.code, 'CONFIG_INVALID');
    assert.ok(
      r.json.errors.some((e: { path: string }) => e.path.startsWith(where)),
      `${JSON.stringify(grove)} names ${where}: ${JSON.stringify(r.json.errors)}`,
    );
  }
  writeFileSync(path.join(repo, '.grove.json'), JSON.stringify({ agent: 'fixture', sandbox: { enabled: true, write: ['~/.cache/tool', 'build'] } }));
  const project = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { prompt: 'exit:0' } });
  assert.deepEqual(project.json.sandbox, { confined: true });
  assert.equal((await waitSessionEnd(d, project.json.id)).status, 'exited');
});

test("a confined agent cannot reach the daemon's socket, and its session's own socket answers its approvals only", async (t) => {
  const home = agentHome(t);
  const config = JSON.parse(readFileSync(path.join(home, 'config.json'), 'utf8'));
  config.agents.probe = { command: [process.execPath, PROBE, path.join(home, 'grove.sock'), path.join(home, 'data')] };
  writeFileSync(path.join(home, 'config.json'), JSON.stringify(config));
  const d = await startDaemon(t, { home });
  const { task } = await readyTaskOn(d, t);
  const probe = async (sandbox: boolean) => {
    const r = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'probe', sandbox } });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.sandbox.confined, sandbox);
    await waitSessionEnd(d, r.json.id);
    const tries = (await allLines(d, r.json.id)).filter((l: any) => l.stream === 'stdout').map((l: any) => JSON.parse(l.text));
    return Object.fromEntries(tries.map((x: any) => [x.what, [x.status, x.code]]));
  };
  assert.deepEqual(await probe(true), {
    'main projects': [0, 'ENOENT'],
    'own projects': [403, 'SESSION_SOCKET_SCOPE'],
    'own ask': [201, null],
    'own decide': [403, 'SESSION_SOCKET_SCOPE'],
    'own read': [200, null],
  });
  // Unconfined, the daemon's socket answers: what the sandbox took away was there.
  assert.deepEqual((await probe(false))['main projects'], [200, null]);
});

test('a confined session talking to an allowed host keeps its one connection across a daemon SIGTERM and restart, and loses no line', async (t) => {
  // A host that streams a numbered line every 50 ms on one connection, counting connections.
  let connections = 0;
  const LINES = 200;
  const server = http.createServer((_req, res) => {
    connections++;
    let i = 0;
    const timer = setInterval(() => {
      res.write(`line ${++i}\n`);
      if (i === LINES) {
        clearInterval(timer);
        res.end();
      }
    }, 50);
    res.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as AddressInfo).port;
  const home = agentHome(t, { agents: { sh: { command: ['sh', '-c', '{prompt}'] } } });
  const d = await startDaemon(t, { home });
  const { task } = await readyTaskOn(d, t, { sandbox: { network: [`127.0.0.1:${port}`] } });
  const s = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'sh', prompt: `curl -sS -N http://127.0.0.1:${port}/stream` } });
  assert.equal(s.status, 201, s.text);
  assert.equal(s.json.sandbox.confined, true);
  await readSse(`http://localhost/api/sessions/${s.json.id}/output`, { socketPath: d.socketPath, until: (evs) => evs.filter((e) => e.event === 'line').length >= 5 });
  assert.equal(await d.stop('SIGTERM'), 0);
  const d2 = await startDaemon(t, { home });
  await waitSessionEnd(d2, s.json.id);
  const ended = (await d2.socket('GET', `/api/sessions/${s.json.id}`)).json;
  assert.equal(ended.status, 'exited', JSON.stringify(ended));
  const lines = (await allLines(d2, s.json.id)).filter((l: any) => l.stream === 'stdout').map((l: any) => l.text);
  assert.deepEqual(lines, Array.from({ length: LINES }, (_, i) => `line ${i + 1}`), 'every line, once, in order');
  assert.equal(connections, 1, 'one connection, through the restart');
});

test('a host not allowed: refused, recorded and evented in full; in edit an approval of kind network, which allowed lets the connection through', async (t) => {
  const server = http.createServer((req, res) => res.end(`hello from ${req.url}\n`));
  // On the machine's own address: a host that only the proxy outside reaches.
  const host = machineAddress();
  await new Promise<void>((r) => server.listen(0, host, r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as AddressInfo).port;
  const home = agentHome(t, { agents: { sh: { command: ['sh', '-c', '{prompt}'], modes: { read: [], edit: [], full: [] } } } });
  const d = await startDaemon(t, { home });
  const { task } = await readyTaskOn(d, t);
  const get = (what: string) => `curl -sS -o /dev/null -w '${what}=%{http_code}\\n' http://${host}:${port}/${what}`;

  const full = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'sh', mode: 'full', prompt: `${get('a')}; ${get('b')}` } });
  assert.equal(full.status, 201, full.text);
  await waitSessionEnd(d, full.json.id);
  const refused = (await d.socket('GET', `/api/sessions/${full.json.id}`)).json;
  assert.deepEqual((await allLines(d, full.json.id)).filter((l: any) => l.stream === 'stdout').map((l: any) => l.text), ['a=403', 'b=403']);
  assert.deepEqual(refused.result.blocked, [{ kind: 'network', target: `${host}:${port}`, count: 2 }]);
  const events = (await allEvents(d, `&task_id=${task.id}`)).filter((e: any) => e.type === 'session.blocked');
  assert.deepEqual(events.map((e: any) => [e.session_id, e.data.blocked_target]), [[full.json.id, { kind: 'network', target: `${host}:${port}` }]], 'once for the target');

  const edit = await d.socket('POST', `/api/tasks/${task.id}/sessions`, { body: { agent: 'sh', mode: 'edit', prompt: get('c') } });
  assert.equal(edit.status, 201, edit.text);
  const pending = await until(async () => (await d.socket('GET', `/api/approvals?session_id=${edit.json.id}&status=pending`)).json[0], 'a network approval');
  assert.equal(pending.kind, 'network');
  assert.deepEqual(pending.input, { host, port });
  const decided = await d.socket('POST', `/api/approvals/${pending.id}`, { body: { decision: 'allow', nonce: pending.nonce } });
  assert.equal(decided.status, 200, decided.text);
  await waitSessionEnd(d, edit.json.id);
  assert.deepEqual((await allLines(d, edit.json.id)).filter((l: any) => l.stream === 'stdout').map((l: any) => l.text), ['c=200'], 'held, then through once allowed');
});
