// GET /api/hosts and /api/hosts/NAME/… (DESIGN §14.1): a local daemon reaching a remote one over
// a real sshd, as the user's saved hosts say.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { request } from 'undici';
import { parseSshUrl } from '../../daemon/client/hosts-file.ts';
import { closeMaster, masterPid, type ForwardOptions } from '../../daemon/client/ssh.ts';
import { sharedForFile, startDaemon } from '../helpers/daemon.ts';
import { until } from '../helpers/store.ts';
import { makeRepo } from '../helpers/git.ts';
import { rawRequest } from '../helpers/raw.ts';
import { agentHome, gate, readSse, type SseEvent } from '../helpers/sessions.ts';
import { freePort, remoteBin, startSshd, tapSocket } from '../helpers/sshd.ts';

const setup = sharedForFile(async (c) => {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'grove-f-')));
  c.after(() => rmSync(dir, { recursive: true, force: true }));
  const remote = await startDaemon(c, { home: agentHome(c) });
  // Between the forward and the remote daemon: every connection that reached the remote and
  // its bytes, so that a refused request can be shown to have reached nothing.
  const tapPath = path.join(dir, 'tap.sock');
  const { taps, reached } = await tapSocket(c, tapPath, () => remote.socketPath);
  const sshd = await startSshd(c, { env: { PATH: `${remoteBin(c, remote.socketPath)}:/usr/bin:/bin`, GROVE_HOME: remote.home } });
  const runtime = path.join(dir, 'run');
  const env = { GROVE_SSH_CONFIG: sshd.clientConfig, XDG_RUNTIME_DIR: runtime };
  const local = await startDaemon(c, { env });
  const hosts = {
    box: sshd.url(tapPath),
    // No ?socket=: asked of the remote `grove socket`.
    asked: sshd.url(),
    // The sshd answers, the remote socket does not: a host whose daemon is not running.
    dead: sshd.url(path.join(dir, 'none.sock')),
    // A port nothing listens on: a host whose sshd is gone.
    gone: `ssh://nobody@127.0.0.1:${await freePort()}?socket=/nowhere.sock`,
  };
  writeFileSync(path.join(local.home, 'hosts.json'), JSON.stringify({ hosts: Object.entries(hosts).map(([name, url]) => ({ name, url })) }), { mode: 0o600 });
  const ssh: ForwardOptions = { runtimeDir: path.join(runtime, 'grove', 'ssh'), env: { ...process.env, GROVE_SSH_CONFIG: sshd.clientConfig } };
  // First of the cleanups (they run in reverse): the master the daemon left for later use.
  c.after(() => closeMaster(parseSshUrl(hosts.box), ssh));
  return { remote, local, sshd, hosts, ssh, taps, reached };
});

test('GET /api/hosts: this daemon, then each saved SSH host, reachable with its version or not, within a bound', async () => {
  const { local, remote, hosts } = await setup();
  const started = performance.now();
  const r = await local.socket('GET', '/api/hosts');
  assert.equal(r.status, 200, r.text);
  assert.ok(performance.now() - started < 20_000, 'an unreachable host does not hold the list up');
  const [me, ...ssh] = r.json;
  assert.equal(me.kind, 'team');
  const version = (await remote.socket('GET', '/api/health')).json.version;
  assert.deepEqual(ssh, [
    { kind: 'ssh', name: 'box', url: hosts.box, reachable: true, version },
    { kind: 'ssh', name: 'asked', url: hosts.asked, reachable: true, version },
    { kind: 'ssh', name: 'dead', url: hosts.dead, reachable: false, version: null },
    { kind: 'ssh', name: 'gone', url: hosts.gone, reachable: false, version: null },
  ]);
});

