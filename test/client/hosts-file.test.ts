import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { addHost, HostsError, hostsFilePath, parseSshUrl, readHosts, removeHost, resolveHost } from '../../daemon/client/hosts-file.ts';

async function tempFile(t: { after(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'grove-hosts-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return path.join(dir, 'conf', 'hosts.json');
}

const code = (c: string) => (err: unknown) => err instanceof HostsError && err.code === c;

test('hosts.json sits beside the user config', () => {
  assert.equal(hostsFilePath({ configFile: '/x/grove/config.json' }), '/x/grove/hosts.json');
});

test('ssh URLs: user, port and socket are read; anything else is refused', () => {
  assert.deepEqual(parseSshUrl('ssh://box'), { destination: 'box' });
  assert.deepEqual(parseSshUrl('ssh://me@box.example:2222'), { destination: 'me@box.example', port: 2222 });
  assert.deepEqual(parseSshUrl('ssh://me@127.0.0.1:22/?socket=/run/user/1000/grove/grove.sock'), { destination: 'me@127.0.0.1', port: 22, socket: '/run/user/1000/grove/grove.sock' });
  assert.deepEqual(parseSshUrl('ssh://[::1]:2200'), { destination: '::1', port: 2200 });
  for (const bad of ['http://box', 'ssh://', 'ssh://me:pw@box', 'ssh://box/path', 'ssh://box?x=1', 'ssh://box?socket=rel/x', 'ssh://-oProxyCommand=x', 'ssh://box#f', 'not a url']) {
    assert.throws(() => parseSshUrl(bad), code('HOST_URL_INVALID'), bad);
  }
});

test('add, list, resolve and remove; the file is 0600 and a missing one is empty', async (t) => {
  const file = await tempFile(t);
  assert.deepEqual(await readHosts(file), []);
  await addHost(file, { name: 'box', url: 'ssh://me@box:2222' });
  await addHost(file, { name: 'vm-2', url: 'ssh://vm' });
  assert.equal((await stat(file)).mode & 0o777, 0o600);
  assert.deepEqual(await readHosts(file), [{ name: 'box', url: 'ssh://me@box:2222' }, { name: 'vm-2', url: 'ssh://vm' }]);
  assert.deepEqual(await resolveHost(file, 'box'), { name: 'box', url: 'ssh://me@box:2222', target: { destination: 'me@box', port: 2222 } });
  assert.deepEqual(await resolveHost(file, 'ssh://other'), { name: null, url: 'ssh://other', target: { destination: 'other' } });
  await assert.rejects(addHost(file, { name: 'box', url: 'ssh://b2' }), code('HOST_EXISTS'));
  await assert.rejects(addHost(file, { name: 'Bad Name', url: 'ssh://b2' }), code('HOST_NAME_INVALID'));
  await assert.rejects(addHost(file, { name: 'b2', url: 'http://b2' }), code('HOST_URL_INVALID'));
  await assert.rejects(resolveHost(file, 'nope'), code('HOST_UNKNOWN'));
  await removeHost(file, 'box');
  await assert.rejects(removeHost(file, 'box'), code('HOST_UNKNOWN'));
  assert.deepEqual(JSON.parse(await readFile(file, 'utf8')), { hosts: [{ name: 'vm-2', url: 'ssh://vm' }] });
});

test('a hosts.json that is not one is reported with the file, never half-read', async (t) => {
  const file = await tempFile(t);
  await addHost(file, { name: 'box', url: 'ssh://box' });
  await writeFile(file, '{"hosts": [{"name": "box"}]}');
  await assert.rejects(readHosts(file), (err) => code('HOSTS_FILE_INVALID')(err) && (err as Error).message.includes(file) && (err as Error).message.includes('/hosts/0/url'));
  await writeFile(file, '{');
  await assert.rejects(readHosts(file), code('HOSTS_FILE_INVALID'));
});
