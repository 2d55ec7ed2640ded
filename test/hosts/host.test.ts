import assert from 'node:assert/strict';
import { cpSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { hostIdOf } from '../../daemon/hosts/host.ts';
import { makeTempDir } from '../helpers/git.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

test('the host id is made once in the data folder, kept, copied with it, and a file that is no id is replaced', (t) => {
  const dir = makeTempDir(t);
  const id = hostIdOf(dir);
  assert.match(id, UUID);
  assert.equal(hostIdOf(dir), id);
  assert.equal(readFileSync(path.join(dir, 'host-id'), 'utf8'), `${id}\n`);
  assert.equal(statSync(path.join(dir, 'host-id')).mode & 0o777, 0o600);

  const copy = path.join(makeTempDir(t), 'data');
  cpSync(dir, copy, { recursive: true });
  assert.equal(hostIdOf(copy), id);

  writeFileSync(path.join(dir, 'host-id'), 'not an id\n');
  const fresh = hostIdOf(dir);
  assert.match(fresh, UUID);
  assert.notEqual(fresh, id);
  assert.equal(hostIdOf(dir), fresh);
});