test('a forwarded GET, POST and DELETE reach the remote daemon and answer as it does', async (t) => {
  const { local, remote } = await setup();
  const health = await local.socket('GET', '/api/hosts/box/api/health');
  assert.equal(health.status, 200, health.text);
  assert.equal(health.json.socket, remote.socketPath);
  assert.equal(health.json.pid, remote.proc.pid);

  const repo = makeRepo(t);
  const added = await local.socket('POST', '/api/hosts/box/api/projects', { body: { path: repo } });
  assert.equal(added.status, 201, added.text);
  assert.equal((await remote.socket('GET', `/api/projects/${added.json.id}`)).json.path, repo, 'made on the remote');
  // The query string goes along; the remote's own problems come back as they are.
  const bad = await local.socket('GET', '/api/hosts/box/api/events?after=-1');
  assert.equal(bad.status, 400);
  assert.equal(bad.json.code, 'VALIDATION_FAILED');
  assert.match(String(bad.headers['content-type']), /^application\/problem\+json/);

  const removed = await local.socket('DELETE', `/api/hosts/box/api/projects/${added.json.id}`);
  assert.equal(removed.status, 204, removed.text);
  assert.equal((await remote.socket('GET', `/api/projects/${added.json.id}`)).status, 404);

  // The host without ?socket= reaches the same daemon through what `grove socket` printed.
  const asked = await local.socket('GET', '/api/hosts/asked/api/health');
  assert.equal(asked.json.socket, remote.socketPath);
});

test("a session's output streams live over the forward, through the TCP front", async (t) => {
  const { local, remote } = await setup();
  const repo = makeRepo(t, { files: { '.grove.json': JSON.stringify({ agent: 'fixture' }) } });
  const project = (await local.tcp('POST', '/api/hosts/box/api/projects', { body: { path: repo } })).json;
  const task = (await local.tcp('POST', '/api/hosts/box/api/tasks', { body: { project_id: project.id, name: 'far work' } })).json;
  assert.equal(task.status, 'ready', JSON.stringify(task));
  const g = gate(t);
  const s = await local.tcp('POST', `/api/hosts/box/api/tasks/${task.id}/sessions`, { body: { prompt: 'echo:after', args: ['echo:before', `wait:${g.path}`] } });
  assert.equal(s.status, 201, s.text);
  // The gate opens only once `before` has come through: the stream is live, not replayed at the end.
  let released = false;
  const events = await readSse(`http://127.0.0.1:${local.port}/api/hosts/box/api/sessions/${s.json.id}/output`, {
    until: (evs: SseEvent[]) => {
      if (!released && evs.some((e) => e.event === 'line' && e.data.text === 'before')) {
        released = true;
        g.release();
      }
      return evs.some((e) => e.event === 'end');
    },
  });
  assert.ok(released);
  assert.deepEqual(events.filter((e) => e.event === 'line').map((e) => e.data.text), ['before', 'after']);
  assert.equal((await remote.socket('GET', `/api/sessions/${s.json.id}`)).json.status, 'exited');
});

