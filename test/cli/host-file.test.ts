// `grove host add|rm|ls` (hosts.json, DESIGN §14.1) and `grove socket` through the real CLI, with no
// daemon on this machine: a remote is asked `grove socket` over SSH, a host is saved before
// anything answers on it, and the saved hosts are listed where no daemon runs yet.
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { grove } from '../helpers/cli.ts';
import { makeHome, startDaemon } from '../helpers/daemon.ts';
import { freePort, sshHostWorld } from '../helpers/sshd.ts';

test('grove socket: the socket path alone, or {"socket"} with --json; GROVE_SOCKET wins', async (t) => {
  const home = makeHome(t);
  const plain = await grove(home, ['socket']);
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(plain.stdout, `${path.join(home, 'grove.sock')}\n`);
  assert.equal(plain.stderr, '');
  const json = await grove(home, ['socket', '--json']);
  assert.deepEqual(json.json, { socket: path.join(home, 'grove.sock') });
  const set = await grove(home, ['socket'], { env: { GROVE_SOCKET: path.join(home, 'elsewhere.sock') } });
  assert.equal(set.stdout, `${path.join(home, 'elsewhere.sock')}\n`);
});

test('grove host add and rm: saved in hosts.json beside the user config, 0600; --json answers the host', async (t) => {
  const home = makeHome(t);
  const file = path.join(home, 'hosts.json');
  const added = await grove(home, ['host', 'add', 'box', 'ssh://me@box.example:2222']);
  assert.equal(added.code, 0, added.stderr);
  assert.equal(added.stdout, 'saved host box (ssh://me@box.example:2222)\n');
  const json = await grove(home, ['host', 'add', 'vm-2', 'ssh://vm?socket=/run/grove.sock', '--json']);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(json.json, { name: 'vm-2', url: 'ssh://vm?socket=/run/grove.sock' });
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), {
    hosts: [
      { name: 'box', url: 'ssh://me@box.example:2222' },
      { name: 'vm-2', url: 'ssh://vm?socket=/run/grove.sock' },
    ],
  });
  assert.equal(statSync(file).mode & 0o777, 0o600);

  const removed = await grove(home, ['host', 'rm', 'box', '--json']);
  assert.equal(removed.code, 0, removed.stderr);
  assert.deepEqual(removed.json, { name: 'box', url: 'ssh://me@box.example:2222' });
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')).hosts, [{ name: 'vm-2', url: 'ssh://vm?socket=/run/grove.sock' }]);
  const human = await grove(home, ['host', 'rm', 'vm-2']);
  assert.equal(human.stdout, 'removed host vm-2\n');
});

test('a bad name or URL is a usage error (exit 2, the reason and the usage); a taken name, an unknown one: exit 1 with the code', async (t) => {
  const home = makeHome(t);
  for (const args of [
    ['host', 'add', 'Box!', 'ssh://box'],
    ['host', 'add', 'box', 'http://box'],
    ['host', 'add', 'box', 'ssh://-oProxyCommand=x'],
    ['host', 'add', 'box'],
    ['host', 'rm'],
  ]) {
    const r = await grove(home, args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^grove: .*\n[^]*usage: grove \[--host [^\]]+\] <command>/, args.join(' '));
    assert.equal(r.stdout, '');
  }
  const bad = await grove(home, ['host', 'add', 'box', 'ssh://box/path']);
  assert.match(bad.stderr, /^grove: "ssh:\/\/box\/path" is not ssh:\/\/\[user@\]host\[:port\]\[\?socket=PATH\]: a path is not allowed\n/);

  assert.equal((await grove(home, ['host', 'add', 'box', 'ssh://box'])).code, 0);
  const taken = await grove(home, ['host', 'add', 'box', 'ssh://other', '--json']);
  assert.equal(taken.code, 1, taken.stderr);
  assert.equal(taken.json.code, 'HOST_EXISTS');
  assert.match(taken.stderr, /a host named box is saved already/);

  const unknown = await grove(home, ['host', 'rm', 'nope', '--json']);
  assert.equal(unknown.code, 1, unknown.stderr);
  assert.deepEqual(unknown.json, { code: 'HOST_UNKNOWN', detail: 'no saved host named "nope"', status: 404 });
  assert.equal(unknown.stderr, 'grove: no saved host named "nope"\n');
  // Nothing of the refusals was written.
  assert.deepEqual(JSON.parse(readFileSync(path.join(home, 'hosts.json'), 'utf8')).hosts, [{ name: 'box', url: 'ssh://box' }]);
});

