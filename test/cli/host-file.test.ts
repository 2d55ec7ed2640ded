// `grove host add|rm` (hosts.json, DESIGN §14.1) and `grove socket` through the real CLI: no daemon
// is started for any of them, since a remote is asked `grove socket` over SSH and a host is saved
// before anything answers on it.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { grove } from '../helpers/cli.ts';
import { makeHome } from '../helpers/daemon.ts';

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

test('grove host ls without a daemon: exit 3 with the message of a daemon that is not running', async (t) => {
  const home = makeHome(t);
  const r = await grove(home, ['host', 'ls']);
  assert.equal(r.code, 3);
  assert.equal(r.stderr, `grove: grove daemon is not running (no answer on ${path.join(home, 'grove.sock')}); start it with \`grove daemon\` or install it with \`grove install\`\n`);
});