test('hostile Host, Origin or content type is refused before anything reaches the remote', async () => {
  const { local, reached } = await setup();
  const mark = randomUUID();
  const target = `/api/hosts/box/api/projects/${mark}`;
  const origin = await local.tcp('GET', target, { headers: { origin: 'http://evil.example' } });
  assert.equal(origin.status, 403);
  assert.equal(origin.json.code, 'FORBIDDEN_ORIGIN');
  const host = await rawRequest({ port: local.port! }, `GET ${target} HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n`);
  assert.equal(host.status, 403);
  assert.equal(JSON.parse(host.body).code, 'FORBIDDEN_HOST');
  const site = await local.tcp('GET', target, { headers: { 'sec-fetch-site': 'same-site' } });
  assert.equal(site.status, 403);
  const form = await local.tcp('POST', target, { body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  assert.equal(form.status, 415);
  assert.equal(form.json.code, 'UNSUPPORTED_MEDIA_TYPE');
  const text = await local.socket('POST', target, { body: '{}', headers: { 'content-type': 'text/plain' } });
  assert.equal(text.status, 415);
  assert.ok(!reached().includes(mark), 'no byte of a refused request reached the remote');

  // The same path, asked properly, does reach it: the tap sees what gets through.
  const fine = await local.tcp('GET', target);
  assert.equal(fine.status, 404);
  assert.equal(fine.json.code, 'NOT_FOUND');
  assert.ok(reached().includes(mark));
});

test('an unknown host is 404; one ssh cannot reach, or whose daemon is down, 502 HOST_UNREACHABLE, never a 500', async () => {
  const { local } = await setup();
  const unknown = await local.socket('GET', '/api/hosts/nobody/api/health');
  assert.equal(unknown.status, 404);
  assert.equal(unknown.json.code, 'NOT_FOUND');
  const badName = await local.socket('GET', '/api/hosts/%2e%2e/api/health');
  assert.equal(badName.status, 404);
  // Only API paths are forwarded.
  assert.equal((await local.socket('GET', '/api/hosts/box/ui')).status, 404);
  const gone = await local.socket('GET', '/api/hosts/gone/api/health');
  assert.equal(gone.status, 502);
  assert.equal(gone.json.code, 'HOST_UNREACHABLE');
  assert.match(gone.json.detail, /^gone: .*(Connection refused|connect to host)/);
  assert.ok(!gone.text.includes('    at '), 'no stack trace');
  const dead = await local.socket('POST', '/api/hosts/dead/api/projects', { body: { path: '/nowhere' } });
  assert.equal(dead.status, 502, dead.text);
  assert.equal(dead.json.code, 'HOST_UNREACHABLE');
  assert.match(dead.json.detail, /^dead: its daemon did not answer over the SSH forward/);
});

test('the grove-command header and hop-by-hop headers are not forwarded; the rest are', async () => {
  const { local, reached } = await setup();
  const mark = randomUUID();
  const r = await local.socket('GET', '/api/hosts/box/api/health', {
    headers: { 'grove-command': 'forged', 'proxy-authorization': 'Basic eA==', 'x-probe': mark },
  });
  assert.equal(r.status, 200);
  const sent = reached().slice(reached().indexOf(mark) - 2000);
  assert.match(sent, new RegExp(`x-probe: ${mark}`, 'i'), 'an end-to-end header goes along');
  assert.doesNotMatch(sent, /grove-command|proxy-authorization/i);
});

test('a client that leaves a forwarded event stream closes the stream on the remote', async () => {
  const { local, taps } = await setup();
  const mark = randomUUID();
  const ac = new AbortController();
  const res = await request(`http://127.0.0.1:${local.port}/api/hosts/box/api/events`, { headers: { accept: 'text/event-stream', 'x-probe': mark }, signal: ac.signal });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^text\/event-stream/);
  const conn = taps.find((x) => x.data.includes(mark));
  assert.ok(conn && !conn.closed, 'the stream holds a connection to the remote');
  ac.abort();
  await res.body.text().catch(() => {});
  await until(() => conn.closed, 'the upstream connection to close', 30_000);
});

test('a broken hosts.json is 422 HOSTS_FILE_INVALID, for the list and the forward alike', async () => {
  const { local } = await setup();
  const file = path.join(local.home, 'hosts.json');
  const good = readFileSync(file, 'utf8');
  writeFileSync(file, '{"hosts": [{"name": "x"}]}');
  try {
    for (const p of ['/api/hosts', '/api/hosts/box/api/health']) {
      const r = await local.socket('GET', p);
      assert.equal(r.status, 422, r.text);
      assert.equal(r.json.code, 'HOSTS_FILE_INVALID');
    }
  } finally {
    writeFileSync(file, good);
  }
});

// The LISTEN sockets of these processes that are not on a loopback address, from /proc/net/tcp{,6}.
function listening(pids: number[]): { all: number; outside: string[] } {
  const inodes = new Set<string>();
  for (const pid of pids) {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]!);
      } catch {
        // closed meanwhile
      }
    }
  }
  let all = 0;
  const outside: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '0A' || !inodes.has(f[9]!)) continue;
      all++;
      const addr = f[1]!.split(':')[0]!;
      // 127.0.0.0/8 (little-endian hex, first byte last) and ::1.
      const loopback = addr.length === 8 ? addr.endsWith('7F') : addr === '00000000000000000000000001000000';
      if (!loopback) outside.push(`${file} ${f[1]}`);
    }
  }
  return { all, outside };
}

test('nothing listens beyond loopback: the daemons, the sshd and the master', async () => {
  const { local, remote, sshd, hosts, ssh } = await setup();
  assert.equal((await local.socket('GET', '/api/hosts/box/api/health')).status, 200);
  const master = await masterPid(parseSshUrl(hosts.box), ssh);
  assert.ok(master !== null, 'the daemon left a master running');
  const seen = listening([local.proc.pid!, remote.proc.pid!, sshd.pid, master]);
  // The two TCP fronts and the sshd, all on loopback.
  assert.ok(seen.all >= 3, `LISTEN sockets seen: ${seen.all}`);
  assert.deepEqual(seen.outside, []);
});