test('grove host ls without a daemon: the saved SSH hosts, reachable or not, exit 0, saying that a team’s hosts show when it runs; the same table once it runs', async (t) => {
  const w = await sshHostWorld(t);
  // A port nothing listens on: a host whose sshd is gone.
  const gone = `ssh://nobody@127.0.0.1:${await freePort()}?socket=/nowhere.sock`;
  assert.equal((await grove(w.client, ['host', 'add', 'gone', gone])).code, 0);
  const version = (await w.remote.socket('GET', '/api/health')).json.version;

  // The master and the forward opened first, as a command to it leaves them: the listing then
  // answers within its bound on a busy machine too.
  assert.equal((await grove(w.client, ['--host', 'box', 'socket'], { env: w.env })).code, 0);

  const ls = await grove(w.client, ['host', 'ls'], { env: w.env });
  assert.equal(ls.code, 0, ls.stderr);
  const [note, ...why] = ls.stderr.trimEnd().split('\n');
  assert.equal(note, `grove: no daemon runs here (no answer on ${path.join(w.client, 'grove.sock')}): the saved SSH hosts of hosts.json only; a team's hosts show when it runs`);
  assert.deepEqual(why, [`grove: gone is not reachable: ssh: connect to host 127.0.0.1 port ${new URL(gone).port}: Connection refused`]);
  const rows = ls.stdout.trimEnd().split('\n').map((l) => l.split(/\s+/));
  assert.deepEqual(rows, [
    ['NAME', 'URL', 'REACHABLE', 'VERSION'],
    ['box', w.sshd.url(), 'yes', version],
    ['gone', gone, 'no', '-'],
  ]);
  const json = await grove(w.client, ['host', 'ls', '--json'], { env: w.env });
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(json.json, [
    { kind: 'ssh', name: 'box', url: w.sshd.url(), reachable: true, version },
    { kind: 'ssh', name: 'gone', url: gone, reachable: false, version: null },
  ]);

  // This machine's daemon started: the team's table (this host), then the same SSH table.
  await startDaemon(t, { home: w.client, env: w.env });
  const up = await grove(w.client, ['host', 'ls'], { env: w.env });
  assert.equal(up.code, 0, up.stderr);
  assert.equal(up.stderr, '');
  assert.match(up.stdout, /^NAME +ONLINE +VERSION +RUNNING +SEEN\n\S+ +yes /);
  assert.ok(up.stdout.endsWith(`\n\n${ls.stdout}`), up.stdout);
});

test('grove host ls without a daemon and nothing saved: an empty list, exit 0; a broken hosts.json: exit 1 with HOSTS_FILE_INVALID as the API says it', async (t) => {
  const home = makeHome(t);
  const none = await grove(home, ['host', 'ls']);
  assert.equal(none.code, 0, none.stderr);
  assert.equal(none.stdout, '(none)\n');
  assert.match(none.stderr, /a team's hosts show when it runs\n$/);
  assert.deepEqual((await grove(home, ['host', 'ls', '--json'])).json, []);

  writeFileSync(path.join(home, 'hosts.json'), '{');
  for (const args of [['host', 'ls', '--json'], ['--host', 'box', 'status', '--json']]) {
    const broken = await grove(home, args);
    assert.equal(broken.code, 1, `${args.join(' ')}: ${broken.stderr}`);
    assert.equal(broken.json.code, 'HOSTS_FILE_INVALID', args.join(' '));
    assert.equal(broken.json.status, 422, args.join(' '));
  }
});
